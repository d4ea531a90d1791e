#include "rules/rcp.h"

#include <algorithm>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "rules/interp.h"

namespace referee::rules {

// ------------------------------------------------------------- numerics

double np_sum(const double* a, size_t n) {
  if (n < 8) {
    double r = 0.0;
    for (size_t i = 0; i < n; ++i) r += a[i];
    return r;
  }
  if (n <= 128) {
    double r[8];
    for (int k = 0; k < 8; ++k) r[k] = a[k];
    size_t i = 8;
    for (; i < n - (n % 8); i += 8)
      for (int k = 0; k < 8; ++k) r[k] += a[i + static_cast<size_t>(k)];
    double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) res += a[i];
    return res;
  }
  size_t n2 = n / 2;
  n2 -= n2 % 8;
  return np_sum(a, n2) + np_sum(a + n2, n - n2);
}

double np_mean(const std::vector<double>& v) {
  if (v.empty()) return std::nan("");
  return np_sum(v.data(), v.size()) / static_cast<double>(v.size());
}

double np_std(const std::vector<double>& v) {
  if (v.empty()) return std::nan("");
  double m = np_mean(v);
  std::vector<double> sq(v.size());
  for (size_t i = 0; i < v.size(); ++i) sq[i] = (v[i] - m) * (v[i] - m);
  return std::sqrt(np_sum(sq.data(), sq.size()) / static_cast<double>(v.size()));
}

double one_sided_p(double m1, double s1, double n1, double m2, double s2, double n2) {
  double df = n1 + n2 - 2.0;
  double svar = ((n1 - 1) * s1 * s1 + (n2 - 1) * s2 * s2) / df;
  double denom = std::sqrt(svar * (1.0 / n1 + 1.0 / n2));
  double t = (m1 - m2) / denom;
  double p;
  if (std::isnan(t) || !(df > 0)) {
    p = std::nan("");
  } else {
    boost::math::students_t dist(df);
    p = 2.0 * boost::math::cdf(boost::math::complement(dist, std::fabs(t)));
  }
  if (t < 0) return p / 2;
  return 1 - p / 2;
}

double py_round_to(double x, int n) {
  if (std::isnan(x) || std::isinf(x)) return x;
  char buf[512];
  std::snprintf(buf, sizeof buf, "%.*f", n, x);
  return std::strtod(buf, nullptr);
}

// ---------------------------------------------------------------- tables

namespace {
double interp(double x, double x0, double x1, double y0, double y1) {
  if (x == x1) return y1;  // numpy returns the right end exactly
  if (x == x0) return y0;
  double slope = (y1 - y0) / (x1 - x0);
  double r = slope * (x - x0) + y0;
  if (std::isnan(r)) {
    r = slope * (x - x1) + y1;
    if (std::isnan(r) && y0 == y1) r = y0;
  }
  return r;
}

bool num_of(const Value& v, double* out) {
  if (!v.is_num()) return false;
  *out = v.as_double();
  return true;
}
}  // namespace

double RcpTable::min_acceptable_mean(double mean, double stdev, double n_ref) const {
  if (stdev == 0) return mean;
  double n_sub = n_runs_ - 2;
  double hi = mean, lo = 0.0;
  double mid = (lo + hi) / 2;
  constexpr double kTolerance = 0.0001;
  constexpr double kAlpha = 0.05;
  while (hi - lo > kTolerance) {
    double p = one_sided_p(mid, stdev, n_ref, mean, stdev, n_sub);
    if (p > kAlpha) hi = mid;
    else lo = mid;
    mid = (lo + hi) / 2;
  }
  return mid;
}

bool version_at_least(const std::string& version, const std::string& min_version) {
  auto parts = [](const std::string& v, std::vector<long long>* out) {
    size_t pos = 0;
    while (true) {
      size_t dot = v.find('.', pos);
      std::string part = v.substr(pos, dot == std::string::npos ? std::string::npos : dot - pos);
      if (part.empty() || part.size() > 9 || part.find_first_not_of("0123456789") != std::string::npos) return false;
      out->push_back(std::atoll(part.c_str()));
      if (dot == std::string::npos) return true;
      pos = dot + 1;
    }
  };
  std::vector<long long> a, b;
  if (!parts(version, &a) || !parts(min_version, &b)) return false;
  a.resize(std::max(a.size(), b.size()), 0);
  b.resize(a.size(), 0);
  return a >= b;
}

