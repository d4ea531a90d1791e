// The site: which pages there are, every file of it, writing it atomically,
// and one file of it on its own.
#include "reports/site.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>

#include "reports/pages.h"

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

bool add_page(Context& ctx, bool ok, Built& b, std::vector<File>* out, std::string* error) {
  if (!ok) return false;
  (void)error;
  if (b.missing) return true;
  auto files = page_files(b.page, page_meta(ctx, b.page));
  out->insert(out->end(), std::make_move_iterator(files.begin()), std::make_move_iterator(files.end()));
  return true;
}

bool is_number(const std::string& s) {
  return !s.empty() && s.size() < 18 && s.find_first_not_of("0123456789") == std::string::npos;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == sep) {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  return out;
}

// A site path the site could hold: relative, '/'-separated, no empty, "." or ".." segment.
bool clean_path(const std::string& p) {
  if (p.empty() || p.front() == '/' || p.find('\\') != std::string::npos || p.find('\0') != std::string::npos) return false;
  for (const auto& seg : split(p, '/'))
    if (seg.empty() || seg == "." || seg == "..") return false;
  return true;
}

// The ids of the head-to-head pages Options::compare asks for.
bool requested_pairs(Context& ctx, std::vector<std::tuple<std::string, std::string, long long, long long>>* out,
                     std::string* error) {
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
    if (!submissions::resolve_benchmark(ctx.store, round, c[1], &bench, error)) return false;
    auto found = submissions::find_results(ctx.store, {round, bench, "", ctx.options.pipeline}, {c[2], c[3]}, error);
    if (found.size() != 2) return false;
    out->emplace_back(round, bench, found[0].result_id, found[1].result_id);
  }
  return true;
}

