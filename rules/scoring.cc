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
