#include "base/digest.h"

#include <doctest/doctest.h>

#include <fstream>

#include "tests/temp_dir.h"

namespace referee::base {

TEST_SUITE("base") {
  TEST_CASE("hex: two lower-case digits per byte, high nibble first") {
    CHECK(hex(std::string_view("\x01\xab\xff\x00", 4)) == "01abff00");
    CHECK(hex("") == "");
    const unsigned char raw[] = {0xde, 0xad, 0xbe, 0xef};
    CHECK(hex(raw, sizeof raw) == "deadbeef");
    std::string out;
    append_hex(&out, 0x3c, /*upper=*/true);
    CHECK(out == "3C");
    CHECK(hex_digit(10) == 'a');
    CHECK(hex_digit(15, true) == 'F');
  }

  TEST_CASE("SHA-256: the standard test vectors") {
    CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
          "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  }

  TEST_CASE("SHA-256 of a file equals that of its bytes, read in pieces; unreadable is empty") {
    testing::TempDir t;
    std::string big(200000, 'x');
    for (size_t i = 0; i < big.size(); i += 7) big[i] = static_cast<char>(i & 0xff);
    auto p = t.path / "data.bin";
    std::ofstream(p, std::ios::binary) << big;
    CHECK(sha256_file_hex(p.string()) == sha256_hex(big));
    CHECK(sha256_file_hex((t.path / "missing").string()) == "");
    Sha256 pieces;
    for (size_t i = 0; i < big.size(); i += 4093) pieces.update(std::string_view(big).substr(i, 4093));
    CHECK(pieces.hex_digest() == sha256_hex(big));
  }

  TEST_CASE("BLAKE2b: the reference vectors, 32 and 64 bytes") {
    CHECK(blake2b_hex("") == "0e5751c026e543b2e8ab2eb06099daa1d1e5df47778f7787faab45cdf12fe3a8");
    CHECK(blake2b_hex("abc") == "bddd813c634239723171ef3fee98579b94964e3bb1cb3e427262c8c068d52319");
    CHECK(blake2b_hex("abc", 64) ==
          "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d17d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923");
    CHECK(blake2b_hex("abc", 8) == "");  // below libsodium's minimum
  }

  TEST_CASE("hmac_sha256_hex: RFC 4231 test cases 2, 3 and 6, and an empty key") {
    CHECK(hmac_sha256_hex("Jefe", "what do ya want for nothing?") ==
          "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    CHECK(hmac_sha256_hex(std::string(20, '\xaa'), std::string(50, '\xdd')) ==
          "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
    // A key longer than SHA-256's block (64 bytes) is hashed first.
    CHECK(hmac_sha256_hex(std::string(131, '\xaa'), "Test Using Larger Than Block-Size Key - Hash Key First") ==
          "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
    CHECK(hmac_sha256_hex("", "") == "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad");
  }
}

}  // namespace referee::base