// The page at a site path (`missing` when there is none).
bool page_at(Context& ctx, const std::string& path, const std::vector<std::pair<std::string, std::string>>& query,
             Built* out, std::string* error) {
  auto seg = split(path, '/');
  auto stem = [](const std::string& s, std::string* name) {
    if (s.size() <= 5 || s.compare(s.size() - 5, 5, ".html") != 0) return false;
    *name = s.substr(0, s.size() - 5);
    return true;
  };
  std::string name;
  if (seg.size() == 1 && seg[0] == "index.html") return index_page(ctx, out, error);
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
        !submissions::resolve_benchmark(ctx.store, r, bench, &b, &e)) {
      out->missing = true;
      return true;
    }
    long long ids[2];
    for (int i = 0; i < 2; ++i) {
      if (is_number(results[i])) {
        ids[i] = std::atoll(results[i].c_str());
      } else {
        auto found = submissions::find_results(ctx.store, {r, b, "", ctx.options.pipeline}, {results[i]}, &e);
        if (found.size() != 1) {
          out->missing = true;
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
  int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    *error = "cannot write " + p.string() + ": " + std::strerror(errno);
    return false;
  }
  size_t done = 0;
  while (done < body.size()) {
    ssize_t n = ::write(fd, body.data() + done, body.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *error = "cannot write " + p.string() + ": " + std::strerror(errno);
      ::close(fd);
      return false;
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) {
    *error = "cannot write " + p.string() + ": " + std::strerror(errno);
    return false;
  }
  return true;
}

}  // namespace

bool build_site(submissions::Store& store, const Options& options, const Visible& visible, std::vector<File>* out,
                std::string* error) {
  out->clear();
  Context ctx(store, options, visible);
  if (!make_context(&ctx, error)) return false;
  std::vector<std::tuple<std::string, std::string, long long, long long>> extra;
  if (!requested_pairs(ctx, &extra, error)) return false;
  {
    Built b;
    if (!add_page(ctx, index_page(ctx, &b, error), b, out, error)) return false;
  }
  std::set<std::string> compared;
  for (const auto& round : ctx.rounds) {
    Built b;
    if (!add_page(ctx, round_page(ctx, round, &b, error), b, out, error)) return false;
    for (const auto& bench : benchmarks_in(ctx, round)) {
      Built l;
      if (!add_page(ctx, leaderboard_page(ctx, round, bench, &l, error), l, out, error)) return false;
      std::vector<submissions::ResultRow> rows;
      if (!results_of(ctx, round, bench, &rows, error)) return false;
      for (const auto& [a, c] : auto_pairs(rows)) {
        compared.insert(compare_path(round, bench, a, c));
        Built h;
        if (!add_page(ctx, compare_page(ctx, round, bench, a, c, &h, error), h, out, error)) return false;
      }
    }
  }
  for (const auto& [round, bench, a, c] : extra) {
    if (!compared.insert(compare_path(round, bench, a, c)).second) continue;
    Built h;
    if (!add_page(ctx, compare_page(ctx, round, bench, a, c, &h, error), h, out, error)) return false;
  }
  for (const auto& bench : benchmarks_in(ctx, "")) {
    Built b;
    if (!add_page(ctx, rounds_page(ctx, bench, &b, error), b, out, error)) return false;
    for (const auto& s : submitters_of(ctx, bench)) {
      Built sc;
      if (!add_page(ctx, scaling_page(ctx, bench, safe_name(s), &sc, error), sc, out, error)) return false;
    }
  }
  for (long long id : result_ids(ctx)) {
    Built b;
    if (!add_page(ctx, result_page(ctx, id, &b, error), b, out, error)) return false;
  }
  add_assets(out);
  return true;
}

bool write_site(const std::string& dir, const std::vector<File>& files, std::string* error) {
  std::error_code ec;
  fs::path target = fs::path(dir).lexically_normal();
  if (target.filename().empty()) target = target.parent_path();
  for (const auto& f : files)
    if (!clean_path(f.path) || f.path == kMarker) {
      *error = "refusing to write '" + f.path + "': not a relative path inside the report";
      return false;
    }
  bool exists = fs::exists(fs::symlink_status(target, ec));
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
  }
  fs::path parent = target.has_parent_path() ? target.parent_path() : fs::path(".");
  fs::create_directories(parent, ec);
  if (ec) {
    *error = "cannot create " + parent.string() + ": " + ec.message();
    return false;
  }
  std::string tmpl = (parent / ("." + target.filename().string() + ".tmp-XXXXXX")).string();
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) {
    *error = "cannot create a folder beside " + target.string() + ": " + std::strerror(errno);
    return false;
  }
  fs::path tmp(buf.data());
  auto fail = [&](const std::string& why) {
    std::error_code e2;
    fs::remove_all(tmp, e2);
    *error = why + "; " + target.string() + " was left as it was";
    return false;
  };
  std::set<std::string> seen, made;
  std::string why;
  for (const auto& f : files) {
    if (!seen.insert(f.path).second) return fail("two files of the report have the same path " + f.path);
    if (!write_file(tmp / f.path, f.body, &made, &why)) return fail(why);
  }
  if (!write_file(tmp / kMarker, "This folder is a report written by referee (referee report); it is replaced whole.\n", &made, &why))
    return fail(why);
  fs::permissions(tmp, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec | fs::perms::others_read |
                           fs::perms::others_exec, ec);
  if (!exists) {
    if (::rename(tmp.c_str(), target.c_str()) != 0) return fail("cannot rename into " + target.string() + ": " + std::strerror(errno));
    return true;
  }
  // Swap the new site and the old one in one step, then remove the old.
  if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, target.c_str(), RENAME_EXCHANGE) != 0) {
    // Without an atomic exchange (some file systems): move the old one aside first.
    fs::path old = tmp.string() + ".old";
    if (::rename(target.c_str(), old.c_str()) != 0) return fail("cannot move the earlier report aside: " + std::string(std::strerror(errno)));
    if (::rename(tmp.c_str(), target.c_str()) != 0) {
      int e = errno;
      (void)::rename(old.c_str(), target.c_str());
      return fail("cannot rename into " + target.string() + ": " + std::strerror(e));
    }
    fs::remove_all(old, ec);
    return true;
  }
  fs::remove_all(tmp, ec);  // now the earlier report
  return true;
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
  if (!page_at(ctx, page_path, query, &b, error)) return error->rfind("a comparison needs", 0) == 0 ? Status::BadRequest : Status::Error;
  if (b.missing) {
    *error = "no such page: " + path;
    return Status::NotFound;
  }
  for (auto& f : page_files(b.page, page_meta(ctx, b.page)))
    if (f.path == path) {
      *out = std::move(f);
      return Status::Ok;
    }
  *error = "no such file: " + path;
  return Status::NotFound;
}

}  // namespace referee::reports
