// The dashboards: a static site of pages, chart specifications and data
// files generated from the store (docs/reports.md).
//
// Every page embeds its whole content as JSON (the page model, schema
// "referee.page/1"); charts are Vega-Lite v5 specifications with their data
// inline; every table and chart also comes as CSV and JSON under data/.
// `build_site` makes every file of a report, `write_site` writes them into a
// folder atomically, and `render` makes one file on its own, for the server.
// Nothing here prints or speaks HTTP.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "submissions/cost.h"
#include "submissions/store.h"

namespace referee::reports {

struct Options {
  std::vector<std::string> rounds;                // empty: every round in the store
  submissions::Price price;                       // none: no cost column
  std::vector<std::vector<std::string>> compare;  // extra head-to-head pages: ROUND, BENCHMARK, ORG/SYSTEM, ORG/SYSTEM
  bool pipeline = false;                          // the pipeline's scores (--rescale)
  // Write each table's and chart's data as CSV and JSON files under data/
  // (--data-files; the server serves them on request in any case). Without
  // them a page offers its data for download from what it holds inline.
  bool data_files = false;
  std::string generated_at;                       // fixed in golden tests; now otherwise
};

struct File {
  std::string path;  // relative to the site's root, '/' between folders
  std::string content_type;
  std::string body;
};

// Whether a round may be shown; null = every round.
using Visible = std::function<bool(const std::string& round)>;

// The version of a bundled asset ("assets/referee.css"): the first 16 hex
// digits of the SHA-256 of its bytes, computed once. Pages name assets with
// it (`assets/referee.css?v=...`), so that a browser may keep an asset for
// good (the server answers such a request `Cache-Control: immutable`) and a
// new build's assets are new URLs. "" for a path that is no asset.
std::string asset_version(std::string_view path);
// "assets/referee.css?v=..." (the path alone without a version).
std::string asset_url(std::string_view path);

// Every file of the site: pages, data files and assets. False with *error
// when the store cannot be read or Options name something it does not hold.
// A page showing a round not yet published (unpublished_rounds) carries a
// banner "Under review, not for publication" and meta.under_review; so does
// such a page from `render`. Which rounds are shown is for Options::rounds
// and `visible` to say (`referee report` leaves unpublished ones out unless
// asked).
// `compare_pages`, when given, gets the paths of the head-to-head pages
// Options::compare asked for (each also linked from its leaderboard and round page).
bool build_site(submissions::Store& store, const Options& options, const Visible& visible, std::vector<File>* out,
                std::string* error, std::vector<std::string>* compare_pages = nullptr);

// Rounds the store holds that are not yet published (a review record in
// state `review` or `final`; docs/review.md): {round, state}, oldest first.
// A store without review tables has none. False with *error when the store
// cannot be read.
bool unpublished_rounds(submissions::Store& store, std::vector<std::pair<std::string, std::string>>* out,
                        std::string* error);

// What write_site did beside writing the files.
struct WriteNotes {
  std::vector<std::string> kept;     // files of the earlier report referee did not write, copied into the new one
  std::vector<std::string> removed;  // temporary folders of an earlier run that was killed, removed
};

// Writes `files` into `dir` atomically: into a temporary folder beside it,
// then renamed into place. `dir` may be missing, empty or an earlier report
// (it holds the marker file .referee-report, which lists the files referee
// wrote); anything else is refused, and on any failure what was at `dir`
// before is left as it was. A symbolic link to a folder is followed. Files of
// an earlier report that referee did not write (CNAME, .nojekyll, ...) are
// kept: copied into the new site; one at a path the new site writes is
// refused. Temporary folders beside `dir` that an earlier, killed run left
// (named .DIR.tmp-XXXXXX, holding the marker, no longer locked by a running
// referee) are removed first.
bool write_site(const std::string& dir, const std::vector<File>& files, std::string* error,
                WriteNotes* notes = nullptr);

// What render() gave: base's status codes (Ok, NotFound, BadRequest, Error).
using Status = base::StatusCode;

// One file of the site, rendered on its own (only what that page needs).
// `path` is a site path ("index.html", "rounds/training-3.1.0/gpt3.html",
// "data/...", "assets/..."; "" means index.html). `query`: for head-to-head
// pages outside the site's list (round=, benchmark=, result= twice, as
// result ids). A round that `visible` hides is NotFound, exactly as one the
// store does not hold.
Status render(submissions::Store& store, const std::string& path,
              const std::vector<std::pair<std::string, std::string>>& query, const Options& options,
              const Visible& visible, File* out, std::string* error);

}  // namespace referee::reports
