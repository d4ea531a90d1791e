#include "rules/scoring.h"

#include <algorithm>
#include <cmath>

#include "rules/interp.h"
#include "rules/ruleset.h"
#include "rules/source.h"

namespace referee::rules {

int olympic_drop(const RoundFacts& facts, const std::string& benchmark) {
  const BenchmarkFacts* b = facts.find(benchmark);
  return b ? b->olympic_drop : 1;
}

int olympic_drop(const std::string& ruleset, const std::string& benchmark) {
  RulesetId id;
  if (!RulesetId::parse(ruleset, &id)) return 1;
  RoundFacts facts;
  std::string error;
  if (!facts_for(id, builtin_sets_dir(), &facts, &error)) return 1;
  return olympic_drop(facts, benchmark);
}

OlympicWindow olympic_window(size_t n, int drop, int already_dropped) {
  OlympicWindow w;
  w.lo = drop;
  w.hi = static_cast<long>(n) - (drop - already_dropped);
  return w;
}

namespace {

// The mean of the window of times in ascending order, summed left to right
// (Python's sum()) and divided by the window's size.
template <typename Sorted>
double window_mean(const Sorted& at, OlympicWindow w) {
  double sum = 0;
  for (long i = w.lo; i < w.hi; ++i) sum += at(i);
  return sum * 1.0 / static_cast<double>(w.hi - w.lo);
}

// One side of a bootstrap: its times in order once, and each resample's
// olympic mean from how often each was drawn, in that order; the same sum,
// term by term, as sorting the resample would give, without sorting it.
struct Resampler {
  std::vector<double> sorted;
  std::vector<size_t> rank;  // the place in `sorted` of times[i]
  std::vector<uint32_t> count;
  std::vector<double> draw;  // the resample in sorted order
  OlympicWindow window;

  Resampler(const std::vector<double>& times, OlympicWindow w) : window(w) {
    std::vector<size_t> order(times.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return times[x] < times[y]; });
    sorted.resize(times.size());
    rank.resize(times.size());
    for (size_t k = 0; k < order.size(); ++k) {
      sorted[k] = times[order[k]];
      rank[order[k]] = k;
    }
    count.resize(times.size());
    draw.resize(times.size());
  }
  template <typename Next>
  double resample(Next& next) {
    std::fill(count.begin(), count.end(), 0u);
    for (size_t j = 0; j < rank.size(); ++j) ++count[rank[next() % rank.size()]];
    size_t at = 0;
    for (size_t k = 0; k < count.size(); ++k)
      for (uint32_t c = 0; c < count[k]; ++c) draw[at++] = sorted[k];
    return window_mean([&](long i) { return draw[static_cast<size_t>(i)]; }, window);
  }
};

}  // namespace

double olympic_mean(std::vector<double> times, int drop, int already_dropped) {
  if (already_dropped > drop) return NAN;
  OlympicWindow w = olympic_window(times.size(), drop, already_dropped);
  if (w.empty()) return NAN;
  std::sort(times.begin(), times.end());
  return window_mean([&](long i) { return times[static_cast<size_t>(i)]; }, w);
}

RatioInterval bootstrap_ratio(const std::vector<double>& a, int drop_a, const std::vector<double>& b, int drop_b,
                              int resamples, uint64_t seed, int already_a, int already_b) {
  RatioInterval out;
  if (olympic_window(a.size(), drop_a, already_a).empty() || olympic_window(b.size(), drop_b, already_b).empty() ||
      already_a > drop_a || already_b > drop_b || resamples < 1)
    return out;
  uint64_t state = seed;
  auto next = [&state]() {  // splitmix64
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  };
  std::vector<double> ratios;
  ratios.reserve(static_cast<size_t>(resamples));
  auto has_nan = [](const std::vector<double>& v) {
    return std::any_of(v.begin(), v.end(), [](double x) { return std::isnan(x); });
  };
  if (has_nan(a) || has_nan(b)) {
    // A NaN has no place in an order: each resample sorted as olympic_mean sorts it.
    std::vector<double> ra(a.size()), rb(b.size());
    for (int i = 0; i < resamples; ++i) {
      for (auto& x : ra) x = a[next() % a.size()];
      for (auto& x : rb) x = b[next() % b.size()];
      ratios.push_back(olympic_mean(ra, drop_a, already_a) / olympic_mean(rb, drop_b, already_b));
    }
  } else {
    Resampler sa(a, olympic_window(a.size(), drop_a, already_a)), sb(b, olympic_window(b.size(), drop_b, already_b));
    for (int i = 0; i < resamples; ++i) {
      double ma = sa.resample(next);
      double mb = sb.resample(next);
      ratios.push_back(ma / mb);
    }
  }
  std::sort(ratios.begin(), ratios.end());
  auto at = [&](double q) {
    size_t k = static_cast<size_t>(std::floor(q * static_cast<double>(ratios.size() - 1) + 0.5));
    return ratios[std::min(k, ratios.size() - 1)];
  };
  out.ok = true;
  out.low = at(0.025);
  out.high = at(0.975);
  return out;
}

