// `referee report`: the dashboards as a static site (reports/site.h).
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <set>

#include "base/text.h"
#include "base/url.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "reports/site.h"
#include "submissions/cost.h"
#include "submissions/queries.h"
#include "submissions/store.h"

namespace referee::cli {

Command report_command() {
  return {"report", "Write the dashboards (pages, charts and their data) as a static site", [](CLI::App& sub) -> std::function<int()> {
            struct Opts {
              std::string db, out, page, per_hour, per_node_month;
              std::vector<std::string> rounds, compare;
              bool pipeline = false, include_under_review = false, data_files = false;
            };
            auto o = std::make_shared<Opts>();
            sub.add_option("--db", o->db, "database file (default $REFEREE_DB or the user's data directory); opened read-only");
            auto* out_opt = sub.add_option("--out", o->out, "folder to write the site into (new, empty, or an earlier report)");
            auto* page_opt = sub.add_option("--page", o->page,
                                            "print one file of the site as `referee serve` renders it (e.g. benchmarks/gpt3.html, "
                                            "data/benchmarks/gpt3/speedups.csv, 'compare.html?round=3.1.0&benchmark=gpt3&result=ID&result=ID') "
                                            "instead of writing the site; the time it took goes to stderr");
            out_opt->excludes(page_opt);
            sub.add_option("--round", o->rounds, "round to show (repeat; default every round in the store)");
            sub.add_option("--compare", o->compare,
                           "an extra head-to-head page: ROUND,BENCHMARK,ORG/SYSTEM,ORG/SYSTEM (repeat)");
            auto* ph = sub.add_option("--price-per-accelerator-hour", o->per_hour, "price of one accelerator-hour: adds a cost column");
            auto* pn = sub.add_option("--price-per-node-month", o->per_node_month, "price of one node for a month (730 h): adds a cost column");
            ph->excludes(pn);
            sub.add_flag("--include-under-review", o->include_under_review,
                         "also write rounds not yet published (under review or final); their pages say \"under review, "
                         "not for publication\" (default: left out, with a note)");
            sub.add_flag("--data-files", o->data_files,
                         "also write every table and chart as CSV and JSON under data/ (default: each page offers its "
                         "data for download from what it holds)");
            sub.add_flag("--rescale", o->pipeline, "use the scores the consortium's pipeline computes today instead of the published ones");
            return [o]() -> int {
              auto start = std::chrono::steady_clock::now();
              reports::Options opt;
              opt.rounds = o->rounds;
              opt.pipeline = o->pipeline;
              opt.data_files = o->data_files;
              std::string error;
              if (!o->per_hour.empty() &&
                  !submissions::parse_price(o->per_hour, submissions::Price::Per::AcceleratorHour, &opt.price, &error)) {
                std::cerr << "referee report: --price-per-accelerator-hour: " << error << "\n";
                return kCannotCheck;
              }
              if (!o->per_node_month.empty() &&
                  !submissions::parse_price(o->per_node_month, submissions::Price::Per::NodeMonth, &opt.price, &error)) {
                std::cerr << "referee report: --price-per-node-month: " << error << "\n";
                return kCannotCheck;
              }
              for (const auto& c : o->compare) {
                auto parts = base::split(c, ',');
                if (parts.size() != 4) {
                  std::cerr << "referee report: --compare " << c
                            << ": expected ROUND,BENCHMARK,ORG/SYSTEM,ORG/SYSTEM, e.g. 3.1.0,gpt3,NVIDIA/eos-dfw_n1344_ngc23.09_nemo,Azure+NVIDIA/ND_H100_v5_n1344_pytorch\n";
                  return kCannotCheck;
                }
                opt.compare.push_back(parts);
              }
              if (o->out.empty() && o->page.empty()) {
                std::cerr << "referee report: --out DIR is required (the folder to write the site into), or --page PATH\n";
                return kCannotCheck;
              }
              std::error_code ec;
              if (!o->out.empty() && std::filesystem::exists(o->out, ec) && !std::filesystem::is_directory(o->out, ec)) {
                std::cerr << "referee report: --out " << o->out
                          << " is a file; give a folder to write the site into (new, empty, or an earlier report)\n";
                return kCannotCheck;
              }
              auto store = open_store("report", o->db, nullptr, submissions::OpenMode::ReadOnly);
              if (!store) return kCannotCheck;
              // Rounds not yet published stay out of a site unless asked for (docs/reports.md).
              std::vector<std::pair<std::string, std::string>> unpublished;
              if (!reports::unpublished_rounds(*store, &unpublished, &error)) {
                std::cerr << "referee report: " << error << "\n";
                return kCannotCheck;
              }
              std::set<std::string> hidden;
              if (!o->include_under_review) {
                for (const auto& [round, state] : unpublished) hidden.insert(round);
                auto refuse = [&](const std::string& flag, const std::string& text) {
                  std::string round, e;
                  if (!submissions::resolve_round(*store, text, &round, &e) || !hidden.count(round)) return false;
                  std::cerr << "referee report: " << flag << " " << text << ": round " << round
                            << " is not yet published (under review); add --include-under-review to write it, its pages "
                               "marked \"under review, not for publication\"\n";
                  return true;
                };
                for (const auto& r : o->rounds)
                  if (refuse("--round", r)) return kCannotCheck;
                for (const auto& c : opt.compare)
                  if (refuse("--compare", c[0])) return kCannotCheck;
              }
              reports::Visible visible;
              if (!hidden.empty()) visible = [hidden](const std::string& r) { return !hidden.count(r); };
              // The rounds the report would show, and which of them are left out or marked.
              std::vector<std::string> left_out, marked;
              {
                std::set<std::string> wanted;
                for (const auto& r : o->rounds) {
                  std::string round, e;
                  if (submissions::resolve_round(*store, r, &round, &e)) wanted.insert(round);
                }
                for (const auto& [round, state] : unpublished)
                  if (wanted.empty() || wanted.count(round))
                    (hidden.count(round) ? left_out : marked).push_back(round + " (state " + state + ")");
              }
              auto join = [](const std::vector<std::string>& v) {
                std::string s;
                for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
                return s;
              };
              if (!o->page.empty()) {
                // As `referee serve` renders it: the page links its data files (served on request), and a
                // head-to-head by query (compare.html?round=R&benchmark=B&result=ID&result=ID) is one.
                opt.data_files = true;
                std::string path = o->page;
                std::vector<std::pair<std::string, std::string>> query;
                if (size_t q = path.find('?'); q != std::string::npos) {
                  for (const auto& part : base::split(path.substr(q + 1), '&')) {
                    if (part.empty()) continue;
                    size_t eq = part.find('=');
                    std::string k = part.substr(0, eq), v = eq == std::string::npos ? "" : part.substr(eq + 1);
                    query.emplace_back(base::percent_decode_lenient(k, base::Plus::Space),
                                       base::percent_decode_lenient(v, base::Plus::Space));
                  }
                  path.resize(q);
                }
                reports::File file;
                auto t0 = std::chrono::steady_clock::now();
                reports::Status st = reports::render(*store, path, query, opt, visible, &file, &error);
                double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
                if (st != reports::Status::Ok) {
                  std::cerr << "referee report: " << error;
                  if (st == reports::Status::NotFound && !left_out.empty())
                    std::cerr << " (rounds not yet published are left out: " << join(left_out)
                              << "; --include-under-review shows them)";
                  std::cerr << "\n";
                  return kCannotCheck;
                }
                std::cout << file.body;
                char took[32];
                std::snprintf(took, sizeof took, "%.1f", ms);
                std::cerr << "rendered " << file.path << " (" << file.body.size() << " bytes) in " << took << " ms\n";
                return kPass;
              }
              std::vector<reports::File> files;
              std::vector<std::string> compare_pages;
              if (!reports::build_site(*store, opt, visible, &files, &error, &compare_pages)) {
                std::cerr << "referee report: " << error << "\n";
                return kCannotCheck;
              }
              reports::WriteNotes notes;
              if (!reports::write_site(o->out, files, &error, &notes)) {
                std::cerr << "referee report: " << error << "\n";
                return kCannotCheck;
              }
              if (!left_out.empty())
                std::cerr << "note: left out, not yet published (under review): " << join(left_out)
                          << "; --include-under-review writes them, marked \"under review, not for publication\"\n";
              if (!marked.empty())
                std::cerr << "note: not yet published, included as asked: " << join(marked)
                          << "; their pages say \"under review, not for publication\": do not publish this site\n";
              for (const auto& r : notes.removed) std::cerr << "note: removed " << r << ", left by an earlier run that was stopped\n";
              if (!notes.kept.empty())
                std::cerr << "note: kept " << notes.kept.size() << " file" << (notes.kept.size() == 1 ? "" : "s")
                          << " referee did not write: " << join(notes.kept) << "\n";
              size_t pages = 0, data = 0, bytes = 0;
              for (const auto& f : files) {
                bytes += f.body.size();
                if (f.path.size() > 5 && f.path.compare(f.path.size() - 5, 5, ".html") == 0) ++pages;
                else if (f.path.rfind("data/", 0) == 0) ++data;
              }
              double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
              char took[32], size[32];
              std::snprintf(took, sizeof took, "%.2f", secs);
              std::snprintf(size, sizeof size, "%.1f", static_cast<double>(bytes) / 1e6);
              std::cout << "wrote " << pages << " pages and " << data << " data files (" << files.size() << " files, "
                        << size << " MB) in " << took << " s\n"
                        << "open " << (std::filesystem::absolute(o->out) / "index.html").lexically_normal().string() << "\n";
              for (const auto& c : compare_pages)
                std::cout << "head to head: " << (std::filesystem::absolute(o->out) / c).lexically_normal().string() << "\n";
              return kPass;
            };
          }};
}

}  // namespace referee::cli
