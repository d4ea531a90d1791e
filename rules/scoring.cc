#include "rules/scoring.h"

#include <algorithm>
#include <cmath>

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

double olympic_mean(std::vector<double> times, int drop, int already_dropped) {
  if (already_dropped > drop) return NAN;
  OlympicWindow w = olympic_window(times.size(), drop, already_dropped);
  if (w.empty()) return NAN;
  std::sort(times.begin(), times.end());
  double sum = 0;  // Python's sum(): left to right
  for (long i = w.lo; i < w.hi; ++i) sum += times[static_cast<size_t>(i)];
  return sum * 1.0 / static_cast<double>(w.hi - w.lo);
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
  std::vector<double> ra(a.size()), rb(b.size());
  for (int i = 0; i < resamples; ++i) {
    for (auto& x : ra) x = a[next() % a.size()];
    for (auto& x : rb) x = b[next() % b.size()];
    ratios.push_back(olympic_mean(ra, drop_a, already_a) / olympic_mean(rb, drop_b, already_b));
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
