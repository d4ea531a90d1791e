// `referee fetch ROUND`: downloads the published results of a round (a GitHub
// archive of mlcommons/<usage>_results_v<x.y>), keeps only every
// organisation's results/ and systems/ folders and installs them as
//
//   <dest>/<org>/results/**
//   <dest>/<org>/systems/**
//   <dest>/.referee-fetch.json   (schema referee.round-fetch/1)
//
// The install is atomic: the archive is downloaded into `<dest>/../.download-*`,
// extracted into `<dest>/../.staging-<round>-*` and only then renamed into
// place. Any failure leaves the destination as it was.
//
// No command-line code here: the CLI (cli/cmd_fetch.cc) parses flags, calls
// fetch_round() and, with --import, the importer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "rules/fetch.h"

namespace referee::submissions {

// The file an install leaves at the top of the destination. A destination
// that exists is only replaced when it is empty or holds this file.
inline constexpr const char* kRoundManifestName = ".referee-fetch.json";
inline constexpr const char* kRoundManifestSchema = "referee.round-fetch/1";

// "training-3.1.0" -> "v3.1", "training-4.0.0" -> "v4.0", "training-3.1.1" ->
// "v3.1.1" (trailing ".0" after the minor version dropped). "" when the name
// is not <usage>-<x.y[.z...]>.
std::string round_short_version(const std::string& round);

// "training-3.1.0" -> "https://github.com/mlcommons/training_results_v3.1/archive/refs/heads/main.tar.gz";
// "" when round_short_version() cannot parse the name.
std::string round_archive_url(const std::string& round);

// "https://github.com/mlcommons/training_results_v3.1"; "" as above.
std::string round_repository_url(const std::string& round);

// The round a results folder names on its path, by the consortium's
// repository name or referee's fetch folder: ".../training_results_v3.1/NVIDIA"
// (or "training_results_v3.1-main", an extracted archive) and
// ".../results/training-3.1.0" give "training v3.1"; "" when no folder on
// the path is named so. Compared with round_short_version() by
// results_folder_round_differs.
std::string results_folder_round(const std::string& path);

// Whether `path` names a round other than `round` (results_folder_round); then
// *named is the round the path names ("training-3.1.0" style when it can be
// told, else the folder's name).
bool results_folder_round_differs(const std::string& path, const std::string& round, std::string* named);

// <directory of default_db_path()>/results/<round>.
std::string default_round_dest(const std::string& round);

struct RoundFetchRequest {
  std::string round;   // "training-3.1.0": names the staging folder and, without `from`, the repository
  std::string from;    // "" = round_archive_url(round); else an http(s):// or file:// URL or a local path
  std::string sha256;  // "" = not checked; else the archive's expected hex digest
  std::string dest;    // "" = default_round_dest(round)
  // Limits against archive bombs.
  std::uint64_t max_file_bytes = std::uint64_t{256} << 20;
  std::uint64_t max_total_bytes = std::uint64_t{8} << 30;
};

struct RoundFetchResult {
  std::string dir;                         // the installed destination (absolute)
  std::string source;                      // URL, or the absolute path of a local archive
  std::string sha256;                      // of the archive
  std::vector<std::string> organisations;  // folders that got a results/ folder, sorted
  std::size_t files = 0;                   // files extracted (the manifest not counted)
  std::uint64_t bytes = 0;                 // their total size
  bool replaced = false;                   // an earlier install at the destination was replaced
};

// Downloads (with `fetcher`, for http(s) sources only; local paths and
// file:// URLs are read directly), verifies, extracts and installs. On failure
// returns false, sets *error to what happened and how to fix it ("fix: ..."
// line) and leaves the destination and its parent as they were.
bool fetch_round(const RoundFetchRequest& request, rules::Fetcher& fetcher, RoundFetchResult* result,
                 std::string* error);

}  // namespace referee::submissions
