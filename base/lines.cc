#include "base/lines.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string>


namespace referee::base {

void LineSplitter::feed(std::string_view bytes, const Sink& sink) {
  while (!bytes.empty()) {
    size_t nl = bytes.find('\n');
    std::string_view piece = nl == std::string_view::npos ? bytes : bytes.substr(0, nl);
    size_t room = max_ > pending_.size() ? max_ - pending_.size() : 0;
    size_t take = std::min(room, piece.size());
    pending_.append(piece.data(), take);
    if (take < piece.size()) {
      cut_ += piece.size() - take;
      cut_cr_ = piece.back() == '\r';
    }
    if (nl == std::string_view::npos) break;
    // A "\r" before the "\n" is not part of the line (it may have been cut off with the rest).
    if (cut_ == 0 && !pending_.empty() && pending_.back() == '\r') pending_.pop_back();
    else if (cut_ > 0 && cut_cr_) --cut_;
    sink(pending_, cut_);
    pending_.clear();
    cut_ = 0;
    bytes.remove_prefix(nl + 1);
  }
}

void LineSplitter::finish(const Sink& sink) {
  if (pending_.empty() && cut_ == 0) return;
  sink(pending_, cut_);
  reset();
}

void LineSplitter::reset() {
  pending_.clear();
  cut_ = 0;
}

bool read_in_line_pieces(int fd, uint64_t end, const std::function<void(std::string_view)>& sink, size_t piece) {
  std::string buf;
  uint64_t at = 0;  // file offset of buf[0]
  size_t have = 0;
  while (at + have < end) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(piece, end - at - have));
    if (buf.size() < have + want) buf.resize(have + want);
    ssize_t n = ::pread(fd, buf.data() + have, want, static_cast<off_t>(at + have));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) break;  // the file is shorter than `end`: what there is
    size_t fresh = have;
    have += static_cast<size_t>(n);
    std::string_view got(buf.data(), have);
    // Only the bytes just read are searched: a long line is not scanned again and again.
    size_t cut = have - 1;
    if (at + have < end) {
      size_t nl = got.substr(fresh).rfind('\n');
      if (nl == std::string_view::npos) continue;  // a line longer than a piece: read on
      cut = fresh + nl;
    }
    sink(got.substr(0, cut + 1));
    at += cut + 1;
    have -= cut + 1;
    std::memmove(buf.data(), buf.data() + cut + 1, have);
  }
  if (have > 0) sink(std::string_view(buf.data(), have));
  return true;
}

}  // namespace referee::base
