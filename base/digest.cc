#include "base/digest.h"

#include <openssl/sha.h>
#include <sodium.h>

#include <fstream>
#include <memory>
#include <vector>

namespace referee::base {

std::string hex(const unsigned char* bytes, size_t n) {
  std::string out;
  out.reserve(2 * n);
  for (size_t i = 0; i < n; ++i) append_hex(&out, bytes[i]);
  return out;
}

std::string hex(std::string_view bytes) {
  return hex(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
}

// SHA-256 through OpenSSL's SHA256_* functions, deprecated in OpenSSL 3 in
// favour of EVP: the first EVP digest loads the library's configuration
// file and sets up its providers, which costs a command that checks one log
// a few percent of its time. The SHA256_* functions run the same assembly.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

std::string sha256_hex(std::string_view bytes) {
  unsigned char md[SHA256_DIGEST_LENGTH];
  SHA256_CTX ctx;  // not SHA256(): in OpenSSL 3 that goes through EVP
  if (SHA256_Init(&ctx) != 1 || SHA256_Update(&ctx, bytes.data(), bytes.size()) != 1 || SHA256_Final(md, &ctx) != 1)
    return "";
  return hex(md, sizeof md);
}

Sha256::Sha256() : ctx_(new SHA256_CTX) { ok_ = SHA256_Init(static_cast<SHA256_CTX*>(ctx_)) == 1; }

Sha256::~Sha256() { delete static_cast<SHA256_CTX*>(ctx_); }

void Sha256::update(std::string_view bytes) {
  if (ok_ && !bytes.empty()) ok_ = SHA256_Update(static_cast<SHA256_CTX*>(ctx_), bytes.data(), bytes.size()) == 1;
}

std::string Sha256::hex_digest() {
  unsigned char md[SHA256_DIGEST_LENGTH];
  if (!ok_ || SHA256_Final(md, static_cast<SHA256_CTX*>(ctx_)) != 1) return "";
  ok_ = false;
  return hex(md, sizeof md);
}

#pragma GCC diagnostic pop

// HMAC through libsodium: OpenSSL's HMAC() goes through EVP, which links
// its providers' tables into the program and gives every start of it some
// thousands more relocations to apply.
std::string hmac_sha256_hex(std::string_view key, std::string_view message) {
  if (sodium_init() < 0) return "";
  unsigned char md[crypto_auth_hmacsha256_BYTES];
  crypto_auth_hmacsha256_state st;
  if (crypto_auth_hmacsha256_init(&st, reinterpret_cast<const unsigned char*>(key.data()), key.size()) != 0 ||
      crypto_auth_hmacsha256_update(&st, reinterpret_cast<const unsigned char*>(message.data()), message.size()) != 0 ||
      crypto_auth_hmacsha256_final(&st, md) != 0)
    return "";
  return hex(md, sizeof md);
}


std::string sha256_file_hex(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  Sha256 sha;
  std::vector<char> buf(1 << 16);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    if (in.gcount() > 0) sha.update(std::string_view(buf.data(), static_cast<size_t>(in.gcount())));
  }
  if (in.bad()) return "";
  return sha.hex_digest();
}

std::string blake2b_hex(std::string_view bytes, size_t out_bytes) {
  unsigned char out[crypto_generichash_BYTES_MAX];
  if (out_bytes < crypto_generichash_BYTES_MIN || out_bytes > crypto_generichash_BYTES_MAX) return "";
  crypto_generichash(out, out_bytes, reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), nullptr, 0);
  return hex(out, out_bytes);
}

}  // namespace referee::base
