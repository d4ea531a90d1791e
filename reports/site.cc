// The site: which pages there are, every file of it, writing it atomically,
// and one file of it on its own.
#include "reports/site.h"

#include <fcntl.h>
#include <sys/file.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <iterator>
#include <mutex>
#include <thread>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include "base/file.h"
#include "base/digest.h"
#include "base/text.h"
#include "reports/pages.h"
#include "rules/facts.h"

// The bundled page script, styles and chart libraries (reports/assets.h)
// come with the build that embeds them; without it the site has no assets/.
#if __has_include("reports/assets.h")
#include "reports/assets.h"
#define REFEREE_REPORT_ASSETS 1
#endif

namespace referee::reports {

namespace fs = std::filesystem;

namespace {

const char* const kMarker = ".referee-report";

void add_assets(std::vector<File>* out) {
#ifdef REFEREE_REPORT_ASSETS
  for (const auto& a : assets()) out->push_back({std::string(a.path), std::string(a.content_type), std::string(a.bytes)});
#else
  (void)out;
#endif
}

using Unpublished = std::map<std::string, std::string>;  // round -> state

// The page's meta, and which of its rounds are not yet published.
Meta meta_of(Context& ctx, const Page& page, const Unpublished& unpublished) {
  Meta m = page_meta(ctx, page);
  for (const auto& r : page.rounds)
    if (auto it = unpublished.find(r); it != unpublished.end()) m.under_review.push_back(r + " (state " + it->second + ")");
  return m;
}

bool read_unpublished(submissions::Store& store, Unpublished* out, std::string* error) {
  std::vector<std::pair<std::string, std::string>> v;
  if (!unpublished_rounds(store, &v, error)) return false;
  out->insert(v.begin(), v.end());
  return true;
}

bool is_number(const std::string& s) {
  return !s.empty() && s.size() < 18 && s.find_first_not_of("0123456789") == std::string::npos;
}

using base::split;

// A site path the site could hold: relative, '/'-separated, no empty, "." or ".." segment.
bool clean_path(const std::string& p) {
  if (p.empty() || p.front() == '/' || p.find('\\') != std::string::npos || p.find('\0') != std::string::npos) return false;
  for (const auto& seg : split(p, '/'))
    if (seg.empty() || seg == "." || seg == "..") return false;
  return true;
}

// A benchmark of a round named as the round names it (any case) or by its
// latest name ("retinanet" for 3.1's "ssd", as the site's pages call it).
bool round_benchmark(Context& ctx, const std::string& round, const std::string& text, std::string* bench,
                     std::string* error) {
  if (submissions::resolve_benchmark(ctx.store, round, text, bench, error)) return true;
  for (const auto& b : benchmarks_in(ctx, round))
    if (base::iequals(rules::benchmark_lineage(round, b), text)) {
      *bench = b;
      error->clear();
      return true;
    }
  return false;
}

// The ids of the head-to-head pages Options::compare asks for, into ctx.requested.
bool requested_pairs(Context& ctx, std::string* error) {
  for (const auto& c : ctx.options.compare) {
    if (c.size() != 4) {
      *error = "a comparison is ROUND,BENCHMARK,ORG/SYSTEM,ORG/SYSTEM; got " + std::to_string(c.size()) + " values";
      return false;
    }
    std::string round, bench;
    if (!submissions::resolve_round(ctx.store, c[0], &round, error)) return false;
    if (!ctx.shown(round)) {
      *error = "--compare names round " + round + ", which this report does not show; add --round " + round;
      return false;
    }
    if (!round_benchmark(ctx, round, c[1], &bench, error)) return false;
    auto found = submissions::find_results(ctx.store, {round, bench, "", ctx.options.pipeline}, {c[2], c[3]}, error);
    if (found.size() != 2) return false;
    ctx.requested.emplace_back(round, bench, found[0].result_id, found[1].result_id);
  }
  return true;
}

// The page at a site path (`missing` when there is none).
// `why`: for a head-to-head page by query naming a result its round and
// benchmark lack, which one (the round is one the caller sees).
bool page_at(Context& ctx, const std::string& path, const std::vector<std::pair<std::string, std::string>>& query,
             Built* out, std::string* error, std::string* why) {
  auto seg = split(path, '/');
  auto stem = [](const std::string& s, std::string* name) {
    if (s.size() <= 5 || s.compare(s.size() - 5, 5, ".html") != 0) return false;
    *name = s.substr(0, s.size() - 5);
    return true;
  };
  std::string name;
  if (seg.size() == 1 && seg[0] == "index.html") return index_page(ctx, out, error);
  if (seg.size() == 1 && seg[0] == "results.html") return all_results_page(ctx, out, error);
  if (seg.size() == 1 && seg[0] == "compare.html") {
    std::string round, bench;
    std::vector<std::string> results;
    for (const auto& [k, v] : query) {
      if (k == "round") round = v;
      else if (k == "benchmark") bench = v;
      else if (k == "result") results.push_back(v);
    }
    if (round.empty() || bench.empty() || results.size() != 2) {
      *error = "a comparison needs round=, benchmark= and result= twice";
      return false;
    }
    std::string r, b, e;
    if (!submissions::resolve_round(ctx.store, round, &r, &e) || !ctx.shown(r) ||
        !round_benchmark(ctx, r, bench, &b, &e)) {
      out->missing = true;  // a round the caller may not see is as one the store does not hold: nothing named
      return true;
    }
    std::vector<submissions::ResultRow> rows;
    if (!results_of(ctx, r, b, &rows, error)) return false;
    long long ids[2];
    for (int i = 0; i < 2; ++i) {
      if (is_number(results[i])) {
        ids[i] = std::atoll(results[i].c_str());
        if (std::none_of(rows.begin(), rows.end(), [&](const submissions::ResultRow& x) { return x.result_id == ids[i]; })) {
          out->missing = true;
          *why = "compare.html: result " + results[i] + " is not a " + b + " result of " + r;
          return true;
        }
      } else {
        auto found = submissions::find_results(ctx.store, {r, b, "", ctx.options.pipeline}, {results[i]}, &e);
        if (found.size() != 1) {
          out->missing = true;
          *why = "compare.html: result " + results[i] + ": " + e;
          return true;
        }
        ids[i] = found[0].result_id;
      }
    }
    return compare_page(ctx, r, b, ids[0], ids[1], out, error, "compare.html");
  }
  if (seg.size() == 3 && seg[0] == "rounds" && seg[2] == "index.html") return round_page(ctx, seg[1], out, error);
  if (seg.size() == 3 && seg[0] == "rounds" && stem(seg[2], &name)) return leaderboard_page(ctx, seg[1], name, out, error);
  if (seg.size() == 2 && seg[0] == "benchmarks" && stem(seg[1], &name)) return rounds_page(ctx, name, out, error);
  if (seg.size() == 3 && seg[0] == "scaling" && stem(seg[2], &name)) return scaling_page(ctx, seg[1], name, out, error);
  if (seg.size() == 2 && seg[0] == "results" && stem(seg[1], &name) && is_number(name))
    return result_page(ctx, std::atoll(name.c_str()), out, error);
  if (seg.size() == 4 && seg[0] == "compare" && stem(seg[3], &name)) {
    size_t dash = name.find("--");
    if (dash != std::string::npos && is_number(name.substr(0, dash)) && is_number(name.substr(dash + 2)))
      return compare_page(ctx, seg[1], seg[2], std::atoll(name.substr(0, dash).c_str()),
                          std::atoll(name.substr(dash + 2).c_str()), out, error);
  }
  out->missing = true;
  return true;
}

// Writes one file of the new site; `made` holds the folders already created.
bool write_file(const fs::path& p, const std::string& body, std::set<std::string>* made, std::string* error) {
  std::string parent = p.parent_path().string();
  if (!made->count(parent)) {
    std::error_code ec;
    fs::create_directories(parent, ec);
    if (ec) {
      *error = "cannot create " + parent + ": " + ec.message();
      return false;
    }
    made->insert(parent);
  }
  base::Status written = base::write_file(p.string(), body);
  if (!written.ok()) *error = written.message;
  return written.ok();
}

}  // namespace

std::string asset_version(std::string_view path) {
#ifdef REFEREE_REPORT_ASSETS
  static const std::map<std::string, std::string, std::less<>> versions = [] {
    std::map<std::string, std::string, std::less<>> m;
    for (const auto& a : assets()) m[std::string(a.path)] = base::sha256_hex(a.bytes).substr(0, 16);
    return m;
  }();
  if (auto it = versions.find(path); it != versions.end()) return it->second;
#else
  (void)path;
#endif
  return "";
}

std::string asset_url(std::string_view path) {
  std::string v = asset_version(path);
  return std::string(path) + (v.empty() ? "" : "?v=" + v);
}

std::vector<std::pair<long long, long long>> site_pairs(const Context& ctx, const std::string& round,
                                                        const std::string& benchmark,
                                                        const std::vector<submissions::ResultRow>& rows) {
  auto out = auto_pairs(rows);
  auto has = [&](long long id) {
    return std::any_of(rows.begin(), rows.end(), [&](const submissions::ResultRow& r) { return r.result_id == id; });
  };
  for (const auto& [r, b, x, y] : ctx.requested) {
    std::pair<long long, long long> p{x, y};
    if (r == round && b == benchmark && has(x) && has(y) && std::find(out.begin(), out.end(), p) == out.end())
      out.push_back(p);
  }
  return out;
}

bool unpublished_rounds(submissions::Store& store, std::vector<std::pair<std::string, std::string>>* out,
                        std::string* error) {
  out->clear();
  {
    submissions::Stmt t(store.db(), "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'round_reviews'");
    if (!t.step()) {
      if (t.ok()) return true;  // a store from before the review: every round counts as published
      *error = "cannot read " + store.path() + ": " + t.error();
      return false;
    }
  }
  submissions::Stmt q(store.db(), "SELECT r.name, rr.state FROM round_reviews rr JOIN rounds r ON r.id = rr.round_id "
                                  "WHERE rr.state <> 'published' ORDER BY r.ordinal, r.name");
  while (q.step()) out->emplace_back(q.col_text(0), q.col_text(1));
  if (!q.ok()) {
    *error = "cannot read the rounds' review states in " + store.path() + ": " + q.error();
    return false;
  }
  return true;
}

namespace {

// One page of the site to build, by whichever worker takes it.
using PageJob = std::function<bool(Context&, Built*, std::string*)>;

// Every page of the site, in the site's order.
bool site_jobs(Context& ctx, std::vector<PageJob>* jobs, std::string* error) {
  jobs->push_back([](Context& c, Built* b, std::string* e) { return index_page(c, b, e); });
  jobs->push_back([](Context& c, Built* b, std::string* e) { return all_results_page(c, b, e); });
  for (const auto& round : ctx.rounds) {
    jobs->push_back([round](Context& c, Built* b, std::string* e) { return round_page(c, round, b, e); });
    for (const auto& bench : benchmarks_in(ctx, round)) {
      jobs->push_back([round, bench](Context& c, Built* b, std::string* e) { return leaderboard_page(c, round, bench, b, e); });
      std::vector<submissions::ResultRow> rows;
      if (!results_of(ctx, round, bench, &rows, error)) return false;
      for (const auto& [a, other] : site_pairs(ctx, round, bench, rows)) {
        long long x = a, y = other;
        jobs->push_back([round, bench, x, y](Context& c, Built* b, std::string* e) {
          return compare_page(c, round, bench, x, y, b, e);
        });
      }
    }
  }
  // One round-over-round page per benchmark, a renamed one (ssd -> retinanet) once.
  for (const auto& lineage : lineages_in(ctx))
    jobs->push_back([lineage](Context& c, Built* b, std::string* e) { return rounds_page(c, lineage, b, e); });
  for (const auto& bench : benchmarks_in(ctx, ""))
    for (const auto& s : submitters_of(ctx, bench)) {
      std::string segment = safe_name(s);
      jobs->push_back([bench, segment](Context& c, Built* b, std::string* e) { return scaling_page(c, bench, segment, b, e); });
    }
  for (long long id : result_ids(ctx))
    jobs->push_back([id](Context& c, Built* b, std::string* e) { return result_page(c, id, b, e); });
  return true;
}

// A worker of its own: its own connection to the store (read-only) and its
// own context. Null when the store cannot be opened a second time (then the
// first context builds every page).
struct Worker {
  std::unique_ptr<submissions::Store> store;
  std::unique_ptr<Context> ctx;
};
std::unique_ptr<Worker> second_worker(const Context& first) {
  std::string error;
  auto w = std::make_unique<Worker>();
  w->store = submissions::Store::open(first.store.path(), &error, submissions::OpenMode::ReadOnly, false);
  if (!w->store) return nullptr;
  w->ctx = std::make_unique<Context>(*w->store, first.options, first.visible);
  if (!make_context(w->ctx.get(), &error)) return nullptr;
  w->ctx->requested = first.requested;
  return w;
}

}  // namespace

bool build_site(submissions::Store& store, const Options& options, const Visible& visible, std::vector<File>* out,
                std::string* error, std::vector<std::string>* compare_pages) {
  out->clear();
  Context ctx(store, options, visible);
  if (!make_context(&ctx, error)) return false;
  Unpublished unpublished;
  if (!read_unpublished(store, &unpublished, error)) return false;
  if (!requested_pairs(ctx, error)) return false;
  if (compare_pages) {
    compare_pages->clear();
    for (const auto& [round, bench, a, c] : ctx.requested) compare_pages->push_back(compare_path(round, bench, a, c));
  }
  std::vector<PageJob> jobs;
  if (!site_jobs(ctx, &jobs, error)) return false;
  // The pages are independent: as many workers as the machine has cores (up
  // to eight), each page taken by the next free one, its files kept in the
  // site's order.
  std::vector<std::vector<File>> made(jobs.size());
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex error_mu;
  std::string first_error;
  auto work = [&](Context& c) {
    for (;;) {
      size_t i = next++;
      if (i >= jobs.size() || failed) return;
      Built b;
      std::string e;
      if (!jobs[i](c, &b, &e)) {
        std::lock_guard<std::mutex> lock(error_mu);
        if (!failed.exchange(true)) first_error = e;
        return;
      }
      if (!b.missing) made[i] = page_files(b.page, meta_of(c, b.page, unpublished));
    }
  };
  size_t cores = std::max(1u, std::thread::hardware_concurrency());
  size_t wanted = std::min<size_t>({cores, 8, jobs.size() / 32 + 1});
  std::vector<std::unique_ptr<Worker>> workers;
  for (size_t i = 1; i < wanted; ++i)
    if (auto w = second_worker(ctx)) workers.push_back(std::move(w));
  std::vector<std::thread> threads;
  for (auto& w : workers) threads.emplace_back([&work, &w] { work(*w->ctx); });
  work(ctx);
  for (auto& t : threads) t.join();
  if (failed) {
    *error = first_error;
    return false;
  }
  size_t count = 0;
  for (const auto& files : made) count += files.size();
  out->reserve(count + 8);
  for (auto& files : made) std::move(files.begin(), files.end(), std::back_inserter(*out));
  add_assets(out);
  return true;
}

namespace {

const char* const kManifestHead = "Files referee wrote:";

// What a marker says: the files referee wrote (a marker from before the list
// had none: then a path of the site's own folders counts as referee's).
struct Manifest {
  bool listed = false;
  std::set<std::string> files;
  bool wrote(const std::string& path) const {
    if (listed) return files.count(path) > 0;
    if (path == "index.html" || path == "compare.html") return true;
    for (const char* d : {"assets/", "data/", "rounds/", "benchmarks/", "scaling/", "results/", "compare/"})
      if (path.rfind(d, 0) == 0) return true;
    return false;
  }
};

Manifest read_manifest(const fs::path& marker) {
  Manifest m;
  std::FILE* f = std::fopen(marker.c_str(), "rb");
  if (!f) return m;
  std::string text;
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
  std::fclose(f);
  bool in_list = false;
  for (const auto& line : split(text, '\n')) {
    if (in_list) {
      if (!line.empty()) m.files.insert(line);
    } else if (line == kManifestHead) {
      in_list = m.listed = true;
    }
  }
  return m;
}

// ".NAME.tmp-XXXXXX" or ".NAME.tmp-XXXXXX.old": a temporary folder write_site makes beside NAME.
bool temp_name_of(const std::string& entry, const std::string& name) {
  std::string head = "." + name + ".tmp-";
  if (entry.rfind(head, 0) != 0) return false;
  std::string rest = entry.substr(head.size());
  if (rest.size() == 10 && rest.compare(6, 4, ".old") == 0) rest.resize(6);
  return rest.size() == 6 && rest.find_first_of("/.") == std::string::npos;
}

// Removes temporary folders an earlier run left beside `target`: only those
// holding the marker (referee made them) whose marker no running referee
// holds locked (a run that is still writing keeps it locked until it is done).
void remove_stale(const fs::path& parent, const std::string& name, WriteNotes* notes) {
  std::error_code ec;
  for (fs::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec)) {
    std::string entry = it->path().filename().string();
    if (!temp_name_of(entry, name) || !fs::is_directory(it->symlink_status(ec))) continue;
    fs::path marker = it->path() / kMarker;
    if (!fs::is_regular_file(fs::symlink_status(marker, ec))) continue;
    int fd = ::open(marker.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) continue;
    bool stale = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
    if (stale) {
      std::error_code e2;
      fs::remove_all(it->path(), e2);
      if (!e2 && notes) notes->removed.push_back(it->path().string());
    }
    ::close(fd);
  }
}

}  // namespace

