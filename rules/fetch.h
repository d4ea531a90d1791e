// `referee rules fetch`: downloads the consortium's logging package (a GitHub
// release archive of mlcommons/logging), keeps its rule files and installs
// them in the cache as `<cache>/rules/<TAG>/`:
//
//   compliance_checker/<usage>_<x.y.z>/*.yaml
//   rcp_checker/<usage>_<x.y.z>/*.json
//   manifest.json   (schema referee.rules-manifest/1)
//
// The install is atomic: the archive is downloaded into `<cache>/rules/.tmp-*`,
// extracted into `<cache>/rules/.staging-<TAG>-*` and only then renamed into
// place. Any failure leaves the cache as it was.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace referee::rules {

// The newest release of mlcommons/logging that referee knows.
inline constexpr const char* kDefaultRulesTag = "4.1.59";

// https://github.com/mlcommons/logging/archive/refs/tags/<tag>.tar.gz
std::string release_archive_url(const std::string& tag);

struct DownloadError {
  std::string message;   // what happened, without a "fix:" line
  long http_status = 0;  // the final HTTP status when the server answered >= 400
};

// The download seam: CurlFetcher in production, fakes in unit tests.
class Fetcher {
 public:
  virtual ~Fetcher() = default;
  // Downloads `url` into the file `dest` (created or replaced). On failure
  // returns false and fills *error.
  virtual bool fetch(const std::string& url, const std::string& dest, DownloadError* error) = 0;
};

struct CurlOptions {
  int attempts = 3;               // tries for transient errors (connection, 5xx, partial transfer)
  long backoff_ms = 1000;         // wait before the 2nd try; doubles for each further try
  long connect_timeout_s = 30;
  long low_speed_limit = 1024;    // bytes/s; slower than this for low_speed_time_s aborts the try
  long low_speed_time_s = 60;
  bool progress = true;           // progress bar on stderr, only when stderr is a terminal
  std::string label;              // shown before the progress bar
};

// libcurl: follows redirects (http/https only), fails on HTTP status >= 400
// and reports it, retries transient errors and resumes a partial download
// with a Range request when the server honours it.
class CurlFetcher : public Fetcher {
 public:
  explicit CurlFetcher(CurlOptions options = {}) : options_(std::move(options)) {}
  bool fetch(const std::string& url, const std::string& dest, DownloadError* error) override;
  // How many requests the last fetch() made, and how many of them resumed.
  int requests() const { return requests_; }
  int resumed() const { return resumed_; }

 private:
  CurlOptions options_;
  int requests_ = 0;
  int resumed_ = 0;
};

struct FetchRequest {
  std::string tag;     // "" = from the --from name, else kDefaultRulesTag
  std::string from;    // "" = the release archive; else an http(s):// or file:// URL or a local path
  std::string sha256;  // "" = not checked; else the archive's expected hex digest
};

struct ManifestFile {
  std::string path;  // "compliance_checker/training_3.1.0/common.yaml"
  std::string sha256;
};

struct Manifest {
  std::string schema;  // "referee.rules-manifest/1"
  std::string tag;
  std::string source;  // URL or path the archive came from
  std::string sha256;  // of the downloaded archive
  std::string fetched_at;
  std::string referee_version;
  std::vector<ManifestFile> files;
};

struct FetchResult {
  std::string dir;                    // the installed rules root
  Manifest manifest;
  std::vector<std::string> rulesets;  // "training-3.1.0", ...
  bool replaced = false;              // an earlier install of the same tag was replaced
};

// Downloads, verifies, extracts and installs. On failure returns false, sets
// *error to what happened and how to fix it, and leaves the cache unchanged.
// `fetcher` is used for http(s) sources only; local paths and file:// URLs are
// read directly.
bool fetch_rules(const FetchRequest& request, Fetcher& fetcher, FetchResult* result, std::string* error);

// Reads `<dir>/manifest.json`.
bool read_manifest(const std::string& dir, Manifest* out, std::string* error);

// A tag is one path component of letters, digits, '.', '_' and '-', not
// starting with '.'.
bool valid_tag(const std::string& tag);

// ===========================================================================
// Download and archive utilities
//
// The pieces that fetch_rules() here and submissions::fetch_round() share:
// where an archive comes from, checking its digest, the temporary folders of
// an atomic install and what a failed install removes, and reading archive
// entries without trusting their paths. Error texts end in a "\nfix: ..."
// line where the helper knows the fix; where only the caller does, the
// caller passes it in (`fix`, which must start with "\nfix:" or be empty).
// ===========================================================================

// What `from` (a --from value) names. Post: for an http:// or https:// URL
// (scheme in any case) returns "" and *is_local = false; for a file:// URL
// returns the path after "file://" or "file://localhost",
// percent-decoded leniently (base::percent_decode_lenient), and *is_local = true; for anything else returns `from` unchanged and *is_local
// = true (including URLs of other schemes, which check_local_source refuses).
std::string local_path(const std::string& from, bool* is_local);

