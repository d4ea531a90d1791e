#include "review/publish.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "base/file.h"
#include "submissions/import.h"
#include "submissions/queries.h"
#include "mllog/json.h"
#include "mllog/json_writer.h"
#include "review/events.h"
#include "review/policy.h"
#include "review/round_ops.h"
#include "review/verify.h"
#include "rules/facts.h"
#include "rules/package.h"
#include "rules/score.h"
#include "rules/source.h"

namespace referee::review {

namespace fs = std::filesystem;
using submissions::Stmt;
using submissions::Store;

namespace {

// The file that marks a folder as a publication of referee: only such a folder is replaced.
constexpr const char* kMarker = ".referee-publication";

struct Row {
  std::string org, package_path, system, description, benchmark, status;
  long long result_id = 0, decision = 0;
  bool has_factor = false;
  double factor = 0;
  double imported_factor = 1;  // the factor of the package's scaling.json at its import (1: none)
};

// {"scaling_factor": F}, as the consortium's files are written: F in the fewest digits that read back
// as the same number (1.07575758, not 1.0757575800000001).
std::string scaling_json(double f) {
  char num[40];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(num, sizeof num, "%.*g", digits, f);
    if (std::strtod(num, nullptr) == f) break;
  }
  return std::string("{\"scaling_factor\": ") + num + "}\n";
}

// The system description with its division set to "open" (a result moved to the open division).
std::string open_division(const std::string& description) {
  mllog::Json j;
  std::string err;
  if (!mllog::parse_json_permissive(description, &j, &err) || j.kind != mllog::Json::Kind::Object) return "";
  // Rewritten field by field, "division" replaced (or added), the rest as it was.
  std::string out = "{";
  bool seen = false;
  auto quote = [](const std::string& s) {
    std::string q = "\"";
    for (unsigned char c : s) {
      if (c == '"' || c == '\\') q += '\\', q += static_cast<char>(c);
      else if (c < 0x20) {
        char b[8];
        std::snprintf(b, sizeof b, "\\u%04x", c);
        q += b;
      } else q += static_cast<char>(c);
    }
    return q + "\"";
  };
  // Rebuilt from its parsed fields, in their order.
  std::function<std::string(const mllog::Json&)> value = [&](const mllog::Json& v) -> std::string {
    switch (v.kind) {
      case mllog::Json::Kind::Null: return "null";
      case mllog::Json::Kind::Bool: return v.b ? "true" : "false";
      case mllog::Json::Kind::Int: return std::to_string(v.i);
      case mllog::Json::Kind::Float: {
        char b[40];
        std::snprintf(b, sizeof b, "%.17g", v.f);
        return b;
      }
      case mllog::Json::Kind::String: return quote(v.s);
      case mllog::Json::Kind::Array: {
        std::string a = "[";
        for (size_t i = 0; i < v.items.size(); ++i) a += (i ? ", " : "") + value(v.items[i]);
        return a + "]";
      }
      case mllog::Json::Kind::Object: {
        std::string o = "{";
        for (size_t i = 0; i < v.fields.size(); ++i) o += (i ? ", " : "") + quote(v.fields[i].first) + ": " + value(v.fields[i].second);
        return o + "}";
      }
    }
    return "null";
  };
  for (size_t i = 0; i < j.fields.size(); ++i) {
    const auto& [k, v] = j.fields[i];
    out += (i ? ",\n    " : "\n    ") + quote(k) + ": ";
    if (k == "division") {
      out += "\"open\"";
      seen = true;
    } else {
      out += value(v);
    }
  }
  if (!seen) out += std::string(j.fields.empty() ? "\n    " : ",\n    ") + "\"division\": \"open\"";
  return out + "\n}\n";
}

Error io_error(const std::string& message) { return make_error(500, "io", message); }

// Whether a name the store gives (an organisation, a system, a benchmark, a
// result file) is one folder or file name, as import writes them: anything
// else (edited into the store) would place a file outside the publication.
bool one_segment(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
         name.find('\0') == std::string::npos;
}

Error bad_name(const std::string& what, const std::string& name) {
  return make_error(422, "bad-name",
                    "the store names " + what + " '" + name + "', which is not a plain folder or file name",
                    "the store was edited outside referee: check it (referee review log --verify) and import the "
                    "package again");
}

// Copies result file `file` of the folder `from` (of the package imported
// from `package_path`) into `dir`, byte for byte, and holds it to the SHA-256
// `want` of its import; an Error when it cannot, the file is not there any
// more, or it changed.
std::optional<Error> copy_result_file(const fs::path& from, const fs::path& dir, const std::string& file,
                                      const std::string& want, const std::string& package_path) {
  if (!one_segment(file)) return bad_name("a result file", file);
  // Import reads no file that leads outside its package; publish copies none either.
  if (fs::path real; !base::resolves_within(from / file, package_path, &real))
    return make_error(422, "outside-package", (from / file).string() + " leads outside the package (to " + real.string() + ")",
                      "put the file itself back in the package imported from " + package_path);
  std::string got;
  base::Status c = base::copy_file_atomic((from / file).string(), (dir / file).string(), &got);
  std::error_code ec;
  if (!c.ok() && !fs::exists(from / file, ec))
    return make_error(422, "missing-file", c.message,
                      "the package imported from " + package_path + " must still be there to publish it");
  if (!c.ok() && c.message.rfind("cannot write", 0) == 0)
    return make_error(500, "io", c.message,
                      "the publication could not be written (a full disk, a quota or a file-size limit?); the earlier "
                      "one is as it was: free space and publish again");
  if (!c.ok()) return make_error(422, "missing-file", c.message);
  if (got != want)
    return make_error(422, "changed-file",
                      (from / file).string() + " changed since it was imported (SHA-256 " + got.substr(0, 12) +
                          "..., imported " + want.substr(0, 12) + "...)",
                      "re-import the package (referee import) if the change is the one the committee accepted");
  return std::nullopt;
}

// Staging folders of publications of `out` whose process is gone (killed
// while it wrote): removed, so that none is left behind for good.
void remove_stale_staging(const fs::path& out) {
  const std::string prefix = ".staging-" + out.filename().string() + "-";
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(out.parent_path(), ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string pid_text = name.substr(prefix.size());
    if (pid_text.empty() || pid_text.find_first_not_of("0123456789") != std::string::npos || pid_text.size() > 9) continue;
    const pid_t pid = static_cast<pid_t>(std::atol(pid_text.c_str()));
    if (pid == getpid() || (::kill(pid, 0) != 0 && errno == ESRCH)) {
      std::error_code rm;
      fs::remove_all(e.path(), rm);
    }
  }
}

}  // namespace