bool write_site(const std::string& dir, const std::vector<File>& files, std::string* error, WriteNotes* notes) {
  std::error_code ec;
  fs::path target = fs::path(dir).lexically_normal();
  if (target.filename().empty()) target = target.parent_path();
  if (target.empty()) target = ".";
  for (const auto& f : files)
    if (!clean_path(f.path) || f.path == kMarker) {
      *error = "refusing to write '" + f.path + "': not a relative path inside the report";
      return false;
    }
  // A symbolic link to a folder: the site goes into the folder it names.
  if (fs::is_symlink(fs::symlink_status(target, ec))) {
    fs::path real = fs::canonical(target, ec);
    if (ec || !fs::is_directory(fs::status(real, ec))) {
      *error = target.string() + " is a symbolic link to something that is not a folder; give --out a folder (new, empty, or an earlier report)";
      return false;
    }
    target = real;
  }
  bool exists = fs::exists(fs::symlink_status(target, ec));
  Manifest earlier;
  std::vector<std::string> keep;  // files of the earlier report referee did not write
  if (exists) {
    if (!fs::is_directory(fs::symlink_status(target, ec))) {
      *error = target.string() + " exists and is not a folder; give --out a folder (new, empty, or an earlier report)";
      return false;
    }
    bool empty = fs::is_empty(target, ec);
    if (!empty && !fs::exists(target / kMarker, ec)) {
      *error = target.string() + " is a folder that is neither empty nor an earlier referee report (no " + kMarker +
               " in it); referee does not overwrite it: choose another --out, or empty it";
      return false;
    }
    if (!empty) {
      earlier = read_manifest(target / kMarker);
      std::set<std::string> now;
      for (const auto& f : files) now.insert(f.path);
      std::vector<std::string> clash;
      for (fs::recursive_directory_iterator it(target, ec), end; !ec && it != end; it.increment(ec)) {
        auto st = it->symlink_status(ec);
        if (fs::is_directory(st)) continue;
        std::string rel = it->path().lexically_relative(target).generic_string();
        if (rel == kMarker || earlier.wrote(rel)) continue;
        if (now.count(rel)) clash.push_back(rel);
        else keep.push_back(rel);
      }
      if (ec) {
        *error = "cannot read the earlier report " + target.string() + ": " + ec.message();
        return false;
      }
      if (!clash.empty()) {
        std::string names;
        for (const auto& c : clash) names += (names.empty() ? "" : ", ") + (target / c).string();
        *error = names + (clash.size() == 1 ? " is a file" : " are files") +
                 " referee did not write, at a path the new report writes; referee does not overwrite it: move it away "
                 "and run again; " + target.string() + " was left as it was";
        return false;
      }
    }
  }
  fs::path parent = target.has_parent_path() ? target.parent_path() : fs::path(".");
  fs::create_directories(parent, ec);
  if (ec) {
    *error = "cannot create " + parent.string() + ": " + ec.message();
    return false;
  }
  remove_stale(parent, target.filename().string(), notes);
  std::string tmpl = (parent / ("." + target.filename().string() + ".tmp-XXXXXX")).string();
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) {
    *error = "cannot create a folder beside " + target.string() + ": " + std::strerror(errno);
    return false;
  }
  fs::path tmp(buf.data());
  // The marker first, locked while this run writes: a folder that holds it
  // and is not locked is what a killed run left (remove_stale).
  int lock_fd = -1;
  auto fail = [&](const std::string& why) {
    std::error_code e2;
    fs::remove_all(tmp, e2);
    if (lock_fd >= 0) ::close(lock_fd);
    *error = why + "; " + target.string() + " was left as it was";
    return false;
  };
  std::set<std::string> seen, made;
  std::string why;
  std::string marker = "This folder is a report written by referee (referee report); it is replaced whole, except for files "
                       "referee did not write, which are kept.\n" + std::string(kManifestHead) + "\n";
  for (const auto& f : files) marker += f.path + "\n";
  if (!write_file(tmp / kMarker, marker, &made, &why)) return fail(why);
  lock_fd = ::open((tmp / kMarker).c_str(), O_RDONLY | O_CLOEXEC);
  if (lock_fd < 0 || ::flock(lock_fd, LOCK_EX) != 0) return fail("cannot lock " + (tmp / kMarker).string() + ": " + std::strerror(errno));
  for (const auto& f : files) {
    if (!seen.insert(f.path).second) return fail("two files of the report have the same path " + f.path);
    if (!write_file(tmp / f.path, f.body, &made, &why)) return fail(why);
  }
  for (const auto& k : keep) {
    fs::path to = tmp / k;
    fs::create_directories(to.parent_path(), ec);
    if (!ec) fs::copy(target / k, to, fs::copy_options::copy_symlinks, ec);
    if (ec) return fail("cannot keep " + (target / k).string() + ": " + ec.message());
  }
  fs::permissions(tmp, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec | fs::perms::others_read |
                           fs::perms::others_exec, ec);
  auto done = [&]() {
    ::close(lock_fd);
    if (notes) notes->kept = keep;
    return true;
  };
  // Swap the new site and the old one in one step where the file system
  // allows it (else the old one goes aside to <tmp>.old first), then remove the old.
  fs::path old;
  base::Status swapped = base::swap_install_dir(tmp, target, &old);
  if (!swapped.ok()) {
    if (!old.empty()) {  // the earlier report could not be put back: say where it is
      std::error_code e2;
      fs::remove_all(tmp, e2);
      if (lock_fd >= 0) ::close(lock_fd);
      *error = swapped.message + "; the earlier report is in " + old.string();
      return false;
    }
    return fail(swapped.message);
  }
  if (!old.empty()) fs::remove_all(old, ec);  // now the earlier report
  return done();
}

