#include "submissions/fetch_round.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>

#include "mllog/json_writer.h"
#include "submissions/store.h"

namespace fs = std::filesystem;

namespace referee::submissions {

namespace {

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

// SHA-256 of a file, streamed. Returns "" when the file cannot be read.
std::string sha256_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr);
  std::vector<char> buf(1 << 16);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    if (in.gcount() > 0) EVP_DigestUpdate(ctx.get(), buf.data(), static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) return "";
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned len = 0;
  EVP_DigestFinal_ex(ctx.get(), md, &len);
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < len; ++i) {
    out += digits[md[i] >> 4];
    out += digits[md[i] & 15];
  }
  return out;
}

std::string iso_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string mib(std::uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return buf;
}

std::string percent_decode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

// "" when `from` is a remote URL; else the local file it names.
std::string local_path(const std::string& from, bool* is_local) {
  *is_local = false;
  std::string l = lower(from.substr(0, 8));
  if (l.rfind("http://", 0) == 0 || l.rfind("https://", 0) == 0) return "";
  *is_local = true;
  if (l.rfind("file://", 0) == 0) {
    std::string rest = from.substr(7);
    if (rest.rfind("localhost/", 0) == 0) rest = rest.substr(9);
    return percent_decode(rest);
  }
  return from;
}

std::vector<std::string> split_path(const std::string& p) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i <= p.size()) {
    size_t j = p.find('/', i);
    if (j == std::string::npos) j = p.size();
    std::string c = p.substr(i, j - i);
    if (!c.empty() && c != ".") out.push_back(c);
    i = j + 1;
  }
  return out;
}

const char* kind_name(mode_t type) {
  switch (type) {
    case AE_IFLNK: return "a symbolic link";
    case AE_IFCHR: return "a character device";
    case AE_IFBLK: return "a block device";
    case AE_IFIFO: return "a FIFO";
    case AE_IFSOCK: return "a socket";
    default: return "not a regular file";
  }
}

// Removes what a failed fetch left behind: the download, the staging folder,
// and the destination's parent folders that it created itself.
struct Cleanup {
  std::vector<fs::path> files;
  std::vector<fs::path> trees;
  std::vector<fs::path> created;  // removed when empty, deepest first
  bool success = false;
  ~Cleanup() {
    std::error_code ec;
    for (const auto& f : files) fs::remove(f, ec);
    for (const auto& t : trees)
      if (!t.empty()) fs::remove_all(t, ec);
    if (success) return;
    for (auto it = created.rbegin(); it != created.rend(); ++it)
      if (fs::is_empty(*it, ec)) fs::remove(*it, ec);
  }
};

const char* kWritableFix = "\nfix: make the folder writable, or pass --dest DIR naming a writable place";

bool make_temp_dir(const fs::path& parent, const std::string& prefix, fs::path* out, std::string* error) {
  std::string tmpl = (parent / (prefix + "XXXXXX")).string();
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) {
    *error = "cannot create a folder in " + parent.string() + ": " + std::strerror(errno) + kWritableFix;
    return false;
  }
  *out = buf.data();
  return true;
}