namespace {

// Python's int() of a logged value (the rule interpreter's): a ValueError
// or an OverflowError beyond 64 bits the summarizer's caller would survive
// (no scale for that run); a TypeError (a list, an object) stops it.
bool python_int(const Value& v, long long* out, std::string* error, bool* type_error) {
  PyError e;
  int64_t n = 0;
  if (rules::python_int(v, &n, &e)) {
    *out = n;
    return true;
  }
  *type_error = e.type == "TypeError";
  *error = e.type == "OverflowError" ? "int() of " + py_repr(v) + " is beyond 64 bits" : e.message;
  return false;
}

}  // namespace

InstanceScale instance_scale(const mllog::ParsedLog& log) {
  InstanceScale out;
  int nodes_key = log.find_key("number_of_nodes"), acc_key = log.find_key("accelerators_per_node");
  Value nodes, acc;
  bool have_nodes = false, have_acc = false;
  for (const auto& ev : log.events) {
    bool is_nodes = static_cast<int>(ev.key_id) == nodes_key, is_acc = static_cast<int>(ev.key_id) == acc_key;
    if (!is_nodes && !is_acc) continue;
    bool ok = false;
    std::string err;
    Value d = value_from_json(ev.json, &ok, &err);
    Value* v = ok && d.kind == VKind::Dict ? d.d().find_str("value") : nullptr;
    // A null value is "not recorded" there: the summarizer reads on.
    const bool null = !v || v->kind == VKind::None;
    if (is_nodes && !null) nodes = *v, have_nodes = true;
    if (is_acc && !null) acc = *v, have_acc = true;
    if (have_nodes && have_acc) break;
  }
  if (!have_nodes) {
    out.error = "number_of_nodes not recorded";
    return out;
  }
  if (!have_acc) {
    out.error = "accelerators_per_node not recorded";
    return out;
  }
  long long n = 0, a = 0;
  bool type_error = false;
  if (!python_int(nodes, &n, &out.error, &type_error) || !python_int(acc, &a, &out.error, &type_error)) {
    out.stops = type_error;
    return out;
  }
  long long scale = 0;
  if (__builtin_mul_overflow(n, std::max(a, 1LL), &scale)) {
    out.error = "number_of_nodes x accelerators_per_node (" + std::to_string(n) + " x " + std::to_string(a) +
                ") is beyond 64 bits";
    return out;
  }
  out.ok = true;
  out.scale = scale;
  return out;
}

TimeToTrain time_to_train(const mllog::ParsedLog& log) {
  TimeToTrain t;
  int start_key = log.find_key("run_start"), stop_key = log.find_key("run_stop");
  bool have_start = false, have_stop = false;
  for (size_t i = 0; i < log.events.size(); ++i) {
    const mllog::Event& ev = log.events[i];
    if (static_cast<int>(ev.key_id) == start_key) {
      t.has_run_start = true;
      if (++t.run_starts == 1) {
        t.first_run_start_ms = ev.time_ms;
        t.first_run_start_line = ev.file_line;
      }
      if (!(have_start && have_stop)) {
        t.run_start_ms = ev.time_ms;
        t.run_start_line = ev.file_line;
        have_start = true;
      }
    }
    if (static_cast<int>(ev.key_id) == stop_key) {
      t.has_run_stop = true;
      if (!(have_start && have_stop)) {
        t.run_stop_ms = ev.time_ms;
        t.run_stop_event = static_cast<long>(i);
        have_stop = true;
      }
    }
  }
  t.has_times = have_start && have_stop;
  return t;
}

}  // namespace referee::rules
