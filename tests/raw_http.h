// Raw HTTP over TCP for the server's tests: what a client library would not
// send (half a request, a trickle, a flood) and what it would hide (the
// connection closed by the server).
#pragma once

#include <doctest/doctest.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>

namespace referee::testing {

// A connection to 127.0.0.1:port from the local address `from` (any
// 127.x.y.z is this machine).
inline int connect_from(const char* from, int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in local{};
  local.sin_family = AF_INET;
  REQUIRE(inet_pton(AF_INET, from, &local.sin_addr) == 1);
  REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof local) == 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  REQUIRE(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  return fd;
}

inline bool send_all(int fd, const std::string& s) {
  return ::send(fd, s.data(), s.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(s.size());
}

// Waits up to 50 ms for bytes on fd and appends them to *got; false when the
// server ended the connection (*closed set).
inline bool read_some(int fd, std::string* got, bool* closed) {
  pollfd p{fd, POLLIN, 0};
  if (poll(&p, 1, 50) <= 0) return true;
  char buf[4096];
  ssize_t n = ::recv(fd, buf, sizeof buf, 0);
  if (n <= 0) {
    *closed = true;
    return false;
  }
  got->append(buf, static_cast<size_t>(n));
  return true;
}

// What arrives on fd within `wait_ms`; *closed: the server ended the connection.
inline std::string receive(int fd, int wait_ms, bool* closed) {
  std::string got;
  *closed = false;
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  while (std::chrono::steady_clock::now() < until && read_some(fd, &got, closed)) {
  }
  return got;
}

// One whole answer on fd (its head and Content-Length bytes of body), within
// `wait_ms`; *closed: the server ended the connection meanwhile.
inline std::string receive_response(int fd, int wait_ms, bool* closed) {
  std::string got;
  *closed = false;
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  while (std::chrono::steady_clock::now() < until) {
    size_t end = got.find("\r\n\r\n");
    if (end != std::string::npos) {
      size_t length = 0;
      size_t at = got.find("Content-Length: ");
      if (at != std::string::npos && at < end) length = std::stoul(got.substr(at + 16));
      if (got.size() >= end + 4 + length) break;
    }
    if (!read_some(fd, &got, closed)) break;
  }
  return got;
}

// Sends `request` on a new connection from 127.0.0.1 and reads until the
// server closes it or `wait_ms` pass. *closed: whether it closed.
inline std::string exchange(int port, const std::string& request, int wait_ms, bool* closed) {
  int fd = connect_from("127.0.0.1", port);
  REQUIRE(send_all(fd, request));
  std::string answer = receive(fd, wait_ms, closed);
  close(fd);
  return answer;
}

}  // namespace referee::testing
