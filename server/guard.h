// The connection guard of `referee serve`: the limits cpp-httplib 0.11.4
// (Debian 12's) has no setting for, kept around it.
//
// httplib serves each connection on one worker thread until it ends. It
// reads a request's header lines one at a time, with a timeout per read and
// none for the whole, in any number, and it accepts every connection it is
// offered. So a caller trickling a byte every few seconds, or sending header
// lines without end, or opening more connections than there are workers,
// holds the server (and its memory) without ever being authenticated.
//
// The guard watches each accepted connection:
//   - connections open at once from one address are bounded
//     (Limits::per_address) and in all (Limits::total); one more is answered
//     503 with Retry-After and closed at once, before a worker takes it;
//   - a request's head (request line and header lines; for https the TLS
//     handshake too) must arrive within Limits::head_timeout_s of its first
//     byte, and be at most Limits::max_head_bytes; otherwise the connection
//     is answered 408 or 431 and closed;
//   - its body must arrive within head_timeout_s plus one second per
//     Limits::body_bytes_per_s of its Content-Length; otherwise it is closed.
// What it closes and why goes to the request log (stderr), one line each.
//
// How: httplib's accept, recv and close (and OpenSSL's read, for https) are
// calls into the C library that this program provides first (symbol
// interposition): each passes the call on unchanged, and on a guarded
// connection counts what it reads. A watchdog thread ends connections past
// their time with shutdown(2), which wakes the worker waiting on them. Only
// connections accepted after start() are guarded; every other descriptor
// takes one extra atomic load per call.
#pragma once

#include <cstddef>
#include <string>

namespace referee::server::guard {

struct Limits {
  int per_address = 8;               // connections open at once from one address
  int total = 256;                   // connections open at once from all
  int head_timeout_s = 10;           // first byte of a request to the end of its headers
  size_t max_head_bytes = 64 * 1024;  // request line and headers (with TLS, the handshake too)
  size_t body_bytes_per_s = 16 * 1024;  // slowest body accepted, after head_timeout_s
  bool tls = false;                  // https: close without an HTTP answer
};

// Guards the connections accepted from now on (once per process).
void start(const Limits& limits);

// A request's headers arrived (pre-routing) from the connection of that
// peer: its body, of `content_length` bytes, is due next.
void head_done(const std::string& peer_addr, int peer_port, size_t content_length);
// The request is being answered (its body is read): no deadline until the
// answer is sent.
void answering(const std::string& peer_addr, int peer_port);
// The answer was sent: the connection waits for its next request.
void answered(const std::string& peer_addr, int peer_port);

// Whether at least `workers` connections are open: every worker may be
// taken, so a connection that waits for its next request (keep-alive) holds
// one that another caller needs. Such a connection is closed after its answer.
bool crowded(int workers);

// The descriptor of the connection of that peer, or -1. For the thread
// serving that connection (the descriptor is not closed meanwhile).
int descriptor_of(const std::string& peer_addr, int peer_port);

}  // namespace referee::server::guard