double RcpTable::eval_max_speedup(const RcpRecord& rec) const {
  // rcp_checker.py, _eval_submission_record: from 5.0.0 llama31_405b allows
  // convergence down to 46080 samples below the minimum acceptable mean.
  if (benchmark_ == "llama31_405b" && version_at_least(version_, "5.0.0")) return rec.mean / (rec.min_epochs - 46080);
  return rec.max_speedup;
}

bool RcpTable::load(const std::string& path, const std::string& benchmark, int n_runs, std::string* error,
                    const std::string& ruleset_version) {
  benchmark_ = benchmark;
  version_ = ruleset_version;
  n_runs_ = n_runs;
  drop_ = benchmark == "unet3d" ? 4 : 1;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = "cannot read RCP table " + path;
    return false;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  bool ok = false;
  std::string perr;
  Value root = value_from_json(ss.str(), &ok, &perr);
  if (!ok || root.kind != VKind::Dict) {
    *error = path + ": not a JSON object of RCP records" + (perr.empty() ? "" : ": " + perr);
    return false;
  }
  for (auto& [k, rec] : root.d().entries) {
    if (rec.kind != VKind::Dict) continue;
    RcpRecord r;
    r.name = py_str(k);
    Value* b = rec.d().find_str("Benchmark");
    r.benchmark = b && b->kind == VKind::Str ? b->s() : "";
    Value* bs = rec.d().find_str("BS");
    if (!bs || !num_of(*bs, &r.bs)) {
      *error = path + ": record " + r.name + " has no numeric BS";
      return false;
    }
    const char* unit = r.benchmark == "llama2_70b_lora" || r.benchmark == "flux1" ? "samples to converge" : "Epochs to converge";
    Value* pts = rec.d().find_str(unit);
    if (!pts || pts->kind != VKind::List) {
      *error = path + ": record " + r.name + " has no '" + unit + "' list";
      return false;
    }
    for (const auto& p : pts->items()) {
      double d;
      if (!num_of(p, &d)) {
        *error = path + ": record " + r.name + ": non-numeric convergence point";
        return false;
      }
      r.points.push_back(d);
    }
    std::sort(r.points.begin(), r.points.end());
    int rej = r.benchmark == "unet3d" ? 4 : 1;
    if (static_cast<int>(r.points.size()) > 2 * rej) {
      std::vector<double> mid(r.points.begin() + rej, r.points.end() - rej);
      r.mean = np_mean(mid);
    } else {
      r.mean = std::nan("");
    }
    r.stdev = np_std(r.points);
    r.n_ref = static_cast<double>(r.points.size()) - rej * 2;
    all_.push_back(std::move(r));
  }
  std::stable_sort(all_.begin(), all_.end(), [](const RcpRecord& a, const RcpRecord& b) { return a.bs < b.bs; });
  prune();
  return true;
}

RcpRecord RcpTable::interpolate(double bs, const RcpRecord& lo, const RcpRecord& hi) const {
  RcpRecord r;
  r.name = benchmark_ + "_interp_" + std::to_string(bs);
  r.benchmark = benchmark_;
  r.bs = bs;
  r.mean = interp(bs, lo.bs, hi.bs, lo.mean, hi.mean);
  r.stdev = interp(bs, lo.bs, hi.bs, lo.stdev, hi.stdev);
  r.n_ref = n_runs_ * 2.0;
  return r;
}

RcpRecord RcpTable::complete(const RcpRecord& rec) const {
  RcpRecord r = rec;
  if (!r.stats) {
    r.min_epochs = min_acceptable_mean(r.mean, r.stdev, r.n_ref);
    r.max_speedup = r.mean / r.min_epochs;
    r.stats = true;
  }
  return r;
}

const std::vector<RcpRecord>& RcpTable::completed(std::vector<RcpRecord>& records) const {
  for (auto& r : records)
    if (!r.stats) r = complete(r);
  return records;
}

void RcpTable::prune() {
  pruned_.clear();
  if (all_.empty()) return;
  std::vector<const RcpRecord*> list;
  for (const auto& r : all_) list.push_back(&r);
  const RcpRecord* fastest = list[0];
  for (const auto* r : list)
    if (r->mean < fastest->mean) fastest = r;
  std::vector<const RcpRecord*> kept;
  for (const auto* r : list)
    if (r->bs >= fastest->bs) kept.push_back(r);
  long len = static_cast<long>(kept.size());
  long i = 1;
  while (i < len - 1) {
    RcpRecord interp_rec = interpolate(kept[static_cast<size_t>(i)]->bs, *kept[static_cast<size_t>(i - 1)],
                                       *kept[static_cast<size_t>(i + 1)]);
    if (kept[static_cast<size_t>(i)]->mean > interp_rec.mean) {
      kept.erase(kept.begin() + i);
      --i;
      --len;
    }
    ++i;
  }
  // The consortium rebuilds the pruned set by (benchmark, BS) from the full table.
  std::vector<const RcpRecord*> order;
  for (const auto* k : kept)
    for (const auto& r : all_)
      if (r.benchmark == k->benchmark && r.bs == k->bs &&
          std::find(order.begin(), order.end(), &r) == order.end())
        order.push_back(&r);
  for (const auto* r : order) pruned_.push_back(*r);
}

