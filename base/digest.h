// Hex encoding and the digests referee uses: SHA-256 (OpenSSL's EVP
// interface) for files, rule sets, packages and the audit chain, BLAKE2b
// (libsodium) for API tokens. The one hex encoder of the tree: lower-case
// digits, two per byte.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace referee::base {

// The hex digit of `v` (0..15): '0'-'9', then 'a'-'f' (or 'A'-'F' when `upper`).
inline char hex_digit(unsigned v, bool upper = false) {
  return (upper ? "0123456789ABCDEF" : "0123456789abcdef")[v & 15];
}

// Appends the two hex digits of `byte` (high nibble first) to *out.
inline void append_hex(std::string* out, unsigned char byte, bool upper = false) {
  out->push_back(hex_digit(byte >> 4, upper));
  out->push_back(hex_digit(byte & 15, upper));
}

// `bytes` as lower-case hex, two digits per byte: hex("\x01\xab") == "01ab".
std::string hex(std::string_view bytes);
std::string hex(const unsigned char* bytes, size_t n);

// The SHA-256 of `bytes`, as 64 lower-case hex digits.
std::string sha256_hex(std::string_view bytes);

// HMAC-SHA256 of `message` under `key` (RFC 2104), as 64 lower-case hex
// digits; "" if OpenSSL failed. Webhook deliveries are signed with it.
std::string hmac_sha256_hex(std::string_view key, std::string_view message);

// The SHA-256 of the file at `path`, read in pieces; "" when it cannot be read.
std::string sha256_file_hex(const std::string& path);

// SHA-256 of bytes that arrive in pieces: update() with each, then
// hex_digest() once (64 lower-case hex digits; "" if OpenSSL failed).
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(std::string_view bytes);
  std::string hex_digest();

 private:
  void* ctx_;  // SHA256_CTX
  bool ok_;
};

// The unkeyed BLAKE2b of `bytes` with a digest of `out_bytes` bytes (16 to
// 64; libsodium's crypto_generichash), as lower-case hex. API tokens are
// stored as blake2b_hex(token) (32 bytes: 64 digits).
std::string blake2b_hex(std::string_view bytes, size_t out_bytes = 32);

}  // namespace referee::base