// Pre: `url` is the archive's URL or path (a --from value or the default URL).
// Post: true with *is_local and *local as local_path() sets them when `url` is
// http(s), or a file:// URL or a path naming an existing regular file; else
// false with *error ("only http://, https:// and file:// URLs are supported"
// or "no such file", each with its fix line).
bool check_local_source(const std::string& url, std::string* local, bool* is_local, std::string* error);

// Pre: `sha256` is a --sha256 value. Post: true with *want = "" (no check) or
// the digest in lower case when it is 64 hex digits; else false with *error.
bool parse_sha256(const std::string& sha256, std::string* want, std::string* error);

// The components of a '/'-separated archive path, without empty ones and
// "."; ".." is kept for the caller to refuse. "a//./b/" -> {"a", "b"}.
std::vector<std::string> split_path(const std::string& p);

// Pre: `archive` is the downloaded (or local) archive, `source` its URL or
// path for messages, `want` "" or a digest from parse_sha256(). Post: true
// with *got = base::sha256_file_hex(archive) when it is readable and matches `want`
// (any digest when `want` is ""); else false with *error, *got as computed.
bool verify_sha256(const std::string& archive, const std::string& source, const std::string& want,
                   std::string* got, std::string* error);

// The message for a failed download: the fetcher's message, "; nothing was
// installed" and a fix line: `not_found_fix` for HTTP 404, "try again later"
// for other HTTP errors, "check the network" when the server did not answer.
std::string download_failure(const DownloadError& e, const std::string& not_found_fix);

// Appends "; nothing was installed" to the first line of *error (before its
// "\nfix:" line) unless *error already says so.
void note_nothing_installed(std::string* error);

// `bytes` in MiB with `decimals` digits after the point: mib(3 << 20, 0) ==
// "3 MiB", mib(1572864, 1) == "1.5 MiB".
std::string mib(std::uint64_t bytes, int decimals);

// A new, empty folder (mkdtemp: mode 0700, a unique name) or file (mkstemp:
// mode 0600) `<parent>/<prefix>XXXXXX`. Pre: `parent` exists. Post: true with
// *out its path; else false with *error = "cannot create a folder|file in
// <parent>: <reason>" + fix, and nothing created.
bool make_temp_dir(const std::filesystem::path& parent, const std::string& prefix, const std::string& fix,
                   std::filesystem::path* out, std::string* error);
bool make_temp_file(const std::filesystem::path& parent, const std::string& prefix, const std::string& fix,
                    std::filesystem::path* out, std::string* error);

// Removes, when it goes out of scope, what an install made on the way: the
// `files` and `trees` always (an install that succeeded takes out of them what
// it keeps), and, unless `success` was set, the `created` folders that are
// still empty, deepest first. Errors while removing are ignored.
struct InstallCleanup {
  std::vector<std::filesystem::path> files;    // removed
  std::vector<std::filesystem::path> trees;    // removed recursively
  std::vector<std::filesystem::path> created;  // removed when empty, deepest first
  bool success = false;

  InstallCleanup() = default;
  InstallCleanup(const InstallCleanup&) = delete;
  InstallCleanup& operator=(const InstallCleanup&) = delete;
  ~InstallCleanup();

  // Creates `dir` and its missing parents, noting in `created` the ones that
  // did not exist. Post: true when `dir` is a folder; else false with *ec
  // set (or cleared, when `dir` exists but is no folder).
  bool create_directories(const std::filesystem::path& dir, std::error_code* ec);
};

// One entry of an archive, as ArchiveReader::next() found it.
struct ArchiveEntry {
  std::string path;                     // as the archive stores it
  std::vector<std::string> components;  // split_path(path); never holds ".."
  bool directory = false;
  bool regular = false;    // a regular file (its data may still be a hard link)
  bool hard_link = false;  // the entry is a hard link to another one
  const char* kind = "";   // for messages: "a hard link", "a symbolic link", "a FIFO", ... ("" for files and folders)
};

// Reads an archive of any format and compression libarchive knows, entry by
// entry, and refuses (as an error, not by skipping) any entry whose path is
// absolute or contains "..", kept or not: a genuine archive has none.
class ArchiveReader {
 public:
  // `damaged_fix` ends the messages for damaged or truncated archives,
  // `unsafe_fix` the message for an unsafe entry path.
  ArchiveReader(std::string damaged_fix, std::string unsafe_fix);
  ~ArchiveReader();
  // True when libarchive can be loaded; else false with *why (what to install).
  static bool available(std::string* why);
  ArchiveReader(const ArchiveReader&) = delete;
  ArchiveReader& operator=(const ArchiveReader&) = delete;

  // Post: true when `path` opened as an archive; else false with *why =
  // libarchive's reason (no fix line: the caller knows what the file is).
  bool open(const std::string& path, std::string* why);

  enum class Next { Entry, End, Error };
  // Pre: open() succeeded. Post: Entry with *entry filled; End after the last
  // entry; Error with *error (damaged archive, nameless or unsafe entry).
  Next next(ArchiveEntry* entry, std::string* error);

  // Reads the current entry's data. Post: the bytes read into `buf` (0 at its
  // end); -1 with *error when the archive is damaged or truncated there.
  long read(char* buf, std::size_t size, std::string* error);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace referee::rules
