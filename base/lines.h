// Splitting a byte stream into lines with bounded memory: what a run prints
// (a pipe, a file followed as it grows) arrives in pieces of any size, and a
// line without an end must not hold the whole stream in memory nor make each
// new piece rescan what came before.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace referee::base {

// The longest line kept whole: longer lines are cut there (the rest of the
// line, up to its end, is dropped and counted). An MLLOG line is a few hundred
// bytes; a line of a mebibyte is output gone wrong.
inline constexpr size_t kMaxLineBytes = size_t{1} << 20;

class LineSplitter {
 public:
  // Called with each line, without its "\n" (and without a "\r" before it);
  // `cut` is the number of bytes dropped from it (0 for a whole line).
  using Sink = std::function<void(std::string_view line, size_t cut)>;

  explicit LineSplitter(size_t max_line = kMaxLineBytes) : max_(max_line) {}

  // Adds bytes; sends each line they end. Work is linear in the bytes added.
  void feed(std::string_view bytes, const Sink& sink);
  // Sends what is left without a line end (if anything), as a last line.
  void finish(const Sink& sink);
  // Drops what is pending (the stream starts again).
  void reset();
  // Bytes held for the line not ended yet (at most max_line).
  size_t pending() const { return pending_.size(); }

 private:
  size_t max_;
  std::string pending_;
  size_t cut_ = 0;       // bytes of the current line dropped so far
  bool cut_cr_ = false;  // the last of them is a "\r"
};

// Reads bytes [0, end) of the file `fd` (with pread: its offset is not
// moved) and sends them in pieces of about `piece` bytes, each ending just
// after a "\n" (the last at `end`), so that no line is split between two
// pieces: memory holds a piece and the longest line, not the file. Returns
// false, with errno set, when a read fails (what was sent stays sent).
bool read_in_line_pieces(int fd, uint64_t end, const std::function<void(std::string_view)>& sink,
                         size_t piece = size_t{1} << 20);

}  // namespace referee::base
