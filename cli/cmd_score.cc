#include <cmath>
#include <cstdio>
#include <iostream>

#include "base/text.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "cli/output.h"
#include "rules/facts.h"
#include "rules/package.h"
#include "rules/score.h"
#include "rules/source.h"
#include "submissions/queries.h"

namespace referee::cli {

namespace {

std::string num(double x, const char* f = "%.4f") {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, x);
  return buf;
}

// A run's minutes; null where it has none (a run not compliant is not timed, a time_ms of NaN gives none).
void run_minutes(mllog::JsonWriter& w, const rules::RunScore& run) {
  w.key("minutes");
  if (run.drop_kind == "noncompliant" || !std::isfinite(run.minutes)) w.null();  // NaN is not JSON
  else w.value(run.minutes);
}

void write_json(const rules::ScoreReport& r, const rules::RuleSet& rs, const rules::RuleSource& src, std::ostream& os) {
  // Names and the fields of system descriptions are UTF-8 (the summarizer reads them with json.load); a
  // byte that is not part of UTF-8 is taken as its latin-1 character.
  mllog::JsonWriter w(1, mllog::JsonText::kUtf8);
  w.begin_object();
  w.key("schema").value("referee.score/1");
  w.key("referee_version").value(REFEREE_VERSION);
  w.key("ruleset").value(rs.id().id());
  w.key("rules").begin_object().key("source").value(src.root).key("sha256").value(rs.sha256()).end_object();
  w.key("package").value(r.package);
  w.key("scaling").value(r.mode == rules::ScaleMode::Published ? "published" : "pipeline");
  w.key("systems").begin_object();
  for (const auto& row : r.rows) {
    w.key(row.system_file).begin_object();
    if (!row.complete) w.key("error").value(row.error);
    if (!row.consortium_stops.empty()) w.key("consortium_stops").value(row.consortium_stops);
    w.key("division").value(row.division).key("availability").value(submissions::normalize_availability(row.availability));
    w.key("submitter").value(row.submitter).key("system").value(row.system);
    w.key("number_of_nodes").value(row.number_of_nodes);
    w.key("host_processor_model_name").value(row.host_processor_model_name);
    w.key("host_processors_count").value(row.host_processors_count);
    w.key("accelerator_model_name").value(row.accelerator_model_name);
    w.key("accelerators_count").value(row.accelerators_count);
    w.key("framework").value(row.framework).key("notes").value(row.notes).key("private_id").value(row.private_id);
    w.key("details_url").value(row.details_url).key("code_url").value(row.code_url);
    w.key("benchmarks").begin_object();
    for (const auto& s : row.scores) {
      if (s.scaling == "weak") continue;
      w.key(s.benchmark).begin_object();
      if (!s.scaling.empty()) w.key("scaling").value(s.scaling);
      if (s.has_score) w.key("score_minutes").value(s.score);
      else w.key("score_minutes").null().key("note").value(s.note);
      w.key("unscaled_minutes").value(s.unscaled);
      w.key("factor").value(s.factor).key("factor_source").value(s.factor_source);
      if (s.has_published_factor) w.key("published_factor").value(s.published_factor);
      w.key("pipeline_factor").value(s.pipeline_factor);
      if (s.has_power) {
        if (s.has_energy) w.key("energy_joules").value(s.energy_j).key("unscaled_energy_joules").value(s.unscaled_energy_j);
        else w.key("energy_joules").null().key("energy_note").value(s.energy_note);
        if (!s.energy_warnings.empty()) {
          w.key("energy_warnings").begin_array();
          for (const auto& x : s.energy_warnings) w.value(x);
          w.end_array();
        }
      }
      w.key("runs").begin_array();
      for (const auto& run : s.runs) {
        w.begin_object().key("file").value(run.file);
        run_minutes(w, run);
        w.key("counted").value(run.counted);
        if (!run.dropped.empty()) w.key("dropped").value(run.dropped);
        if (!run.warning.empty())
          w.key("run_starts").value(run.run_starts).key("minutes_from_first_run_start").value(run.minutes_from_first_start)
              .key("warning").value(run.warning);
        if (run.has_energy) w.key("energy_joules").value(run.energy_j);
        else if (!run.energy_error.empty()) w.key("energy_error").value(run.energy_error);
        w.end_object();
      }
      w.end_array().end_object();
    }
    w.end_object();
    // MLPerf HPC weak scaling: the summarizer's weak table, per benchmark.
    bool any_weak = false;
    for (const auto& s : row.scores) any_weak = any_weak || s.scaling == "weak";
    if (any_weak) {
      w.key("weak").begin_object();
      for (const auto& s : row.scores) {
        if (s.scaling != "weak") continue;
        w.key(s.benchmark).begin_object();
        // The summarizer's weak table has a row only when enough models count: no figures
        // otherwise (the note says how many counted).
        if (s.has_score) w.key("time_to_train_all_minutes").value(s.time_to_train_all_minutes);
        else w.key("time_to_train_all_minutes").null().key("note").value(s.note);
        if (s.has_score) w.key("number_of_models").value(s.number_of_models);
        else w.key("number_of_models").null();
        if (s.has_score && s.has_instance_scale) w.key("instance_scale").value(s.instance_scale);
        else w.key("instance_scale").null();
        if (!s.consortium_stops.empty()) w.key("consortium_stops").value(s.consortium_stops);
        w.key("runs").begin_array();
        for (const auto& run : s.runs) {
          w.begin_object().key("file").value(run.file);
          run_minutes(w, run);
          w.key("counted").value(run.counted);
          if (!run.dropped.empty()) w.key("dropped").value(run.dropped);
          if (!run.warning.empty()) w.key("warning").value(run.warning);
          w.end_object();
        }
        w.end_array().end_object();
      }
      w.end_object();
    }
    w.end_object();
  }
  w.end_object().end_object();
  os << w.str() << "\n";
}

void print_human(const rules::ScoreReport& r, std::ostream& os) {
  os << "referee score " << r.package << " (" << r.ruleset << ", "
     << (r.mode == rules::ScaleMode::Published ? "scaling as published" : "scaling as the consortium's pipeline recomputes it")
     << ")\n";
  for (const auto& row : r.rows) {
    if (!row.complete && row.division.empty() && row.accelerator_model_name.empty() && row.framework.empty()) {
      // No description to take the fields from: the reason is the header.
      os << base::one_line(row.system_file) << ": no system fields\n  error: " << base::one_line(row.error) << "\n";
    } else {
      // The description's fields as one line each: a field with a line break must not write lines of the report.
      using base::one_line;
      os << one_line(row.system_file) << ": " << one_line(row.division) << ", "
         << one_line(submissions::normalize_availability(row.availability)) << ", " << row.accelerators_count
         << " x " << one_line(row.accelerator_model_name) << " (" << one_line(row.number_of_nodes)
         << (row.number_of_nodes == "1" ? " node), " : " nodes), ") << one_line(row.framework) << "\n";
      if (!row.complete) os << "  error: " << one_line(row.error) << "\n";
    }
    if (!row.consortium_stops.empty())
      os << "  note: " << base::one_line(row.consortium_stops) << " and writes no table; referee's figures follow the rules\n";
    for (const auto& s : row.scores) {
      if (s.scaling == "weak") {
        // MLPerf HPC weak scaling: many models at once.
        os << "  weak/" << base::one_line(s.benchmark) << ": ";
        if (s.has_score)
          os << s.number_of_models << " models of "
             << (s.has_instance_scale ? std::to_string(s.instance_scale) : std::string("?")) << " accelerators in "
             << num(s.time_to_train_all_minutes) << " min\n";
        else
          os << "no score (" << base::one_line(s.note) << ")\n";
        for (const auto& run : s.runs)
          if (!run.counted || !run.warning.empty())
            os << "    " << base::one_line(run.file) << ": " << base::one_line(run.dropped.empty() ? run.warning : run.dropped) << "\n";
        if (!s.consortium_stops.empty())
          os << "    note: the consortium's result summarizer stops with a traceback here (" << s.consortium_stops
             << "); referee's figures follow the rules\n";
        continue;
      }
      os << "  " << (s.scaling.empty() ? "" : s.scaling + "/") << base::one_line(s.benchmark) << ": ";
      if (!s.has_score) {
        os << "no score (" << base::one_line(s.note) << ")\n";
      } else {
        os << num(s.score) << " min";
        if (s.factor != 1.0) os << " = " << num(s.unscaled) << " x " << num(s.factor, "%.6g") << " (" << s.factor_source << ")";
        os << "\n";
        if (!(s.factor > 0))
          os << "    warning: a factor of " << num(s.factor, "%.6g") << " (" << s.factor_source
             << ") makes no time to train; the summarizer applies it all the same\n";
      }
      if (s.has_power) {
        if (s.has_energy) {
          os << "    energy to train: " << num(s.energy_j / 1e6, "%.6f") << " MJ";
          if (s.factor != 1.0) os << " = " << num(s.unscaled_energy_j / 1e6, "%.6f") << " x " << num(s.factor, "%.6g");
          os << " (" << num(s.energy_j, "%.3f") << " J)\n";
        } else {
          os << "    energy to train: none (" << s.energy_note << ")\n";
        }
        for (const auto& w : s.energy_warnings) os << "    energy warning: " << w << "\n";
      }
      os << "    runs:";
      for (const auto& run : s.runs) {
        os << " " << base::one_line(run.file) << "=" << (run.dropped.rfind("non-compliant", 0) == 0 ? std::string("-") : num(run.minutes, "%.3f"));
        // Without a score no run is counted, and none is dropped as fastest or slowest.
        if (!run.counted && (s.has_score || run.dropped.rfind("non-compliant", 0) == 0))
          os << "[" << (run.dropped.rfind("non-compliant", 0) == 0 ? "non-compliant" : run.dropped.rfind("fastest", 0) == 0 ? "fastest" : "slowest") << "]";
      }
      os << "\n";
      for (const auto& run : s.runs)
        if (!run.warning.empty()) os << "    warning: " << base::one_line(run.file) << ": " << base::one_line(run.warning) << "\n";
      for (const auto& run : s.runs)
        if (run.dropped.rfind("non-compliant", 0) == 0 && run.dropped != "non-compliant")  // with its reason
          os << "    not counted: " << base::one_line(run.file) << ": " << base::one_line(run.dropped) << "\n";
      if (s.has_power) {
        os << "    energy (MJ):";
        for (const auto& run : s.runs)
          os << " " << base::one_line(run.file) << "=" << (run.has_energy ? num(run.energy_j / 1e6, "%.3f") : std::string("-"));
        os << "\n";
      }
      bool differs = (s.has_published_factor ? s.published_factor : 1.0) != s.pipeline_factor;
      if (differs && s.has_score) {
        double pub = s.unscaled * (s.has_published_factor ? s.published_factor : 1.0);
        double pipe = s.unscaled * s.pipeline_factor;
        os << "    published " << num(pub) << " min (factor " << num(s.has_published_factor ? s.published_factor : 1.0, "%.6g")
           << (s.has_published_factor ? " from scaling.json" : ", none") << "), pipeline today " << num(pipe)
           << " min (factor " << num(s.pipeline_factor, "%.6g") << ": ";
        os << (s.pipeline_factor != 1.0 ? "the RCP pass's normalisation"
                                         : "the RCP pass removes scaling.json when the RCP check fails or needs no normalisation")
           << ")\n";
      }
    }
  }
}

}  // namespace

