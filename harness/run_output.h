// What a failed run said last: the reason a run was left out quotes the last
// non-empty line of its output (an exception's message, most often), cut to a
// bounded length.
#pragma once

#include <string>

namespace referee::harness {

inline constexpr size_t kLastLineMax = 200;  // bytes quoted at most

// The last line of `output` with something besides spaces in it, without its
// line end; longer than `max` bytes: cut (at a UTF-8 character boundary) and
// ended with "...". "" when there is none.
std::string last_output_line(const std::string& output, size_t max = kLastLineMax);

}  // namespace referee::harness
