#include "server/guard.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/utc_time.h"

namespace referee::server::guard {
namespace {

using Clock = std::chrono::steady_clock;

// Descriptors below this are guarded; a connection on a higher one (a
// process with more than 65536 open files) is served unguarded.
constexpr int kGuardedFds = 1 << 16;

// The system calls themselves: the functions of the same name below are
// this program's, and the C library's are not called (a sanitizer's
// interceptor would be, and has nothing to add here).
ssize_t sys_read(int fd, void* buf, size_t n) { return syscall(SYS_read, fd, buf, n); }
ssize_t sys_recv(int fd, void* buf, size_t n, int flags) {
  return syscall(SYS_recvfrom, fd, buf, n, flags, nullptr, nullptr);
}
int sys_close(int fd) { return static_cast<int>(syscall(SYS_close, fd)); }
int sys_accept(int fd, sockaddr* addr, socklen_t* len) { return static_cast<int>(syscall(SYS_accept4, fd, addr, len, 0)); }

enum class Phase {
  Idle,       // no byte of the next request yet
  Head,       // its request line and headers are arriving
  Body,       // its body is due
  Answering,  // being answered
  Closing,    // ended by the guard
};

struct Conn {
  ino_t ino = 0;  // the socket's inode: the descriptor still holds this connection
  std::string addr;
  int port = 0;
  Phase phase = Phase::Idle;
  Clock::time_point since;     // Head: its first byte
  Clock::time_point deadline;  // Body
  size_t head_bytes = 0;
};

struct State {
  std::mutex mu;
  std::unordered_map<int, Conn> conns;  // by descriptor
  Limits limits;
};

// Never destroyed: close() reaches it until the process ends.
State& state() {
  static State* s = new State;
  return *s;
}

std::atomic<bool> g_started{false};
std::atomic<unsigned char> g_guarded[kGuardedFds];

bool guarded(int fd) {
  return g_started.load(std::memory_order_relaxed) && fd >= 0 && fd < kGuardedFds &&
         g_guarded[fd].load(std::memory_order_acquire) != 0;
}

void log_line(const std::string& addr, int port, int status, const std::string& why) {
  // The request log's columns (time, method, path, status, time taken,
  // user), then what happened.
  std::fprintf(stderr, "%s - - %d 0.0ms - closed the connection from %s port %d: %s\n", base::utc_now().c_str(), status,
               addr.c_str(), port, why.c_str());
}

// An answer written without waiting (the socket's buffer takes it or it
// is lost), for a connection about to be closed. https gets none: plain
// text would not be a TLS record.
void answer(int fd, int status, const char* reason, const std::string& message, int retry_after = 0) {
  if (state().limits.tls) return;
  std::string body = "{\"error\":{\"status\":" + std::to_string(status) + ",\"code\":\"";
  body += status == 503 ? "too-many-connections" : status == 408 ? "request-timeout" : "headers-too-large";
  body += "\",\"message\":\"" + message + "\"}}\n";
  std::string text = "HTTP/1.1 " + std::to_string(status) + " " + reason + "\r\n";
  text += "Content-Type: application/json\r\nConnection: close\r\n";
  if (retry_after > 0) text += "Retry-After: " + std::to_string(retry_after) + "\r\n";
  text += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  (void)::send(fd, text.data(), text.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
}

// Under the lock: end a connection (its worker, waiting to read, reads
// the end and closes it).
void end(int fd, Conn& c) {
  c.phase = Phase::Closing;
  ::shutdown(fd, SHUT_RDWR);
}

// The peer's address as httplib writes it in Request::remote_addr
// (getnameinfo, numeric), and its port.
std::string peer_of(int fd, int* port) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  *port = 0;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return "?";
  if (ss.ss_family == AF_INET) *port = ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
  else if (ss.ss_family == AF_INET6) *port = ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
  char host[NI_MAXHOST];
  if (getnameinfo(reinterpret_cast<sockaddr*>(&ss), len, host, sizeof host, nullptr, 0, NI_NUMERICHOST) != 0) return "?";
  return host;
}

bool same_socket(int fd, ino_t ino) {
  struct stat st {};
  return fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode) && st.st_ino == ino;
}

// A read of `n` bytes on a guarded connection; false: the guard ended it
// (the read is reported as the end of the stream).
bool on_bytes(int fd, size_t n) {
  State& s = state();
  std::string addr;
  int port = 0;
  {
    std::lock_guard<std::mutex> l(s.mu);
    auto it = s.conns.find(fd);
    if (it == s.conns.end()) return true;
    Conn& c = it->second;
    if (c.phase == Phase::Closing) return false;
    if (c.phase == Phase::Idle) {
      c.phase = Phase::Head;
      c.since = Clock::now();
      c.head_bytes = 0;
    }
    if (c.phase != Phase::Head) return true;
    c.head_bytes += n;
    if (c.head_bytes <= s.limits.max_head_bytes) return true;
    answer(fd, 431, "Request Header Fields Too Large",
           "the request's head (request line and headers) is over " + std::to_string(s.limits.max_head_bytes) + " bytes");
    end(fd, c);
    addr = c.addr;
    port = c.port;
  }
  log_line(addr, port, 431, "request head over " + std::to_string(s.limits.max_head_bytes) + " bytes");
  return false;
}

// Ends connections past their time, every 100 ms.
void watchdog() {
  State& s = state();
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    struct Ended {
      Conn c;
      int status;
      std::string why;
    };
    std::vector<Ended> ended;
    {
      std::lock_guard<std::mutex> l(s.mu);
      const auto now = Clock::now();
      const auto head = std::chrono::seconds(s.limits.head_timeout_s);
      for (auto it = s.conns.begin(); it != s.conns.end();) {
        int fd = it->first;
        Conn& c = it->second;
        if (!same_socket(fd, c.ino)) {  // closed by a call the guard did not see
          g_guarded[fd].store(0, std::memory_order_release);
          it = s.conns.erase(it);
          continue;
        }
        if (c.phase == Phase::Head && now - c.since > head) {
          answer(fd, 408, "Request Timeout",
                 "the request's headers did not arrive within " + std::to_string(s.limits.head_timeout_s) + " s");
          end(fd, c);
          ended.push_back({c, 408, "headers not complete " + std::to_string(s.limits.head_timeout_s) + " s after their first byte"});
        } else if (c.phase == Phase::Body && now > c.deadline) {
          end(fd, c);
          ended.push_back({c, 408, "request body not complete in time"});
        }
        ++it;
      }
    }
    for (const auto& e : ended) log_line(e.c.addr, e.c.port, e.status, e.why);
  }
}

