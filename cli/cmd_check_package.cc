#include <algorithm>
#include <chrono>
#include <filesystem>
#include <cstdio>
#include <iostream>

#include "base/file.h"
#include "base/text.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "cli/output.h"
#include "rules/facts.h"
#include "rules/package.h"
#include "rules/source.h"

namespace referee::cli {

namespace {

std::string fmt(const char* f, double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, x);
  return buf;
}

void write_json(const rules::PackageReport& r, const rules::RuleSet& rs, const rules::RuleSource& src,
                std::ostream& os) {
  mllog::JsonWriter w;
  w.begin_object();
  w.key("schema").value("referee.check-package/1");
  w.key("referee_version").value(REFEREE_VERSION);
  w.key("ruleset").value(rs.id().id());
  // Names of files, folders and systems are UTF-8 (what people type); log text is read as latin-1.
  using mllog::JsonText;
  w.key("rules").begin_object().key("source").text(JsonText::kUtf8).value(src.root).text(JsonText::kLatin1)
      .key("origin").value(src.origin).key("sha256").value(rs.sha256()).end_object();
  w.key("package").text(JsonText::kUtf8).value(r.package).text(JsonText::kLatin1);
  w.key("verdict").value(r.pass ? "pass" : "fail");
  if (!r.errors.empty()) write_findings_json(w, "errors", r.errors);
  if (!r.warnings.empty()) write_findings_json(w, "warnings", r.warnings);
  if (!r.consortium_stops.empty())
    w.key("consortium_stops").text(JsonText::kUtf8).value(r.consortium_stops).text(JsonText::kLatin1);
  w.key("systems").begin_object();
  for (const auto& s : r.systems) {
    w.text(JsonText::kUtf8).key(s.name).text(JsonText::kLatin1).begin_object().key("valid").value(s.valid).key("errors").begin_array();
    for (const auto& e : s.errors) write_finding_json(w, e);
    w.end_array();
    if (!s.warnings.empty()) write_findings_json(w, "warnings", s.warnings);
    w.end_object();
  }
  w.end_object();
  w.key("benchmarks").begin_object();
  for (const auto& d : r.benchmarks) {
    w.text(JsonText::kUtf8).key(d.key()).text(JsonText::kLatin1).begin_object();
    if (!d.scaling.empty()) w.key("scaling").value(d.scaling);
    if (d.skipped) {
      w.key("skipped").value(true).end_object();
      continue;
    }
    w.key("division").value(d.division);
    w.key("verdict").value(d.pass ? "pass" : "fail");
    w.key("result_count").value(d.result_count);
    w.key("expected_count").value(d.expected_count);
    w.key("files").begin_object();
    for (const auto& f : d.files) {
      w.text(JsonText::kUtf8).key(f.name).text(JsonText::kLatin1).begin_object().key("compliant").value(f.verdict.compliant);
      write_findings_json(w, "errors", f.verdict.errors);
      if (!f.verdict.warnings.empty()) write_findings_json(w, "warnings", f.verdict.warnings);
      w.end_object();
    }
    w.end_object();
    if (d.seeds_checked) {
      w.key("seeds_ok").value(d.seeds_ok);
      if (d.seeds_bypassed) w.key("seeds_bypassed").value(true);
      if (!d.seed_errors.empty()) write_findings_json(w, "seed_errors", d.seed_errors);
    }
    if (d.rcp_checked) {
      const auto& c = d.rcp;
      w.key("rcp").begin_object();
      w.key("pass").value(c.pass);
      w.key("status").value(c.status);
      w.key("message").value(c.message);
      w.key("bypassed").value(c.bypassed);
      w.key("norm_factor").value(c.norm_factor);
      if (c.has_batch_size) {
        w.key("batch_size").value(c.batch_size);
        w.key("submission_batch_size").value(c.submission_batch_size);
      }
      if (c.evaluated) {
        w.key("rcp_mean").value(c.rcp_mean);
        w.key("rcp_stdev").value(c.rcp_stdev);
        w.key("max_speedup").value(c.max_speedup);
        w.key("min_epochs").value(c.min_epochs);
        w.key("submission_mean_epochs").value(c.submission_mean);
        if (c.too_few_runs) w.key("too_few_runs").value(true);
      }
      if (!c.run_epochs.empty()) {
        w.key("run_epochs").begin_array();
        for (double e : c.run_epochs) w.value(e);
        w.end_array();
      }
      w.end_object();
    }
    if (d.power.present) {
      w.key("power").begin_object();
      w.key("failing").begin_array();
      for (const auto& n : d.power.failing) w.value(n);
      w.end_array();
      write_findings_json(w, "errors", d.power.errors);
      if (!d.power.consortium_stops.empty()) w.key("consortium_stops").value(d.power.consortium_stops);
      w.end_object();
    }
    write_findings_json(w, "errors", d.errors);
    write_findings_json(w, "warnings", d.warnings);
    if (!d.consortium_stops.empty())
      w.key("consortium_stops").text(JsonText::kUtf8).value(d.consortium_stops).text(JsonText::kLatin1);
    w.end_object();
  }
  w.end_object();
  w.end_object();
  os << w.str() << "\n";
}

}  // namespace

