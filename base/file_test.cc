#include "base/file.h"

#include <doctest/doctest.h>

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>

#include "base/digest.h"
#include "tests/temp_dir.h"

namespace fs = std::filesystem;

namespace referee::base {

namespace {

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_SUITE("base") {
  TEST_CASE("write_file_atomic writes or replaces the file and leaves no temporary file") {
    testing::TempDir t;
    std::string p = (t.path / "out.json").string();
    REQUIRE(write_file_atomic(p, "first").ok());
    CHECK(testing::read_file(p) == "first");
    std::string error;
    REQUIRE(write_file_atomic(p, std::string(100000, 'z'), &error));
    CHECK(testing::read_file(p) == std::string(100000, 'z'));
    CHECK(names_in(t.path) == std::vector<std::string>{"out.json"});
  }

  TEST_CASE("write_file_atomic into a missing folder: an error naming the file, nothing written") {
    testing::TempDir t;
    std::string p = (t.path / "no" / "such" / "f.txt").string();
    Status s = write_file_atomic(p, "x");
    CHECK(s.code == StatusCode::Error);
    CHECK(s.message.find("cannot write " + p + ".tmp-") == 0);
    std::string error;
    CHECK_FALSE(write_file_atomic(p, "x", &error));
    CHECK(error == s.message);
    CHECK(names_in(t.path).empty());
  }

  TEST_CASE("copy_file_atomic copies in pieces, gives the digest of what it copied, leaves no temporary file") {
    testing::TempDir t;
    std::string big(300000, 'q');
    for (size_t i = 0; i < big.size(); i += 11) big[i] = static_cast<char>(i & 0xff);
    std::string from = (t.path / "from.txt").string(), to = (t.path / "to.txt").string();
    REQUIRE(write_file_atomic(from, big).ok());
    REQUIRE(write_file_atomic(to, "earlier").ok());
    std::string sha;
    REQUIRE(copy_file_atomic(from, to, &sha).ok());
    CHECK(testing::read_file(to) == big);
    CHECK(sha == sha256_hex(big));
    CHECK(names_in(t.path) == std::vector<std::string>{"from.txt", "to.txt"});
    // A source that cannot be read, a folder that does not exist: errors naming the file; `to` as it was.
    Status s = copy_file_atomic((t.path / "missing").string(), to);
    CHECK(s.message.find("cannot read " + (t.path / "missing").string() + ": ") == 0);
    s = copy_file_atomic(from, (t.path / "no" / "x.txt").string());
    CHECK(s.message.find("cannot write " + (t.path / "no" / "x.txt").string()) == 0);
    CHECK(testing::read_file(to) == big);
    CHECK(names_in(t.path) == std::vector<std::string>{"from.txt", "to.txt"});
    // A FIFO (no writer: opening it to read would wait for ever), a folder, a
    // link to a FIFO: refused at once as not a regular file.
    std::string fifo = (t.path / "fifo").string();
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    std::filesystem::create_symlink(fifo, t.path / "link");
    for (const std::string& p : {fifo, t.path.string(), (t.path / "link").string()}) {
      s = copy_file_atomic(p, to);
      CHECK_MESSAGE(s.message == "cannot read " + p + ": not a regular file", s.message);
    }
    CHECK(testing::read_file(to) == big);
  }

  TEST_CASE("resolves_within: a link is followed before it is judged; a path that is not there is judged by its folder") {
    testing::TempDir t;
    const std::filesystem::path pkg = t.path / "pkg";
    std::filesystem::create_directories(pkg / "results");
    REQUIRE(write_file((pkg / "results" / "a.txt").string(), "a").ok());
    REQUIRE(write_file((t.path / "outside.txt").string(), "o").ok());
    std::filesystem::create_symlink(t.path / "outside.txt", pkg / "results" / "out.txt");
    std::filesystem::create_symlink("a.txt", pkg / "results" / "in.txt");
    std::filesystem::path real;
    CHECK(resolves_within(pkg / "results" / "a.txt", pkg, &real));
    CHECK(resolves_within(pkg / "results" / "in.txt", pkg, &real));
    CHECK(real == std::filesystem::weakly_canonical(pkg / "results" / "a.txt"));
    CHECK_FALSE(resolves_within(pkg / "results" / "out.txt", pkg, &real));
    CHECK(real == std::filesystem::weakly_canonical(t.path / "outside.txt"));
    CHECK_FALSE(resolves_within(pkg / ".." / "outside.txt", pkg, &real));
    CHECK_FALSE(resolves_within(pkg, pkg, &real));  // the folder itself is not inside it
    CHECK(resolves_within(pkg / "results" / "missing.txt", pkg, &real));
    // A link through the package's own name to a sibling with a longer name is outside.
    std::filesystem::create_directories(t.path / "pkg2");
    std::filesystem::create_symlink(t.path / "pkg2", pkg / "results" / "sib");
    CHECK_FALSE(resolves_within(pkg / "results" / "sib", pkg, &real));
  }

  TEST_CASE("swap_install_dir: into an empty place, a plain rename") {
    testing::TempDir t;
    fs::create_directories(t.path / ".staging-x" / "sub");
    testing::write_file(t.path / ".staging-x" / "sub" / "a.txt", "new");
    fs::path old;
    REQUIRE(swap_install_dir(t.path / ".staging-x", t.path / "target", &old).ok());
    CHECK(old.empty());
    CHECK(testing::read_file(t.path / "target" / "sub" / "a.txt") == "new");
    CHECK(names_in(t.path) == std::vector<std::string>{"target"});
  }

  TEST_CASE("swap_install_dir replaces a folder whole; the earlier one is handed back") {
    testing::TempDir t;
    fs::create_directories(t.path / "target");
    testing::write_file(t.path / "target" / "old-only.txt", "old");
    testing::write_file(t.path / "target" / "both.txt", "old");
    fs::create_directories(t.path / ".staging-x");
    testing::write_file(t.path / ".staging-x" / "both.txt", "new");
    fs::path old;
    REQUIRE(swap_install_dir(t.path / ".staging-x", t.path / "target", &old).ok());
    CHECK(names_in(t.path / "target") == std::vector<std::string>{"both.txt"});
    CHECK(testing::read_file(t.path / "target" / "both.txt") == "new");
    REQUIRE_FALSE(old.empty());
    CHECK(testing::read_file(old / "old-only.txt") == "old");  // the caller removes it
    fs::remove_all(old);
    CHECK(names_in(t.path) == std::vector<std::string>{"target"});
  }

  TEST_CASE("swap_install_dir replaces a file that stands where the folder goes") {
    testing::TempDir t;
    testing::write_file(t.path / "target", "a file");
    fs::create_directories(t.path / ".staging-x");
    testing::write_file(t.path / ".staging-x" / "f", "new");
    fs::path old;
    REQUIRE(swap_install_dir(t.path / ".staging-x", t.path / "target", &old).ok());
    CHECK(fs::is_directory(t.path / "target"));
    CHECK(testing::read_file(old) == "a file");
  }

  TEST_CASE("swap_install_dir without the staging folder: an error, the target as it was") {
    testing::TempDir t;
    fs::create_directories(t.path / "target");
    testing::write_file(t.path / "target" / "keep.txt", "old");
    fs::path old;
    Status s = swap_install_dir(t.path / ".missing", t.path / "target", &old);
    CHECK_FALSE(s.ok());
    CHECK(s.message.find((t.path / "target").string()) != std::string::npos);
    CHECK(old.empty());
    CHECK(testing::read_file(t.path / "target" / "keep.txt") == "old");
  }

  TEST_CASE("user_path: the own variable, then the XDG one, then HOME, then the fallback") {
    testing::EnvVar own("REFEREE_TEST_OWN", "/own/place");
    testing::EnvVar xdg("REFEREE_TEST_XDG", "/xdg");
    testing::EnvVar home("HOME", "/home/u");
    CHECK(user_path("REFEREE_TEST_OWN", "REFEREE_TEST_XDG", ".cache", "referee", "fb") == "/own/place");
    setenv("REFEREE_TEST_OWN", "", 1);  // empty counts as unset
    CHECK(user_path("REFEREE_TEST_OWN", "REFEREE_TEST_XDG", ".cache", "referee", "fb") == "/xdg/referee");
    unsetenv("REFEREE_TEST_XDG");
    CHECK(user_path("REFEREE_TEST_OWN", "REFEREE_TEST_XDG", ".local/share", "referee/referee.db", "fb") ==
          "/home/u/.local/share/referee/referee.db");
    unsetenv("HOME");
    CHECK(user_path("REFEREE_TEST_OWN", "REFEREE_TEST_XDG", ".cache", "referee", "fb") == "fb");
  }
}

}  // namespace referee::base
