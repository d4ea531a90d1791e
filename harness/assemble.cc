#include "harness/assemble.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>

#include "base/dynlib.h"
#include "base/file.h"
#include "base/subprocess.h"
#include "base/text.h"
#include "harness/environment/node_environment.h"
#include "harness/manifest.h"

namespace fs = std::filesystem;

namespace referee::harness {

namespace {

constexpr uintmax_t kMaxCodeFile = uintmax_t{100} << 20;  // larger files are data or checkpoints, not code

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// results/<system>/<benchmark> folders of the package: (system, benchmark).
std::vector<std::pair<std::string, std::string>> result_folders(const fs::path& org) {
  std::vector<std::pair<std::string, std::string>> out;
  std::error_code ec;
  for (const auto& s : fs::directory_iterator(org / "results", ec)) {
    if (!s.is_directory(ec)) continue;
    for (const auto& b : fs::directory_iterator(s.path(), ec))
      if (b.is_directory(ec)) out.emplace_back(s.path().filename().string(), b.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The folders a request names: "bench" (every system that has it) or "system/bench".
bool folders_for(const std::string& key, const std::vector<std::pair<std::string, std::string>>& all, bool one,
                 std::vector<std::pair<std::string, std::string>>* out, std::string* error) {
  out->clear();
  size_t slash = key.find('/');
  for (const auto& f : all)
    if (slash == std::string::npos ? f.second == key : f.first == key.substr(0, slash) && f.second == key.substr(slash + 1))
      out->push_back(f);
  if (out->empty()) {
    std::string list;
    for (const auto& f : all) list += (list.empty() ? "" : ", ") + f.first + "/" + f.second;
    *error = "'" + key + "' is not a benchmark of the package's results (" + (list.empty() ? "none" : list) + ")";
    return false;
  }
  if (one && out->size() > 1) {
    *error = "'" + key + "' is a benchmark of several systems here: say which, as SYSTEM/" + key;
    return false;
  }
  return true;
}

// The files of an implementation: those git tracks there, else every regular file (hidden folders aside).
bool code_files(const fs::path& dir, std::vector<fs::path>* files, std::vector<std::string>* skipped, std::string* how) {
  base::CommandOptions o;
  o.workdir = dir.string();
  o.timeout = std::chrono::seconds(60);
  base::CommandResult r = base::run_command({"git", "ls-files", "-z", "--cached", "--", "."}, o);
  std::error_code ec;
  if (r.started && r.exit_code == 0 && !r.out.empty()) {
    *how = "the files git tracks there";
    for (size_t at = 0; at < r.out.size();) {
      size_t end = r.out.find('\0', at);
      if (end == std::string::npos) end = r.out.size();
      files->push_back(r.out.substr(at, end - at));
      at = end + 1;
    }
  } else {
    *how = "every file there (not a git checkout)";
    for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
         it != fs::recursive_directory_iterator(); it.increment(ec)) {
      std::string name = it->path().filename().string();
      if (it->is_directory(ec) && (name[0] == '.' || name == "__pycache__")) {
        it.disable_recursion_pending();
        continue;
      }
      if (it->is_symlink(ec)) {
        skipped->push_back(it->path().lexically_relative(dir).string() + " (a symbolic link: not followed)");
        continue;
      }
      if (it->is_directory(ec)) continue;
      files->push_back(fs::relative(it->path(), dir, ec));
    }
  }
  std::vector<fs::path> kept;
  for (const auto& f : *files) {
    fs::path full = dir / f;
    if (fs::is_symlink(full, ec)) {
      skipped->push_back(f.string() + " (a symbolic link: not followed)");
      continue;
    }
    if (!fs::is_regular_file(full, ec)) {
      skipped->push_back(f.string() + " (not a regular file)");
      continue;
    }
    if (!base::valid_utf8(f.string())) {
      std::string shown;
      for (unsigned char ch : f.string()) {
        char hex[8];
        std::snprintf(hex, sizeof hex, "\\x%02x", ch);
        if (ch >= 0x80 || ch < 0x20) shown += hex;
        else shown += static_cast<char>(ch);
      }
      skipped->push_back(shown + " (its name is not UTF-8: a submission tarball cannot hold it)");
      continue;
    }
    if (fs::file_size(full, ec) > kMaxCodeFile) {
      skipped->push_back(f.string() + " (larger than 100 MB: data, not code)");
      continue;
    }
    kept.push_back(f);
  }
  std::sort(kept.begin(), kept.end());
  *files = kept;
  return !files->empty();
}

// How the results were made, from the run manifest beside the package.
std::string readme(const fs::path& org, const std::string& benchmark, const std::string& implementation,
                   const std::string& code_how) {
  std::string org_name = org.filename().string();
  std::string out = "# " + benchmark + ": " + implementation + "\n\n";
  out += "The implementation of " + benchmark + " behind " + org_name + "'s results in `results/*/" + benchmark +
         "/`, as `referee package` assembled it.\n\n";
  out += code_how.empty() ? "No source was given to `referee package` (`--code " + benchmark + "=DIR`).\n\n"
                          : "Source: " + code_how + ".\n\n";
  Manifest m;
  bool existed = false;
  std::string error;
  fs::path manifest = org.parent_path() / ".referee-runs" / benchmark / "manifest.json";
  if (!load_manifest(manifest.string(), benchmark, &m, &existed, &error) || !existed) {
    out += "The results were not made by `referee run` here (no run manifest at " + manifest.string() + ").\n";
    return out;
  }
  std::string command, ruleset, commit, env_file;
  bool dirty = false;
  out += "## How the results were made\n\n";
  out += "| result | run | seed | time to train | verdict |\n|---|---|---|---|---|\n";
  for (const auto& r : m.runs) {
    if (r.org != org_name || r.package != "in") continue;
    if (command.empty()) command = r.command;
    if (ruleset.empty()) ruleset = r.ruleset;
    if (env_file.empty() && !r.environment.empty()) env_file = r.environment;
    char ttt[64] = "-";
    if (r.has_time_to_train)
      std::snprintf(ttt, sizeof ttt, r.time_to_train_ms < 60000 ? "%.1f s" : "%.2f min",
                    r.time_to_train_ms < 60000 ? r.time_to_train_ms / 1000.0 : r.time_to_train_ms / 60000.0);
    out += "| " + fs::path(r.result_file).filename().string() + " | " + r.run + " | " +
           (r.has_logged_seed ? std::to_string(r.logged_seed) : r.has_seed ? std::to_string(r.seed) : "-") + " | " +
           ttt + " | " + r.verdict + (r.converged ? ", converged" : "") + " |\n";
  }
  out += "\n";
  if (!command.empty()) out += "Command (`{seed}`, `{run}`, `{log}` filled in per run):\n\n```\n" + command + "\n```\n\n";
  if (!ruleset.empty()) out += "Checked live with rule set `" + ruleset + "`.\n\n";
  if (!env_file.empty()) {
    Environment env;
    if (environment_from_json(slurp(org.parent_path() / env_file), &env, &error) && !env.git_commit.empty()) {
      commit = env.git_commit;
      dirty = env.git_dirty;
      out += "Commit: `" + commit + "`" + (dirty ? " (with changes to tracked files not committed)" : "") + " in " +
             env.git_dir + ".\n";
    }
  }
  return out;
}

bool copy_into(const fs::path& from, const fs::path& to, std::string* error) {
  std::error_code ec;
  fs::create_directories(to.parent_path(), ec);
  base::Status s = base::copy_file_atomic(from.string(), to.string());
  if (!s.ok()) *error = s.message;
  return s.ok();
}

// Puts `staging` in the place of `target`, the earlier content removed.
bool install(const fs::path& staging, const fs::path& target, std::string* error) {
  fs::path old;
  std::error_code ec;
  fs::create_directories(target.parent_path(), ec);
  base::Status s = base::swap_install_dir(staging, target, &old);
  if (!s.ok()) {
    *error = s.message;
    fs::remove_all(staging, ec);
    return false;
  }
  if (!old.empty()) fs::remove_all(old, ec);
  return true;
}

fs::path staging_beside(const fs::path& target) {
  return target.parent_path() / ("." + target.filename().string() + ".staging-" + std::to_string(::getpid()));
}

}  // namespace

bool assemble_package(const AssembleOptions& o, Assembled* out, std::string* error) {
  *out = Assembled{};
  fs::path org = fs::absolute(o.org_dir);
  std::error_code ec;
  if (!fs::is_directory(org / "results", ec)) {
    *error = o.org_dir + " is not an organisation's package: it has no results/ folder (referee run --out DIR writes DIR/<org>/)";
    return false;
  }
  static const std::regex impl_name("[A-Za-z0-9][A-Za-z0-9._+-]*");
  if (!std::regex_match(o.implementation, impl_name)) {
    *error = "--implementation: expected a folder name (letters, digits, . _ + -), found '" + o.implementation + "'";
    return false;
  }
  auto folders = result_folders(org);
  std::vector<std::pair<std::string, std::string>> picked;
  // Every request is checked before anything is written.
  struct Code {
    fs::path src;
    std::vector<fs::path> files;
    std::vector<std::string> skipped;
    std::string listing;
  };
  std::map<std::string, Code> codes;
  for (const auto& [bench, dir] : o.code) {
    if (!folders_for(bench, folders, false, &picked, error)) return (*error = "--code " + *error, false);
    if (!fs::is_directory(dir, ec)) return (*error = "--code " + bench + "=" + dir + ": not a folder", false);
    Code& c = codes[bench];
    c.src = fs::absolute(dir);
    if (!code_files(c.src, &c.files, &c.skipped, &c.listing))
      return (*error = "--code " + bench + "=" + dir + ": no file to copy there", false);
  }
  static const std::regex power_file("(node|sw)_[0-9]+\\.txt");
  for (const auto& [key, dir] : o.power) {
    if (!folders_for(key, folders, true, &picked, error)) return (*error = "--power " + *error, false);
    if (!fs::is_directory(dir, ec)) return (*error = "--power " + key + "=" + dir + ": not a folder", false);
    fs::path results = org / "results" / picked[0].first / picked[0].second;
    size_t n = 0;
    for (const auto& run : fs::directory_iterator(dir, ec)) {
      if (!run.is_directory(ec)) continue;
      std::string rname = run.path().filename().string();
      if (!fs::exists(results / (rname + ".txt"), ec))
        return (*error = "--power " + key + "=" + dir + ": " + rname + "/ has no result file " + rname + ".txt in " +
                         results.lexically_relative(org).string(),
                false);
      for (const auto& f : fs::directory_iterator(run.path(), ec)) {
        std::string fname = f.path().filename().string();
        if (!std::regex_match(fname, power_file) || !f.is_regular_file(ec))
          return (*error = "--power " + key + "=" + dir + ": " + rname + "/" + fname +
                           " is not a power log name the consortium's checker reads (node_<i>.txt, sw_<i>.txt)",
                  false);
        ++n;
      }
    }
    if (n == 0)
      return (*error = "--power " + key + "=" + dir + ": no result_<n>/ folder with node_<i>.txt or sw_<i>.txt there",
              false);
  }
  for (const auto& key : o.rcp_bypass)
    if (o.seed_bypass.count(key)) {
      *error = "--rcp-bypass and --seed-checker-bypass for " + key +
               ": the consortium's checker reads only a last line without a line end from package_checker_params, "
               "so one file holds one bypass";
      return false;
    }

  // benchmarks/<bench>/implementations/<impl>/: the code and the README.
  std::set<std::string> benches;
  for (const auto& f : folders) benches.insert(f.second);
  for (const auto& bench : benches) {
    fs::path target = org / "benchmarks" / bench / "implementations" / o.implementation;
    if (!o.code.count(bench) && fs::exists(target, ec)) continue;  // assembled before: kept as it is
    fs::path staging = staging_beside(target);
    fs::remove_all(staging, ec);
    fs::create_directories(staging, ec);
    std::string how;
    size_t copied = 0;
    bool own_readme = false;
    if (auto it = codes.find(bench); it != codes.end()) {
      const Code& c = it->second;
      for (const auto& f : c.files) {
        if (!copy_into(c.src / f, staging / f, error)) {
          fs::remove_all(staging, ec);
          return false;
        }
        ++copied;
        own_readme = own_readme || f == "README.md";
      }
      for (const auto& x : c.skipped) out->warnings.push_back("benchmarks/" + bench + ": left out " + x);
      how = c.listing + " in " + c.src.string() + ", " + std::to_string(copied) + " files";
    } else {
      out->warnings.push_back("benchmarks/" + bench + " has no source: MLCommons publishes each result's implementation "
                              "beside it; give it with --code " + bench + "=DIR");
    }
    std::string name = own_readme ? "REFEREE.md" : "README.md";
    if (!base::write_file_atomic((staging / name).string(), readme(org, bench, o.implementation, how), error) ||
        !install(staging, target, error))
      return false;
    out->wrote.push_back("benchmarks/" + bench + "/implementations/" + o.implementation + "/ (" +
                         std::to_string(copied) + " source files, " + name + ")");
  }

  // results/<system>/<bench>/power/: the power logs (checked above).
  for (const auto& [key, dir] : o.power) {
    folders_for(key, folders, true, &picked, error);
    fs::path target = org / "results" / picked[0].first / picked[0].second / "power";
    fs::path staging = staging_beside(target);
    fs::remove_all(staging, ec);
    size_t n = 0;
    for (const auto& run : fs::directory_iterator(dir, ec)) {
      if (!run.is_directory(ec)) continue;
      for (const auto& f : fs::directory_iterator(run.path(), ec)) {
        if (!copy_into(f.path(), staging / run.path().filename() / f.path().filename(), error)) {
          fs::remove_all(staging, ec);
          return false;
        }
        ++n;
      }
    }
    if (!install(staging, target, error)) return false;
    out->wrote.push_back((target.lexically_relative(org)).string() + "/ (" + std::to_string(n) + " power logs)");
  }

  // package_checker_params.
  for (const auto* set : {&o.rcp_bypass, &o.seed_bypass})
    for (const auto& key : *set) {
      if (!folders_for(key, folders, false, &picked, error)) return (*error = "bypass: " + *error, false);
      for (const auto& [system, bench] : picked) {
        fs::path p = org / "results" / system / bench / "package_checker_params";
        if (!base::write_file_atomic(p.string(), set == &o.rcp_bypass ? "rcp-bypass" : "seed-checker-bypass", error))
          return false;
        out->wrote.push_back((p.lexically_relative(org)).string() + " (" +
                             (set == &o.rcp_bypass ? "rcp-bypass" : "seed-checker-bypass") + ")");
      }
    }
  return true;
}

std::string tarball_problem(const std::string& org_dir, const std::string& path) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(path, ec), ec);
  fs::path org = fs::weakly_canonical(fs::absolute(org_dir, ec), ec);
  if (fs::is_directory(p, ec)) return "--tarball " + path + " is a folder: name the .tar.gz file to write";
  fs::path rel = p.lexically_relative(org);
  if (!rel.empty() && *rel.begin() != "..")
    return "--tarball " + path + " is inside " + org_dir + ": the next tarball would hold this one; write it beside the folder";
  fs::path dir = p.parent_path();
  if (!fs::is_directory(dir, ec)) return "--tarball " + path + ": its folder " + dir.string() + " does not exist";
  if (::access(dir.c_str(), W_OK | X_OK) != 0) return "--tarball " + path + ": its folder " + dir.string() + " is not writable";
  return "";
}

bool write_tarball(const std::string& org_dir, const std::string& path, size_t* files, std::string* error) {
  *files = 0;
  const base::dyn::Archive* a = base::dyn::archive(error);
  if (!a) return false;
  fs::path org = fs::absolute(org_dir);
  std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  struct archive* w = a->write_new();
  bool ok = a->write_set_format_pax_restricted(w) == ARCHIVE_OK && a->write_add_filter_gzip(w) == ARCHIVE_OK &&
            a->write_open_filename(w, tmp.c_str()) == ARCHIVE_OK;
  if (!ok) {
    *error = "cannot write " + path + ": " + (a->error_string(w) ? a->error_string(w) : "libarchive failed");
    a->write_free(w);
    ::unlink(tmp.c_str());
    return false;
  }
  std::vector<fs::path> entries;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(org, ec); it != fs::recursive_directory_iterator(); it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.find(".staging-") != std::string::npos || name.find(".tmp-") != std::string::npos) continue;
    if (it->is_regular_file(ec)) entries.push_back(it->path());
  }
  std::sort(entries.begin(), entries.end());
  std::string base = org.filename().string();
  char buf[1 << 16];
  for (const auto& p : entries) {
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0) continue;
    struct archive_entry* e = a->entry_new();
    std::string rel = base + "/" + p.lexically_relative(org).string();
    a->entry_set_pathname(e, rel.c_str());
    a->entry_set_size(e, st.st_size);
    a->entry_set_filetype(e, AE_IFREG);
    a->entry_set_perm(e, 0644);
    a->entry_set_mtime(e, st.st_mtime, 0);
    ok = a->write_header(w, e) == ARCHIVE_OK;
    a->entry_free(e);
    std::ifstream in(p, std::ios::binary);
    while (ok && in) {
      in.read(buf, sizeof buf);
      if (in.gcount() > 0) ok = a->write_data(w, buf, static_cast<size_t>(in.gcount())) == in.gcount();
    }
    if (!ok) break;
    ++*files;
  }
  if (!ok) *error = "cannot write " + path + ": " + (a->error_string(w) ? a->error_string(w) : "libarchive failed");
  ok = a->write_close(w) == ARCHIVE_OK && ok;
  a->write_free(w);
  if (ok && ::rename(tmp.c_str(), path.c_str()) != 0) {
    *error = "cannot write " + path + ": " + std::strerror(errno);
    ok = false;
  }
  if (!ok) {
    if (error->empty()) *error = "cannot write " + path;
    ::unlink(tmp.c_str());
  }
  return ok;
}

}  // namespace referee::harness