bool RcpTable::reference_at(double bs, RcpRecord* out, std::string* status, std::string* why) const {
  auto num = [](double x) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.10g", x);
    return std::string(buf);
  };
  if (pruned_.empty()) {
    *status = "no_rcps";
    *why = "the RCP table has no records for " + benchmark_;
    return false;
  }
  const RcpRecord* lo = nullptr;
  const RcpRecord* hi = nullptr;
  for (const auto& r : pruned_) {
    if (r.bs == bs) {
      *out = complete(r);
      *status = "found";
      *why = "RCP at batch size " + num(r.bs);
      return true;
    }
    if (r.bs < bs && (!lo || r.bs > lo->bs)) lo = &r;
    if (r.bs > bs && (!hi || r.bs < hi->bs)) hi = &r;
  }
  if (lo && hi) {
    *out = complete(interpolate(bs, *lo, *hi));
    *status = "interpolated";
    *why = "RCP interpolated between batch sizes " + num(lo->bs) + " and " + num(hi->bs);
    return true;
  }
  *status = "missing";
  *why = lo ? "batch size " + num(bs) + " is larger than every RCP (largest " + num(lo->bs) + ")"
            : "batch size " + num(bs) + " is smaller than every RCP (smallest " + num(hi->bs) + ")";
  return false;
}

