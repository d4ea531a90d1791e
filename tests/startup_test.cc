// Start-up: libcurl and libarchive are loaded only by the commands that
// download or unpack (base/dynlib.cc), so every other command starts without
// them and their dependencies, and works where they are missing or broken.
#include <doctest/doctest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "tests/run_referee.h"
#include "tests/temp_dir.h"

using referee::testing::run_referee;
using referee::testing::TempDir;
using referee::testing::write_file;

namespace {

bool contains(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

// Runs `cmd` through the shell, standard error with standard output into
// *out; its exit status, -1 when it did not exit.
int shell(const std::string& cmd, std::string* out) {
  out->clear();
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out->append(buf, n);
  int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

// A folder with a "libcurl.so.4" (and its GnuTLS flavour, which referee
// tries next) and a "libarchive.so.13" that are not
// libraries: with it first on LD_LIBRARY_PATH, loading either fails.
struct BrokenLibs {
  TempDir dir{"referee-libs-"};
  BrokenLibs() {
    write_file(dir.path / "libcurl.so.4", "not a library");
    write_file(dir.path / "libcurl-gnutls.so.4", "not a library");  // the fallback flavour
    write_file(dir.path / "libarchive.so.13", "not a library");
  }
  std::string env() const { return "LD_LIBRARY_PATH='" + dir.path.string() + "' "; }
};

}  // namespace

TEST_SUITE("fetch") {
  TEST_CASE("the binary does not link libcurl, libarchive, the server's libraries or a JSON library") {
    if (std::system("command -v ldd >/dev/null 2>&1") != 0) {
      MESSAGE("SKIPPED: no ldd");
      return;
    }
    std::string out;
    shell(std::string("ldd ") + REFEREE_BINARY, &out);
    CAPTURE(out);
    CHECK(contains(out, "libc.so"));  // the listing is real
    CHECK_FALSE(contains(out, "libsimdjson"));  // JSON is read by mllog/json_cursor.h
    if (REFEREE_STATIC_CXX) CHECK_FALSE(contains(out, "libstdc++"));
    CHECK_FALSE(contains(out, "libcurl"));
    CHECK_FALSE(contains(out, "libarchive"));
    // The server and what it brings are in referee-server only.
    CHECK_FALSE(contains(out, "httplib"));
    CHECK_FALSE(contains(out, "libssl"));
    CHECK_FALSE(contains(out, "brotli"));
    std::string server = (std::filesystem::path(REFEREE_BINARY).parent_path() / "referee-server").string();
    shell("ldd " + server, &out);
    CHECK_MESSAGE(contains(out, "httplib"), out);
  }

  TEST_CASE("referee serve runs the referee-server beside it, and says so when it is missing") {
    std::string out;
    CHECK(run_referee("serve --help", &out) == 0);
    CHECK_MESSAGE(contains(out, "--listen"), out);
    // referee copied alone: serve names the program it needs.
    TempDir dir;
    std::filesystem::copy_file(REFEREE_BINARY, dir.path / "referee");
    CHECK(shell((dir.path / "referee").string() + " serve --listen 127.0.0.1:0", &out) == 2);
    CHECK_MESSAGE(contains(out, "referee-server"), out);
    CHECK_MESSAGE(contains(out, "copy the two together"), out);
    // A "referee-server" that is a copy of referee is refused, not started again and again.
    std::filesystem::copy_file(REFEREE_BINARY, dir.path / "referee-server");
    CHECK(shell("timeout 20 " + (dir.path / "referee").string() + " serve --listen 127.0.0.1:0", &out) == 2);
    CHECK_MESSAGE(contains(out, "it has no server"), out);
    std::filesystem::remove(dir.path / "referee-server");
    // Every other command works without it.
    std::string example = std::string(REFEREE_SOURCE_DIR) + "/submissions/examples/ExampleOrg";
    CHECK(shell((dir.path / "referee").string() + " check-package " + example + " --ruleset mini-1.0.0", &out) == 0);
  }

  TEST_CASE("commands that need neither library run where both are broken; those that do say what to install") {
    BrokenLibs libs;
    std::string out;
    std::string example = std::string(REFEREE_SOURCE_DIR) + "/submissions/examples/ExampleOrg";
    CHECK(run_referee("check-package " + example + " --ruleset mini-1.0.0", &out) == 0);
    std::string with = libs.env() + REFEREE_BINARY;
    // run_referee prefixes the binary; run through the shell with the environment instead.
    auto run_env = [&](const std::string& args) { return shell(with + " " + args, &out); };
    CHECK(run_env("check-package " + example + " --ruleset mini-1.0.0") == 0);
    CHECK_MESSAGE(contains(out, "verdict: PASS"), out);

    TempDir cache;
    referee::testing::EnvVar c("REFEREE_CACHE", cache.path.string());
    CHECK(run_env("rules fetch 4.1.59 --from http://127.0.0.1:9/4.1.59.tar.gz") == 2);
    CHECK_MESSAGE(contains(out, "libcurl.so.4 cannot be loaded"), out);
    CHECK_MESSAGE(contains(out, "apt-get install libcurl4"), out);

    write_file(cache.path / "4.1.59.tar.gz", "not an archive either");
    CHECK(run_env("rules fetch 4.1.59 --from " + (cache.path / "4.1.59.tar.gz").string()) == 2);
    CHECK_MESSAGE(contains(out, "libarchive.so.13 cannot be loaded"), out);
    CHECK_MESSAGE(contains(out, "apt-get install libarchive13"), out);
  }
}
