// Scratch space for tests: a temporary folder removed at scope exit, an
// environment variable set for one test case, and whole-file reads, writes
// and snapshots of folders.
#pragma once

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace referee::testing {

// A fresh, empty folder `<system temp>/<prefix>XXXXXX` (mkdtemp: a unique
// name, mode 0700), removed with everything in it when the object goes out of
// scope, failed REQUIREs included.
struct TempDir {
  std::filesystem::path path;

  explicit TempDir(const std::string& prefix = "referee-test-") {
    std::string t = (std::filesystem::temp_directory_path() / (prefix + "XXXXXX")).string();
    std::vector<char> b(t.begin(), t.end());
    b.push_back('\0');
    REQUIRE(mkdtemp(b.data()) != nullptr);
    path = b.data();
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

// Sets an environment variable for one test case; the destructor restores
// the earlier value, or unsets it when there was none.
struct EnvVar {
  std::string name, saved;
  bool had = false;

  EnvVar(std::string n, const std::string& value) : name(std::move(n)) {
    if (const char* c = std::getenv(name.c_str())) {
      had = true;
      saved = c;
    }
    setenv(name.c_str(), value.c_str(), 1);
  }
  ~EnvVar() {
    if (had) setenv(name.c_str(), saved.c_str(), 1);
    else unsetenv(name.c_str());
  }
  EnvVar(const EnvVar&) = delete;
  EnvVar& operator=(const EnvVar&) = delete;
};

// The bytes of the file at `p`; "" when it cannot be read.
inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Creates or replaces the file at `p` (and its missing parent folders).
inline void write_file(const std::filesystem::path& p, const std::string& bytes) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream o(p, std::ios::binary);
  o << bytes;
}

// Every path under `dir` (relative to it) with its bytes: "<dir>" for
// folders, "<link>" for symbolic links (never followed). Empty when `dir`
// does not exist.
inline std::map<std::string, std::string> snapshot(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  std::map<std::string, std::string> out;
  std::error_code ec;
  if (!fs::exists(dir, ec)) return out;
  for (auto it = fs::recursive_directory_iterator(dir, ec); it != fs::recursive_directory_iterator(); ++it) {
    std::string rel = fs::relative(it->path(), dir).string();
    out[rel] = it->is_symlink() ? std::string("<link>") : it->is_directory() ? std::string("<dir>") : read_file(it->path());
  }
  return out;
}

}  // namespace referee::testing