void print_package_report(const rules::PackageReport& r, const rules::RuleSet& rs, const rules::RuleSource& src,
                          bool verbose, std::ostream& os) {
  bool color = use_color(os);
  os << "referee check-package " << r.path << " (" << rs.id().id() << ", rules from " << src.origin << ")\n";
  int bad_sys = 0;
  for (const auto& s : r.systems) {
    if (s.valid) continue;
    ++bad_sys;
    os << paint(color, "31", "FAIL") << " systems/" << base::one_line(s.name) << "\n";
    for (const auto& e : s.errors) print_finding(os, "systems/" + base::one_line(s.name), e, "  ");
  }
  for (const auto& s : r.systems)
    for (const auto& e : s.warnings)
      if (verbose || e.rule == "files: link") {  // a file read from outside the package: shown without -v
        os << paint(color, "33", "warning") << " systems/" << base::one_line(s.name) << ": " << base::one_line(e.message)
           << "\n";
        if (!e.hint.empty()) os << "      hint:     " << base::one_line(e.hint) << "\n";
      }
  for (const auto& e : r.errors) {
    os << paint(color, "31", "FAIL") << " ";
    print_finding(os, "results", e, "  ");
  }
  for (const auto& e : r.warnings) {
    os << paint(color, "33", "warning") << " ";
    print_finding(os, "results", e, "  ");
  }
  os << "systems: " << r.systems.size() << " checked, " << (r.systems.size() - static_cast<size_t>(bad_sys)) << " valid\n";
  int failed = 0, checked = 0;
  for (const auto& d : r.benchmarks) {
    // Names as one line each: a folder or file named with a line break must not start a line of its own.
    std::string name = base::one_line(d.key());
    if (d.skipped) {
      os << paint(color, "33", "SKIP") << " " << name << ": not a benchmark of " << rs.id().id() << "\n";
      for (const auto& w : d.warnings)
        if (w.rule == "benchmarks" && !w.hint.empty()) os << "      hint:     " << w.hint << "\n";
      continue;
    }
    ++checked;
    if (!d.pass) ++failed;
    int bad = 0;
    for (const auto& f : d.files) bad += f.verdict.compliant ? 0 : 1;
    os << (d.pass ? paint(color, "32", "PASS") : paint(color, "31", "FAIL")) << " " << name << "  " << d.division
       << "  " << d.result_count << "/" << (d.scaling == "weak" ? ">=" : "") << d.expected_count << " files";
    if (bad) os << " (" << bad << " non-compliant)";
    if (d.seeds_checked) os << "  seeds " << (d.seeds_bypassed ? "bypassed" : d.seeds_ok ? "ok" : "FAIL");
    if (d.rcp_checked) {
      const auto& c = d.rcp;
      os << "  RCP " << c.status << (c.pass ? "" : " FAIL") << (c.bypassed ? " (bypassed)" : "");
      if (c.evaluated && c.too_few_runs)
        os << " (" << c.run_epochs.size() << " runs: too few for an olympic mean)";
      else if (c.evaluated)
        os << " (mean " << fmt("%.6g", c.submission_mean) << " vs min " << fmt("%.6g", c.rcp_mean / c.max_speedup)
           << ", factor " << fmt("%.4f", c.norm_factor) << ")";
    }
    if (d.power.present)
      os << "  power " << (d.files.size() - std::min(d.files.size(), d.power.failing.size())) << "/" << d.files.size()
         << " runs ok";
    os << "\n";
    for (const auto& e : d.errors) {
      os << "  " << base::one_line(e.rule) << ": " << base::one_line(e.message) << "\n";
      if (!e.expected.empty()) os << "      expected: " << base::one_line(e.expected) << "\n";
      if (!e.found.empty()) os << "      found:    " << base::one_line(e.found) << "\n";
      if (!e.hint.empty()) os << "      hint:     " << base::one_line(e.hint) << "\n";
    }
    for (const auto& e : d.seed_errors) os << "  seeds: " << base::one_line(e.message) << "\n";
    for (const auto& e : d.power.errors) print_finding(os, name, e, "  ");
    if (!d.power.consortium_stops.empty())
      os << "  note: the consortium's package checker stops with a traceback on this folder (" << d.power.consortium_stops
         << "); referee counts the runs above as not complying\n";
    if (!d.consortium_stops.empty())
      os << "  note: the consortium's current package checker cannot check this directory: " << d.consortium_stops
         << "; the verdict above follows the rules of " << rs.id().id() << "\n";
    for (const auto& f : d.files) {
      if (f.verdict.compliant) continue;
      for (const auto& e : f.verdict.errors) print_finding(os, name + "/" + base::one_line(f.name), e, "  ");
    }
    // A division that silently turns checks off, a result file read from outside the package, and a
    // scaling.json other than the consortium's RCP pass leaves, are shown without -v.
    for (const auto& e : d.warnings)
      if (verbose || e.rule == "division" || e.rule == "files: link" || e.rule == "scaling.json")
        os << "  " << paint(color, "33", "warning") << " " << e.rule << ": " << base::one_line(e.message) << "\n";
  }
  auto count = [](size_t n, const char* one, const char* many) { return std::to_string(n) + " " + (n == 1 ? one : many); };
  os << "verdict: " << (r.pass ? paint(color, "32", "PASS") : paint(color, "31", "FAIL")) << " ("
     << count(static_cast<size_t>(checked), "benchmark directory", "benchmark directories") << ", " << failed << " failing; "
     << count(static_cast<size_t>(bad_sys), "invalid system file", "invalid system files") << "; "
     << count(static_cast<size_t>(r.files), "result file", "result files") << ", " << fmt("%.1f", r.bytes / 1e6) << " MB)\n";
  if (!r.consortium_stops.empty())
    os << "note: the consortium's current package checker cannot check this package: " << r.consortium_stops
       << "; referee's verdict follows the rules of " << rs.id().id() << "\n";
  int stops = 0;
  for (const auto& d : r.benchmarks) stops += !d.skipped && !d.consortium_stops.empty() ? 1 : 0;
  if (stops)
    os << "note: the consortium's current package checker stops with a traceback on " << stops << " of these directories "
       << "and so gives this package no verdict; referee's verdict there follows the rules of " << rs.id().id() << "\n";
}

