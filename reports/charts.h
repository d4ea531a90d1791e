// Inside reports/: Vega-Lite v5 specifications, built as data with their
// data inline (data.values). Each takes the chart's values (an array of
// objects, also written as the chart's CSV and JSON files).
#pragma once

#include <string>
#include <vector>

#include "reports/model.h"

namespace referee::reports::charts {

// A chart whose figures span this ratio or more (largest over smallest) draws
// them on a log scale: GPT-3's 3.9 minutes beside 224 would otherwise be a
// sliver beside a bar. Every figure must be above 0.
constexpr double kLogSpread = 20.0;
bool wide_spread(const std::vector<double>& figures);

// Every chart whose colour tells series apart has a legend that shows and
// hides them (a click keeps one series, shift-click adds, the rest fade).

// Bars: `x` (nominal, in the values' order) against `y` (quantitative, on a
// log scale when wide_spread), coloured by `color` ("" = one colour);
// `tooltip` fields shown on hover.
Json bars(const Json& values, const std::string& x, const std::string& x_title, const std::string& y,
          const std::string& y_title, const std::string& color, const std::vector<std::string>& tooltip);

// Round over round: `minutes` per `round` (in the values' order), one line
// per `group` (titled `group_title` in the legend); a row whose `record` is
// "carried record" is a triangle, a new result a circle.
Json rounds_line(const Json& values, const std::string& group_title = "Submitter");

// Scaling: log-log minutes against accelerators, one series per `series`;
// rows with kind "measured" are drawn as points and lines, kind "ideal" as
// dashed lines (linear scaling from the series' smallest result).
Json scaling(const Json& values);

// Head to head: every run as a dot (x minutes, on a log scale when
// wide_spread; y system, colour: counted or why not), each side's olympic
// mean as a tick (rows with kind "run" / "score"). Its height is set from the
// number of systems, 24 px a row.
Json runs(const Json& values);

// Power: each result's energy to train (`energy_kwh`) against its time
// (`minutes`), a point per result coloured by `submitter`; each axis on a
// log scale when wide_spread.
Json energy(const Json& values);

// Convergence: each run's metric against `x_title` (epochs or samples), rows
// {run, x, metric}. `target` (when has_target) is a horizontal rule; the RCP
// (when has_rcp): its mean as a vertical rule, mean ± stdev as a band, the
// least accepted mean as a dashed rule.
struct RcpLines {
  bool has_rcp = false;
  double mean = 0, stdev = 0, min_accepted = 0;
};
Json convergence(const Json& values, const std::string& x_title, const std::string& metric, bool has_target,
                 double target, const RcpLines& rcp);

}  // namespace referee::reports::charts
