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
#include <utility>
#include <vector>

#include "submissions/cost.h"
#include "submissions/store.h"

namespace referee::reports {

struct Options {
  std::vector<std::string> rounds;                // empty: every round in the store
  submissions::Price price;                       // none: no cost column
  std::vector<std::vector<std::string>> compare;  // extra head-to-head pages: ROUND, BENCHMARK, ORG/SYSTEM, ORG/SYSTEM
  bool pipeline = false;                          // the pipeline's scores (--rescale)
  std::string generated_at;                       // fixed in golden tests; now otherwise
};

struct File {
  std::string path;  // relative to the site's root, '/' between folders
  std::string content_type;
  std::string body;
};

// Whether a round may be shown; null = every round.
using Visible = std::function<bool(const std::string& round)>;

// Every file of the site: pages, data files and assets. False with *error
// when the store cannot be read or Options name something it does not hold.
bool build_site(submissions::Store& store, const Options& options, const Visible& visible, std::vector<File>* out,
                std::string* error);

// Writes `files` into `dir` atomically: into a temporary folder beside it,
// then renamed into place. `dir` may be missing, empty or an earlier report
// (it holds the marker file .referee-report); anything else is refused, and
// on any failure what was at `dir` before is left as it was.
bool write_site(const std::string& dir, const std::vector<File>& files, std::string* error);

enum class Status { Ok, NotFound, BadRequest, Error };

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