bool make_temp_file(const fs::path& parent, const std::string& prefix, fs::path* out, std::string* error) {
  std::string tmpl = (parent / (prefix + "XXXXXX")).string();
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  int fd = mkstemp(buf.data());
  if (fd < 0) {
    *error = "cannot create a file in " + parent.string() + ": " + std::strerror(errno) + kWritableFix;
    return false;
  }
  ::close(fd);
  *out = buf.data();
  return true;
}

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
  std::unique_ptr<struct archive, decltype(&archive_read_free)> a(archive_read_new(), archive_read_free);
  archive_read_support_filter_all(a.get());
  archive_read_support_format_all(a.get());
  if (archive_read_open_filename(a.get(), archive_path.c_str(), 1 << 16) != ARCHIVE_OK) {
    *error = "the downloaded file is not a readable archive (damaged, truncated, or not an archive at all): " +
             std::string(archive_error_string(a.get())) + damaged_fix;
    return false;
  }
  std::string top;  // the archive's top folder, from its first entry
  bool have_top = false;
  std::vector<char> buf(1 << 16);
  for (;;) {
    struct archive_entry* entry = nullptr;
    int r = archive_read_next_header(a.get(), &entry);
    if (r == ARCHIVE_EOF) break;
    if (r < ARCHIVE_WARN) {
      const char* why = archive_error_string(a.get());
      *error = "the archive is damaged or truncated: " + std::string(why ? why : "unreadable entry") + damaged_fix;
      return false;
    }
    const char* name = archive_entry_pathname(entry);
    if (!name) name = archive_entry_pathname_utf8(entry);
    if (!name) {
      *error = "the archive has an entry without a readable name" + damaged_fix;
      return false;
    }
    const std::string path = name;
    std::vector<std::string> comps = split_path(path);
    // Checked on every entry, kept or not: nothing in a genuine archive needs them.
    bool escapes = !path.empty() && path[0] == '/';
    for (const auto& c : comps) escapes |= c == "..";
    if (escapes) {
      *error = "the archive entry '" + path +
               "' has an unsafe path (absolute or containing '..'); refusing the whole archive" + kMaliciousFix;
      return false;
    }
    if (comps.empty()) continue;
    const mode_t type = archive_entry_filetype(entry);
    if (!have_top && (comps.size() >= 2 || type == AE_IFDIR)) {  // a file at the top is no top folder
      have_top = true;
      top = comps[0];
    }
    if (comps[0] != top || comps.size() < 3) continue;  // another top folder; or README.md, <org>/README.md
    const std::string& org = comps[1];
    const std::string& area = comps[2];
    if (org[0] == '.' || (area != "results" && area != "systems")) continue;  // benchmarks/, code, .github, ...
    const char* hardlink = archive_entry_hardlink(entry);
    if (hardlink || (type != AE_IFREG && type != AE_IFDIR)) {
      *error = "the archive entry '" + path + "' is " + std::string(hardlink ? "a hard link" : kind_name(type)) +
               ", not a regular file; links and devices are not allowed under results/ or systems/; refusing the "
               "whole archive" +
               kMaliciousFix;
      return false;
    }
    if (type == AE_IFDIR || comps.size() < 4) continue;  // folders are made as needed
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
      la_ssize_t n = archive_read_data(a.get(), buf.data(), buf.size());
      if (n == 0) break;
      if (n < 0) {
        const char* why = archive_error_string(a.get());
        *error = "the archive is damaged or truncated (in " + path + "): " + std::string(why ? why : "read error") +
                 damaged_fix;
        return false;
      }
      size += static_cast<std::uint64_t>(n);
      out->bytes += static_cast<std::uint64_t>(n);
      if (size > req.max_file_bytes) {
        *error = "the archive entry '" + path + "' is larger than " + mib(req.max_file_bytes) +
                 ", implausibly large for a result log; refusing the archive" + kMaliciousFix;
        return false;
      }
      if (out->bytes > req.max_total_bytes) {
        *error = "the archive's results/ and systems/ folders hold more than " + mib(req.max_total_bytes) +
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
  w.key("fetched_at").value(iso_now());
  w.key("referee_version").value(REFEREE_VERSION);
  w.key("organisations").begin_array();
  for (const auto& o : r.organisations) w.value(o);
  w.end_array();
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

// Swaps `staging` into `target`'s place. On success, `*old` is where the
// earlier install now lies (to be removed), or empty.
bool install(const fs::path& staging, const fs::path& target, fs::path* old, Cleanup* cleanup, std::string* error) {
  std::error_code ec;
  old->clear();
  const std::string fix = "\nfix: check the permissions of " + target.parent_path().string();
  if (!fs::exists(fs::symlink_status(target, ec))) {
    if (std::rename(staging.c_str(), target.c_str()) != 0) {
      *error = "cannot move the results into " + target.string() + ": " + std::strerror(errno) + fix;
      return false;
    }
    return true;
  }
  // One atomic step where the file system allows it: the staging folder now
  // holds the old install, which the cleanup removes.
  if (renameat2(AT_FDCWD, staging.c_str(), AT_FDCWD, target.c_str(), RENAME_EXCHANGE) == 0) {
    *old = staging;
    return true;
  }
  if (errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP) {
    *error = "cannot replace " + target.string() + ": " + std::strerror(errno) + fix;
    return false;
  }
  // Else move the old install aside, the new one in, and drop the old.
  fs::path aside;
  if (!make_temp_dir(target.parent_path(), ".old-" + target.filename().string() + "-", &aside, error)) return false;
  cleanup->trees.push_back(aside);
  if (std::rename(target.c_str(), aside.c_str()) != 0) {
    *error = "cannot move " + target.string() + " aside: " + std::strerror(errno) + fix;
    return false;
  }
  if (std::rename(staging.c_str(), target.c_str()) != 0) {
    int e = errno;
    if (std::rename(aside.c_str(), target.c_str()) != 0) cleanup->trees.pop_back();  // keep the old install
    *error = "cannot move the results into " + target.string() + ": " + std::strerror(e) + fix;
    return false;
  }
  *old = aside;
  return true;
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
  std::string local = local_path(url, &is_local);
  std::error_code ec;
  if (is_local && lower(url).rfind("file://", 0) != 0 && url.find("://") != std::string::npos) {
    *error = "cannot fetch '" + url +
             "': only http://, https:// and file:// URLs are supported\nfix: download the archive yourself and pass "
             "--from PATH";
    return false;
  }
  if (is_local && !fs::is_regular_file(local, ec)) {
    *error = "cannot read the archive " + local + ": no such file\nfix: check the path given to --from";
    return false;
  }
  std::string want = lower(request.sha256);
  if (!want.empty() && (want.size() != 64 || !std::all_of(want.begin(), want.end(), [](char c) {
                          return std::isxdigit(static_cast<unsigned char>(c));
                        }))) {
    *error = "--sha256 expects 64 hexadecimal digits, got '" + request.sha256 +
             "'\nfix: pass the output of sha256sum ARCHIVE";
    return false;
  }
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

  Cleanup cleanup;
  for (fs::path p = parent; !p.empty() && !fs::exists(p, ec); p = p.parent_path()) {
    cleanup.created.insert(cleanup.created.begin(), p);
    if (p == p.parent_path()) break;
  }
  fs::create_directories(parent, ec);
  if (ec || !fs::is_directory(parent, ec)) {
    *error = "cannot create the folder " + parent.string() + (ec ? ": " + ec.message() : std::string()) + kWritableFix;
    return false;
  }

  // Download.
  std::string archive = local;
  std::string source = is_local ? fs::absolute(local, ec).lexically_normal().string() : url;
  if (!is_local) {
    fs::path tmp;
    if (!make_temp_file(parent, ".download-" + round + "-", &tmp, error)) return false;
    cleanup.files.push_back(tmp);
    archive = tmp.string();
    rules::DownloadError derr;
    if (!fetcher.fetch(url, archive, &derr)) {
      *error = derr.message + "; nothing was installed";
      if (derr.http_status == 404) {
        std::string repo = round_repository_url(round);
        *error += request.from.empty() && !repo.empty()
                      ? "\nfix: check that the results of " + round + " are published at " + repo +
                            ", or pass --from URL|PATH naming an archive of them"
                      : "\nfix: check the URL given to --from";
      } else if (derr.http_status >= 400) {
        *error += "\nfix: run the command again later, or download the archive yourself and pass --from PATH";
      } else {
        *error += "\nfix: check the network connection (and proxy variables such as https_proxy), then run the "
                  "command again; offline, download the archive elsewhere and pass --from PATH";
      }
      return false;
    }
  }

  // Verify.
  std::string got = sha256_file(archive);
  if (got.empty()) {
    *error = "cannot read the archive " + archive + "\nfix: check the file's permissions";
    return false;
  }
  if (!want.empty() && got != want) {
    *error = "checksum mismatch for " + source + ": expected sha256 " + want + ", got " + got +
             "; nothing was installed\nfix: make sure --sha256 is the digest of this archive (sha256sum ARCHIVE); if "
             "it is, the download was altered on the way";
    return false;
  }

  // Extract.
  fs::path staging;
  if (!make_temp_dir(parent, ".staging-" + round + "-", &staging, error)) return false;
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
  if (!install(staging, target, &old, &cleanup, error)) return false;
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
  if (error->find("nothing was installed") == std::string::npos) {
    size_t fix = error->find("\nfix:");
    error->insert(fix == std::string::npos ? error->size() : fix, "; nothing was installed");
  }
  return false;
}

}  // namespace referee::submissions
