#include "rules/fetch.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <thread>

#include "base/digest.h"
#include "base/dynlib.h"
#include "base/file.h"
#include "base/text.h"
#include "base/url.h"
#include "base/utc_time.h"
#include "mllog/json.h"
#include "mllog/json_writer.h"
#include "rules/ruleset.h"
#include "rules/source.h"

namespace fs = std::filesystem;

namespace referee::rules {

namespace {

constexpr const char* kManifestSchema = "referee.rules-manifest/1";
constexpr const char* kTagsPage = "https://github.com/mlcommons/logging/tags";
// Limits against archive bombs: the real package's rule files are a few KiB each.
constexpr size_t kMaxFileBytes = 64u << 20;
constexpr size_t kMaxTotalBytes = 512u << 20;

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// ---------------------------------------------------------------- libcurl


struct Progress {
  std::string label;
  curl_off_t offset = 0;  // bytes already on disk before this request
  std::chrono::steady_clock::time_point last{};
  bool printed = false;
  curl_off_t last_have = -1;
};

int progress_cb(void* p, curl_off_t dltotal, curl_off_t dlnow, curl_off_t, curl_off_t) {
  auto* pr = static_cast<Progress*>(p);
  auto now = std::chrono::steady_clock::now();
  curl_off_t have = pr->offset + dlnow;
  bool done = dltotal > 0 && dlnow == dltotal;
  if (have == pr->last_have) return 0;
  if (pr->printed && !done && now - pr->last < std::chrono::milliseconds(100)) return 0;
  if (dlnow == 0 && !pr->printed) return 0;
  pr->last = now;
  pr->printed = true;
  pr->last_have = have;
  std::string line = "\r" + pr->label + ": " + mib(static_cast<std::uint64_t>(have), 1);
  if (dltotal > 0) {
    curl_off_t total = pr->offset + dltotal;
    int pct = static_cast<int>(100 * have / total);
    int width = 30, fill = width * pct / 100;
    line += " / " + mib(static_cast<std::uint64_t>(total), 1) + " [" + std::string(static_cast<size_t>(fill), '#') +
            std::string(static_cast<size_t>(width - fill), ' ') + "] " + std::to_string(pct) + "%";
  }
  line += "\033[K";
  std::fputs(line.c_str(), stderr);
  return 0;
}

size_t write_cb(char* data, size_t size, size_t n, void* f) {
  return std::fwrite(data, size, n, static_cast<FILE*>(f)) * size;
}

bool transient(CURLcode rc, long status) {
  switch (rc) {
    case CURLE_HTTP_RETURNED_ERROR:
      return status >= 500 || status == 429 || status == 408;
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_PARTIAL_FILE:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
      return true;
    default:
      return false;
  }
}

uintmax_t file_size_or_zero(const std::string& path) {
  std::error_code ec;
  auto n = fs::file_size(path, ec);
  return ec ? 0 : n;
}

}  // namespace

std::string release_archive_url(const std::string& tag) {
  return "https://github.com/mlcommons/logging/archive/refs/tags/" + tag + ".tar.gz";
}

bool valid_tag(const std::string& tag) {
  if (tag.empty() || tag.size() > 100 || tag[0] == '.' || tag[0] == '-') return false;
  return std::all_of(tag.begin(), tag.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
  });
}

