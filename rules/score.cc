#include "rules/score.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/file.h"
#include "base/text.h"
#include "mllog/json_writer.h"
#include "rules/interp.h"
#include "rules/power.h"
#include "rules/rcp.h"
#include "rules/scoring.h"

namespace fs = std::filesystem;

namespace referee::rules {

namespace {

// A JSON file of the package; *why says what is wrong when *ok is false (unread: the
// reason; not JSON: where it stops).
Value read_json_file(const fs::path& p, bool* ok, std::string* why = nullptr) {
  std::string text;
  if (base::Status r = base::read_regular_file(p, &text); !r.ok()) {
    *ok = false;
    if (why) *why = r.message;
    return Value();
  }
  std::string err;
  Value v = value_from_json(text, ok, &err);
  if (!*ok && why) *why = "is not JSON" + (err.empty() ? "" : " (" + err + ")");
  return v;
}

// A field of a system description as the summary prints it; a missing one
// is named in *missing.
std::string field_str(const Value& d, const char* k, std::vector<std::string>* missing) {
  Value* v = d.d().find_str(k);
  if (!v) {
    if (std::find(missing->begin(), missing->end(), k) == missing->end()) missing->push_back(k);
    return "";
  }
  return py_str(*v);
}

// A count of a system description; a missing one is named in *missing, one
// that is not an integer in *not_int.
long long field_int(const Value& d, const char* k, std::vector<std::string>* missing, std::vector<std::string>* not_int) {
  Value* v = d.d().find_str(k);
  if (!v) {
    if (std::find(missing->begin(), missing->end(), k) == missing->end()) missing->push_back(k);
    return 0;
  }
  if (v->kind == VKind::Int) return v->i;
  if (v->kind == VKind::Float) return static_cast<long long>(v->f);
  if (v->kind == VKind::Str) {
    try {
      size_t used = 0;
      long long x = std::stoll(v->s(), &used);
      if (used == v->s().size()) return x;
    } catch (...) {
    }
  }
  not_int->push_back(k);
  return 0;
}

// "3.1.0" -> "3.1", "3.0.0" -> "3.0", as the summarizer shortens it.
std::string short_round(const std::string& version) {
  std::string head = version.substr(0, 3), tail = version.substr(3);
  std::string out;
  for (size_t i = 0; i < tail.size();) {
    if (tail.compare(i, 2, ".0") == 0) {
      i += 2;
      continue;
    }
    out += tail[i++];
  }
  return head + out;
}

// An MLPerf HPC weak-scaling directory, as the summarizer's
// _compute_weak_score_standalone: every compliant run with a run_start and a
// run_stop is a model; the time is from the earliest run_start to the latest
// run_stop among them; each model's instance scale must agree.
void score_weak(const BenchmarkDir& d, int required, BenchmarkScore* bs) {
  // As the summarizer's min() and max() from +inf and -inf: a NaN time never
  // replaces the figure so far.
  double first_start = std::numeric_limits<double>::infinity(), last_stop = -first_start;
  for (const auto& f : d.files) {
    RunScore r;
    r.file = f.name;
    if (!f.verdict.compliant || f.parse_errors || !f.has_times) {
      ++bs->noncompliant;
      r.dropped = !f.verdict.compliant && !f.verdict.errors.empty() ? "non-compliant: " + f.verdict.errors[0].message
                  : f.parse_errors                                   ? "non-compliant: lines that do not parse"
                  : !f.verdict.compliant                             ? "non-compliant"
                                                                     : "no run_start and run_stop to time it by";
      r.drop_kind = "noncompliant";
      bs->runs.push_back(r);
      continue;
    }
    r.minutes = (f.run_stop_ms - f.run_start_ms) / 60 / 1000;
    r.counted = true;
    if (f.run_start_ms < first_start) first_start = f.run_start_ms;
    if (f.run_stop_ms > last_stop) last_stop = f.run_stop_ms;
    ++bs->number_of_models;
    const InstanceScale& s = f.instance;
    if (!s.ok) {
      r.warning = "no instance scale: " + s.error;
      if (s.stops && bs->consortium_stops.empty())
        bs->consortium_stops = f.name + ": " + s.error + " (the summarizer's int() raises and it stops)";
    } else if (!bs->has_instance_scale) {
      bs->has_instance_scale = true;
      bs->instance_scale = s.scale;
    } else if (s.scale != bs->instance_scale && bs->consortium_stops.empty()) {
      r.warning = "instance scale " + std::to_string(s.scale) + ", where the first model's is " +
                  std::to_string(bs->instance_scale);
      bs->consortium_stops = f.name + ": instance scale " + std::to_string(s.scale) + " differs from the " +
                             std::to_string(bs->instance_scale) + " of the runs before it (the summarizer asserts they agree)";
    }
    bs->runs.push_back(r);
  }
  std::stable_sort(bs->runs.begin(), bs->runs.end(), [](const RunScore& a, const RunScore& b) {
    if (a.dropped.empty() != b.dropped.empty()) return a.dropped.empty();
    return a.minutes < b.minutes;
  });
  const double minutes = (last_stop - first_start) / 60 / 1000;
  if (bs->number_of_models >= required && bs->number_of_models > 0 && !std::isfinite(minutes)) {
    // No run_start or run_stop with a finite time (the summarizer prints -inf or nan).
    bs->note = "no finite time from the models' run_start and run_stop lines (" + std::to_string(bs->number_of_models) +
               " models)";
  } else if (bs->number_of_models >= required && bs->number_of_models > 0) {
    bs->time_to_train_all_minutes = minutes;
    bs->score = bs->unscaled = bs->time_to_train_all_minutes;
    bs->has_score = true;
  } else {
    bs->note = "Not enough converging weak scaling runs: " + std::to_string(bs->number_of_models) + " models, at least " +
               std::to_string(required) + " needed";
  }
}

}  // namespace

ScalingFile read_scaling_json(const fs::path& dir, const fs::path& package_root) {
  ScalingFile out;
  const fs::path sj = dir / "scaling.json";
  std::error_code ec;
  out.present = fs::exists(fs::symlink_status(sj, ec));
  if (out.present && !base::resolves_within(sj, package_root, &out.real, true)) {
    // Not read: a link to a file outside the package (the store reads nothing outside a package).
    out.outside = true;
    out.problem = "scaling.json leads outside the package (to " + out.real.string() + "): not read; copy the file "
                  "into the package";
    return out;
  }
  // As the summarizer's os.path.isfile: a link that leads nowhere is no file.
  out.present = fs::exists(sj, ec) || base::read_error(ec);
  if (!out.present) return out;
  // A scaling.json the summarizer cannot use stops it with a traceback (JSONDecodeError, KeyError,
  // TypeError): no factor rather than one silently taken as 1.
  bool ok = false;
  std::string why;
  Value j = read_json_file(sj, &ok, &why);
  Value* f = ok && j.kind == VKind::Dict ? j.d().find_str("scaling_factor") : nullptr;
  if (!ok) out.problem = "scaling.json " + why;
  else if (j.kind != VKind::Dict) out.problem = "scaling.json holds JSON that is not an object";
  else if (!f) out.problem = "scaling.json has no \"scaling_factor\"";
  else if (!f->is_num())
    out.problem = "scaling.json's scaling_factor is " + (f->kind == VKind::None ? std::string("null") : py_repr(*f)) +
                  ", not a number";
  else if (!std::isfinite(f->as_double()))
    out.problem = "scaling.json's scaling_factor is " + py_repr(*f) + ", not a finite number";
  out.usable = out.problem.empty();
  if (out.usable) out.factor = f->as_double();
  return out;
}

ScoreReport score_package(const PackageReport& report, const RoundFacts& facts, ScaleMode mode) {
  ScoreReport out;
  out.package = report.package;
  out.ruleset = facts.ruleset;
  out.mode = mode;
  for (const auto& b : facts.benchmarks) out.benchmarks.push_back(b.name);
  std::string version = facts.ruleset.substr(facts.ruleset.find('-') + 1);
  std::string usage = facts.ruleset.substr(0, facts.ruleset.find('-'));
  std::string prefix = "https://github.com/mlcommons/" + usage + "_results_v" + short_round(version);

  std::error_code root_ec;
  const fs::path package_root = fs::weakly_canonical(report.path, root_ec);
  std::vector<std::string> systems;
  for (const auto& d : report.benchmarks)
    if (std::find(systems.begin(), systems.end(), d.system) == systems.end()) systems.push_back(d.system);

  for (const auto& sys : systems) {
    SystemRow row;
    row.system_file = sys;
    bool ok = false;
    std::string why;
    const fs::path desc_path = fs::path(report.path) / "systems" / (sys + ".json");
    fs::path desc_real;
    Value desc;
    std::error_code lec;
    if (fs::exists(fs::symlink_status(desc_path, lec)) &&
        !base::resolves_within(desc_path, package_root, &desc_real, true))
      why = "leads outside the package (to " + desc_real.string() + "): not read";
    else
      desc = read_json_file(desc_path, &ok, &why);
    if (!ok || desc.kind != VKind::Dict) {
      row.complete = false;
      row.error = "systems/" + sys + ".json " + (ok ? std::string("holds JSON that is not an object") : why) +
                  ": the summary takes the system's fields from it (one JSON object with the required fields)";
      // A missing description: the summarizer prints the error and leaves the system out. Anything else
      // it reads stops it.
      if (why != "is missing")
        row.consortium_stops = "the consortium's result summarizer reads systems/" + sys + ".json and stops with " +
                               (ok ? "a TypeError (JSON that is not an object)"
                                : why.rfind("is a folder", 0) == 0 ? "IsADirectoryError"
                                : why.rfind("is not JSON", 0) == 0 ? "JSONDecodeError"
                                                                   : "an error reading the file");
    } else {
      std::vector<std::string> missing, not_int;
      row.division = field_str(desc, "division", &missing);
      row.availability = field_str(desc, "status", &missing);
      row.submitter = field_str(desc, "submitter", &missing);
      row.system = field_str(desc, "system_name", &missing);
      row.host_processor_model_name = field_str(desc, "host_processor_model_name", &missing);
      row.number_of_nodes = field_str(desc, "number_of_nodes", &missing);
      long long nodes = field_int(desc, "number_of_nodes", &missing, &not_int);
      row.host_processors_count = field_int(desc, "host_processors_per_node", &missing, &not_int) * nodes;
      row.accelerator_model_name = field_str(desc, "accelerator_model_name", &missing);
      row.accelerators_count = field_int(desc, "accelerators_per_node", &missing, &not_int) * nodes;
      row.framework = field_str(desc, "framework", &missing);
      std::string hw = field_str(desc, "hw_notes", &missing), sw = field_str(desc, "sw_notes", &missing);
      row.notes = hw.empty() ? sw : sw.empty() ? hw : hw + ";" + sw;
      if (!missing.empty() || !not_int.empty()) {
        row.complete = false;
        // Its handler of the KeyError or ValueError names a variable it never set: NameError.
        row.consortium_stops = "the consortium's result summarizer stops with a NameError in its handler of the "
                               "missing or unreadable field";
        auto names = [](const std::vector<std::string>& v) {
          std::string out;
          for (size_t i = 0; i < v.size(); ++i) out += (i ? (i + 1 == v.size() ? " and " : ", ") : "") + ("\"" + v[i] + "\"");
          return out;
        };
        row.error = "systems/" + sys + ".json";
        if (!missing.empty())
          row.error += " lacks " + names(missing) + ", which the summary needs (add " +
                       (missing.size() == 1 ? "it" : "them") + "; \"\" where a field does not apply)";
        if (!not_int.empty())
          row.error += std::string(missing.empty() ? "" : ";") + " has " + names(not_int) +
                       (not_int.size() == 1 ? " that is not an integer (the summary multiplies it"
                                            : " that are not integers (the summary multiplies them") +
                       " by number_of_nodes)";
      }
      // The summarizer's private id: results/<system>/privateid.json, when there is one.
      fs::path idf = fs::path(report.path) / "results" / sys / "privateid.json";
      std::error_code iec;
      if (fs::exists(idf, iec)) {
        bool iok = false;
        Value id = read_json_file(idf, &iok);
        if (!iok || id.kind != VKind::Dict) {
          row.complete = false;
          row.error = "results/" + sys + "/privateid.json is not a JSON object";
        } else if (Value* v = id.d().find_str("private_id")) {
          row.private_id = py_str(*v);
        }
      }
      // Not UTF-8: json.load stops there, before any field is read.
      for (const auto& sf : report.systems)
          if (sf.name == sys + ".json" && sf.consortium_stops.find("UnicodeDecodeError") != std::string::npos)
            row.consortium_stops = "the consortium's result summarizer reads systems/" + sys +
                                   ".json as UTF-8 and stops with UnicodeDecodeError";
      row.details_url = prefix + "/blob/main/" + row.submitter + "/systems/" + sys + ".json";
      row.code_url = prefix + "/blob/master/" + row.submitter + "/benchmarks";
    }
    for (const auto& d : report.benchmarks) {
      if (d.system != sys || d.skipped) continue;
      BenchmarkScore bs;
      bs.system = d.system;
      bs.benchmark = d.benchmark;
      bs.scaling = d.scaling;
      bs.max_dropped = olympic_drop(facts, d.benchmark);
      if (d.scaling == "weak") {
        const BenchmarkFacts* bf = facts.find(d.benchmark);
        score_weak(d, bf ? bf->runs : 0, &bs);
        row.scores.push_back(std::move(bs));
        continue;
      }
      std::vector<double> times;
      bs.has_power = has_power_folder(d.path);
      for (const auto& f : d.files) {
        if (!f.verdict.compliant || f.parse_errors || !f.has_times) {
          ++bs.noncompliant;
          RunScore r;
          r.file = f.name;
          r.dropped = !f.verdict.compliant && !f.verdict.errors.empty()
                          ? "non-compliant: " + f.verdict.errors[0].message
                          : "non-compliant";
          r.drop_kind = "noncompliant";
          bs.runs.push_back(r);
          continue;
        }
        double ms = f.run_stop_ms - f.run_start_ms;  // rules::time_to_train, as check_package paired them
        RunScore r;
        r.file = f.name;
        r.minutes = ms / 60 / 1000;
        r.run_starts = f.run_starts;
        r.minutes_from_first_start = (f.run_stop_ms - f.first_run_start_ms) / 60 / 1000;
        if (f.run_starts > 1) {
          char buf[320];
          std::snprintf(buf, sizeof buf,
                        "%d run_start lines: time to train counts from line %u, the last before run_stop, as the "
                        "consortium's summarizer does (%.3f min); from the first, line %u, it would be %.3f min",
                        f.run_starts, f.run_start_line, r.minutes, f.first_run_start_line, r.minutes_from_first_start);
          r.warning = buf;
        }
        if (bs.has_power) {
          // The summarizer computes the energy of every run it scores.
          RunEnergy e = run_energy(d.path, f.name, ms);
          r.has_energy = e.ok;
          r.energy_j = e.joules;
          r.energy_error = e.error;
          for (auto& w : e.warnings) bs.energy_warnings.push_back(std::move(w));
        }
        bs.runs.push_back(r);
        times.push_back(r.minutes);
      }
      // Factors: the package's scaling.json, and what the pipeline's RCP pass would leave.
      const ScalingFile scaling = read_scaling_json(d.path, package_root);
      const std::string& scaling_problem = scaling.problem;
      if (scaling.usable) {
        bs.published_factor = scaling.factor;
        bs.has_published_factor = true;
      }
      bs.pipeline_factor = bs.has_published_factor ? bs.published_factor : 1.0;
      std::string pipeline_source = bs.has_published_factor ? "scaling.json" : "none";
      if (d.rcp_checked) {
        bool writes = d.rcp.evaluated && d.rcp.pass && !d.rcp.bypassed && d.rcp.submission_mean < d.rcp.rcp_mean;
        bs.pipeline_factor = writes ? d.rcp.norm_factor : 1.0;
        pipeline_source = writes ? "RCP normalisation (pipeline)"
                                 : (bs.has_published_factor ? "scaling.json removed by the RCP pass" : "none");
      }
      if (mode == ScaleMode::Published) {
        bs.factor = bs.has_published_factor ? bs.published_factor : 1.0;
        bs.factor_source = bs.has_published_factor ? "scaling.json" : "none";
      } else {
        bs.factor = bs.pipeline_factor;
        bs.factor_source = pipeline_source;
      }
      int k = bs.max_dropped, dropped = bs.noncompliant;
      std::stable_sort(bs.runs.begin(), bs.runs.end(), [](const RunScore& a, const RunScore& b) {
        if (a.dropped.empty() != b.dropped.empty()) return a.dropped.empty();
        return a.minutes < b.minutes;
      });
      if (dropped > k) {
        bs.note = std::to_string(dropped) + " non-compliant runs; at most " + std::to_string(k) + " may be dropped";
      } else {
        OlympicWindow w = olympic_window(times.size(), k, dropped);
        long lo = w.lo, hi = w.hi;
        if (w.empty()) {
          bs.note = "no runs left after olympic dropping";
        } else {
          bs.unscaled = olympic_mean(times, k, dropped);
          bs.score = bs.unscaled * bs.factor;
          bs.has_score = true;
          long idx = 0;
          for (auto& r : bs.runs) {
            if (!r.dropped.empty()) continue;
            if (idx < lo) r.dropped = "fastest (olympic)";
            else if (idx >= hi) r.dropped = "slowest (olympic)";
            else r.counted = true;
            if (!r.counted) r.drop_kind = "olympic";
            ++idx;
          }
        }
      }
      // (The pipeline's RCP pass removes the file of each directory it evaluates before the summarizer runs.)
      if (!scaling_problem.empty() && (mode == ScaleMode::Published || !d.rcp_checked)) {
        bs.has_score = false;
        const bool finite_problem = scaling_problem.find("not a finite number") != std::string::npos;
        const bool outside = scaling_problem.find("leads outside the package") != std::string::npos;
        bs.note = outside ? scaling_problem
                          : scaling_problem +
                                (finite_problem ? ": no time to train (the consortium's result summarizer writes inf or nothing)"
                                                : ": the consortium's result summarizer stops with a traceback on it and reports "
                                                  "nothing for the package") +
                                "; write {\"scaling_factor\": F} (the factor the committee gave) or remove the file";
      }
      if (bs.has_power) {
        // The summarizer's _index_olympic_average: the energies of the runs in
        // the order of their times, the same window as the times.
        std::string failed;
        for (const auto& r : bs.runs)
          if (r.dropped.rfind("non-compliant", 0) != 0 && !r.has_energy && failed.empty()) failed = r.file + ": " + r.energy_error;
        if (!failed.empty()) {
          bs.energy_note = "no energy figure: " + failed +
                           "; the consortium's result summarizer stops with this exception and reports nothing for the package";
        } else if (dropped > k) {
          bs.energy_note = "no energy figure: too many non-compliant runs";
        } else {
          double sum = 0;
          long n = 0;
          for (const auto& r : bs.runs)
            if (r.counted) sum += r.energy_j, ++n;
          if (n == 0) {
            bs.energy_note = "no energy figure: no runs left after olympic dropping";
          } else {
            bs.unscaled_energy_j = sum * 1.0 / static_cast<double>(n);
            bs.energy_j = bs.unscaled_energy_j * bs.factor;
            bs.has_energy = true;
          }
        }
      }
      if (d.rcp_checked) {
        // The detailed summary's RCP columns. The summarizer runs the RCP
        // check without the package's bypasses.
        std::string msg = d.rcp.message;
        bool pass = d.rcp.pass;
        if (d.rcp.bypassed) {
          pass = false;
          const std::string suffix = " passed using rcp_bypass";
          if (msg.size() >= suffix.size() && msg.compare(msg.size() - suffix.size(), suffix.size(), suffix) == 0)
            msg.resize(msg.size() - suffix.size());
        }
        bs.rcp_label = pass ? "Pass"
                       : msg == "RCP found" ? "Fail"
                       : msg == "RCP Interpolation" ? "Interp. Fail"
                       : msg.find("Missing") != std::string::npos ? "Missing"
                       : msg == "Cannot find any RCPs" ? "No RCP"
                       : "Unknown state";
        if (d.rcp.status == "no_batch_size") {
          bs.has_gbs = true;
          bs.gbs = -1;
        } else if (d.rcp.has_batch_size) {
          bs.has_gbs = true;
          bs.gbs = d.rcp.submission_batch_size;
        }
        std::vector<double> points;
        int not_converged = 0;
        for (const auto& f : d.files) {
          points.push_back(f.convergence.epochs);
          not_converged += f.convergence.converged ? 0 : 1;
        }
        bool too_many = not_converged > (d.benchmark == "unet3d" ? 4 : 1);
        if (d.rcp.status != "no_batch_size" && !too_many && points.size() >= 3) {
          std::sort(points.begin(), points.end());
          std::vector<double> mid(points.begin() + 1, points.end() - 1);
          bs.samples_to_converge = np_mean(mid);
          bs.has_samples_to_converge = true;
        }
      }
      row.scores.push_back(std::move(bs));
    }
    out.rows.push_back(std::move(row));
  }
  return out;
}

namespace {
// A row of the strong-scaling tables: a Training system, or an HPC one with
// strong-scaling results (the summarizer writes no row for a system whose
// results are all weak scaling).
bool has_strong(const SystemRow& row) {
  if (row.scores.empty()) return true;
  for (const auto& x : row.scores)
    if (x.scaling != "weak") return true;
  return false;
}

std::string csv_field(const std::string& raw) {
  // UTF-8 as the JSON gives it (a description in latin-1 stops the summarizer: there is no table of its to match).
  const std::string s = base::utf8_text(raw);
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}
}  // namespace

// The summarizer's columns before the benchmarks.
constexpr const char* kCsvSystemColumns =
    "division,availability,submitter,system,number_of_nodes,host_processor_model_name,host_processors_count,"
    "accelerator_model_name,accelerators_count,framework,notes,private_id";

namespace {

// One row of a summarizer table: its CSV text, and the values the summarizer
// sorts it by (pandas' sort_values over every column, in column order: text
// columns by their characters, number columns by value with empty cells last).
struct CsvRow {
  struct Key {
    bool number = false;
    double value = 0;  // NaN: an empty cell
    std::string text;
  };
  std::vector<Key> keys;
  std::string line;

