#include "harness/progress.h"

#include <chrono>
#include <cmath>
#include <cstdio>

#include "mllog/json_writer.h"
#include "mllog/reader.h"
#include "rules/interp.h"
#include "rules/value.h"

namespace referee::harness {

std::shared_ptr<const ProgressModel> load_progress_model(const rules::RuleSet& rules, const rules::RoundFacts& facts,
                                                         const std::string& benchmark) {
  auto m = std::make_shared<ProgressModel>();
  m->benchmark = benchmark;
  m->target = rules::quality_target(rules, benchmark);
  const rules::BenchmarkFacts* bf = facts.find(benchmark);
  rules::Convergence how = bf ? bf->convergence : rules::Convergence::EpochNum;
  m->field = rules::convergence_field(how, rules.id().version);
  m->quantity = rules::convergence_quantity(benchmark, how, rules.id().version);
  if (bf && !bf->rcp) {
    m->no_rcp = benchmark + " has no reference convergence points in " + rules.id().id();
    return m;
  }
  auto t = std::make_unique<rules::RcpTable>();
  std::string err;
  int n_runs = bf ? bf->runs : rules::rcp_submission_runs(benchmark);
  if (t->load(rules.rcp_dir() + "/rcps_" + benchmark + ".json", benchmark, n_runs, &err, rules.id().version))
    m->rcp = std::move(t);
  else
    m->no_rcp = "no RCP table: " + err;
  return m;
}

ProgressTracker::ProgressTracker(std::shared_ptr<const ProgressModel> model) : model_(std::move(model)) {}

void ProgressTracker::reset() {
  auto model = model_;
  *this = ProgressTracker(model);
}

namespace {

// The text after the last MLLOG token, or "" when the line has none.
std::string_view mllog_json(std::string_view line) {
  size_t at = line.rfind(mllog::kToken);
  if (at == std::string_view::npos) return {};
  return line.substr(at + mllog::kToken.size());
}

// `"key": "<name>"` (the writer's spacing, or none) without parsing the JSON.
bool names_key(std::string_view json, std::string_view name) {
  for (std::string_view form : {std::string_view("\"key\": \""), std::string_view("\"key\":\"")}) {
    size_t at = json.find(form);
    if (at == std::string_view::npos) continue;
    std::string_view rest = json.substr(at + form.size());
    return rest.size() > name.size() && rest.substr(0, name.size()) == name && rest[name.size()] == '"';
  }
  return false;
}

bool number(const rules::Value* v, double* out) {
  if (!v || !v->is_num()) return false;
  *out = v->as_double();
  return std::isfinite(*out);
}

}  // namespace

void ProgressTracker::add_line(std::string_view line) {
  std::string_view json = mllog_json(line);
  if (json.empty()) return;
  const std::string& metric = model_->target.metric;
  bool is_start = names_key(json, "run_start"), is_stop = names_key(json, "run_stop");
  bool is_bs = names_key(json, "global_batch_size"), is_eval = names_key(json, metric);
  if (!is_start && !is_stop && !is_bs && !is_eval) return;
  bool ok = false;
  std::string err;
  rules::Value v = rules::value_from_json(json, &ok, &err);
  if (!ok || v.kind != rules::VKind::Dict) return;
  double t = 0;
  bool has_t = number(v.d().find_str("time_ms"), &t);
  rules::Value* meta = v.d().find_str("metadata");
  bool has_meta = meta && meta->kind == rules::VKind::Dict;
  if (is_start) {
    started_ = true;
    start_ms_ = has_t ? t : 0;
    ++events_;
  } else if (is_stop) {
    stopped_ = true;
    stop_ms_ = has_t ? t : 0;
    if (has_meta)
      if (rules::Value* s = meta->d().find_str("status"); s && s->kind == rules::VKind::Str) stop_status_ = s->s();
    ++events_;
  } else if (is_bs) {
    has_bs_ = number(v.d().find_str("value"), &bs_);
  } else if (is_eval) {
    double value;
    if (!number(v.d().find_str("value"), &value)) return;
    has_eval_ = true;
    eval_ = value;
    eval_ms_ = has_t ? t : 0;
    ++evals_;
    double pos;
    if (has_meta && number(meta->d().find_str(model_->field), &pos)) {
      has_position_ = true;
      position_ = pos;
    }
    ++events_;
  }
}

Progress ProgressTracker::snapshot() const {
  Progress p;
  const ProgressModel& m = *model_;
  p.started = started_;
  p.stopped = stopped_;
  p.ended = ended_ || stopped_;
  p.stop_status = stop_status_;
  p.has_batch_size = has_bs_;
  p.batch_size = bs_;
  p.evals = evals_;
  p.has_eval = has_eval_;
  p.eval = eval_;
  p.has_position = has_position_;
  p.position = position_;
  if (has_eval_ && m.target.has_target)
    p.target_reached = m.target.direction == "min" ? eval_ <= m.target.target : eval_ >= m.target.target;
  // Time to train from the log, as the score counts it: run_start to run_stop.
  if (started_ && stopped_ && stop_ms_ >= start_ms_) {
    p.has_time_to_train = true;
    p.time_to_train_s = (stop_ms_ - start_ms_) / 1000.0;
  } else if (started_ && has_eval_ && eval_ms_ >= start_ms_) {
    p.has_time_to_train = true;
    p.time_to_train_s = (eval_ms_ - start_ms_) / 1000.0;
  }
  // What the reference convergence points expect at this batch size.
  if (!m.rcp) {
    p.no_expected = m.no_rcp;
  } else if (!has_bs_) {
    p.no_expected = "no global_batch_size logged yet";
  } else {
    rules::RcpRecord rec;
    std::string status;
    if (m.rcp->reference_at(bs_, &rec, &status, &p.expected_basis) && std::isfinite(rec.mean) && rec.mean > 0) {
      p.has_expected = true;
      p.expected = rec.mean;
    } else {
      p.no_expected = status == "found" || status == "interpolated" ? "the RCP mean is not a number"
                                                                      : "no RCP applies: " + p.expected_basis;
      p.expected_basis.clear();
    }
  }
  if (p.has_expected && has_position_) {
    p.has_fraction = true;
    p.fraction = position_ / p.expected;
    // Nothing left to estimate for a run that is over or that reached its target (it stops there).
    if (!p.ended && !p.target_reached && p.has_time_to_train && position_ > 0 && position_ < p.expected) {
      p.has_eta = true;
      p.eta_s = p.time_to_train_s / position_ * (p.expected - position_);
    }
  }
  return p;
}

std::string format_duration(double s) {
  if (!std::isfinite(s) || s < 0) s = 0;
  long long t = std::llround(s);
  char buf[64];
  if (s < 9.95) std::snprintf(buf, sizeof buf, "%.1f s", s);
  else if (t < 60) std::snprintf(buf, sizeof buf, "%lld s", t);
  else if (t < 3600) std::snprintf(buf, sizeof buf, "%lld min %02lld s", t / 60, t % 60);
  else std::snprintf(buf, sizeof buf, "%lld h %02lld min", t / 3600, (t % 3600) / 60);
  return buf;
}

namespace {

std::string num(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

std::string amount(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, std::fabs(x) >= 1000 ? "%.4g" : "%.3g", x);
  return buf;
}

// "1 epoch", "2 epochs": the quantity ("epochs", "samples") in the singular for exactly one.
std::string unit_of(double x, const std::string& quantity) {
  if (amount(x) == "1" && quantity.size() > 1 && quantity.back() == 's') return quantity.substr(0, quantity.size() - 1);
  return quantity;
}

}  // namespace

std::string progress_text(const Progress& p, const ProgressModel& m) {
  std::string out;
  if (p.has_eval) {
    out = m.target.metric + " " + num(p.eval);
    if (p.has_position) out += " at " + amount(p.position) + " " + unit_of(p.position, m.quantity);
  } else {
    out = p.started ? "no evaluation yet" : "not started training (no run_start yet)";
  }
  if (m.target.has_target)
    out += " (target " + std::string(m.target.direction == "min" ? "<= " : ">= ") + num(m.target.target) +
           (p.target_reached ? ", reached)" : ")");
  else
    out += " (no single target in the rules)";
  if (p.has_expected) {
    if (p.has_fraction) {
      char pct[32];
      std::snprintf(pct, sizeof pct, "%.0f%%", p.fraction * 100);
      if (p.ended) {
        out += "; ended at " + amount(p.position) + " " + unit_of(p.position, m.quantity) + ", " + pct + " of the ~" + amount(p.expected) +
               " the RCPs expect (" + p.expected_basis + ")";
      } else {
        out += "; " + amount(p.position) + " of ~" + amount(p.expected) + " " + m.quantity + " (" + p.expected_basis + "): ";
        if (p.target_reached) {
          out += "target reached, run_stop expected next";
        } else if (p.fraction < 1) {
          out += std::string("about ") + pct + " of the way";
          if (p.has_eta) out += ", ~" + format_duration(p.eta_s) + " left";
        } else {
          out += std::string("past the RCP mean (") + pct + ")";
        }
      }
    } else {
      out += "; ~" + amount(p.expected) + " " + m.quantity + " expected (" + p.expected_basis + ")";
    }
  } else if (!p.no_expected.empty()) {
    out += "; no estimate (" + p.no_expected + ")";
  }
  if (p.has_time_to_train)
    out += "; time to train " + format_duration(p.time_to_train_s) +
           (p.stopped ? "" : p.ended ? " to the last evaluation" : " so far");
  if (p.stopped) out += "; run_stop " + (p.stop_status.empty() ? std::string("logged") : p.stop_status);
  else if (p.ended && p.started) out += "; ended without run_stop";
  return out;
}

namespace {

double unix_now() {
  using namespace std::chrono;
  return static_cast<double>(duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count()) / 1000.0;
}

}  // namespace

std::string progress_json(const RunProgress& r, const ProgressModel& m) {
  const Progress& p = r.progress;
  mllog::JsonWriter w(0, mllog::JsonText::kUtf8);
  auto opt_num = [&](const char* k, bool has, double v) {
    w.key(k);
    if (has) w.value(v);
    else w.null();
  };
  auto opt_str = [&](const char* k, const std::string& v) {
    w.key(k);
    if (v.empty()) w.null();
    else w.value(v);
  };
  w.begin_object();
  w.key("type").value("progress");
  w.key("time").value(unix_now());
  w.key("run").value(r.id);
  w.key("state").value(r.state);
  w.key("wall_s").value(r.wall_s);
  w.key("lines").value(static_cast<long long>(r.lines));
  w.key("run_start").value(p.started);
  w.key("run_stop").value(p.stopped);
  w.key("ended").value(p.ended);
  opt_str("stop_status", p.stop_status);
  w.key("batch_size");  // a whole number as a whole number (128, not 128.0)
  if (!p.has_batch_size) w.null();
  else if (p.batch_size == std::floor(p.batch_size) && std::fabs(p.batch_size) < 1e15)
    w.value(static_cast<long long>(p.batch_size));
  else w.value(p.batch_size);
  w.key("metric").value(m.target.metric);
  opt_num("target", m.target.has_target, m.target.target);
  opt_str("target_direction", m.target.has_target ? m.target.direction : "");
  w.key("evals").value(static_cast<long long>(p.evals));
  opt_num("eval", p.has_eval, p.eval);
  w.key("target_reached").value(p.target_reached);
  w.key("unit").value(m.quantity);
  opt_num("position", p.has_position, p.position);
  opt_num("expected", p.has_expected, p.expected);
  opt_str("expected_basis", p.expected_basis);
  opt_str("no_expected", p.no_expected);
  opt_num("fraction", p.has_fraction, p.fraction);
  opt_num("eta_s", p.has_eta, p.eta_s);
  opt_num("time_to_train_s", p.has_time_to_train, p.time_to_train_s);
  w.end_object();
  return w.str();
}

std::string event_json(const std::string& message) {
  mllog::JsonWriter w(0, mllog::JsonText::kUtf8);
  w.begin_object().key("type").value("event").key("time").value(unix_now()).key("message").value(message).end_object();
  return w.str();
}

}  // namespace referee::harness