// The connection of that peer and its descriptor (*fd), or null. Under the lock.
Conn* find_peer(State& s, const std::string& addr, int port, int* fd = nullptr) {
  for (auto& [d, c] : s.conns)
    if (c.port == port && c.addr == addr) {
      if (fd) *fd = d;
      return &c;
    }
  return nullptr;
}

}  // namespace

void start(const Limits& limits) {
  bool was = false;
  if (!g_started.compare_exchange_strong(was, true)) return;
  {
    std::lock_guard<std::mutex> l(state().mu);
    state().limits = limits;
  }
  std::thread(watchdog).detach();
}

void head_done(const std::string& peer_addr, int peer_port, size_t content_length) {
  State& s = state();
  std::lock_guard<std::mutex> l(s.mu);
  if (Conn* c = find_peer(s, peer_addr, peer_port); c && c->phase != Phase::Closing) {
    c->phase = Phase::Body;
    const size_t rate = s.limits.body_bytes_per_s ? s.limits.body_bytes_per_s : 1;
    c->deadline = Clock::now() + std::chrono::seconds(s.limits.head_timeout_s) +
                  std::chrono::seconds(static_cast<long>(content_length / rate));
  }
}

void answering(const std::string& peer_addr, int peer_port) {
  State& s = state();
  std::lock_guard<std::mutex> l(s.mu);
  if (Conn* c = find_peer(s, peer_addr, peer_port); c && c->phase != Phase::Closing) c->phase = Phase::Answering;
}

