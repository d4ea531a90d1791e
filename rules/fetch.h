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

}  // namespace referee::rules
