#include "submissions/fetch_round.h"

#include <fcntl.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <set>

#include "base/file.h"
#include "base/utc_time.h"
#include "mllog/json_writer.h"
#include "submissions/store.h"

namespace fs = std::filesystem;

namespace referee::submissions {

namespace {

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

const char* kWritableFix = "\nfix: make the folder writable, or pass --dest DIR naming a writable place";

struct Extracted {
  std::set<std::string> organisations;  // with at least one file under results/
  size_t files = 0;
  std::uint64_t bytes = 0;
};

const char* kMaliciousFix =
    "\nfix: the archive is malformed or malicious; fetch the round's official archive from GitHub (leave out --from)";

// Extracts `<top>/<org>/results/**` and `<top>/<org>/systems/**` of
// `archive_path` into `staging` as `<org>/results/**`, `<org>/systems/**`.
bool extract(const std::string& archive_path, bool is_local, const fs::path& staging, const RoundFetchRequest& req,
             Extracted* out, std::string* error) {
  const std::string damaged_fix =
      is_local ? "\nfix: the file " + archive_path + " is damaged or incomplete; download it again"
               : std::string("\nfix: run the command again; if it keeps failing, download the archive with a browser "
                             "or curl and pass --from PATH");
  std::string why;
  if (!rules::ArchiveReader::available(&why)) {
    *error = "cannot unpack " + archive_path + ": " + why;
    return false;
  }
  rules::ArchiveReader reader(damaged_fix, kMaliciousFix);
  if (!reader.open(archive_path, &why)) {
    *error = "the downloaded file is not a readable archive (damaged, truncated, or not an archive at all): " + why +
             damaged_fix;
    return false;
  }
  std::string top;  // the archive's top folder, from its first entry
  bool have_top = false;
  std::vector<char> buf(1 << 16);
  rules::ArchiveEntry entry;
  for (;;) {
    // Unsafe paths are refused on every entry, kept or not: nothing in a genuine archive needs them.
    rules::ArchiveReader::Next next = reader.next(&entry, error);
    if (next == rules::ArchiveReader::Next::End) break;
    if (next == rules::ArchiveReader::Next::Error) return false;
    const std::string& path = entry.path;
    const std::vector<std::string>& comps = entry.components;
    if (comps.empty()) continue;
    if (!have_top && (comps.size() >= 2 || entry.directory)) {  // a file at the top is no top folder
      have_top = true;
      top = comps[0];
    }
    if (comps[0] != top || comps.size() < 3) continue;  // another top folder; or README.md, <org>/README.md
    const std::string& org = comps[1];
    const std::string& area = comps[2];
    if (org[0] == '.' || (area != "results" && area != "systems")) continue;  // benchmarks/, code, .github, ...
    if (entry.hard_link || (!entry.regular && !entry.directory)) {
      *error = "the archive entry '" + path + "' is " + entry.kind +
               ", not a regular file; links and devices are not allowed under results/ or systems/; refusing the "
               "whole archive" +
               kMaliciousFix;
      return false;
    }
    if (entry.directory || comps.size() < 4) continue;  // folders are made as needed
    std::string rel;
    for (size_t i = 1; i < comps.size(); ++i) rel += (i > 1 ? "/" : "") + comps[i];
    fs::path dest = staging / rel;
    std::error_code ec;
    fs::create_directories(dest.parent_path(), ec);
    std::unique_ptr<FILE, decltype(&std::fclose)> f(ec ? nullptr : std::fopen(dest.c_str(), "wb"), std::fclose);
    if (!f) {
      *error = "cannot write " + dest.string() + ": " + (ec ? ec.message() : std::string(std::strerror(errno))) +
               " (entry '" + path + "')" + kWritableFix;
      return false;
    }
    std::uint64_t size = 0;
    for (;;) {
      long n = reader.read(buf.data(), buf.size(), error);
      if (n == 0) break;
      if (n < 0) return false;
      size += static_cast<std::uint64_t>(n);
      out->bytes += static_cast<std::uint64_t>(n);
      if (size > req.max_file_bytes) {
        *error = "the archive entry '" + path + "' is larger than " + rules::mib(req.max_file_bytes, 0) +
                 ", implausibly large for a result log; refusing the archive" + kMaliciousFix;
        return false;
      }
      if (out->bytes > req.max_total_bytes) {
        *error = "the archive's results/ and systems/ folders hold more than " + rules::mib(req.max_total_bytes, 0) +
                 ", implausibly much; refusing the archive at '" + path + "'" + kMaliciousFix;
        return false;
      }
      if (std::fwrite(buf.data(), 1, static_cast<size_t>(n), f.get()) != static_cast<size_t>(n)) {
        *error = "cannot write " + dest.string() + ": " + std::strerror(errno) +
                 "\nfix: check the free space and permissions of the destination's folder";
        return false;
      }
    }
    if (std::fclose(f.release()) != 0) {
      *error = "cannot write " + dest.string() + ": " + std::strerror(errno) +
               "\nfix: check the free space and permissions of the destination's folder";
      return false;
    }
    ++out->files;
    if (area == "results") out->organisations.insert(org);
  }
  if (out->organisations.empty()) {
    *error = "the archive has no <org>/results/ folder with files in it" +
             std::string(have_top ? " (looked below its top folder '" + top + "/')" : " (it has no folder at its top)") +
             ", so it is not an MLPerf results repository"
             "\nfix: --from must name an archive of a results repository such as "
             "https://github.com/mlcommons/training_results_v3.1 (laid out as <top>/<org>/results/...)";
    return false;
  }
  return true;
}

std::string manifest_json(const RoundFetchRequest& req, const RoundFetchResult& r) {
  mllog::JsonWriter w(2);
  w.begin_object();
  w.key("schema").value(kRoundManifestSchema);
  w.key("round").value(req.round);
  w.key("source").value(r.source);
  w.key("sha256").value(r.sha256);
  w.key("fetched_at").value(base::utc_now());
  w.key("referee_version").value(REFEREE_VERSION);
  w.key("organisations").strings(r.organisations);
  w.key("files").value(static_cast<long long>(r.files));
  w.key("bytes").value(static_cast<long long>(r.bytes));
  w.end_object();
  return w.str() + "\n";
}

// The destination as an absolute, normal path without a trailing separator.
bool normal_dest(const std::string& dest, fs::path* out, std::string* error) {
  std::error_code ec;
  fs::path p = fs::absolute(dest, ec).lexically_normal();
  std::string s = p.string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  p = s;
  std::string leaf = p.filename().string();
  if (ec || leaf.empty() || leaf == "." || leaf == ".." || p == p.parent_path()) {
    *error = "'" + dest + "' cannot be the destination\nfix: pass --dest DIR naming a folder to create or replace";
    return false;
  }
  *out = p;
  return true;
}

// Swaps `staging` into `target`'s place (base::swap_install_dir). On success,
// `*old` is where the earlier install now lies (to be removed), or empty; on
// failure a non-empty `*old` holds the earlier install, which is kept.
bool install(const fs::path& staging, const fs::path& target, fs::path* old, std::string* error) {
  base::Status s = base::swap_install_dir(staging, target, old);
  if (s.ok()) return true;
  *error = s.message + "\nfix: check the permissions of " + target.parent_path().string();
  return false;
}

bool fetch_round_impl(const RoundFetchRequest& request, rules::Fetcher& fetcher, RoundFetchResult* result,
                      std::string* error) {
  // Everything that can be checked without touching the disk comes first.
  const std::string& round = request.round;
  if (!rules::valid_tag(round)) {
    *error = "'" + round + "' is not a round name\nfix: name the round's rule set, such as training-3.1.0";
    return false;
  }
  std::string url = request.from.empty() ? round_archive_url(round) : request.from;
  if (url.empty()) {
    *error = "cannot tell which repository holds the results of '" + round +
             "'\nfix: name the round like training-3.1.0 (repository mlcommons/training_results_v3.1), or pass "
             "--from URL|PATH";
    return false;
  }
  bool is_local = false;
  std::string local;
  if (!rules::check_local_source(url, &local, &is_local, error)) return false;
  std::string want;
  if (!rules::parse_sha256(request.sha256, &want, error)) return false;
  std::error_code ec;
  fs::path target;
  if (!normal_dest(request.dest.empty() ? default_round_dest(round) : request.dest, &target, error)) return false;
  const fs::path parent = target.parent_path();

  // An existing destination is replaced only when an earlier fetch made it.
  auto check_target = [&]() {
    auto st = fs::symlink_status(target, ec);
    if (!fs::exists(st)) return true;
    if (!fs::is_directory(st)) {
      *error = target.string() + " exists and is not a folder (" +
               std::string(fs::is_symlink(st) ? "a symbolic link" : "a file") +
               "); refusing to replace it\nfix: remove it, or pass --dest DIR naming another place";
      return false;
    }
    if (!fs::is_empty(target, ec) && !fs::exists(target / kRoundManifestName, ec)) {
      *error = target.string() + " exists and was not made by 'referee fetch' (it has no " + kRoundManifestName +
               "); refusing to replace it\nfix: remove it yourself, or pass --dest DIR naming another place";
      return false;
    }
    return true;
  };
  if (!check_target()) return false;

  rules::InstallCleanup cleanup;
  if (!cleanup.create_directories(parent, &ec)) {
    *error = "cannot create the folder " + parent.string() + (ec ? ": " + ec.message() : std::string()) + kWritableFix;
    return false;
  }

  // Download.
  std::string archive = local;
  std::string source = is_local ? fs::absolute(local, ec).lexically_normal().string() : url;
  if (!is_local) {
    fs::path tmp;
    if (!rules::make_temp_file(parent, ".download-" + round + "-", kWritableFix, &tmp, error)) return false;
    cleanup.files.push_back(tmp);
    archive = tmp.string();
    rules::DownloadError derr;
    if (!fetcher.fetch(url, archive, &derr)) {
      std::string repo = round_repository_url(round);
      *error = rules::download_failure(derr, request.from.empty() && !repo.empty()
                                                 ? "\nfix: check that the results of " + round + " are published at " +
                                                       repo + ", or pass --from URL|PATH naming an archive of them"
                                                 : "\nfix: check the URL given to --from");
      return false;
    }
  }

  // Verify.
  std::string got;
  if (!rules::verify_sha256(archive, source, want, &got, error)) return false;

  // Extract.
  fs::path staging;
  if (!rules::make_temp_dir(parent, ".staging-" + round + "-", kWritableFix, &staging, error)) return false;
  cleanup.trees.push_back(staging);
  fs::permissions(staging, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                               fs::perms::others_read | fs::perms::others_exec, ec);
  Extracted ex;
  if (!extract(archive, is_local, staging, request, &ex, error)) return false;
  if (!cleanup.files.empty()) {  // the download is not needed any more
    fs::remove(cleanup.files.back(), ec);
    cleanup.files.pop_back();
  }

  RoundFetchResult r;
  r.dir = target.string();
  r.source = source;
  r.sha256 = got;
  r.organisations.assign(ex.organisations.begin(), ex.organisations.end());
  r.files = ex.files;
  r.bytes = ex.bytes;
  {
    fs::path m = staging / kRoundManifestName;
    std::ofstream o(m, std::ios::binary | std::ios::trunc);
    o << manifest_json(request, r);
    o.close();
    if (!o) {
      *error = "cannot write " + m.string() + "\nfix: check the free space and permissions of " + parent.string();
      return false;
    }
  }

  // Install.
  if (!check_target()) return false;  // it may have changed during the download
  r.replaced = fs::exists(fs::symlink_status(target, ec));
  fs::path old;
  if (!install(staging, target, &old, error)) return false;
  cleanup.success = true;
  if (old != staging) {
    cleanup.trees.erase(std::remove(cleanup.trees.begin(), cleanup.trees.end(), staging), cleanup.trees.end());
    if (!old.empty() && std::find(cleanup.trees.begin(), cleanup.trees.end(), old) == cleanup.trees.end())
      cleanup.trees.push_back(old);
  }
  *result = std::move(r);
  return true;
}

}  // namespace

std::string round_short_version(const std::string& round) {
  auto dash = round.rfind('-');
  if (dash == std::string::npos || dash == 0) return "";
  std::string usage = round.substr(0, dash);
  if (!std::all_of(usage.begin(), usage.end(), [](char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }))
    return "";
  std::vector<std::string> parts;
  std::string v = round.substr(dash + 1);
  size_t i = 0;
  for (;;) {
    size_t j = v.find('.', i);
    parts.push_back(v.substr(i, j == std::string::npos ? std::string::npos : j - i));
    if (j == std::string::npos) break;
    i = j + 1;
  }
  if (parts.size() < 2 || !std::all_of(parts.begin(), parts.end(), all_digits)) return "";
  while (parts.size() > 2 && parts.back() == "0") parts.pop_back();
  std::string out = "v";
  for (size_t k = 0; k < parts.size(); ++k) out += (k ? "." : "") + parts[k];
  return out;
}

std::string results_folder_round(const std::string& path) {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::weakly_canonical(std::filesystem::absolute(path, ec), ec);
  static const std::regex repo("^([a-z_]+)_results_(v[0-9]+(?:\\.[0-9]+)+)(?:-main)?$");
  std::smatch m;
  for (auto it = p; !it.empty() && it != it.root_path(); it = it.parent_path()) {
    const std::string name = it.filename().string();
    if (std::regex_match(name, m, repo)) return m[1].str() + " " + m[2].str();
    std::string v = round_short_version(name);
    if (!v.empty() && it.parent_path().filename() == "results") return name.substr(0, name.rfind('-')) + " " + v;
  }
  return "";
}

bool results_folder_round_differs(const std::string& path, const std::string& round, std::string* named) {
  const std::string folder = results_folder_round(path);
  const std::string v = round_short_version(round);
  if (folder.empty() || v.empty()) return false;
  const std::string usage = round.substr(0, round.rfind('-'));
  if (folder == usage + " " + v) return false;
  // "training v3.1" -> "training-3.1.0".
  const size_t sp = folder.find(' ');
  std::string ver = folder.substr(sp + 2);
  if (std::count(ver.begin(), ver.end(), '.') == 1) ver += ".0";
  *named = folder.substr(0, sp) + "-" + ver;
  return true;
}

std::string round_repository_url(const std::string& round) {
  std::string v = round_short_version(round);
  if (v.empty()) return "";
  return "https://github.com/mlcommons/" + round.substr(0, round.rfind('-')) + "_results_" + v;
}

std::string round_archive_url(const std::string& round) {
  std::string repo = round_repository_url(round);
  return repo.empty() ? "" : repo + "/archive/refs/heads/main.tar.gz";
}

std::string default_round_dest(const std::string& round) {
  fs::path data = fs::path(default_db_path()).parent_path();
  if (data.empty()) data = ".";
  return (data / "results" / round).string();
}

bool fetch_round(const RoundFetchRequest& request, rules::Fetcher& fetcher, RoundFetchResult* result,
                 std::string* error) {
  if (fetch_round_impl(request, fetcher, result, error)) return true;
  rules::note_nothing_installed(error);
  return false;
}

}  // namespace referee::submissions