RcpOutcome RcpTable::evaluate(const std::vector<RunConvergence>& runs, bool bypass) const {
  RcpOutcome out;
  // Batch size and benchmark must agree across files.
  Value bs;
  bool bs_set = false;
  std::string bench;
  bool bench_set = false;
  int not_converged = 0;
  std::vector<double> epochs;
  bool mismatch = false;
  for (const auto& r : runs) {
    epochs.push_back(r.epochs);
    not_converged += r.converged ? 0 : 1;
    Value cur = r.has_bs ? r.bs : Value::integer(-1);
    if (!bs_set || (bs.kind == VKind::Int && bs.i == -1)) {
      bs = cur;
      bs_set = true;
    } else if (!py_eq(cur, bs)) {
      mismatch = true;
      break;
    }
    if (!bench_set) {
      bench = r.benchmark;
      bench_set = true;
    } else if (r.benchmark != bench) {
      mismatch = true;
      break;
    }
  }
  double bsd = -1;
  bool bs_ok = bs_set && num_of(bs, &bsd) && bsd != -1;
  if (mismatch || !bs_ok) {
    out.status = "no_batch_size";
    out.message = "Could not detect global_batch_size";
    out.explanation = mismatch ? "the result files disagree on global_batch_size or submission_benchmark"
                               : "no result file logs global_batch_size";
    return out;
  }
  out.batch_size = bsd;
  out.submission_batch_size = bsd;
  out.has_batch_size = true;
  int allowed = benchmark_ == "unet3d" ? 4 : 1;
  if (not_converged > allowed) {
    out.status = "not_converged";
    out.message = "Insufficient convergence";
    out.explanation = std::to_string(not_converged) + " runs did not converge (no run_stop with status success); at most " +
                      std::to_string(allowed) + " may";
    return out;
  }
  std::sort(epochs.begin(), epochs.end());
  out.run_epochs = epochs;

  auto eval_with = [&](const RcpRecord& used) {
    const RcpRecord rec = complete(used);
    out.evaluated = true;
    out.batch_size = rec.bs;
    out.rcp_mean = rec.mean;
    out.rcp_stdev = rec.stdev;
    out.max_speedup = eval_max_speedup(rec);
    out.min_epochs = rec.min_epochs;
    int rej = rec.benchmark == "unet3d" ? 4 : 1;
    std::vector<double> mid;
    if (static_cast<int>(epochs.size()) > 2 * rej) mid.assign(epochs.begin() + rej, epochs.end() - rej);
    else out.too_few_runs = true;
    double m = np_mean(mid);
    out.submission_mean = m;
    double f = rec.mean / m;
    out.norm_factor = f < 1 ? 1.0 : f;
    return m >= rec.mean / out.max_speedup;
  };

  const RcpRecord* exact = nullptr;
  for (const auto& r : pruned_)
    if (r.bs == bsd) {
      exact = &r;
      break;
    }
  bool check = false;
  std::string missing = "Missing RCP, please submit RCP with BS = " + py_str(bs);
  if (exact) {
    out.status = "found";
    out.message = "RCP found";
    check = eval_with(*exact);
  } else {
    const RcpRecord* lo = nullptr;
    const RcpRecord* hi = nullptr;
    double lo_bs = 0, hi_bs = 1e9;
    for (const auto& r : pruned_) {
      if (r.bs < bsd && r.bs > lo_bs) { lo_bs = r.bs; lo = &r; }
      if (r.bs > bsd && r.bs < hi_bs) { hi_bs = r.bs; hi = &r; }
    }
    if (lo && hi) {
      out.status = "interpolated";
      out.message = "RCP Interpolation";
      check = eval_with(interpolate(bsd, *lo, *hi));
    } else if (lo && !hi) {
      out.status = "missing";
      out.message = missing;
      out.explanation = "the batch size is larger than every reference point; an RCP at this batch size must be submitted";
      check = false;
    } else if (!lo && hi) {
      const RcpRecord* smallest = nullptr;
      double min_bs = 1e9;
      for (const auto& r : pruned_)
        if (r.bs < min_bs) { min_bs = r.bs; smallest = &r; }
      check = eval_with(*smallest);
      if (check) {
        out.status = "smaller_batch_ok";
        out.message = "RCP not found but slower convergence on smaller batch size";
      } else {
        out.status = "missing";
        out.message = missing;
      }
    } else {
      out.status = "no_rcps";
      out.message = "Cannot find any RCPs";
      out.explanation = "the RCP table has no records for " + benchmark_;
    }
  }
  if (out.evaluated && !check && out.explanation.empty() && out.too_few_runs) {
    // The consortium's olympic mean of too few runs is numpy's mean of an
    // empty list (nan), and nan compares false: the check fails for that reason.
    int rej = benchmark_ == "unet3d" ? 4 : 1;
    out.explanation = "too few runs for an olympic mean: " + std::to_string(out.run_epochs.size()) +
                      " result file(s), and the olympic mean drops the " + std::to_string(rej) + " fastest and " +
                      std::to_string(rej) + " slowest, so it needs at least " + std::to_string(2 * rej + 1) +
                      " (the benchmark requires " + std::to_string(n_runs_) + ")";
  } else if (out.evaluated && !check && out.explanation.empty()) {
    char buf[400];
    std::snprintf(buf, sizeof buf,
                  "the runs converge faster than the reference allows: olympic mean %.6g < %.6g (RCP mean %.6g / max speedup %.6g)",
                  out.submission_mean, out.rcp_mean / out.max_speedup, out.rcp_mean, out.max_speedup);
    out.explanation = buf;
  }
  if (bypass && !check && (out.status == "found" || out.status == "interpolated" || out.status == "missing")) {
    out.message += " passed using rcp_bypass";
    out.bypassed = true;
    check = true;
  }
  out.pass = check;
  return out;
}

// --------------------------------------------------- reading convergence

ConvergenceReader::ConvergenceReader(std::string ruleset_version, Convergence how)
    : ruleset_version_(std::move(ruleset_version)), how_(how) {}

void ConvergenceReader::add(std::string_view j, std::string_view line_key) {
  RunConvergence& out = out_;
  bool& have_conv = have_conv_;
  double& conv = conv_;
  auto& sd = sd_;
  auto& sd_order = sd_order_;
  std::string& benchmark = benchmark_;
  bool& have_benchmark = have_benchmark_;
  const std::string& ruleset_version = ruleset_version_;
  const Convergence how = how_;
  auto field = [](const Value& d, const char* k) -> const Value* { return d.d().find_str(k); };
  {
    // The consortium tests substrings of the JSON text; every one of them has
    // an underscore followed by b, a, e or s, so one pass over '_' finds them all.
    bool bs_line = false, bench_line = false, eval_line = false, stop_line = false;
    const char* const e = j.data() + j.size();
    auto at_underscore = [&](const char* u) {
      // Whether `w` (a literal) ends just before the underscore, or starts just after it.
      auto ends = [&](const char* w, size_t n) { return static_cast<size_t>(u - j.data()) >= n && std::memcmp(u - n, w, n) == 0; };
      auto starts = [&](const char* w, size_t n) { return static_cast<size_t>(e - u - 1) >= n && std::memcmp(u + 1, w, n) == 0; };
      // Most underscores of a line ("time_ms", "event_type") are told apart
      // by the letter after them, without comparing.
      switch (u + 1 < e ? u[1] : '\0') {
        case 'b':
          if (ends("global", 6) && starts("batch_size", 10)) bs_line = true;
          else if (ends("submission", 10) && starts("benchmark", 9)) bench_line = true;
          break;
        case 'a':
        case 'e':
          if (ends("eval", 4) && (starts("accuracy", 8) || starts("error", 5))) eval_line = true;
          break;
        case 's':
          if (ends("run", 3) && starts("stop", 4)) stop_line = true;
          break;
        default: break;
      }
    };
    // Each underscore of the line, sixteen bytes at a time.
    const char* p = j.data();
#if defined(__SSE2__)
    const __m128i underscore = _mm_set1_epi8('_');
    for (; e - p >= 16; p += 16) {
      auto m = static_cast<unsigned>(
          _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)), underscore)));
      for (; m; m &= m - 1) at_underscore(p + __builtin_ctz(m));
    }