Command score_command() {
  return {"score", "Score a package as the consortium's result summarizer does", [](CLI::App& sub) -> std::function<int()> {
            struct Opts {
              std::string dir, ruleset, rules;
              int jobs = 0;
              bool csv = false, csv_detailed = false, json = false, rescale = false;
            };
            auto o = std::make_shared<Opts>();
            sub.add_option("ORG_DIR", o->dir, "the organisation's folder (holds systems/ and results/)")->required();
            add_ruleset_options(sub, &o->ruleset, &o->rules);
            add_jobs_option(sub, &o->jobs);
            auto* csv = sub.add_flag("--csv", o->csv, "the consortium's summary CSV");
            auto* detailed = sub.add_flag("--csv-detailed", o->csv_detailed,
                                          "the consortium's detailed CSV: per benchmark time_to_train, Energy, GBS, "
                                          "samples_to_converge, RCP, rcp_scaling_factor")->excludes(csv);
            sub.add_flag("--json", o->json, "JSON (schema referee.score/1)")->excludes(csv)->excludes(detailed);
            sub.add_flag("--rescale", o->rescale,
                         "apply the factors the consortium's pipeline computes today (its RCP pass replaces scaling.json) "
                         "instead of the published scaling.json files; nothing is written");
            return [o]() -> int {
              LoadedRules loaded;
              if (!load_rules("score", o->ruleset, o->rules, &loaded)) return kCannotCheck;
              const rules::PackageOptions opt{.jobs = job_count(o->jobs)};
              std::string error;
              rules::PackageReport report;
              if (!rules::check_package(*loaded.ruleset, loaded.facts, o->dir, opt, &report, &error)) {
                std::cerr << "referee score: " << error << "\n";
                return kCannotCheck;
              }
              auto scores = rules::score_package(report, loaded.facts, o->rescale ? rules::ScaleMode::Pipeline : rules::ScaleMode::Published);
              if (o->csv || o->csv_detailed)
                // A system the CSV leaves out, or one the summarizer stops on: said here, where the table
                // cannot say it.
                for (const auto& row : scores.rows) {
                  if (!row.complete && row.consortium_stops.empty())
                    std::cerr << "referee score: " << base::one_line(row.system_file) << " is left out of the table, as the consortium's "
                              << "summarizer leaves it out: " << row.error << "\n";
                  else if (!row.complete)
                    std::cerr << "referee score: " << base::one_line(row.system_file) << " is left out of the table (" << row.error
                              << "); " << row.consortium_stops << " and writes no table at all\n";
                  else if (!row.consortium_stops.empty())
                    std::cerr << "referee score: note: " << row.consortium_stops << " and writes no table at all\n";
                }
              if (o->csv) std::cout << rules::summary_csv({&scores});  // HPC: the weak-scaling table follows
              else if (o->csv_detailed) {
                // MLPerf HPC: the detailed table holds strong-scaling results only; the
                // summarizer writes no detailed file for a package of weak-scaling results.
                if (loaded.ruleset->id().usage == "hpc" && rules::scores_csv_detailed(scores, false).empty())
                  std::cerr << "referee score: no strong-scaling results, so no detailed table (it holds strong-scaling "
                               "results only; the consortium's summarizer writes no detailed file either); --csv gives "
                               "the weak-scaling table\n";
                else
                  std::cout << rules::scores_csv_detailed(scores, true);
              }
              else if (o->json) write_json(scores, *loaded.ruleset, loaded.source, std::cout);
              else print_human(scores, std::cout);
              if (rules_broken("score", *loaded.ruleset)) return kCannotCheck;
              return kPass;
            };
          }};
}

}  // namespace referee::cli
