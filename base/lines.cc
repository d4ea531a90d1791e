#include "base/lines.h"

#include <algorithm>


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

}  // namespace referee::base
