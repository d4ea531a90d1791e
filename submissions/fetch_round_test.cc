// `referee fetch ROUND` against a real HTTP server (cpp-httplib on 127.0.0.1,
// ephemeral port) serving results archives built here: from the reference
// data's Azure+NVIDIA package of round 3.1 where it is available, else from
// the example package in submissions/examples.
#include <archive_entry.h>
#include <doctest/doctest.h>

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
#include "submissions/fetch_round.h"
#include "submissions/import.h"
#include "submissions/queries.h"
#include "submissions/store.h"
#include "tests/archive_builder.h"
#include "tests/http_fixture.h"
#include "tests/reference_data.h"
#include "tests/run_referee.h"
#include "tests/temp_dir.h"

namespace fs = std::filesystem;
using namespace referee;
using namespace referee::testing;
using namespace referee::submissions;

namespace {

// ------------------------------------------------------------ helpers

// Regular files only.
std::map<std::string, std::string> files_under(const fs::path& dir) {
  auto all = snapshot(dir);
  std::map<std::string, std::string> out;
  for (auto& [k, v] : all)
    if (v != "<dir>") out[k] = v;
  return out;
}

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  if (!fs::exists(dir, ec)) return out;
  for (const auto& e : fs::directory_iterator(dir, ec)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

bool contains(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

const std::string kTop = "training_results_v3.1-main";
const std::string kRound = "training-3.1.0";

std::string azure_dir() { return testing::reference_dir() + "/mlperf/training_results_v3.1/Azure+NVIDIA"; }
std::string example_dir() { return std::string(REFEREE_SOURCE_DIR) + "/submissions/examples/ExampleOrg"; }

// What an install of `src` as organisation `org` must hold: its results/ and
// systems/ files, relative to the destination.
std::map<std::string, std::string> expected_files(const fs::path& src, const std::string& org) {
  std::map<std::string, std::string> out;
  for (const char* area : {"results", "systems"})
    for (auto& [rel, bytes] : files_under(src / area)) out[org + "/" + area + "/" + rel] = bytes;
  return out;
}

// A results repository archive with one organisation package `src`, named
// `org`: its results/ and systems/ (folders and files), and beside them what
// the real repositories also hold and fetch must leave out.
std::vector<Entry> round_entries(const fs::path& src, const std::string& org) {
  const std::string o = kTop + "/" + org + "/";
  std::vector<Entry> out = {
      {kTop + "/", "", AE_IFDIR},
      {kTop + "/README.md", "# MLPerf Training v3.1 results\n"},
      {kTop + "/.github/workflows/ci.yml", "on: push\n"},
      {o, "", AE_IFDIR},
      {o + "README.md", "about us\n"},
      {o + "benchmarks/README.md", "how to run the benchmarks\n"},
      {o + "benchmarks/gpt3/implementations/pytorch/run.sh", "#!/bin/sh\necho run\n"},
      // A link outside results/ and systems/ is not extracted, so not refused.
      {o + "benchmarks/gpt3/implementations/pytorch/run_latest.sh", "", AE_IFLNK, "run.sh"},
  };
  for (const char* area : {"results", "systems"}) {
    out.push_back({o + area + "/", "", AE_IFDIR});
    std::vector<fs::path> paths;
    for (const auto& e : fs::recursive_directory_iterator(src / area)) paths.push_back(e.path());
    std::sort(paths.begin(), paths.end());
    for (const auto& p : paths) {
      std::string rel = o + area + "/" + fs::relative(p, src / area).string();
      if (fs::is_directory(p)) out.push_back({rel + "/", "", AE_IFDIR});
      else out.push_back({rel, read_file(p)});
    }
  }
  return out;
}

// Built once: the reference package's archive is a few MiB.
std::shared_ptr<std::string> azure_archive() {
  static std::shared_ptr<std::string> a = std::make_shared<std::string>(make_archive(round_entries(azure_dir(), "Azure+NVIDIA")));
  return a;
}
std::shared_ptr<std::string> example_archive() {
  static std::shared_ptr<std::string> a = std::make_shared<std::string>(make_archive(round_entries(example_dir(), "ExampleOrg")));
  return a;
}

struct Outcome {
  bool ok = false;
  std::string error;
  RoundFetchResult result;
};

Outcome fetch(RoundFetchRequest req, rules::Fetcher* fetcher = nullptr) {
  Outcome o;
  rules::CurlFetcher curl(fast_curl_options());
  o.ok = fetch_round(req, fetcher ? *fetcher : curl, &o.result, &o.error);
  return o;
}

Outcome fetch(const std::string& from, const fs::path& dest, const std::string& sha = "") {
  RoundFetchRequest req;
  req.round = kRound;
  req.from = from;
  req.dest = dest.string();
  req.sha256 = sha;
  return fetch(req);
}

std::string q(const std::string& s) { return "'" + s + "'"; }

}  // namespace

TEST_SUITE("fetchround") {

TEST_CASE("round names map to the results repositories and the default destination") {
  CHECK(round_short_version("training-3.1.0") == "v3.1");
  CHECK(round_short_version("training-3.0.0") == "v3.0");
  CHECK(round_short_version("training-4.0.0") == "v4.0");
  CHECK(round_short_version("training-4.1.0") == "v4.1");
  CHECK(round_short_version("training-3.1.1") == "v3.1.1");
  CHECK(round_short_version("training-3.1") == "v3.1");
  CHECK(round_short_version("training") == "");
  CHECK(round_short_version("training-x.1.0") == "");
  CHECK(round_short_version("training-3") == "");
  CHECK(round_archive_url("training-3.1.0") ==
        "https://github.com/mlcommons/training_results_v3.1/archive/refs/heads/main.tar.gz");
  CHECK(round_archive_url("training-3.0.0") ==
        "https://github.com/mlcommons/training_results_v3.0/archive/refs/heads/main.tar.gz");
  CHECK(round_archive_url("training-4.0.0") ==
        "https://github.com/mlcommons/training_results_v4.0/archive/refs/heads/main.tar.gz");
  CHECK(round_archive_url("nonsense") == "");

  TempDir t;
  EnvVar db("REFEREE_DB", (t.path / "data/referee.db").string());
  CHECK(default_round_dest(kRound) == (t.path / "data/results/training-3.1.0").string());

  // Without --from the round's GitHub archive is fetched into the default place.
  FakeFetcher fake;
  fake.bytes = *example_archive();
  RoundFetchRequest req;
  req.round = "training-3.0.0";
  Outcome o = fetch(req, &fake);
  REQUIRE_MESSAGE(o.ok, o.error);
  REQUIRE(fake.urls.size() == 1);
  CHECK(fake.urls[0] == "https://github.com/mlcommons/training_results_v3.0/archive/refs/heads/main.tar.gz");
  CHECK(o.result.dir == (t.path / "data/results/training-3.0.0").string());
  CHECK(o.result.source == fake.urls[0]);
  CHECK(names_in(t.path / "data/results") == std::vector<std::string>{"training-3.0.0"});

  // A name that says no repository needs --from.
  req.round = "nonsense";
  o = fetch(req, &fake);
  CHECK_FALSE(o.ok);
  CHECK(contains(o.error, "cannot tell which repository"));
  CHECK(contains(o.error, "fix:"));
  CHECK(fake.urls.size() == 1);
  req.round = "../x";
  o = fetch(req, &fake);
  CHECK_FALSE(o.ok);
  CHECK(contains(o.error, "not a round name"));
}

TEST_CASE("fetch keeps only results/ and systems/ and installs them atomically") {
  if (!testing::have_reference_data()) return;
  TempDir t;
  auto data = azure_archive();
  Server s;
  s.serve("/mlcommons/training_results_v3.1/archive/refs/heads/main.tar.gz", data);
  // GitHub answers with a redirect to codeload; follow it.
  s.srv.Get("/redirect.tar.gz", [](const httplib::Request&, httplib::Response& res) {
    res.set_redirect("/mlcommons/training_results_v3.1/archive/refs/heads/main.tar.gz");
  });
  s.start();

  fs::path dest = t.path / "data/results/training-3.1.0";
  std::string sha = base::sha256_hex(*data);
  Outcome o = fetch(s.url("/redirect.tar.gz"), dest, sha);
  REQUIRE_MESSAGE(o.ok, o.error);
  CHECK(o.result.dir == dest.string());
  CHECK(o.result.source == s.url("/redirect.tar.gz"));
  CHECK(o.result.sha256 == sha);
  CHECK(o.result.organisations == std::vector<std::string>{"Azure+NVIDIA"});
  CHECK_FALSE(o.result.replaced);

  auto want = expected_files(azure_dir(), "Azure+NVIDIA");
  REQUIRE(want.size() == 4);  // three gpt3 logs and the system description
  auto got = files_under(dest);
  REQUIRE(got.count(kRoundManifestName) == 1);
  std::string manifest = got[kRoundManifestName];
  got.erase(kRoundManifestName);
  CHECK(got.size() == want.size());
  for (const auto& file : want) {
    const auto& [rel, bytes] = file;
    const std::string where = file.first;  // a copy: doctest's CAPTURE takes it in a lambda
    CAPTURE(where);
    REQUIRE(got.count(rel) == 1);
    CHECK(got[rel] == bytes);  // byte for byte
  }
  CHECK(got == want);  // and nothing else: no README, benchmarks/, .github/
  CHECK(o.result.files == want.size());
  std::uint64_t bytes = 0;
  for (const auto& [rel, b] : want) bytes += b.size();
  CHECK(o.result.bytes == bytes);
  CHECK(names_in(dest) == std::vector<std::string>{kRoundManifestName, "Azure+NVIDIA"});
  CHECK(names_in(dest / "Azure+NVIDIA") == std::vector<std::string>{"results", "systems"});
  // No .download-, .staging- or .old- left beside it.
  CHECK(names_in(dest.parent_path()) == std::vector<std::string>{"training-3.1.0"});

  CHECK(contains(manifest, "\"schema\": \"referee.round-fetch/1\""));
  CHECK(contains(manifest, "\"round\": \"training-3.1.0\""));
  CHECK(contains(manifest, "\"sha256\": \"" + sha + "\""));
  CHECK(contains(manifest, "\"Azure+NVIDIA\""));

  // The packages are where the importer looks.
  CHECK(find_packages(dest.string()) == std::vector<std::string>{(dest / "Azure+NVIDIA").string()});

  // Fetching again replaces the install whole: a stale file does not survive.
  write_file(dest / "Azure+NVIDIA/results/stale.txt", "old\n");
  Outcome again = fetch(s.url("/mlcommons/training_results_v3.1/archive/refs/heads/main.tar.gz"), dest);
  REQUIRE_MESSAGE(again.ok, again.error);
  CHECK(again.result.replaced);
  CHECK_FALSE(fs::exists(dest / "Azure+NVIDIA/results/stale.txt"));
  got = files_under(dest);
  got.erase(kRoundManifestName);
  CHECK(got == want);
  CHECK(names_in(dest.parent_path()) == std::vector<std::string>{"training-3.1.0"});
}

TEST_CASE("fetch --import puts the round's results in the store") {
  if (!testing::have_reference_data()) return;
  TempDir t;
  EnvVar db("REFEREE_DB", (t.path / "data/referee.db").string());
  Server s;
  s.serve("/main.tar.gz", azure_archive());
  s.start();

  std::string out;
  std::string args = "fetch training-3.1.0 --from " + s.url("/main.tar.gz") + " --import --rules " +
                     q(testing::reference_rules()) + " -j 2";
  int rc = run_referee(args, &out);
  INFO(out);
  REQUIRE(rc == 0);
  fs::path dest = t.path / "data/results/training-3.1.0";  // the default: beside the database
  CHECK(contains(out, "installed the results of training-3.1.0 in " + dest.string()));
  CHECK(contains(out, "imported Azure+NVIDIA (training-3.1.0): 1 result, 3 runs"));
  CHECK(contains(out, "1 package(s) in " + (t.path / "data/referee.db").string()));
  CHECK(fs::exists(dest / "Azure+NVIDIA/results/ND_H100_v5_n1344_pytorch/gpt3/result_0.txt"));

  std::string error;
  {
    auto store = Store::open((t.path / "data/referee.db").string(), &error);
    REQUIRE_MESSAGE(store, error);
    auto rows = find_results(*store, {kRound, "gpt3", "", false}, {"Azure+NVIDIA/ND_H100_v5_n1344_pytorch"}, &error);
    REQUIRE_MESSAGE(rows.size() == 1, error);
    CHECK(rows[0].has_score);
    CHECK(rows[0].score == doctest::Approx(4.0085).epsilon(1e-4));
    CHECK(rows[0].accelerators == 10752);
  }

  // Again: the files are replaced, the store already has them.
  rc = run_referee(args, &out);
  CHECK(rc == 0);
  CHECK(contains(out, "replaced the results of training-3.1.0"));
  CHECK(contains(out, "unchanged Azure+NVIDIA (training-3.1.0)"));

  // A rule set that cannot be found stops the command before the download.
  int before = s.hits;
  rc = run_referee("fetch training-9.9.9 --from " + s.url("/main.tar.gz") + " --import --rules " +
                       q(testing::reference_rules()) + " --dest " + q((t.path / "other").string()),
                   &out);
  CHECK(rc == 2);
  CHECK(s.hits == before);
  CHECK_FALSE(fs::exists(t.path / "other"));
}

TEST_CASE("HTTP 404 leaves an existing destination untouched") {
  TempDir t;
  Server s;
  s.serve("/ok.tar.gz", example_archive());
  s.srv.Get("/missing.tar.gz", [&s](const httplib::Request&, httplib::Response& res) {
    ++s.hits;
    res.status = 404;
    res.set_content("Not Found", "text/plain");
  });
  s.start();
  fs::path dest = t.path / "data/results/training-3.1.0";

  SUBCASE("nothing there: nothing created") {
    Outcome o = fetch(s.url("/missing.tar.gz"), dest);
    CHECK_FALSE(o.ok);
    CHECK(contains(o.error, "HTTP 404"));
    CHECK(contains(o.error, "nothing was installed"));
    CHECK(contains(o.error, "fix:"));
    CHECK(s.hits == 1);  // a 404 is not retried
    CHECK(names_in(t.path).empty());  // not even data/results
  }
  SUBCASE("an earlier install is untouched") {
    REQUIRE(fetch(s.url("/ok.tar.gz"), dest).ok);
    auto before = snapshot(t.path);
    REQUIRE(before.count("data/results/training-3.1.0/ExampleOrg/systems/cpu_2x_example.json") == 1);
    Outcome o = fetch(s.url("/missing.tar.gz"), dest);
    CHECK_FALSE(o.ok);
    CHECK(contains(o.error, "HTTP 404"));
    CHECK(snapshot(t.path) == before);
  }
  SUBCASE("the command exits 2 and says what to do") {
    std::string out;
    CHECK(run_referee("fetch training-3.1.0 --from " + s.url("/missing.tar.gz") + " --dest " + q(dest.string()), &out) ==
          2);
    CHECK(contains(out, "referee fetch: "));
    CHECK(contains(out, "HTTP 404"));
    CHECK(contains(out, "fix: check the URL given to --from"));
    CHECK(names_in(t.path).empty());
  }
}

TEST_CASE("a truncated archive leaves the destination untouched") {
  std::vector<std::pair<std::string, std::shared_ptr<std::string>>> archives = {{"example", example_archive()}};
  if (testing::have_reference_data()) archives.push_back({"reference", azure_archive()});
  for (const auto& archive : archives) {
    const auto& [name, data] = archive;
    const std::string which = archive.first;  // a copy: doctest's CAPTURE takes it in a lambda
    CAPTURE(which);
    TempDir t;
    auto half = std::make_shared<std::string>(data->substr(0, data->size() / 2));
    Server s;
    s.serve("/ok.tar.gz", example_archive());
    // Half the bytes with a Content-Length that matches them: HTTP sees no error.
    s.serve("/half.tar.gz", half);
    // Half the bytes, chunked, no Content-Length at all.
    s.srv.Get("/half-chunked.tar.gz", [half](const httplib::Request&, httplib::Response& res) {
      res.set_chunked_content_provider("application/gzip", [half](size_t offset, httplib::DataSink& sink) {
        if (offset < half->size()) sink.write(half->data() + offset, half->size() - offset);
        else sink.done();
        return true;
      });
    });
    s.start();
    fs::path dest = t.path / "results/training-3.1.0";
    REQUIRE(fetch(s.url("/ok.tar.gz"), dest).ok);
    auto before = snapshot(t.path);
    for (const char* path : {"/half.tar.gz", "/half-chunked.tar.gz"}) {
      CAPTURE(path);
      Outcome o = fetch(s.url(path), dest);
      CHECK_FALSE(o.ok);
      CHECK(contains(o.error, "truncated"));
      CHECK(contains(o.error, "nothing was installed"));
      CHECK(contains(o.error, "fix:"));
      CHECK(snapshot(t.path) == before);
    }
  }
}

TEST_CASE("a checksum mismatch installs nothing") {
  TempDir t;
  auto data = example_archive();
  Server s;
  s.serve("/r.tar.gz", data);
  s.start();
  fs::path dest = t.path / "results/training-3.1.0";
  std::string right = base::sha256_hex(*data);
  std::string wrong(64, 'a');

  Outcome o = fetch(s.url("/r.tar.gz"), dest, wrong);
  CHECK_FALSE(o.ok);
  CHECK(contains(o.error, "checksum mismatch"));
  CHECK(contains(o.error, wrong));
  CHECK(contains(o.error, right));
  CHECK(names_in(t.path).empty());

  REQUIRE(fetch(s.url("/r.tar.gz"), dest).ok);
  auto before = snapshot(t.path);
  o = fetch(s.url("/r.tar.gz"), dest, wrong);
  CHECK_FALSE(o.ok);
  CHECK(snapshot(t.path) == before);

  // Upper-case hex is the same digest.
  std::string upper = right;
  for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  CHECK(fetch(s.url("/r.tar.gz"), dest, upper).ok);

  std::string out;
  CHECK(run_referee("fetch training-3.1.0 --from " + s.url("/r.tar.gz") + " --dest " + q(dest.string()) +
                        " --sha256 " + wrong,
                    &out) == 2);
  CHECK(contains(out, "checksum mismatch"));
  CHECK(contains(out, wrong));
  CHECK(contains(out, right));
  CHECK(run_referee("fetch training-3.1.0 --from " + s.url("/r.tar.gz") + " --dest " + q(dest.string()) +
                        " --sha256 xyz",
                    &out) == 2);
  CHECK(contains(out, "64 hexadecimal digits"));
}

TEST_CASE("an archive with an escaping path, a link or a device under results/ is rejected") {
  TempDir t;
  const std::string o = kTop + "/ExampleOrg/";
  struct Case {
    std::string path;
    Entry evil;
    std::string message;
  };
  std::vector<Case> cases = {
      {"/dotdot.tar.gz", Entry(kTop + "/X/results/../../evil", "pwned\n"), "has an unsafe path"},
      {"/deep.tar.gz", Entry(o + "results/cpu_2x_example/../../../../../../evil", "pwned\n"), "has an unsafe path"},
      {"/absolute.tar.gz", Entry((t.path / "abs-evil").string(), "pwned\n"), "has an unsafe path"},
      {"/symlink.tar.gz", Entry(o + "results/cpu_2x_example/link.txt", "", AE_IFLNK, "/etc/passwd"),
       "is a symbolic link"},
      {"/dirlink.tar.gz", Entry(o + "systems", "", AE_IFLNK, "/etc"), "is a symbolic link"},
      {"/hardlink.tar.gz", Entry(o + "results/cpu_2x_example/hard.txt", "", AE_IFREG, "", "/etc/passwd"),
       "is a hard link"},
      {"/device.tar.gz", Entry(o + "systems/null", "", AE_IFCHR), "is a character device"},
  };
  Server s;
  for (auto& c : cases) {
    auto entries = round_entries(example_dir(), "ExampleOrg");
    if (c.path == "/dirlink.tar.gz") {
      // The link comes first, so that the real systems/ folder does not hide it.
      entries.insert(entries.begin() + 1, c.evil);
    } else {
      entries.insert(entries.begin() + static_cast<long>(entries.size() / 2), c.evil);
    }
    s.serve(c.path, std::make_shared<std::string>(make_archive(entries)));
  }
  s.start();
  fs::path dest = t.path / "data/results/training-3.1.0";
  for (const auto& c : cases) {
    CAPTURE(c.path);
    Outcome out = fetch(s.url(c.path), dest);
    CHECK_FALSE(out.ok);
    CHECK(contains(out.error, "'" + c.evil.path + "' " + c.message));  // names the entry
    CHECK(contains(out.error, "refusing the whole archive"));
    CHECK(contains(out.error, "nothing was installed"));
    CHECK(contains(out.error, "fix:"));
    CHECK(names_in(t.path).empty());
    CHECK_FALSE(fs::exists(t.path / "evil"));
    CHECK_FALSE(fs::exists(t.path / "abs-evil"));
  }
  std::string out;
  CHECK(run_referee("fetch training-3.1.0 --from " + s.url("/symlink.tar.gz") + " --dest " + q(dest.string()), &out) ==
        2);
  CHECK(contains(out, "link.txt' is a symbolic link"));
  CHECK(names_in(t.path).empty());
}

TEST_CASE("an archive without any <org>/results is rejected") {
  TempDir t;
  FakeFetcher fake;
  RoundFetchRequest req;
  req.round = kRound;
  req.from = "https://example.invalid/main.tar.gz";
  req.dest = (t.path / "results/training-3.1.0").string();

  SUBCASE("only benchmarks and systems") {
    fake.bytes = make_archive({{kTop + "/README.md", "hi\n"},
                               {kTop + "/X/benchmarks/README.md", "hi\n"},
                               {kTop + "/X/systems/a.json", "{}\n"},
                               {kTop + "/results/notes.txt", "not below an organisation\n"}});
  }
  SUBCASE("empty results folders") {
    fake.bytes = make_archive({{kTop + "/X/results/", "", AE_IFDIR}, {kTop + "/X/results/sys/", "", AE_IFDIR}});
  }
  SUBCASE("a package without a top folder above it") {
    std::vector<Entry> flat;
    for (auto e : round_entries(example_dir(), "ExampleOrg")) {
      e.path = e.path.substr(kTop.size() + 1);
      if (!e.path.empty()) flat.push_back(e);
    }
    fake.bytes = make_archive(flat);
  }
  Outcome o = fetch(req, &fake);
  CHECK_FALSE(o.ok);
  CHECK(contains(o.error, "no <org>/results/ folder"));
  CHECK(contains(o.error, "not an MLPerf results repository"));
  CHECK(contains(o.error, "fix:"));
  CHECK(names_in(t.path).empty());
}

TEST_CASE("local archives, size limits and destinations that are not ours") {
  TempDir t;
  fs::path file = t.path / "in/main.tar.gz";
  write_file(file, *example_archive());
  FakeFetcher fake;
  RoundFetchRequest req;
  req.round = kRound;
  req.dest = (t.path / "out/training-3.1.0").string();

  SUBCASE("a local path and a file:// URL are read directly") {
    req.from = file.string();
    req.sha256 = base::sha256_hex(*example_archive());
    Outcome o = fetch(req, &fake);
    REQUIRE_MESSAGE(o.ok, o.error);
    CHECK(fake.urls.empty());
    CHECK(o.result.source == file.string());
    CHECK(files_under(t.path / "in") == std::map<std::string, std::string>{{"main.tar.gz", *example_archive()}});
    req.from = "file://" + file.string();
    o = fetch(req, &fake);
    REQUIRE_MESSAGE(o.ok, o.error);
    CHECK(o.result.replaced);
    CHECK(fake.urls.empty());
    req.from = (t.path / "in/nope.tar.gz").string();
    o = fetch(req, &fake);
    CHECK_FALSE(o.ok);
    CHECK(contains(o.error, "no such file"));
    req.from = "ftp://example.invalid/main.tar.gz";
    o = fetch(req, &fake);
    CHECK_FALSE(o.ok);
    CHECK(contains(o.error, "only http://, https:// and file://"));
  }
  SUBCASE("a file over the per-file limit") {
    req.from = file.string();
    req.max_file_bytes = 1000;
    Outcome o = fetch(req, &fake);
    CHECK_FALSE(o.ok);
    CHECK(contains(o.error, "is larger than"));
    CHECK_FALSE(fs::exists(t.path / "out"));
  }
  SUBCASE("more than the total limit") {
    req.from = file.string();
    req.max_total_bytes = 100000;
    Outcome o = fetch(req, &fake);
    CHECK_FALSE(o.ok);
    CHECK(contains(o.error, "hold more than"));
    CHECK_FALSE(fs::exists(t.path / "out"));
  }
  SUBCASE("a folder that an earlier fetch did not make is not replaced") {
    req.from = file.string();
    write_file(t.path / "out/training-3.1.0/mine.txt", "precious\n");
    auto before = snapshot(t.path / "out");
    Outcome o = fetch(req, &fake);
    CHECK_FALSE(o.ok);
    CHECK(contains(o.error, "was not made by 'referee fetch'"));
    CHECK(snapshot(t.path / "out") == before);
    // An empty one is fine.
    fs::remove(t.path / "out/training-3.1.0/mine.txt");
    o = fetch(req, &fake);
    REQUIRE_MESSAGE(o.ok, o.error);
    CHECK(o.result.replaced);
  }
  SUBCASE("a file in the way") {
    req.from = file.string();
    write_file(t.path / "out/training-3.1.0", "a file\n");
    Outcome o = fetch(req, &fake);
    CHECK_FALSE(o.ok);
    CHECK(contains(o.error, "is not a folder"));
    CHECK(read_file(t.path / "out/training-3.1.0") == "a file\n");
    CHECK(names_in(t.path / "out") == std::vector<std::string>{"training-3.1.0"});
  }
}

}  // TEST_SUITE
