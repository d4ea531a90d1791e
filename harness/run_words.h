// One vocabulary for a run's state and verdict: the summary's table, its JSON
// (--progress=json), the manifest and the docs say the same words
// (docs/harness.md, "States and verdicts").
#pragma once

#include <string>

#include "harness/progress.h"
#include "harness/runner.h"

namespace referee::harness {

// "not started" (never launched), "succeeded", "failed" (also: could not
// start), "cancelled", "timed out", "stopped" (by the live checker), and
// while it goes on "running".
std::string state_word(const RunReport& r);

// "compliant", "not compliant" (the rules' verdict over a whole log, or the
// live checker stopped it for a rule it broke), "incomplete" (its log was cut
// short: cancelled, timed out or crashed before run_stop; no verdict of the
// rules applies), "not checked" (killed at a second interrupt), "not started".
std::string verdict_word(const RunReport& r);

// An evaluation as a table shows it: four decimals, rounded (0.900390625 ->
// "0.9004"), so a column lines up; "-" when none; as logged when not a number.
std::string eval_text(const std::string& logged);

// The header and one row of the table --progress=tty redraws: the key columns
// first (state, how far, time left, time to train, last evaluation, wall
// time), then the rest of progress_text, the whole cut to `width` (0: no cut)
// so that a narrow terminal still shows what matters.
std::string progress_header(size_t width);
std::string progress_row(const RunProgress& r, const ProgressModel& m, size_t width);

}  // namespace referee::harness