  void text(const std::string& raw) {
    if (!keys.empty()) line += ",";
    line += csv_field(raw);
    keys.push_back({false, 0, base::utf8_text(raw)});
  }
  // An empty cell when !has.
  void number(bool has, double v, const std::string& shown) {
    if (!keys.empty()) line += ",";
    if (has) line += shown;
    keys.push_back({true, has ? v : std::nan(""), ""});
  }
  void number(bool has, double v) { number(has, v, has ? mllog::json_number(v) : std::string()); }
};

bool csv_row_less(const CsvRow& a, const CsvRow& b) {
  for (size_t i = 0; i < a.keys.size() && i < b.keys.size(); ++i) {
    const CsvRow::Key &x = a.keys[i], &y = b.keys[i];
    if (x.number) {
      const bool xn = std::isnan(x.value), yn = std::isnan(y.value);
      if (xn != yn) return yn;  // empty cells last
      if (!xn && x.value != y.value) return x.value < y.value;
    } else if (int c = x.text.compare(y.text); c != 0) {
      return c < 0;  // UTF-8 bytes in order are code points in order, as Python compares str
    }
  }
  return false;
}

// The rows in the summarizer's order, one line each.
std::string sorted_lines(std::vector<CsvRow> rows) {
  std::stable_sort(rows.begin(), rows.end(), csv_row_less);
  std::string out;
  for (const auto& r : rows) out += r.line + "\n";
  return out;
}

CsvRow system_cells(const SystemRow& row) {
  CsvRow r;
  r.text(row.division);
  r.text(row.availability);
  r.text(row.submitter);
  r.text(row.system);
  r.text(row.number_of_nodes);
  r.text(row.host_processor_model_name);
  r.number(true, static_cast<double>(row.host_processors_count), std::to_string(row.host_processors_count));
  r.text(row.accelerator_model_name);
  r.number(true, static_cast<double>(row.accelerators_count), std::to_string(row.accelerators_count));
  r.text(row.framework);
  r.text(row.notes);
  r.text(row.private_id);
  return r;
}

void url_cells(const SystemRow& row, CsvRow* r) {
  r->text(row.details_url);
  r->text(row.code_url);
}

std::vector<CsvRow> strong_rows(const ScoreReport& r) {
  std::vector<CsvRow> out;
  for (const auto& row : r.rows) {
    if (!row.complete || !has_strong(row)) continue;
    CsvRow c = system_cells(row);
    for (const auto& b : r.benchmarks) {
      const BenchmarkScore* s = nullptr;
      for (const auto& x : row.scores)
        if (x.benchmark == b && x.has_score && x.scaling != "weak") s = &x;
      c.number(s != nullptr, s ? s->score : 0);
    }
    url_cells(row, &c);
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<CsvRow> weak_rows(const ScoreReport& r) {
  std::vector<CsvRow> out;
  for (const auto& row : r.rows) {
    bool weak = false;
    for (const auto& x : row.scores) weak = weak || x.scaling == "weak";
    if (!row.complete || !weak) continue;
    CsvRow c = system_cells(row);
    for (const auto& b : r.benchmarks) {
      const BenchmarkScore* s = nullptr;
      for (const auto& x : row.scores)
        if (x.benchmark == b && x.scaling == "weak") s = &x;
      const bool has = s && s->has_score;
      // The summarizer casts these columns to float: 10.0, not 10.
      c.number(has, has ? static_cast<double>(s->number_of_models) : 0);
      c.number(has && s->has_instance_scale, has ? static_cast<double>(s->instance_scale) : 0);
      c.number(has, has ? s->time_to_train_all_minutes : 0);
    }
    url_cells(row, &c);
    out.push_back(std::move(c));
  }
  return out;
}

std::string strong_header(const ScoreReport& r) {
  std::string out = kCsvSystemColumns;
  for (const auto& b : r.benchmarks) out += "," + b;
  return out + ",details_url,code_url\n";
}

std::string weak_header(const ScoreReport& r) {
  std::string out = kCsvSystemColumns;
  for (const auto& b : r.benchmarks) out += "," + b + ":number_of_models," + b + ":instance_scale," + b + ":time_to_train_all";
  return out + ",details_url,code_url\n";
}

}  // namespace

std::string scores_csv_detailed(const ScoreReport& r, bool header) {
  static const char* metrics[] = {"time_to_train", "Energy", "GBS", "samples_to_converge", "RCP", "rcp_scaling_factor"};
  std::string out;
  if (header) {
    out += kCsvSystemColumns;
    for (const auto& b : r.benchmarks)
      for (const char* m : metrics) out += "," + b + ":" + m;
    out += ",details_url,code_url\n";
  }
  std::vector<CsvRow> rows;
  for (const auto& row : r.rows) {
    if (!row.complete || !has_strong(row)) continue;
    CsvRow c = system_cells(row);
    for (const auto& b : r.benchmarks) {
      const BenchmarkScore* s = nullptr;
      for (const auto& x : row.scores)
        if (x.benchmark == b && x.scaling != "weak") s = &x;
      if (!s) {
        for (int k = 0; k < 4; ++k) c.number(false, 0);
        c.text("");
        c.number(false, 0);
        continue;
      }
      c.number(s->has_score, s->score);
      c.number(s->has_energy, s->energy_j);
      c.number(s->has_gbs, s->gbs);
      c.number(s->has_samples_to_converge, s->samples_to_converge);
      c.text(s->rcp_label);
      // The factor the summarizer read from scaling.json when it scored the directory.
      c.number(true, s->factor);
    }
    url_cells(row, &c);
    rows.push_back(std::move(c));
  }
  return out + sorted_lines(std::move(rows));
}

std::string scores_csv_weak(const ScoreReport& r, bool header) {
  return (header ? weak_header(r) : std::string()) + sorted_lines(weak_rows(r));
}

std::string summary_csv(const std::vector<const ScoreReport*>& packages) {
  // The summarizer concatenates every package's rows and sorts them together.
  std::vector<CsvRow> strong, weak;
  for (const ScoreReport* r : packages) {
    for (auto& x : strong_rows(*r)) strong.push_back(std::move(x));
    for (auto& x : weak_rows(*r)) weak.push_back(std::move(x));
  }
  if (packages.empty()) return "";
  std::string out = strong_header(*packages.front()) + sorted_lines(std::move(strong));
  if (!weak.empty()) out += weak_header(*packages.front()) + sorted_lines(std::move(weak));
  return out;
}

std::string scores_csv(const ScoreReport& r, bool header) {
  return (header ? strong_header(r) : std::string()) + sorted_lines(strong_rows(r));
}

}  // namespace referee::rules
