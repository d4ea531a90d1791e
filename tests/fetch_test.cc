// `referee rules fetch` / `rules list` against a real HTTP server
// (cpp-httplib on 127.0.0.1, ephemeral port) serving archives built here.
#include <archive_entry.h>
#include <doctest/doctest.h>
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/digest.h"
#include "rules/fetch.h"
#include "rules/ruleset.h"
#include "rules/source.h"
#include "tests/archive_builder.h"
#include "tests/http_fixture.h"
#include "tests/run_referee.h"
#include "tests/temp_dir.h"

namespace fs = std::filesystem;
using namespace referee;
using namespace referee::testing;

namespace {

// ------------------------------------------------------------ helpers

// A fresh REFEREE_CACHE for one test case, under a parent folder that tests
// can inspect for files an unsafe archive might have written.
struct CacheEnv {
  TempDir top{"referee-fetch-"};
  fs::path cache = top.path / "cache";
  EnvVar var{"REFEREE_CACHE", cache.string()};
  CacheEnv() { fs::create_directories(cache); }
  fs::path rules() const { return cache / "rules"; }
};

const char* kCommonYaml =
    "- KEY:\n"
    "    NAME: submission_org\n"
    "    REQ: EXACTLY_ONE\n";
const char* kClosedYaml =
    "- KEY:\n"
    "    NAME: submission_division\n"
    "    REQ: EXACTLY_ONE\n"
    "    CHECK: \" v['value'] == 'closed' \"\n";
const char* kRcpJson = "{\"bert_ref_1\": {\"Benchmark\": \"bert\", \"BS\": 256, \"Epochs to converge\": [1.0, 1.1]}}\n";

// A small logging package shaped like the GitHub release archive.
std::vector<Entry> package(const std::string& top = "logging-4.1.59", const std::string& marker = "") {
  std::string p = top + "/mlperf_logging/";
  return {
      {top + "/", "", AE_IFDIR},
      {top + "/README.md", "# logging\n"},
      {p + "__init__.py", ""},
      {p + "compliance_checker/", "", AE_IFDIR},
      {p + "compliance_checker/mlp_compliance.py", "print('hi')\n"},
      {p + "compliance_checker/training_3.1.0/", "", AE_IFDIR},
      {p + "compliance_checker/training_3.1.0/common.yaml", std::string(kCommonYaml) + marker},
      {p + "compliance_checker/training_3.1.0/closed_common.yaml", kClosedYaml},
      {p + "compliance_checker/training_3.1.0/README.md", "notes\n"},
      {p + "compliance_checker/training_4.0.0/common.yaml", kCommonYaml},
      {p + "rcp_checker/rcp_checker.py", "pass\n"},
      {p + "rcp_checker/training_3.1.0/rcps_bert.json", kRcpJson},
      {p + "rcp_checker/training_3.1.0/notes.txt", "x\n"},
  };
}

// ------------------------------------------------------------ HTTP server

// Sends `data` with Content-Length = data.size(), honouring Range requests,
// but the first `drop_times` responses stop after `cut` bytes (of the whole
// file) and close the connection.
void serve_dropping(Server& s, const std::string& path, std::shared_ptr<std::string> data, size_t cut, int drop_times) {
  auto count = std::make_shared<std::atomic<int>>(0);
  s.srv.Get(path, [&s, data, cut, drop_times, count](const httplib::Request& req, httplib::Response& res) {
    s.record(req);
    bool drop = (*count)++ < drop_times;
    res.set_content_provider(data->size(), "application/gzip",
                             [data, cut, drop](size_t offset, size_t length, httplib::DataSink& sink) {
                               size_t end = offset + length;
                               if (drop) {
                                 if (offset >= cut) return false;  // abort: the connection closes mid-body
                                 end = std::min(end, cut);
                               }
                               sink.write(data->data() + offset, end - offset);
                               return true;
                             });
  });
}

struct Outcome {
  bool ok = false;
  std::string error;
  rules::FetchResult result;
};

Outcome fetch(const std::string& tag, const std::string& from, const std::string& sha = "",
              rules::Fetcher* fetcher = nullptr) {
  Outcome o;
  rules::CurlFetcher curl(fast_curl_options());
  o.ok = rules::fetch_rules({tag, from, sha}, fetcher ? *fetcher : curl, &o.result, &o.error);
  return o;
}

bool contains(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

// Nothing but installed tags in <cache>/rules: no .tmp-, .staging- or .old- folders.
std::vector<std::string> rules_entries(const CacheEnv& env) {
  std::vector<std::string> out;
  std::error_code ec;
  if (!fs::exists(env.rules())) return out;
  for (const auto& e : fs::directory_iterator(env.rules(), ec)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_SUITE("fetch") {

TEST_CASE("fetch installs the rule files and a manifest; list shows them") {
  CacheEnv env;
  auto data = std::make_shared<std::string>(make_archive(package()));
  Server s;
  s.srv.Get("/archive/refs/tags/4.1.59.tar.gz", [&](const httplib::Request& req, httplib::Response& res) {
    s.record(req);
    res.set_content(*data, "application/gzip");
  });
  // GitHub answers with a redirect to codeload; follow it.
  s.srv.Get("/redirect.tar.gz", [&](const httplib::Request& req, httplib::Response& res) {
    s.record(req);
    res.set_redirect("/archive/refs/tags/4.1.59.tar.gz");
  });
  s.start();

  std::string want_sha = base::sha256_hex(*data);
  Outcome o = fetch("4.1.59", s.url("/redirect.tar.gz"), want_sha);
  REQUIRE_MESSAGE(o.ok, o.error);
  fs::path root = env.rules() / "4.1.59";
  CHECK(o.result.dir == root.string());
  CHECK_FALSE(o.result.replaced);
  CHECK(o.result.rulesets == std::vector<std::string>{"training-3.1.0", "training-4.0.0"});

  // Only *.yaml under compliance_checker and *.json under rcp_checker, plus the manifest.
  std::vector<std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(root))
    if (e.is_regular_file()) files.push_back(fs::relative(e.path(), root).string());
  std::sort(files.begin(), files.end());
  CHECK(files == std::vector<std::string>{"compliance_checker/training_3.1.0/closed_common.yaml",
                                          "compliance_checker/training_3.1.0/common.yaml",
                                          "compliance_checker/training_4.0.0/common.yaml", "manifest.json",
                                          "rcp_checker/training_3.1.0/rcps_bert.json"});
  CHECK(read_file(root / "compliance_checker/training_3.1.0/common.yaml") == kCommonYaml);
  CHECK(rules_entries(env) == std::vector<std::string>{"4.1.59"});

  rules::Manifest m;
  std::string err;
  REQUIRE_MESSAGE(rules::read_manifest(root.string(), &m, &err), err);
  CHECK(m.schema == "referee.rules-manifest/1");
  CHECK(m.tag == "4.1.59");
  CHECK(m.source == s.url("/redirect.tar.gz"));
  CHECK(m.sha256 == want_sha);
  CHECK(m.referee_version == REFEREE_VERSION);
  CHECK(m.fetched_at.size() == 20);
  CHECK(m.fetched_at.back() == 'Z');
  REQUIRE(m.files.size() == 4);
  CHECK(m.files[0].path == "compliance_checker/training_3.1.0/closed_common.yaml");
  CHECK(m.files[0].sha256 == base::sha256_hex(kClosedYaml));

  // The cache root is on the search path and resolves the rule set.
  auto roots = rules::cached_rule_roots();
  REQUIRE(roots.size() == 1);
  CHECK(roots[0].root == root.string());
  rules::RuleSource src;
  auto rs = rules::resolve_ruleset("training-3.1.0", "", &src, &err);
  REQUIRE_MESSAGE(rs, err);
  CHECK(src.origin == "cache (release 4.1.59)");

  std::string out;
  CHECK(run_referee("rules list", &out) == 0);
  CHECK(contains(out, root.string()));
  CHECK(contains(out, "release 4.1.59 from " + s.url("/redirect.tar.gz")));
  CHECK(contains(out, want_sha));
  CHECK(contains(out, "* training-3.1.0"));

  CHECK(run_referee("rules list --json", &out) == 0);
  CHECK(contains(out, "\"schema\": \"referee.rules-list/1\""));
  CHECK(contains(out, "\"sha256\": \"" + want_sha + "\""));

  CHECK(run_referee("rules list --ruleset training-3.1.0", &out) == 0);
  CHECK(contains(out, "training-3.1.0 -> " + root.string()));
  CHECK(contains(out, "cache (release 4.1.59)"));
  CHECK(run_referee("rules list --ruleset training-9.9.9", &out) == 2);

  // A --rules root shadows nothing else: it is the only root.
  CHECK(run_referee("rules list --rules " + root.string(), &out) == 0);
  CHECK(contains(out, "--rules " + root.string()));

  // The command end to end: the same tag again replaces the install.
  CHECK(run_referee("rules fetch 4.1.59 --quiet --from " + s.url("/archive/refs/tags/4.1.59.tar.gz") + " --sha256 " +
                        want_sha,
                    &out) == 0);
  CHECK(out.empty());
  CHECK(run_referee("rules fetch --from " + s.url("/archive/refs/tags/4.1.59.tar.gz"), &out) == 0);
  CHECK(contains(out, "replaced rules release 4.1.59"));
  CHECK(rules_entries(env) == std::vector<std::string>{"4.1.59"});
}

TEST_CASE("HTTP 404 leaves the cache unchanged") {
  CacheEnv env;
  Server s;
  s.srv.Get("/ok/4.1.58.tar.gz", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(make_archive(package("logging-4.1.58")), "application/gzip");
  });
  s.srv.Get("/missing/4.1.59.tar.gz", [&](const httplib::Request& req, httplib::Response& res) {
    s.record(req);
    res.status = 404;
    res.set_content("Not Found", "text/plain");
  });
  s.start();

  SUBCASE("empty cache stays empty") {
    Outcome o = fetch("", s.url("/missing/4.1.59.tar.gz"));
    CHECK_FALSE(o.ok);
    CHECK(contains(o.error, "HTTP 404"));
    CHECK(contains(o.error, "fix:"));
    CHECK(snapshot(env.cache).empty());  // not even <cache>/rules
    CHECK(s.hits == 1);                  // a 404 is not retried
  }
  SUBCASE("an earlier install is untouched") {
    REQUIRE(fetch("", s.url("/ok/4.1.58.tar.gz")).ok);
    auto before = snapshot(env.cache);
    Outcome o = fetch("", s.url("/missing/4.1.59.tar.gz"));
    CHECK_FALSE(o.ok);
    CHECK(snapshot(env.cache) == before);
  }
  SUBCASE("the command exits 2 and says what to do") {
    std::string out;
    CHECK(run_referee("rules fetch 4.1.59 --from " + s.url("/missing/4.1.59.tar.gz"), &out) == 2);
    CHECK(contains(out, "HTTP 404"));
    CHECK(contains(out, "fix:"));
    CHECK(snapshot(env.cache).empty());
  }
}

TEST_CASE("HTTP 5xx is retried") {
  CacheEnv env;
  auto data = std::make_shared<std::string>(make_archive(package()));
  Server s;
  s.srv.Get("/flaky/4.1.59.tar.gz", [&](const httplib::Request& req, httplib::Response& res) {
    s.record(req);
    if (s.hits <= 2) {
      res.status = 503;
      res.set_content("busy", "text/plain");
      return;
    }
    res.set_content(*data, "application/gzip");
  });
  s.srv.Get("/down/4.1.59.tar.gz", [&](const httplib::Request& req, httplib::Response& res) {
    s.record(req);
    res.status = 500;
  });
  s.start();
  SUBCASE("third try succeeds") {
    rules::CurlFetcher curl(fast_curl_options());
    rules::FetchResult r;
    std::string err;
    REQUIRE_MESSAGE(rules::fetch_rules({"", s.url("/flaky/4.1.59.tar.gz"), ""}, curl, &r, &err), err);
    CHECK(curl.requests() == 3);
  }
  SUBCASE("gives up after three tries") {
    Outcome o = fetch("", s.url("/down/4.1.59.tar.gz"));
    CHECK_FALSE(o.ok);
    CHECK(contains(o.error, "HTTP 500"));
    CHECK(contains(o.error, "3 attempts"));
    CHECK(s.hits == 3);
    CHECK(snapshot(env.cache).empty());
  }
}

TEST_CASE("a truncated archive leaves the cache unchanged") {
  CacheEnv env;
  // Small (cut inside the first blocks) and large (cut inside a later entry).
  std::vector<Entry> pk = package();
  SUBCASE("small") {}
  SUBCASE("large") {
    std::string filler;
    for (int i = 0; i < 20000; ++i) filler += "# line " + std::to_string(i * 7919 % 100003) + "\n";
    pk.insert(pk.begin() + 7, Entry("logging-4.1.59/mlperf_logging/compliance_checker/training_3.1.0/big.yaml", filler));
  }
  auto data = std::make_shared<std::string>(make_archive(pk));
  auto half = std::make_shared<std::string>(data->substr(0, data->size() / 2));
  Server s;
  s.srv.Get("/old/4.1.58.tar.gz", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(make_archive(package("logging-4.1.58")), "application/gzip");
  });
  // Half the bytes, with a Content-Length that matches them: HTTP sees no error.
  s.srv.Get("/half-cl/4.1.59.tar.gz", [&](const httplib::Request& req, httplib::Response& res) {
    s.record(req);
    res.set_content(*half, "application/gzip");
  });
  // Half the bytes, no Content-Length at all (chunked): HTTP sees no error either.
  s.srv.Get("/half-chunked/4.1.59.tar.gz", [&](const httplib::Request& req, httplib::Response& res) {
    s.record(req);
    res.set_chunked_content_provider("application/gzip", [half](size_t offset, httplib::DataSink& sink) {
      if (offset < half->size()) sink.write(half->data() + offset, half->size() - offset);
      else sink.done();
      return true;
    });
  });
  // The full Content-Length, but the connection closes after half the body, every time.
  serve_dropping(s, "/half-drop/4.1.59.tar.gz", data, data->size() / 2, 100);
  s.start();
  REQUIRE(fetch("", s.url("/old/4.1.58.tar.gz")).ok);
  auto before = snapshot(env.cache);

  for (const char* path : {"/half-cl/4.1.59.tar.gz", "/half-chunked/4.1.59.tar.gz", "/half-drop/4.1.59.tar.gz"}) {
    CAPTURE(path);
    Outcome o = fetch("", s.url(path));
    CHECK_FALSE(o.ok);
    CHECK(contains(o.error, "fix:"));
    if (std::string(path) == "/half-drop/4.1.59.tar.gz") CHECK(contains(o.error, "3 attempts"));
    else CHECK(contains(o.error, "truncated"));
    CHECK(snapshot(env.cache) == before);
  }
  // The drop server saw the retries resume where the body broke off.
  REQUIRE(s.ranges.size() >= 5);
  CHECK(s.ranges[s.ranges.size() - 2] == "bytes=" + std::to_string(data->size() / 2) + "-");
}

TEST_CASE("a checksum mismatch leaves the cache unchanged") {
  CacheEnv env;
  auto data = std::make_shared<std::string>(make_archive(package()));
  Server s;
  s.srv.Get("/r/4.1.59.tar.gz", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(*data, "application/gzip");
  });
  s.start();
  REQUIRE(fetch("", s.url("/r/4.1.59.tar.gz")).ok);
  auto before = snapshot(env.cache);
  std::string wrong(64, 'a');
  Outcome o = fetch("", s.url("/r/4.1.59.tar.gz"), wrong);
  CHECK_FALSE(o.ok);
  CHECK(contains(o.error, "checksum mismatch"));
  CHECK(contains(o.error, wrong));
  CHECK(contains(o.error, base::sha256_hex(*data)));
  CHECK(snapshot(env.cache) == before);

  // Upper-case hex is the same digest.
  std::string upper = base::sha256_hex(*data);
  for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  CHECK(fetch("", s.url("/r/4.1.59.tar.gz"), upper).ok);

  std::string out;
  CHECK(run_referee("rules fetch --from " + s.url("/r/4.1.59.tar.gz") + " --sha256 " + wrong, &out) == 2);
  CHECK(contains(out, "checksum mismatch"));
  CHECK(run_referee("rules fetch --from " + s.url("/r/4.1.59.tar.gz") + " --sha256 xyz", &out) == 2);
}

TEST_CASE("an archive with an escaping or unsafe entry is rejected") {
  CacheEnv env;
  const std::string p = "logging-4.1.59/mlperf_logging/";
  std::map<std::string, std::shared_ptr<std::string>> archives;
  {
    auto evil = package();
    evil.push_back({"../evil.yaml", "pwned\n"});
    archives["/dotdot/4.1.59.tar.gz"] = std::make_shared<std::string>(make_archive(evil));
  }
  {
    auto evil = package();
    evil.insert(evil.begin() + 3, {p + "compliance_checker/training_3.1.0/../../../../../evil.yaml", "pwned\n"});
    archives["/deep/4.1.59.tar.gz"] = std::make_shared<std::string>(make_archive(evil));
  }
  {
    auto evil = package();
    evil.push_back({(env.top.path / "abs-evil.yaml").string(), "pwned\n"});
    archives["/absolute/4.1.59.tar.gz"] = std::make_shared<std::string>(make_archive(evil));
  }
  {
    auto evil = package();
    evil.push_back({p + "compliance_checker/training_3.1.0/link.yaml", "", AE_IFLNK, "/etc/passwd"});
    archives["/symlink/4.1.59.tar.gz"] = std::make_shared<std::string>(make_archive(evil));
  }
  Server s;
  for (const auto& [path, bytes] : archives) {
    auto b = bytes;
    s.srv.Get(path, [b](const httplib::Request&, httplib::Response& res) { res.set_content(*b, "application/gzip"); });
  }
  s.start();
  for (const auto& archive : archives) {
    const auto& [path, bytes] = archive;
    const std::string where = archive.first;  // a copy: doctest's CAPTURE takes it in a lambda
    CAPTURE(where);
    Outcome o = fetch("", s.url(path));
    CHECK_FALSE(o.ok);
    if (path == "/symlink/4.1.59.tar.gz") CHECK(contains(o.error, "symbolic link"));
    else CHECK(contains(o.error, "unsafe path"));
    CHECK(contains(o.error, "nothing was installed"));
    CHECK(snapshot(env.cache).empty());
    CHECK_FALSE(fs::exists(env.top.path / "evil.yaml"));
    CHECK_FALSE(fs::exists(env.top.path / "abs-evil.yaml"));
    CHECK_FALSE(fs::exists(env.cache / "evil.yaml"));
  }
  std::string out;
  CHECK(run_referee("rules fetch --from " + s.url("/dotdot/4.1.59.tar.gz"), &out) == 2);
  CHECK(contains(out, "'../evil.yaml' has an unsafe path"));
}

TEST_CASE("fetching the same tag again replaces the install") {
  CacheEnv env;
  auto a = std::make_shared<std::string>(make_archive(package("logging-4.1.59", "# first\n")));
  auto pb = package("logging-4.1.59", "# second\n");
  pb.erase(std::remove_if(pb.begin(), pb.end(), [](const Entry& e) { return contains(e.path, "training_4.0.0"); }),
           pb.end());
  auto b = std::make_shared<std::string>(make_archive(pb));
  Server s;
  s.srv.Get("/a/4.1.59.tar.gz", [a](const httplib::Request&, httplib::Response& res) {
    res.set_content(*a, "application/gzip");
  });
  s.srv.Get("/b/4.1.59.tar.gz", [b](const httplib::Request&, httplib::Response& res) {
    res.set_content(*b, "application/gzip");
  });
  s.start();
  fs::path root = env.rules() / "4.1.59";
  REQUIRE(fetch("", s.url("/a/4.1.59.tar.gz")).ok);
  CHECK(fs::exists(root / "compliance_checker/training_4.0.0/common.yaml"));
  // Something stale in the old install must not survive the replacement.
  write_file(root / "compliance_checker/training_3.1.0/stale.yaml", "- KEY:\n    NAME: x\n");

  Outcome o = fetch("", s.url("/b/4.1.59.tar.gz"));
  REQUIRE_MESSAGE(o.ok, o.error);
  CHECK(o.result.replaced);
  CHECK(read_file(root / "compliance_checker/training_3.1.0/common.yaml") == std::string(kCommonYaml) + "# second\n");
  CHECK_FALSE(fs::exists(root / "compliance_checker/training_4.0.0"));
  CHECK_FALSE(fs::exists(root / "compliance_checker/training_3.1.0/stale.yaml"));
  rules::Manifest m;
  std::string err;
  REQUIRE(rules::read_manifest(root.string(), &m, &err));
  CHECK(m.sha256 == base::sha256_hex(*b));
  CHECK(rules_entries(env) == std::vector<std::string>{"4.1.59"});  // no .old-/.staging-/.tmp- left
}

TEST_CASE("a download that breaks off mid-body resumes with a Range request") {
  CacheEnv env;
  // Big enough that the break-off is well inside the body.
  auto pk = package();
  std::string filler;
  for (int i = 0; i < 20000; ++i) filler += "# line " + std::to_string(i * 7919 % 100003) + "\n";
  pk.push_back({"logging-4.1.59/mlperf_logging/compliance_checker/training_3.1.0/big.yaml", filler});
  auto data = std::make_shared<std::string>(make_archive(pk));
  const size_t cut = data->size() / 2;
  Server s;
  serve_dropping(s, "/drop-once/4.1.59.tar.gz", data, cut, 1);
  s.start();

  rules::CurlFetcher curl(fast_curl_options());
  rules::FetchResult r;
  std::string err;
  REQUIRE_MESSAGE(rules::fetch_rules({"", s.url("/drop-once/4.1.59.tar.gz"), base::sha256_hex(*data)}, curl, &r, &err),
                  err);
  CHECK(curl.requests() == 2);
  CHECK(curl.resumed() == 1);
  REQUIRE(s.ranges.size() == 2);
  CHECK(s.ranges[0] == "");
  CHECK(s.ranges[1] == "bytes=" + std::to_string(cut) + "-");
  CHECK(r.manifest.sha256 == base::sha256_hex(*data));
  CHECK(read_file(env.rules() / "4.1.59/compliance_checker/training_3.1.0/big.yaml") == filler);
}

TEST_CASE("a server that ignores Range gets a fresh download") {
  CacheEnv env;
  auto data = std::make_shared<std::string>(make_archive(package()));
  const size_t cut = data->size() / 2;
  Server s;
  auto count = std::make_shared<std::atomic<int>>(0);
  s.srv.Get("/norange/4.1.59.tar.gz", [&s, data, cut, count](const httplib::Request& req, httplib::Response& res) {
    s.record(req);
    bool drop = (*count)++ == 0;
    // A chunked body: no Content-Length, so no byte ranges either.
    res.set_chunked_content_provider("application/gzip", [data, cut, drop](size_t offset, httplib::DataSink& sink) {
      if (drop && offset >= cut) return false;
      if (offset >= data->size()) {
        sink.done();
        return true;
      }
      size_t end = drop ? cut : data->size();
      sink.write(data->data() + offset, end - offset);
      return true;
    });
  });
  s.start();
  rules::CurlFetcher curl(fast_curl_options());
  rules::FetchResult r;
  std::string err;
  REQUIRE_MESSAGE(rules::fetch_rules({"", s.url("/norange/4.1.59.tar.gz"), base::sha256_hex(*data)}, curl, &r, &err),
                  err);
  CHECK(r.manifest.sha256 == base::sha256_hex(*data));
  // Dropped, then a Range request that the server answers with the whole
  // body (curl refuses it), then a fresh download from byte 0.
  CHECK(curl.requests() == 3);
  REQUIRE(s.ranges.size() == 3);
  CHECK(s.ranges[1] == "bytes=" + std::to_string(cut) + "-");
  CHECK(s.ranges[2] == "");
}

TEST_CASE("the download seam, archive formats and local sources") {
  CacheEnv env;
  FakeFetcher fake;

  SUBCASE("the default tag names the GitHub release archive") {
    fake.bytes = make_archive(package());
    Outcome o = fetch("", "", "", &fake);
    REQUIRE_MESSAGE(o.ok, o.error);
    REQUIRE(fake.urls.size() == 1);
    CHECK(fake.urls[0] == "https://github.com/mlcommons/logging/archive/refs/tags/4.1.59.tar.gz");
    CHECK(std::string(rules::kDefaultRulesTag) == "4.1.59");
    CHECK(o.result.manifest.tag == "4.1.59");
  }
  SUBCASE("a zip with another top folder") {
    fake.bytes = make_archive(package("some-fork-main"), "zip");
    Outcome o = fetch("5.0.0", "https://example.invalid/fork.zip", "", &fake);
    REQUIRE_MESSAGE(o.ok, o.error);
    CHECK(fs::exists(env.rules() / "5.0.0/compliance_checker/training_3.1.0/common.yaml"));
    CHECK(fs::exists(env.rules() / "5.0.0/rcp_checker/training_3.1.0/rcps_bert.json"));
  }
  SUBCASE("a package at the archive's top") {
    std::vector<Entry> flat;
    for (auto e : package()) {
      e.path = e.path.substr(std::string("logging-4.1.59/").size());
      if (!e.path.empty()) flat.push_back(e);
    }
    fake.bytes = make_archive(flat);
    Outcome o = fetch("", "https://example.invalid/4.2.0.tar.gz", "", &fake);
    REQUIRE_MESSAGE(o.ok, o.error);
    CHECK(o.result.manifest.tag == "4.2.0");  // from the URL's name
  }
  SUBCASE("no mlperf_logging folder") {
    fake.bytes = make_archive({{"repo/README.md", "hi\n"}, {"repo/common.yaml", kCommonYaml}});
    Outcome o = fetch("4.1.59", "https://example.invalid/x.tar.gz", "", &fake);
    CHECK_FALSE(o.ok);
    CHECK(contains(o.error, "no mlperf_logging/ folder"));
    CHECK(snapshot(env.cache).empty());
  }
  SUBCASE("not an archive at all") {
    fake.bytes = "<html>rate limited</html>";
    Outcome o = fetch("4.1.59", "https://example.invalid/x.tar.gz", "", &fake);
    CHECK_FALSE(o.ok);
    CHECK(contains(o.error, "not a readable archive"));
    CHECK(snapshot(env.cache).empty());
  }
  SUBCASE("unknown tag from an unhelpful name") {
    Outcome o = fetch("", "https://example.invalid/archive.tar.gz", "", &fake);
    CHECK_FALSE(o.ok);
    CHECK(contains(o.error, "referee rules fetch TAG --from"));
    CHECK(fake.urls.empty());
  }
  SUBCASE("a bad tag") {
    Outcome o = fetch("../x", "", "", &fake);
    CHECK_FALSE(o.ok);
    CHECK(fake.urls.empty());
    CHECK(snapshot(env.cache).empty());
  }
  SUBCASE("local path and file:// URL") {
    TempDir d;
    fs::path file = d.path / "logging-4.1.57.tar.gz";
    std::string bytes = make_archive(package("logging-4.1.57"));
    write_file(file, bytes);
    Outcome o = fetch("", file.string(), base::sha256_hex(bytes), &fake);
    REQUIRE_MESSAGE(o.ok, o.error);
    CHECK(fake.urls.empty());
    CHECK(o.result.manifest.tag == "4.1.57");
    CHECK(o.result.manifest.source == file.string());
    Outcome u = fetch("4.1.56", "file://" + file.string(), "", &fake);
    REQUIRE_MESSAGE(u.ok, u.error);
    CHECK(fake.urls.empty());
    auto roots = rules::cached_rule_roots();
    REQUIRE(roots.size() == 2);
    CHECK(roots[0].origin == "cache (release 4.1.57)");  // newest first
    Outcome missing = fetch("", (d.path / "nope-4.1.0.tar.gz").string(), "", &fake);
    CHECK_FALSE(missing.ok);
    CHECK(contains(missing.error, "no such file"));
  }
}

}  // TEST_SUITE