bool CurlFetcher::fetch(const std::string& url, const std::string& dest, DownloadError* error) {
  requests_ = 0;
  resumed_ = 0;
  std::string load_error;
  const base::dyn::Curl* api = base::dyn::curl(&load_error);
  if (!api) {
    error->message = load_error;
    return false;
  }
  std::unique_ptr<CURL, void (*)(CURL*)> curl(api->easy_init(), api->easy_cleanup);
  if (!curl) {
    error->message = "cannot start libcurl";
    return false;
  }
  const bool show_progress = options_.progress && isatty(STDERR_FILENO);
  long backoff = options_.backoff_ms;
  bool allow_resume = true;
  bool restarted = false;  // one free restart when the server refuses a Range request
  int attempt = 0;
  const int attempts = std::max(1, options_.attempts);
  std::string last_error;
  while (attempt < attempts) {
    ++attempt;
    curl_off_t offset = allow_resume && attempt > 1 ? static_cast<curl_off_t>(file_size_or_zero(dest)) : 0;
    FILE* f = std::fopen(dest.c_str(), offset > 0 ? "ab" : "wb");
    if (!f) {
      error->message = "cannot write " + dest + ": " + std::strerror(errno);
      return false;
    }
    char errbuf[CURL_ERROR_SIZE] = {0};
    Progress progress;
    progress.label = options_.label.empty() ? std::string("downloading") : options_.label;
    progress.offset = offset;
    CURL* h = curl.get();
    api->easy_reset(h);
    api->easy_setopt(h, CURLOPT_URL, url.c_str());
    api->easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    api->easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    api->easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
    api->easy_setopt(h, CURLOPT_MAXREDIRS, 10L);
    api->easy_setopt(h, CURLOPT_FAILONERROR, 1L);
    api->easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    api->easy_setopt(h, CURLOPT_USERAGENT, "referee/" REFEREE_VERSION);
    api->easy_setopt(h, CURLOPT_CONNECTTIMEOUT, options_.connect_timeout_s);
    api->easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, options_.low_speed_limit);
    api->easy_setopt(h, CURLOPT_LOW_SPEED_TIME, options_.low_speed_time_s);
    api->easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    api->easy_setopt(h, CURLOPT_WRITEFUNCTION, write_cb);
    api->easy_setopt(h, CURLOPT_WRITEDATA, f);
    if (offset > 0) {
      api->easy_setopt(h, CURLOPT_RESUME_FROM_LARGE, offset);
      ++resumed_;
    }
    if (show_progress) {
      api->easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
      api->easy_setopt(h, CURLOPT_XFERINFOFUNCTION, progress_cb);
      api->easy_setopt(h, CURLOPT_XFERINFODATA, &progress);
    }
    ++requests_;
    CURLcode rc = api->easy_perform(h);
    long status = 0;
    api->easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    bool write_failed = std::fclose(f) != 0;
    if (progress.printed) std::fputs("\n", stderr);
    if (rc == CURLE_OK && !write_failed) return true;
    if (write_failed || rc == CURLE_WRITE_ERROR) {
      error->message = "cannot write " + dest + ": " + std::strerror(errno);
      return false;
    }
    std::string detail = errbuf[0] ? errbuf : api->easy_strerror(rc);
    if (offset > 0 && (rc == CURLE_RANGE_ERROR || status == 416) && !restarted) {
      // The server does not honour Range: start over from byte 0.
      restarted = true;
      allow_resume = false;
      --attempt;
      continue;
    }
    if (rc == CURLE_HTTP_RETURNED_ERROR) {
      error->http_status = status;
      last_error = "the server answered HTTP " + std::to_string(status) + " for " + url;
    } else {
      error->http_status = 0;
      last_error = "download of " + url + " failed: " + detail;
    }
    if (!transient(rc, status)) {
      error->message = last_error;
      return false;
    }
    if (attempt < attempts) {
      std::this_thread::sleep_for(std::chrono::milliseconds(backoff));
      backoff *= 2;
    }
  }
  error->message = last_error + " (gave up after " + std::to_string(attempts) + " attempts)";
  return false;
}

// ------------------------------------------- download and archive utilities

std::string local_path(const std::string& from, bool* is_local) {
  *is_local = false;
  std::string l = base::lower(from.substr(0, 8));
  if (l.rfind("http://", 0) == 0 || l.rfind("https://", 0) == 0) return "";
  *is_local = true;
  if (l.rfind("file://", 0) == 0) {
    std::string rest = from.substr(7);
    if (rest.rfind("localhost/", 0) == 0) rest = rest.substr(9);
    return base::percent_decode_lenient(rest);
  }
  return from;
}