Command check_package_command() {
  return {"check-package", "Check a whole submission package <org>/{systems,results}",
          [](CLI::App& sub) -> std::function<int()> {
            struct Opts {
              std::vector<std::string> dirs;
              std::string ruleset, rules;
              int jobs = 0;
              bool json = false, verbose = false, rcp_bypass = false, seed_bypass = false, write_scaling = false;
            };
            auto o = std::make_shared<Opts>();
            sub.add_option("ORG_DIR", o->dirs,
                           "organisation folders (each holds systems/ and results/), or a folder holding them (a round)")
                ->required();
            add_ruleset_options(sub, &o->ruleset, &o->rules);
            add_jobs_option(sub, &o->jobs);
            sub.add_flag("--json", o->json, "print JSON (schema referee.check-package/1)");
            sub.add_flag("-v,--verbose", o->verbose, "also print warnings");
            sub.add_flag("--rcp-bypass", o->rcp_bypass, "accept failing RCP checks (as the consortium's --rcp-bypass)");
            sub.add_flag("--seed-checker-bypass", o->seed_bypass, "skip the seed checker");
            sub.add_flag("--write-scaling", o->write_scaling,
                         "write scaling.json where the RCP normalisation applies (the consortium's checker always does)");
            return [o]() -> int {
              LoadedRules loaded;
              if (!load_rules("check-package", o->ruleset, o->rules, &loaded)) return kCannotCheck;
              const rules::PackageOptions opt{
                  .jobs = job_count(o->jobs), .rcp_bypass = o->rcp_bypass, .seed_bypass = o->seed_bypass};
              std::string error;
              // A folder without results/ is taken as a round: its organisation folders are checked.
              std::vector<std::string> packages;
              for (const auto& d : o->dirs) {
                std::error_code ec;
                if (!std::filesystem::is_directory(std::filesystem::path(d) / "results", ec) &&
                    std::filesystem::is_directory(d, ec)) {
                  std::vector<std::string> found, passed_over;
                  for (const auto& e : std::filesystem::directory_iterator(d, ec)) {
                    // A folder that cannot be looked into (no permission, a link loop) is taken
                    // for a package: the check then says why it cannot be read.
                    std::error_code eec, rec;
                    const bool dir = e.is_directory(eec);
                    if (!base::read_error(eec) && !dir) continue;
                    if (base::read_error(eec) || std::filesystem::is_directory(e.path() / "results", rec) ||
                        base::read_error(rec))
                      found.push_back(e.path().string());
                    else if (e.path().filename().string()[0] != '.')
                      passed_over.push_back(e.path().string());
                  }
                  std::sort(found.begin(), found.end());
                  std::sort(passed_over.begin(), passed_over.end());
                  if (!found.empty()) {
                    for (const auto& p : passed_over)
                      std::cerr << "referee check-package: " << p << " has no results/ folder: not a package, passed over\n";
                    packages.insert(packages.end(), found.begin(), found.end());
                    continue;
                  }
                }
                packages.push_back(d);
              }
              int rc = kPass;
              bool many = packages.size() > 1;
              if (o->json && many) std::cout << "[\n";
              // The packages of a round share the threads: checked together, then reported in order.
              auto outcomes = rules::check_packages(*loaded.ruleset, loaded.facts, packages, opt);
              size_t printed = 0;
              for (size_t i = 0; i < packages.size(); ++i) {
                if (!outcomes[i].ok) {
                  std::cerr << "referee check-package: " << outcomes[i].error << "\n";
                  rc = kCannotCheck;
                  if (o->json && many) {
                    // In the array too, so that it has one entry for each package.
                    if (printed++) std::cout << ",\n";
                    mllog::JsonWriter w(1, mllog::JsonText::kUtf8);
                    w.begin_object().key("schema").value("referee.check-package/1").key("path").value(packages[i]);
                    w.key("verdict").value("error").key("error").value(outcomes[i].error).end_object();
                    std::cout << w.str() << "\n";
                  }
                  continue;
                }
                const rules::PackageReport& report = outcomes[i].report;
                if (o->json) {
                  if (many && printed++) std::cout << ",\n";
                  write_json(report, *loaded.ruleset, loaded.source, std::cout);
                } else {
                  if (i) std::cout << "\n";
                  print_package_report(report, *loaded.ruleset, loaded.source, o->verbose, std::cout);
                }
                if (o->write_scaling) {
                  auto written = rules::write_scaling_files(report, &error);
                  for (const auto& p : written) std::cerr << p << "\n";
                  if (!error.empty()) {
                    std::cerr << "referee check-package: " << error << "\n";
                    return kCannotCheck;
                  }
                }
                if (!report.pass && rc == kPass) rc = kFail;
              }
              if (o->json && many) std::cout << "]\n";
              if (rules_broken("check-package", *loaded.ruleset)) return kCannotCheck;
              return rc;
            };
          }};
}

}  // namespace referee::cli
