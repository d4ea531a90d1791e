#include "base/url.h"

#include <doctest/doctest.h>

namespace referee::base {

TEST_SUITE("base") {
  TEST_CASE("percent_encode keeps the unreserved characters, upper-case %XX for the rest") {
    CHECK(percent_encode("AZaz09-._~") == "AZaz09-._~");
    CHECK(percent_encode("a b+c/d?e=f&g") == "a%20b%2Bc%2Fd%3Fe%3Df%26g");
    CHECK(percent_encode("\xff\x01") == "%FF%01");
    CHECK(percent_encode("Größe") == "Gr%C3%B6%C3%9Fe");
    auto keep_slash = [](unsigned char c) { return c == '/' || (c >= 'a' && c <= 'z'); };
    CHECK(percent_encode("/tmp/a b", keep_slash) == "/tmp/a%20b");
  }

  TEST_CASE("percent_decode: '+' is a space only in form-urlencoded text") {
    CHECK(percent_decode("a+b%20c") == std::optional<std::string>("a+b c"));
    CHECK(percent_decode("a+b%20c", Plus::Space) == std::optional<std::string>("a b c"));
    CHECK(percent_decode_lenient("a+b", Plus::Literal) == "a+b");
    CHECK(percent_decode_lenient("a+b", Plus::Space) == "a b");
    CHECK(percent_decode("%2b%2B") == std::optional<std::string>("++"));
    CHECK(percent_decode("%2F%c3%b6") == std::optional<std::string>("/\xc3\xb6"));
    CHECK(percent_decode("%00") == std::optional<std::string>(std::string(1, '\0')));
  }

  TEST_CASE("a '%' without two hex digits: refused strictly, kept leniently") {
    for (const char* bad : {"%", "%4", "a%zz", "%G1", "100%", "%%41"}) {
      CAPTURE(bad);
      CHECK_FALSE(percent_decode(bad).has_value());
    }
    CHECK(percent_decode_lenient("100%") == "100%");
    CHECK(percent_decode_lenient("a%zzb%41") == "a%zzbA");
    CHECK(percent_decode_lenient("%%41") == "%A");
    CHECK(percent_decode_lenient("%4") == "%4");
  }

  TEST_CASE("encode then decode gives the bytes back") {
    std::string all;
    for (int c = 0; c < 256; ++c) all.push_back(static_cast<char>(c));
    CHECK(percent_decode(percent_encode(all)) == std::optional<std::string>(all));
  }

  TEST_CASE("form_field: one field of an application/x-www-form-urlencoded body") {
    std::string body = "user=ann+lee&token=rft_%41b&empty=&bare&user=second";
    CHECK(form_field(body, "user") == "ann lee");  // the first of several
    CHECK(form_field(body, "token") == "rft_Ab");
    CHECK(form_field(body, "empty") == "");
    CHECK(form_field(body, "bare") == "");
    CHECK(form_field(body, "missing") == "");
    CHECK(form_field("", "a") == "");
    CHECK(form_field("a=50%", "a") == "50%");
  }

  TEST_CASE("url_host and is_loopback_host: only localhost, 127.0.0.0/8 and ::1 are this machine") {
    CHECK(url_host("http://127.0.0.1:8080/api/v1") == "127.0.0.1");
    CHECK(url_host("https://[::1]:8443/x") == "::1");
    CHECK(url_host("https://user:pw@review.example.org/") == "review.example.org");
    CHECK(url_host("http://host?x=1") == "host");
    CHECK(url_host("not a url") == "");
    for (const char* yes : {"localhost", "127.0.0.1", "127.1.2.3", "::1"}) CHECK_MESSAGE(is_loopback_host(yes), yes);
    for (const char* no : {"0.0.0.0", "::", "10.0.0.1", "127.0.0.1.example.org", "127.0.0", "127.0.0.1234", "localhost.evil",
                           "", "1127.0.0.1", "example.org"})
      CHECK_MESSAGE(!is_loopback_host(no), no);
  }

  TEST_CASE("host_header_name and is_ip_literal: the name of a Host header; addresses apart from names") {
    CHECK(host_header_name("Review.Example.org:8080") == "review.example.org");
    CHECK(host_header_name("review.example.org.") == "review.example.org");
    CHECK(host_header_name("[::1]:8443") == "::1");
    CHECK(host_header_name("[::1]") == "::1");
    CHECK(host_header_name("127.0.0.1") == "127.0.0.1");
    for (const char* bad : {"", "[::1", "[::1]x", "host:80x", "a:b:c", "host:8080 ", "localhos%74", "x@y", "*.wild.example",
                            "evil example"})
      CHECK_MESSAGE(host_header_name(bad).empty(), bad);
    CHECK(host_header_name(std::string("localhost\0evil", 14)).empty());
    for (const char* yes : {"127.0.0.1", "10.1.2.3", "0.0.0.0", "::1", "fe80::1", "2001:db8::5"}) CHECK_MESSAGE(is_ip_literal(yes), yes);
    for (const char* no : {"localhost", "example.org", "127.0.0.1.nip.io", "1.2.3", "", "::g", "127.0.0.1 "})
      CHECK_MESSAGE(!is_ip_literal(no), no);
  }
}

}  // namespace referee::base
