// Inside reports/: what the pages are built from, and one builder per page
// kind (reports/pages*.cc). Each reads only what its page needs.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "reports/model.h"
#include "submissions/cost.h"
#include "submissions/queries.h"

namespace referee::reports {

struct Context {
  Context(submissions::Store& s, const Options& o, const Visible& v) : store(s), options(o), visible(v) {}
  submissions::Store& store;
  const Options& options;
  const Visible& visible;
  std::vector<std::string> rounds;  // shown: selected and visible, oldest first
  bool has_energy = false;          // results.energy_joules (schema 4)
  bool has_rcp_json = false;        // results.rcp_json (schema 6)
  bool shown(const std::string& round) const;
  // What several pages of one build read (a Context lives for one build or one render).
  std::map<std::pair<std::string, std::string>, std::vector<submissions::ResultRow>> results_cache;
  std::map<std::string, std::vector<std::string>> benchmarks_cache;
  std::map<std::string, std::string> imported_at;  // round -> latest import
  bool imported_read = false;
  // The head-to-head pages Options::compare asks for: round, benchmark, result ids (site.cc).
  std::vector<std::tuple<std::string, std::string, long long, long long>> requested;
};

// Resolves Options::rounds against the store and applies `visible`. False
// with *error for an unknown round (or an unreadable store).
bool make_context(Context* ctx, std::string* error);

// Figures as the pages print them in notes.
std::string fmt_fixed(double v, int digits);
std::string fmt_count(long long n);  // 10752 -> "10,752"
std::string fmt_ratio(double v);     // 3 -> "3", 2.79 -> "2.79"
// A count-like figure (epochs, samples, tokens to converge): from 1,000 on a
// whole number with thousands separators (1,198,522,368), below it up to
// three decimals without trailing zeros (3.5, 0.125).
std::string fmt_amount(double v);
// As `referee speedup` prints them: accelerator-hours to one decimal
// (653.51 -> "653.5"), a change signed to one decimal (0.0742 -> "+7.4%").
std::string fmt_hours(double h);
std::string fmt_change(double fraction);

struct Interval {
  bool ok = false;
  double low = 0, high = 0;  // percent
};
// 100 x (olympic mean of b / olympic mean of a - 1), the olympic means as the
// score takes them (rules::olympic_mean, `drop` runs left out at each end:
// the round's rules::olympic_drop), and a percentile bootstrap interval (95%)
// for it: each side's runs resampled with replacement `resamples` times from
// a fixed seed (the same runs give the same interval), each resample's
// olympic mean with the same drop. NaN, and not ok, when a side has too few
// runs for an olympic mean (2 x drop or fewer; none).
double difference_percent(const std::vector<double>& a, const std::vector<double>& b, int drop);
Interval bootstrap_difference(const std::vector<double>& a, const std::vector<double>& b, int drop,
                              int resamples = 10000, uint64_t seed = 0x5eed2026ULL);

// The run-to-run spread MLCommons quotes for a benchmark, percent: 2.5 for
// the imaging benchmarks, 5 otherwise.
double quoted_spread(const std::string& benchmark);

// Page builders: false with *error when the store cannot be read; a page
// for something that is not there is `*missing` true (NotFound).
struct Built {
  Page page;
  bool missing = false;
};
bool index_page(Context& ctx, Built* out, std::string* error);
bool round_page(Context& ctx, const std::string& round, Built* out, std::string* error);
bool all_results_page(Context& ctx, Built* out, std::string* error);
bool leaderboard_page(Context& ctx, const std::string& round, const std::string& benchmark, Built* out, std::string* error);
bool rounds_page(Context& ctx, const std::string& benchmark, Built* out, std::string* error);
bool scaling_page(Context& ctx, const std::string& benchmark, const std::string& submitter_segment, Built* out,
                  std::string* error);
// `served_as`: the path the page is served under when not its own (the
// query form compare.html?...): links are made relative to it, and its data
// files are those of its own path.
bool compare_page(Context& ctx, const std::string& round, const std::string& benchmark, long long a, long long b,
                  Built* out, std::string* error, const std::string& served_as = "");
bool result_page(Context& ctx, long long result_id, Built* out, std::string* error);

// What the site holds (for build_site, and the links between pages).
std::vector<std::string> benchmarks_in(Context& ctx, const std::string& round);  // "" = every shown round
// Submitters with scored results of a benchmark in the shown rounds.
// The benchmarks of the shown rounds by lineage (rules::benchmark_lineage:
// ssd in 2.0-4.1 is retinanet), and the name a round gives one.
std::vector<std::string> lineages_in(Context& ctx);
std::string name_in_round(Context& ctx, const std::string& round, const std::string& lineage);
std::vector<std::string> submitters_of(Context& ctx, const std::string& benchmark);
// The automatic head-to-head pairs of a round's benchmark (result ids, faster
// first): the two fastest closed results, and every pair of closed results
// with equal accelerator type and count.
std::vector<std::pair<long long, long long>> auto_pairs(const std::vector<submissions::ResultRow>& rows);
// The head-to-head pages the site holds for a round's benchmark: auto_pairs,
// then those Options::compare asked for (ctx.requested), each once, each of
// two of `rows` (site.cc).
std::vector<std::pair<long long, long long>> site_pairs(const Context& ctx, const std::string& round,
                                                        const std::string& benchmark,
                                                        const std::vector<submissions::ResultRow>& rows);
// The pairs a round's overview lists for one benchmark: the first
// kPairsShown of `automatic` (auto_pairs' order: the two fastest, then the
// fastest pairs of equal size on the same accelerator) and every `requested`
// one (Options::compare); the rest are on the benchmark's leaderboard.
constexpr size_t kPairsShown = 3;
std::vector<std::pair<long long, long long>> overview_pairs(const std::vector<std::pair<long long, long long>>& all,
                                                            const std::vector<std::pair<long long, long long>>& automatic);
// Where a result of a package taken from the consortium's published results
// repository is published, {what, address}: its logs, code and system
// description on github.com/mlcommons/<usage>_results_vX.Y. The package's
// folder must be a folder of the repository's top level: of a clone or
// archive (".../training_results_v3.1[-main]/NVIDIA") or of `referee
// fetch`'s round folder (".../results/training-3.1.0/NVIDIA"). None for a
// package from anywhere else.
std::vector<std::pair<std::string, std::string>> published_links(const std::string& package_path, const std::string& system,
                                                                 const std::string& benchmark);
// A page with the site's navigation (a link to the rounds).
Page new_page(const std::string& path, const std::string& kind, const std::string& title);

std::string compare_path(const std::string& round, const std::string& benchmark, long long a, long long b);
// All results of a round's benchmark (empty when none); false only when the store cannot be read.
bool results_of(Context& ctx, const std::string& round, const std::string& benchmark,
                std::vector<submissions::ResultRow>* out, std::string* error);
// Result ids of the shown rounds.
std::vector<long long> result_ids(Context& ctx);

Meta page_meta(Context& ctx, const Page& page);

// A resubmission's originals: "NVIDIA/dgxh100_n8 (training-3.0.0)", comma
// separated; "" when the result repeats no earlier result's logs.
std::string resubmission_origins(Context& ctx, long long result_id);
// How pages name a result: ORG/SYSTEM, marked "(resubmitted)" when it is a
// resubmission, as the terminal's leaderboard marks it.
std::string result_name(const submissions::ResultRow& r);
// The note pages with a "(resubmitted)" mark carry.
extern const char* const kResubmittedNote;

}  // namespace referee::reports
