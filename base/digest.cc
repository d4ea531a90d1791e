#include "base/digest.h"

#include <openssl/evp.h>
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

std::string sha256_hex(std::string_view bytes) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), md, &len, EVP_sha256(), nullptr) != 1) return "";
  return hex(md, len);
}

std::string sha256_file_hex(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) return "";
  std::vector<char> buf(1 << 16);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    if (in.gcount() > 0) EVP_DigestUpdate(ctx.get(), buf.data(), static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) return "";
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned len = 0;
  if (EVP_DigestFinal_ex(ctx.get(), md, &len) != 1) return "";
  return hex(md, len);
}

std::string blake2b_hex(std::string_view bytes, size_t out_bytes) {
  unsigned char out[crypto_generichash_BYTES_MAX];
  if (out_bytes < crypto_generichash_BYTES_MIN || out_bytes > crypto_generichash_BYTES_MAX) return "";
  crypto_generichash(out, out_bytes, reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), nullptr, 0);
  return hex(out, out_bytes);
}

}  // namespace referee::base