int descriptor_of(const std::string& peer_addr, int peer_port) {
  State& s = state();
  std::lock_guard<std::mutex> l(s.mu);
  int fd = -1;
  find_peer(s, peer_addr, peer_port, &fd);
  return fd;
}

bool crowded(int workers) {
  State& s = state();
  std::lock_guard<std::mutex> l(s.mu);
  return static_cast<int>(s.conns.size()) >= workers;
}

void answered(const std::string& peer_addr, int peer_port) {
  State& s = state();
  std::lock_guard<std::mutex> l(s.mu);
  if (Conn* c = find_peer(s, peer_addr, peer_port); c && c->phase != Phase::Closing) c->phase = Phase::Idle;
}

}  // namespace referee::server::guard

// ------------------------------------------------------------ interposed
// httplib (a shared library) calls these by name; the program's own
// definitions come first in the lookup. Each does what the C library's
// does, plus the guard's bookkeeping on guarded connections.

extern "C" int accept(int fd, sockaddr* addr, socklen_t* len) {
  namespace g = referee::server::guard;
  int s = g::sys_accept(fd, addr, len);
  if (s < 0 || !g::g_started.load(std::memory_order_relaxed) || s >= g::kGuardedFds) return s;
  g::State& st = g::state();
  int port = 0;
  std::string peer = g::peer_of(s, &port);
  struct stat info {};
  fstat(s, &info);
  int refused = 0;
  {
    std::lock_guard<std::mutex> l(st.mu);
    int from_peer = 0;
    for (const auto& [other, c] : st.conns) from_peer += c.addr == peer;
    if (static_cast<int>(st.conns.size()) >= st.limits.total) {
      refused = 1;
    } else if (from_peer >= st.limits.per_address) {
      refused = 2;
    } else {
      g::Conn c;
      c.ino = info.st_ino;
      c.addr = peer;
      c.port = port;
      st.conns[s] = c;
      g::g_guarded[s].store(1, std::memory_order_release);
    }
  }
  if (!refused) return s;
  const std::string why = refused == 1 ? "the server has " + std::to_string(st.limits.total) + " connections open"
                                       : "address " + peer + " has " + std::to_string(st.limits.per_address) +
                                             " connections open, the most one address may";
  g::answer(s, 503, "Service Unavailable", why + "; try again later", 1);
  ::shutdown(s, SHUT_WR);
  g::sys_close(s);
  g::log_line(peer, port, 503, why);
  // httplib waits a millisecond and accepts the next connection.
  errno = EMFILE;
  return -1;
}

extern "C" ssize_t recv(int fd, void* buf, size_t n, int flags) {
  namespace g = referee::server::guard;
  ssize_t r = g::sys_recv(fd, buf, n, flags);
  if (r > 0 && !(flags & MSG_PEEK) && g::guarded(fd) && !g::on_bytes(fd, static_cast<size_t>(r))) return 0;
  return r;
}

extern "C" ssize_t read(int fd, void* buf, size_t n) {
  namespace g = referee::server::guard;
  ssize_t r = g::sys_read(fd, buf, n);
  if (r > 0 && g::guarded(fd) && !g::on_bytes(fd, static_cast<size_t>(r))) return 0;
  return r;
}

extern "C" int close(int fd) {
  namespace g = referee::server::guard;
  if (g::guarded(fd)) {
    g::State& st = g::state();
    std::lock_guard<std::mutex> l(st.mu);
    st.conns.erase(fd);
    g::g_guarded[fd].store(0, std::memory_order_release);
    return g::sys_close(fd);  // under the lock: the descriptor is not reused before the entry is gone
  }
  return g::sys_close(fd);
}