#endif
    for (; p < e; ++p)
      if (*p == '_') at_underscore(p);
    if (!bs_line && !bench_line && !eval_line && !stop_line) return;
    // Only the line's value and metadata are built (the reader has checked the rest).
    Value value_v, meta_v;
    line_members_from_json(j, &value_v, &meta_v);
    const Value* const value = &value_v;
    if (bs_line) {
      out.bs = *value;
      out.has_bs = true;
    }
    if (bench_line) {
      benchmark = py_str(*value);
      have_benchmark = true;
    }
    const Value* const meta = &meta_v;
    if (eval_line) {
      if (how == Convergence::StableDiffusion && have_benchmark && benchmark == "stable_diffusion") {
        const char* unit = ruleset_version == "3.1.0" ? "step_num" : "samples_count";
        const Value* step = meta && meta->kind == VKind::Dict ? field(*meta, unit) : nullptr;
        const Value* metric = meta && meta->kind == VKind::Dict ? field(*meta, "metric") : nullptr;
        const Value* val = value;
        double s;
        if (step && metric && val && num_of(*step, &s)) {
          if (!sd.count(s)) sd_order.push_back(s);
          auto& slot = sd[s];
          if (metric->kind == VKind::Str && metric->s() == "FID") slot.first = *val;
          if (metric->kind == VKind::Str && metric->s() == "CLIP") slot.second = *val;
        } else {
          out.error = "an eval line lacks metadata." + std::string(unit) + " or metadata.metric";
        }
      } else if (how == Convergence::SamplesCount) {
        const Value* sc = meta && meta->kind == VKind::Dict ? field(*meta, "samples_count") : nullptr;
        if (sc && num_of(*sc, &conv)) have_conv = true;
        else out.error = "an eval line lacks metadata.samples_count";
      } else {
        const Value* en = meta && meta->kind == VKind::Dict ? field(*meta, "epoch_num") : nullptr;
        double e;
        if (en && num_of(*en, &e)) {
          conv = en->kind == VKind::Float ? py_round_to(e, 3) : e;
          have_conv = true;
        } else {
          out.error = "an eval line lacks metadata.epoch_num";
        }
      }
    }
    if (stop_line) {
      if (line_key != "run_stop") return;
      const Value* status = meta && meta->kind == VKind::Dict ? field(*meta, "status") : nullptr;
      if (status && status->kind == VKind::Str && status->s() == "success") {
        out.converged = true;
        if (how == Convergence::StableDiffusion && benchmark == "stable_diffusion") {
          bool any = false;
          double best = 0;
          for (double s : sd_order) {
            const auto& [fid, clip] = sd[s];
            double f, c;
            if (!num_of(fid, &f) || !num_of(clip, &c)) continue;
            if (f <= 90.0 && c >= 0.15) {
              if (!any || s < best) best = s;
              any = true;
            }
          }
          if (any) {
            out.epochs = best;
          } else {
            out.error = "no evaluation step reaches FID <= 90 and CLIP >= 0.15";
            out.epochs = 1e9;
          }
        } else if (have_conv) {
          out.epochs = conv;
        } else {
          out.error = "run_stop with status success but no evaluation line before it";
          out.epochs = 1e9;
        }
      } else {
        out.converged = false;
        out.epochs = 1e9;
      }
    }
  }
}

RunConvergence ConvergenceReader::result() const {
  RunConvergence out = out_;
  out.benchmark = benchmark_;
  return out;
}

RunConvergence read_convergence(const mllog::ParsedLog& log, const std::string& ruleset_version, Convergence how) {
  ConvergenceReader r(ruleset_version, how);
  for (const auto& ev : log.events) r.add(ev.json, log.keys[ev.key_id]);
  return r.result();
}

}  // namespace referee::rules