bool check_local_source(const std::string& url, std::string* local, bool* is_local, std::string* error) {
  *local = local_path(url, is_local);
  if (*is_local && base::lower(url).rfind("file://", 0) != 0 && url.find("://") != std::string::npos) {
    *error = "cannot fetch '" + url +
             "': only http://, https:// and file:// URLs are supported\nfix: download the archive yourself and pass "
             "--from PATH";
    return false;
  }
  std::error_code ec;
  if (*is_local && !fs::is_regular_file(*local, ec)) {
    *error = "cannot read the archive " + *local + ": no such file\nfix: check the path given to --from";
    return false;
  }
  return true;
}

bool parse_sha256(const std::string& sha256, std::string* want, std::string* error) {
  *want = base::lower(sha256);
  if (want->empty()) return true;
  if (want->size() == 64 &&
      std::all_of(want->begin(), want->end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); }))
    return true;
  *error = "--sha256 expects 64 hexadecimal digits, got '" + sha256 + "'\nfix: pass the output of sha256sum ARCHIVE";
  return false;
}

std::vector<std::string> split_path(const std::string& p) {
  std::vector<std::string> out;
  for (auto& c : base::split(p, '/'))
    if (!c.empty() && c != ".") out.push_back(std::move(c));
  return out;
}

bool verify_sha256(const std::string& archive, const std::string& source, const std::string& want, std::string* got,
                   std::string* error) {
  *got = base::sha256_file_hex(archive);
  if (got->empty()) {
    *error = "cannot read the archive " + archive + "\nfix: check the file's permissions";
    return false;
  }
  if (!want.empty() && *got != want) {
    *error = "checksum mismatch for " + source + ": expected sha256 " + want + ", got " + *got +
             "; nothing was installed\nfix: make sure --sha256 is the digest of this archive (sha256sum ARCHIVE); if "
             "it is, the download was altered on the way";
    return false;
  }
  return true;
}

std::string download_failure(const DownloadError& e, const std::string& not_found_fix) {
  std::string out = e.message + "; nothing was installed";
  if (e.http_status == 404)
    out += not_found_fix;
  else if (e.http_status >= 400)
    out += "\nfix: run the command again later, or download the archive yourself and pass --from PATH";
  else
    out += "\nfix: check the network connection (and proxy variables such as https_proxy), then run the "
           "command again; offline, download the archive elsewhere and pass --from PATH";
  return out;
}

void note_nothing_installed(std::string* error) {
  if (error->find("nothing was installed") != std::string::npos) return;
  size_t fix = error->find("\nfix:");
  error->insert(fix == std::string::npos ? error->size() : fix, "; nothing was installed");
}

std::string mib(std::uint64_t bytes, int decimals) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f MiB", decimals, static_cast<double>(bytes) / (1024.0 * 1024.0));
  return buf;
}