Result<Publication> publish_round(Store& s, const Actor& who, const PublishRequest& req) {
  RoundInfo round;
  Error err;
  if (!find_round(s, who, req.round, &round, &err)) return err;
  if (authorize(who, Action::Publish, Standing{}, round.state) != Access::Allowed)
    return forbidden("only a review chair or an administrator publishes a round", "ask a chair of " + round.name);
  if (round.reviewed && round.state == "review")
    return make_error(422, "still-in-review",
                      "round " + round.name + " is still in review: its decisions are not final",
                      "a chair moves it on once every objection is decided (referee round state " + round.name +
                          " final), then publishes");
  {
    Stmt q(s.db(), "SELECT id FROM objections WHERE round_id = ?1 AND state IN ('open', 'responded') ORDER BY id");
    q.bind(1, round.id);
    std::string open;
    while (q.step()) open += (open.empty() ? "" : ", ") + std::to_string(q.col_int(0));
    if (!q.ok()) return store_error(s, q.rc(), "reading the round's objections");
    if (!open.empty())
      return make_error(422, "objections-open", "objection(s) " + open + " of " + round.name + " are not decided",
                        "decide or withdraw them first (referee objection decide ID ...)");
  }
  if (req.out.empty()) return make_error(400, "bad-field", "out: required (the folder to write the publication to)");
  fs::path out = fs::absolute(req.out).lexically_normal();
  if (out.filename().empty()) out = out.parent_path();
  std::error_code ec;
  // A link to a publication is published through: its target is replaced, not the link.
  if (fs::is_symlink(out, ec)) {
    fs::path target = fs::weakly_canonical(out, ec);
    if (ec) return io_error("cannot follow " + out.string() + ": " + ec.message());
    out = target;
  }
  if (fs::exists(out, ec) && !(fs::is_directory(out, ec) && (fs::is_empty(out, ec) || fs::exists(out / kMarker, ec))))
    return make_error(409, "exists", out.string() + " exists and is not an earlier publication of referee",
                      "name a new folder, or an empty one");

  // The rule set of the round scores the packages as the summarizer does.
  rules::RuleSource src;
  std::string rerr;
  std::unique_ptr<rules::RuleSet> rs = rules::resolve_ruleset(round.name, req.rules_dir, &src, &rerr);
  rules::RoundFacts facts;
  if (!rs || !rules::facts_for(*rs, &facts, &rerr))
    return make_error(422, "no-rules", "the rule set of " + round.name + " cannot be loaded: " + rerr,
                      "pass --rules DIR (the consortium's mlperf_logging folder) or set REFEREE_RULES");

  std::vector<Row> rows;
  {
    Stmt q(s.db(),
           "SELECT o.name, p.path, sy.name, sy.description_json, r.id, r.benchmark, "
           "COALESCE(st.status, ''), st.factor, COALESCE(st.decision_id, 0), r.published_factor FROM results r JOIN "
           "systems sy ON sy.id = "
           "r.system_id JOIN packages p ON p.id = sy.package_id JOIN organisations o ON o.id = p.organisation_id "
           "LEFT JOIN result_status st ON st.result_id = r.id WHERE p.round_id = ?1 ORDER BY o.name, sy.name, r.benchmark");
    q.bind(1, round.id);
    while (q.step()) {
      Row r;
      r.org = q.col_text(0);
      r.package_path = q.col_text(1);
      r.system = q.col_text(2);
      r.description = q.col_text(3);
      r.result_id = q.col_int(4);
      r.benchmark = q.col_text(5);
      r.status = q.col_text(6);
      r.has_factor = !q.col_null(7);
      r.factor = q.col_double(7);
      r.decision = q.col_int(8);
      r.imported_factor = q.col_null(9) ? 1.0 : q.col_double(9);
      rows.push_back(r);
    }
    if (!q.ok()) return store_error(s, q.rc(), "reading the round's results");
  }
  // A store edited outside referee is not published: the review log must verify, and the tables must
  // be what its events wrote (what `review log --verify` checks): a result or run deleted, a status set
  // by hand (withdrawn, normalised, moved to open without a decision), a package added without an
  // import would otherwise be published as the committee's word.
  {
    std::string verr;
    ChainCheck chain = verify_events(s, &verr);
    if (!verr.empty()) return make_error(500, "store", verr);
    std::string problem = chain.ok ? "" : "the review log does not verify at event " + std::to_string(chain.first_bad) + ": " + chain.problem;
    if (problem.empty()) {
      TableCheck tables = verify_tables(s, &verr);
      if (!verr.empty()) return make_error(500, "store", verr);
      if (!tables.ok) problem = tables.problem;
    }
    if (!problem.empty())
      return make_error(422, "edited-store", "the store was edited outside referee: " + problem,
                        "referee review log --verify names the same; import the package again (referee import) to "
                        "write its rows anew, or restore the store from a copy, then publish");
  }
  long long weak_count = 0;
  if (s.opened_version() >= 16) {
    Stmt q(s.db(), "SELECT COUNT(*) FROM weak_results w JOIN systems sy ON sy.id = w.system_id JOIN packages p ON p.id = "
                   "sy.package_id WHERE p.round_id = ?1");
    q.bind(1, round.id);
    if (q.step()) weak_count = q.col_int(0);
    if (!q.ok()) return store_error(s, q.rc(), "reading the round's weak-scaling results");
  }
  if (rows.empty() && weak_count == 0) return make_error(422, "empty", "round " + round.name + " holds no results to publish");

  // Made aside, beside the target, and installed whole.
  fs::path staging = out.parent_path() / (".staging-" + out.filename().string() + "-" + std::to_string(getpid()));
  remove_stale_staging(out);
  struct Cleanup {
    fs::path p;
    ~Cleanup() {
      std::error_code e;
      if (!p.empty()) fs::remove_all(p, e);
    }
  } cleanup{staging};
  if (!fs::create_directories(staging, ec)) return io_error("cannot create " + staging.string() + ": " + ec.message());

  // systems/<as>.json of `org`, once: `desc`, the stored description of `system` (as it is published).
  std::set<std::string> systems_written;
  auto write_description = [&](const std::string& org, const std::string& system, const std::string& as,
                               const std::string& desc) -> std::optional<Error> {
    if (!systems_written.insert(org + "/" + as).second) return std::nullopt;
    if (desc.empty()) return make_error(422, "bad-system", "the stored description of " + org + "/" + system + " is not a JSON object");
    if (base::Status w = base::write_file((staging / org / "systems" / (as + ".json")).string(), desc); !w.ok())
      return io_error(w.message);
    return std::nullopt;
  };
  Publication pub;
  pub.round = round.name;
  const bool hpc = round.name.rfind("hpc-", 0) == 0;
  std::set<std::string> orgs;
  for (const auto& r : rows) {
    PublishedResult p{r.org, r.system, r.benchmark, hpc ? "strong" : "", r.status.empty() ? "as submitted" : r.status,
                      r.factor, r.decision};
    if (r.status == "withdrawn") {
      pub.results.push_back(p);
      continue;
    }
    if (!one_segment(r.org)) return bad_name("an organisation", r.org);
    if (!one_segment(r.system)) return bad_name("a system", r.system);
    if (!one_segment(r.benchmark)) return bad_name("a benchmark", r.benchmark);
    const bool open = r.status == "moved-to-open";
    if (open) {
      p.system = r.system + "-open";
      // The open copy takes the name <system>-open: a system of that name in the same package would be
      // overwritten by it, its description and results lost.
      Stmt clash(s.db(), "SELECT 1 FROM systems sy JOIN packages p ON p.id = sy.package_id JOIN organisations o ON "
                         "o.id = p.organisation_id WHERE p.round_id = ?1 AND o.name = ?2 AND sy.name = ?3");
      clash.bind(1, round.id);
      clash.bind(2, r.org);
      clash.bind(3, p.system);
      if (clash.step())
        return make_error(422, "name-clash",
                          r.org + "'s result " + r.system + "/" + r.benchmark + " moves to the open division as system " +
                              p.system + ", but " + r.org + "'s package already has a system of that name",
                          "rename that system in the package (its systems/ file and results/ folder) and import it again, "
                          "then publish");
      if (!clash.ok()) return store_error(s, clash.rc(), "reading the round's systems");
    }
    fs::path org_dir = staging / r.org;
    fs::path dir = org_dir / submissions::result_dir(round.name, p.system, r.benchmark);
    fs::create_directories(dir, ec);
    fs::create_directories(org_dir / "systems", ec);
    if (ec) return io_error("cannot create " + dir.string() + ": " + ec.message());
    if (auto e = write_description(r.org, r.system, p.system, open ? open_division(r.description) : r.description)) return *e;
    // The result files as imported, byte for byte.
    Stmt runs(s.db(), "SELECT file, content_sha256 FROM runs WHERE result_id = ?1 ORDER BY file");
    runs.bind(1, r.result_id);
    const fs::path from = fs::path(r.package_path) / submissions::result_dir(round.name, r.system, r.benchmark);
    while (runs.step()) {
      if (auto e = copy_result_file(from, dir, runs.col_text(0), runs.col_text(1), r.package_path)) return *e;
      ++pub.files;
    }
    if (!runs.ok()) return store_error(s, runs.rc(), "reading the result's runs");
    if (r.status == "normalised" && r.has_factor) {
      // The committee's factor.
      if (base::Status w = base::write_file((dir / "scaling.json").string(), scaling_json(r.factor)); !w.ok()) return io_error(w.message);
      ++pub.files;
    } else if (const rules::ScalingFile sf = rules::read_scaling_json(from, fs::weakly_canonical(r.package_path, ec));
               sf.present) {
      // The package's own scaling.json, as submitted: inside the package, and the factor its import read
      // (1 where there was none), read as score reads it.
      const fs::path sj = from / "scaling.json";
      if (sf.outside)
        return make_error(422, "outside-package", sj.string() + " leads outside the package (to " + sf.real.string() + ")",
                          "put the file itself back in the package imported from " + r.package_path);
      if (!sf.usable || sf.factor != r.imported_factor)
        return make_error(422, "changed-file",
                          sj.string() + (!sf.usable ? ": " + sf.problem
                                                    : " does not give the factor the package's import read (" +
                                                          mllog::json_number(r.imported_factor) + ")"),
                          "re-import the package (referee import) if the change is the one the committee accepted");
      if (base::Status c = base::copy_file_atomic(sj.string(), (dir / "scaling.json").string()); !c.ok())
        return make_error(422, "missing-file", c.message);
      ++pub.files;
    } else if (r.imported_factor != 1.0) {
      return make_error(422, "changed-file",
                        (from / "scaling.json").string() + " is gone: the package's import read a factor of " +
                            mllog::json_number(r.imported_factor) + " from it",
                        "re-import the package (referee import) if the change is the one the committee accepted");
    }
    orgs.insert(r.org);
    pub.results.push_back(p);
  }
  // MLPerf HPC weak-scaling results (schema 16 on), as submitted: the
  // review's decisions are about results, not these.
  if (s.opened_version() >= 16) {
    const bool runs_kept = s.opened_version() >= 17;
    Stmt q(s.db(),
           "SELECT o.name, p.path, sy.name, sy.description_json, w.id, w.benchmark FROM weak_results w JOIN systems sy "
           "ON sy.id = w.system_id JOIN packages p ON p.id = sy.package_id JOIN organisations o ON o.id = "
           "p.organisation_id WHERE p.round_id = ?1 ORDER BY o.name, sy.name, w.benchmark");
    q.bind(1, round.id);
    while (q.step()) {
      const std::string org = q.col_text(0), package_path = q.col_text(1), system = q.col_text(2);
      const std::string description = q.col_text(3), benchmark = q.col_text(5);
      const long long weak_id = q.col_int(4);
      if (!one_segment(org)) return bad_name("an organisation", org);
      if (!one_segment(system)) return bad_name("a system", system);
      if (!one_segment(benchmark)) return bad_name("a benchmark", benchmark);
      const std::string rel = "results/" + system + "/weak/" + benchmark;
      fs::path org_dir = staging / org, dir = org_dir / rel;
      fs::create_directories(dir, ec);
      fs::create_directories(org_dir / "systems", ec);
      if (ec) return io_error("cannot create " + dir.string() + ": " + ec.message());
      if (auto e = write_description(org, system, system, description)) return *e;
      int copied = 0;
      if (runs_kept) {
        Stmt runs(s.db(), "SELECT file, content_sha256 FROM weak_runs WHERE weak_result_id = ?1 ORDER BY file");
        runs.bind(1, weak_id);
        const fs::path from = fs::path(package_path) / rel;
        while (runs.step()) {
          if (auto e = copy_result_file(from, dir, runs.col_text(0), runs.col_text(1), package_path)) return *e;
          ++copied;
        }
        if (!runs.ok()) return store_error(s, runs.rc(), "reading the weak-scaling result's runs");
      }
      if (copied == 0)
        return make_error(422, "no-runs",
                          "the weak-scaling result " + org + "/" + rel + " has no result files in the store (imported "
                          "before the store kept them, schema 17)",
                          "import " + org + "'s package again into a new store, or delete it from this one "
                          "and import it again, before publishing");
      pub.files += copied;
      orgs.insert(org);
      pub.results.push_back(PublishedResult{org, system, benchmark, "weak", "as submitted", 0, 0});
    }
    if (!q.ok()) return store_error(s, q.rc(), "reading the round's weak-scaling results");
  }
  pub.organisations = static_cast<int>(orgs.size());

  // The results table: each package scored as the summarizer scores it, as published here.
  // (MLPerf HPC: the weak-scaling table after the strong one, as the summarizer appends it to its CSV.)
  std::vector<rules::ScoreReport> scored;
  for (const auto& org : orgs) {
    rules::PackageReport report;
    std::string perr;
    if (!rules::check_package(*rs, facts, (staging / org).string(), rules::PackageOptions{}, &report, &perr))
      return io_error("cannot score the published package of " + org + ": " + perr);
    scored.push_back(rules::score_package(report, facts, rules::ScaleMode::Published));
  }
  std::vector<const rules::ScoreReport*> tables;
  for (const auto& sc : scored) tables.push_back(&sc);
  const std::string csv = tables.empty() ? std::string() : rules::summary_csv(tables);
  // The decisions, as the committee's report gives them.
  for (const char* format : {"md", "json"}) {
    Result<ReportText> rep = round_report(s, who, round.name, format);
    if (!rep.ok()) return rep.error();
    if (base::Status w = base::write_file((staging / (std::string("decisions.") + format)).string(), rep.value().text); !w.ok())
      return io_error(w.message);
  }
  if (base::Status w = base::write_file((staging / "results.csv").string(), csv); !w.ok()) return io_error(w.message);
  if (base::Status w = base::write_file((staging / kMarker).string(), round.name + "\n"); !w.ok()) return io_error(w.message);

  fs::path old;
  if (base::Status sw = base::swap_install_dir(staging, out, &old); !sw.ok()) return io_error(sw.message);
  cleanup.p = old;  // the earlier publication, if any
  return pub;
}

Response publication_answer(const Result<Publication>& r, const std::string& out) {
  if (!r.ok()) return error_response(r.error());
  const Publication& p = r.value();
  mllog::JsonWriter w(0, mllog::JsonText::kUtf8);
  w.begin_object().key("round").value(p.round).key("out").value(fs::absolute(out).lexically_normal().string());
  w.key("organisations").value(static_cast<long long>(p.organisations)).key("files").value(static_cast<long long>(p.files));
  w.key("results").begin_array();
  for (const auto& x : p.results) {
    w.begin_object().key("organisation").value(x.organisation).key("system").value(x.system).key("benchmark").value(x.benchmark);
    if (!x.scaling.empty()) w.key("scaling").value(x.scaling);
    w.key("status").value(x.status).key("factor");
    if (x.status == "normalised") w.value(x.factor); else w.null();
    w.key("decision");
    if (x.decision) w.value(x.decision); else w.null();
    w.end_object();
  }
  w.end_array().end_object();
  Response resp;
  resp.body = w.str();
  return resp;
}

}  // namespace referee::review