Status render(submissions::Store& store, const std::string& path_in,
              const std::vector<std::pair<std::string, std::string>>& query, const Options& options,
              const Visible& visible, File* out, std::string* error) {
  std::string path = path_in;
  if (path.empty() || path.back() == '/') path += "index.html";
  if (!clean_path(path)) {
    *error = "not a path of the report: " + path_in;
    return Status::BadRequest;
  }
  if (path.rfind("assets/", 0) == 0) {
    std::vector<File> a;
    add_assets(&a);
    for (auto& f : a)
      if (f.path == path) {
        *out = std::move(f);
        return Status::Ok;
      }
    *error = "no such file: " + path;
    return Status::NotFound;
  }
  Context ctx(store, options, visible);
  if (!make_context(&ctx, error)) return Status::Error;
  std::string page_path = path;
  bool data = path.rfind("data/", 0) == 0;
  if (data) {
    size_t slash = path.rfind('/');
    if (slash <= 5) {
      *error = "no such file: " + path;
      return Status::NotFound;
    }
    page_path = path.substr(5, slash - 5) + ".html";
  }
  Built b;
  std::string why;
  if (!page_at(ctx, page_path, query, &b, error, &why))
    return error->rfind("a comparison needs", 0) == 0 ? Status::BadRequest : Status::Error;
  if (b.missing) {
    *error = why.empty() ? "no such page: " + path : why;
    return Status::NotFound;
  }
  Unpublished unpublished;
  if (!read_unpublished(store, &unpublished, error)) return Status::Error;
  Meta meta = meta_of(ctx, b.page, unpublished);
  if (data) meta.data_files = true;  // asked for one: made whatever the pages say
  for (auto& f : page_files(b.page, meta))
    if (f.path == path) {
      *out = std::move(f);
      return Status::Ok;
    }
  *error = "no such file: " + path;
  return Status::NotFound;
}

}  // namespace referee::reports