namespace {

// mkdtemp or mkstemp on `<parent>/<prefix>XXXXXX`; `what` is "folder" or "file".
bool make_temp(const fs::path& parent, const std::string& prefix, const std::string& fix, bool folder, fs::path* out,
               std::string* error) {
  std::string tmpl = (parent / (prefix + "XXXXXX")).string();
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  bool made = false;
  if (folder) {
    made = mkdtemp(buf.data()) != nullptr;
  } else if (int fd = mkstemp(buf.data()); fd >= 0) {
    ::close(fd);
    made = true;
  }
  if (!made) {
    *error = std::string("cannot create a ") + (folder ? "folder" : "file") + " in " + parent.string() + ": " +
             std::strerror(errno) + fix;
    return false;
  }
  *out = buf.data();
  return true;
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

std::string archive_why(const base::dyn::Archive* api, struct archive* a, const char* otherwise) {
  const char* why = api->error_string(a);
  return why ? why : otherwise;
}

}  // namespace

bool make_temp_dir(const fs::path& parent, const std::string& prefix, const std::string& fix, fs::path* out,
                   std::string* error) {
  return make_temp(parent, prefix, fix, true, out, error);
}

bool make_temp_file(const fs::path& parent, const std::string& prefix, const std::string& fix, fs::path* out,
                    std::string* error) {
  return make_temp(parent, prefix, fix, false, out, error);
}

InstallCleanup::~InstallCleanup() {
  std::error_code ec;
  for (const auto& f : files) fs::remove(f, ec);
  for (const auto& t : trees)
    if (!t.empty()) fs::remove_all(t, ec);
  if (success) return;
  for (auto it = created.rbegin(); it != created.rend(); ++it)
    if (fs::is_empty(*it, ec)) fs::remove(*it, ec);
}

bool InstallCleanup::create_directories(const fs::path& dir, std::error_code* ec) {
  for (fs::path p = dir; !p.empty() && !fs::exists(p, *ec); p = p.parent_path()) {
    created.insert(created.begin(), p);
    if (p == p.parent_path()) break;
  }
  ec->clear();
  fs::create_directories(dir, *ec);
  return !*ec && fs::is_directory(dir, *ec);
}

struct ArchiveReader::Impl {
  const base::dyn::Archive* api = nullptr;
  std::string load_error;
  std::unique_ptr<struct archive, int (*)(struct archive*)> a{nullptr, nullptr};
  std::string damaged_fix, unsafe_fix;
  std::string path;  // of the current entry
};

ArchiveReader::ArchiveReader(std::string damaged_fix, std::string unsafe_fix) : impl_(std::make_unique<Impl>()) {
  impl_->damaged_fix = std::move(damaged_fix);
  impl_->unsafe_fix = std::move(unsafe_fix);
  impl_->api = base::dyn::archive(&impl_->load_error);
  if (!impl_->api) return;
  impl_->a = {impl_->api->read_new(), impl_->api->read_free};
  impl_->api->read_support_filter_all(impl_->a.get());
  impl_->api->read_support_format_all(impl_->a.get());
}

bool ArchiveReader::available(std::string* why) { return base::dyn::archive(why) != nullptr; }

ArchiveReader::~ArchiveReader() = default;

bool ArchiveReader::open(const std::string& path, std::string* why) {
  if (!impl_->api) {
    *why = impl_->load_error;
    return false;
  }
  if (impl_->api->read_open_filename(impl_->a.get(), path.c_str(), 1 << 16) == ARCHIVE_OK) return true;
  *why = archive_why(impl_->api, impl_->a.get(), "cannot open it");
  return false;
}

ArchiveReader::Next ArchiveReader::next(ArchiveEntry* entry, std::string* error) {
  struct archive_entry* e = nullptr;
  int r = impl_->api->read_next_header(impl_->a.get(), &e);
  if (r == ARCHIVE_EOF) return Next::End;
  if (r < ARCHIVE_WARN) {
    *error = "the archive is damaged or truncated: " + archive_why(impl_->api, impl_->a.get(), "unreadable entry") +
             impl_->damaged_fix;
    return Next::Error;
  }
  const char* name = impl_->api->entry_pathname(e);
  if (!name) name = impl_->api->entry_pathname_utf8(e);
  if (!name) {
    *error = "the archive has an entry without a readable name" + impl_->damaged_fix;
    return Next::Error;
  }
  *entry = ArchiveEntry{};
  entry->path = impl_->path = name;
  entry->components = split_path(entry->path);
  bool escapes = !entry->path.empty() && entry->path[0] == '/';
  for (const auto& c : entry->components) escapes |= c == "..";
  if (escapes) {
    *error = "the archive entry '" + entry->path +
             "' has an unsafe path (absolute or containing '..'); refusing the whole archive" + impl_->unsafe_fix;
    return Next::Error;
  }
  const mode_t type = impl_->api->entry_filetype(e);
  entry->directory = type == AE_IFDIR;
  entry->regular = type == AE_IFREG;
  entry->hard_link = impl_->api->entry_hardlink(e) != nullptr;
  entry->kind = entry->hard_link ? "a hard link" : entry->directory || entry->regular ? "" : kind_name(type);
  return Next::Entry;
}

long ArchiveReader::read(char* buf, std::size_t size, std::string* error) {
  la_ssize_t n = impl_->api->read_data(impl_->a.get(), buf, size);
  if (n >= 0) return static_cast<long>(n);
  *error = "the archive is damaged or truncated (in " + impl_->path + "): " +
           archive_why(impl_->api, impl_->a.get(), "read error") + impl_->damaged_fix;
  return -1;
}

// ---------------------------------------------------------------- install

namespace {

constexpr const char* kCacheWritableFix = "\nfix: make the cache writable, or point REFEREE_CACHE at a writable folder";
constexpr const char* kMaliciousFix =
    "\nfix: the archive is malformed or malicious; fetch the official release of mlcommons/logging";

// "4.1.59" from ".../4.1.59.tar.gz", "logging-4.1.59.zip", ".../tar.gz/refs/tags/4.1.59".
std::string tag_from_name(const std::string& from) {
  std::string s = from.substr(0, from.find_first_of("?#"));
  while (!s.empty() && s.back() == '/') s.pop_back();
  auto slash = s.rfind('/');
  if (slash != std::string::npos) s = s.substr(slash + 1);
  for (const char* ext : {".tar.gz", ".tgz", ".tar.xz", ".tar.bz2", ".tar", ".zip"})
    if (ends_with(base::lower(s), ext)) {
      s.resize(s.size() - std::strlen(ext));
      break;
    }
  if (s.rfind("logging-", 0) == 0) s = s.substr(8);
  if (s.size() > 1 && s[0] == 'v' && std::isdigit(static_cast<unsigned char>(s[1]))) s = s.substr(1);
  if (s.empty() || !std::isdigit(static_cast<unsigned char>(s[0])) || !valid_tag(s)) return "";
  return s;
}

// Extracts the rule files of `archive_path` into `staging`. `files` gets
// their paths (relative to `staging`) and digests.
bool extract(const std::string& archive_path, const fs::path& staging, std::map<std::string, std::string>* files,
             std::string* error) {
  const std::string damaged_fix =
      "\nfix: run the command again; if it keeps failing, download the archive with a browser or curl and pass "
      "--from PATH";
  std::string why;
  if (!ArchiveReader::available(&why)) {
    *error = "cannot unpack the download: " + why;
    return false;
  }
  ArchiveReader reader(damaged_fix, std::string(", nothing was installed") + kMaliciousFix);
  if (!reader.open(archive_path, &why)) {
    *error = "the download is not a readable archive (damaged, truncated, or not an archive at all): " + why +
             damaged_fix;
    return false;
  }
  bool saw_package = false;
  std::vector<std::string> prefix;  // components above mlperf_logging/, from the first entry that has it
  size_t total = 0;
  ArchiveEntry entry;
  for (;;) {
    ArchiveReader::Next r = reader.next(&entry, error);
    if (r == ArchiveReader::Next::End) break;
    if (r == ArchiveReader::Next::Error) return false;
    const std::string& path = entry.path;
    const std::vector<std::string>& comps = entry.components;
    auto pkg = std::find(comps.begin(), comps.end(), "mlperf_logging");
    if (pkg == comps.end()) continue;
    std::vector<std::string> above(comps.begin(), pkg);
    if (!saw_package) {
      saw_package = true;
      prefix = above;
    } else if (above != prefix) {
      continue;  // a second copy of the package elsewhere in the archive
    }
    std::vector<std::string> rest(pkg + 1, comps.end());
    if (rest.size() < 2) continue;
    const std::string& leaf = rest.back();
    bool keep = (rest[0] == "compliance_checker" && ends_with(leaf, ".yaml")) ||
                (rest[0] == "rcp_checker" && ends_with(leaf, ".json"));
    if (!keep || entry.directory) continue;
    if (entry.hard_link || !entry.regular) {
      *error = "the archive entry '" + path + "' is " + entry.kind +
               ", not a regular file; refusing the archive, nothing was installed" + kMaliciousFix;
      return false;
    }
    std::string rel;
    for (const auto& c : rest) rel += (rel.empty() ? "" : "/") + c;
    std::string bytes;
    char buf[1 << 16];
    for (;;) {
      long n = reader.read(buf, sizeof buf, error);
      if (n == 0) break;
      if (n < 0) return false;
      bytes.append(buf, static_cast<size_t>(n));
      total += static_cast<size_t>(n);
      if (bytes.size() > kMaxFileBytes || total > kMaxTotalBytes) {
        *error = "the archive entry '" + path + "' is implausibly large; refusing the archive"
                 "\nfix: fetch the official release of mlcommons/logging";
        return false;
      }
    }
    fs::path out = staging / rel;
    std::error_code ec;
    fs::create_directories(out.parent_path(), ec);
    std::ofstream o(out, std::ios::binary | std::ios::trunc);
    o.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    o.close();
    if (ec || !o) {
      *error = "cannot write " + out.string() + (ec ? ": " + ec.message() : std::string()) +
               "\nfix: check the free space and permissions of the cache folder";
      return false;
    }
    (*files)[rel] = base::sha256_hex(bytes);
  }
  if (!saw_package) {
    *error = "the archive has no mlperf_logging/ folder, so it is not the consortium's logging package"
             "\nfix: --from must name an archive of the mlcommons/logging repository, such as " +
             release_archive_url(kDefaultRulesTag);
    return false;
  }
  if (files->empty()) {
    *error = "the archive's mlperf_logging/ folder holds no rule files (compliance_checker/*.yaml, "
             "rcp_checker/*.json)\nfix: fetch a release of mlcommons/logging that has the compliance checker";
    return false;
  }
  return true;
}

std::string manifest_json(const Manifest& m) {
  mllog::JsonWriter w(2);
  w.begin_object();
  w.key("schema").value(m.schema);
  w.key("tag").value(m.tag);
  w.key("source").value(m.source);
  w.key("sha256").value(m.sha256);
  w.key("fetched_at").value(m.fetched_at);
  w.key("referee_version").value(m.referee_version);
  w.key("files").begin_array();
  for (const auto& f : m.files) w.begin_object().key("path").value(f.path).key("sha256").value(f.sha256).end_object();
  w.end_array();
  w.end_object();
  return w.str() + "\n";
}

}  // namespace

bool read_manifest(const std::string& dir, Manifest* out, std::string* error) {
  std::string path = dir + "/manifest.json";
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = "cannot read " + path;
    return false;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  mllog::Json j;
  std::string perr;
  if (!mllog::parse_json_permissive(ss.str(), &j, &perr) || j.kind != mllog::Json::Kind::Object) {
    *error = path + ": not a JSON object" + (perr.empty() ? "" : ": " + perr);
    return false;
  }
  auto str = [&](const char* k) {
    const mllog::Json* v = j.find(k);
    return v && v->kind == mllog::Json::Kind::String ? v->s : std::string();
  };
  *out = Manifest{};
  out->schema = str("schema");
  out->tag = str("tag");
  out->source = str("source");
  out->sha256 = str("sha256");
  out->fetched_at = str("fetched_at");
  out->referee_version = str("referee_version");
  if (const mllog::Json* files = j.find("files"); files && files->kind == mllog::Json::Kind::Array) {
    for (const auto& f : files->items) {
      const mllog::Json* p = f.find("path");
      const mllog::Json* h = f.find("sha256");
      if (p && p->kind == mllog::Json::Kind::String)
        out->files.push_back({p->s, h && h->kind == mllog::Json::Kind::String ? h->s : std::string()});
    }
  }
  if (out->schema != kManifestSchema) {
    *error = path + ": schema is '" + out->schema + "', expected " + kManifestSchema;
    return false;
  }
  return true;
}

namespace {

bool fetch_rules_impl(const FetchRequest& request, Fetcher& fetcher, FetchResult* result, std::string* error) {
  // Everything that can be checked without touching the cache comes first.
  std::string url = request.from.empty() ? release_archive_url(request.tag.empty() ? kDefaultRulesTag : request.tag) : request.from;
  bool is_local = false;
  std::string local;
  if (!check_local_source(url, &local, &is_local, error)) return false;
  std::string tag = request.tag;
  if (tag.empty()) {
    if (request.from.empty()) {
      tag = kDefaultRulesTag;
    } else {
      tag = tag_from_name(request.from);
      if (tag.empty()) {
        *error = "cannot tell the release tag from '" + request.from +
                 "'\nfix: name it: referee rules fetch TAG --from " + request.from;
        return false;
      }
    }
  }
  if (!valid_tag(tag)) {
    *error = "'" + tag + "' is not a release tag\nfix: use a tag such as " + kDefaultRulesTag + " (see " + kTagsPage + ")";
    return false;
  }
  std::string want;
  if (!parse_sha256(request.sha256, &want, error)) return false;
  std::error_code ec;
  std::string source = is_local ? fs::absolute(local, ec).lexically_normal().string() : url;

  // Cache folders; the ones created here go again if the fetch fails.
  InstallCleanup cleanup;
  fs::path rules_dir = fs::path(cache_dir()) / "rules";
  if (!cleanup.create_directories(rules_dir, &ec)) {
    *error = "cannot create the cache folder " + rules_dir.string() + (ec ? ": " + ec.message() : std::string()) +
             "\nfix: make it writable, or point REFEREE_CACHE at a writable folder";
    return false;
  }

  // Download.
  std::string archive = local;
  if (!is_local) {
    fs::path tmp;
    if (!make_temp_dir(rules_dir, ".tmp-", kCacheWritableFix, &tmp, error)) return false;
    cleanup.trees.push_back(tmp);
    archive = (tmp / "archive").string();
    DownloadError derr;
    if (!fetcher.fetch(url, archive, &derr)) {
      *error = download_failure(derr, "\nfix: check that release " + tag + " exists (" + kTagsPage +
                                          "), or pass --from URL|PATH naming an archive of the logging package");
      return false;
    }
  }

  // Verify.
  std::string got;
  if (!verify_sha256(archive, source, want, &got, error)) return false;

  // Extract.
  fs::path staging;
  if (!make_temp_dir(rules_dir, ".staging-" + tag + "-", kCacheWritableFix, &staging, error)) return false;
  cleanup.trees.push_back(staging);
  std::map<std::string, std::string> files;
  if (!extract(archive, staging, &files, error)) return false;

  Manifest m;
  m.schema = kManifestSchema;
  m.tag = tag;
  m.source = source;
  m.sha256 = got;
  m.fetched_at = base::utc_now();
  m.referee_version = REFEREE_VERSION;
  for (const auto& [p, h] : files) m.files.push_back({p, h});
  {
    std::ofstream o(staging / "manifest.json", std::ios::binary | std::ios::trunc);
    o << manifest_json(m);
    o.close();
    if (!o) {
      *error = "cannot write " + (staging / "manifest.json").string() +
               "\nfix: check the free space and permissions of the cache folder";
      return false;
    }
  }

  // Install: the new folder takes the earlier one's place in one step where
  // the file system allows it; the earlier one is removed by the cleanup.
  fs::path target = rules_dir / tag;
  bool had_old = fs::exists(fs::symlink_status(target, ec));
  fs::path old;
  base::Status installed = base::swap_install_dir(staging, target, &old);
  if (!installed.ok()) {  // a non-empty `old` holds the earlier install: it is kept (not in the cleanup)
    *error = installed.message + "\nfix: check the permissions of the cache folder";
    return false;
  }
  if (!old.empty() && old != staging) cleanup.trees.push_back(old);  // `staging` (now the earlier one) is there
  cleanup.success = true;

  result->dir = target.string();
  result->manifest = std::move(m);
  result->rulesets = list_rulesets(result->dir);
  result->replaced = had_old;
  return true;
}

}  // namespace

bool fetch_rules(const FetchRequest& request, Fetcher& fetcher, FetchResult* result, std::string* error) {
  if (fetch_rules_impl(request, fetcher, result, error)) return true;
  note_nothing_installed(error);
  return false;
}

}  // namespace referee::rules
