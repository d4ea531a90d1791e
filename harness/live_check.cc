#include "harness/live_check.h"

#include "base/file.h"
#include "base/lines.h"

namespace referee::harness {

bool is_irreparable(const rules::Finding& f) {
  const std::string& r = f.rule;
  auto ends_with = [&](std::string_view s) { return r.size() >= s.size() && r.compare(r.size() - s.size(), s.size(), s) == 0; };
  if (r == "parse" && f.message != "No log lines detected") return true;
  if (r == "enqueue_config") return true;
  if (ends_with(" CHECK") && r.find("ATLEAST_ONE_CHECK") == std::string::npos && r.find("END CHECK") == std::string::npos)
    return true;
  if (ends_with(" FIRST_CHECK")) return true;
  if (ends_with("REQ EXACTLY_ONE") && f.found.find("different values") != std::string::npos) return true;
  return false;
}

std::optional<rules::Finding> second_run_start(const mllog::ParsedLog& log) {
  int key = log.find_key("run_start");
  if (key < 0) return std::nullopt;
  const mllog::Event* first = nullptr;
  for (const auto& e : log.events) {
    if (e.key_id != static_cast<uint32_t>(key)) continue;
    if (!first) {
      first = &e;
      continue;
    }
    rules::Finding f;
    f.line = e.file_line;
    f.key = "run_start";
    f.rule = "harness: second run_start";
    f.message = "the run started again inside its log, and time to train would count from "
                "the last run_start (the consortium only warns)";
    f.expected = "one run_start per log";
    f.found = "run_start at lines " + std::to_string(first->file_line) + " and " + std::to_string(e.file_line);
    f.hint = "give each attempt its own log (a new run); a relaunched run cannot be a result";
    f.log_text = std::string(e.json.substr(0, 300));
    return f;
  }
  return std::nullopt;
}

namespace {

constexpr size_t kChunkBytes = 64 * 1024;

}  // namespace

LiveChecker::LiveChecker(const rules::RuleSet& rules, std::chrono::milliseconds min_interval)
    : rules_(rules), min_interval_(min_interval), stream_(std::make_unique<rules::LogStream>(rules)) {
  spool_ = std::tmpfile();
  spool_failed_ = spool_ == nullptr;
}

LiveChecker::~LiveChecker() {
  if (spool_) std::fclose(spool_);
}

std::optional<rules::Finding> LiveChecker::add_line(std::string_view line) {
  pending_.append(line);
  pending_.push_back('\n');
  size_t tok = line.rfind(mllog::kToken);
  if (tok == std::string_view::npos) {
    if (pending_.size() >= kChunkBytes) flush();
    return std::nullopt;
  }
  ++mllog_lines_;
  std::string_view json = line.substr(tok + mllog::kToken.size());
  if (json.find("\"eval_accuracy\"") != std::string_view::npos) {
    auto v = json.find("\"value\"");
    if (v != std::string_view::npos) {
      auto colon = json.find(':', v);
      auto end = json.find_first_of(",}", colon);
      if (colon != std::string_view::npos && end != std::string_view::npos) {
        std::string_view val = json.substr(colon + 1, end - colon - 1);
        while (!val.empty() && val.front() == ' ') val.remove_prefix(1);
        last_eval_ = std::string(val);
      }
    }
  }
  if (pending_.size() >= kChunkBytes) flush();
  if (reported_) return std::nullopt;
  auto now = std::chrono::steady_clock::now();
  if (now - last_check_ < min_interval_) return std::nullopt;
  return check_now();
}

// Parses what arrived since the last flush, feeds it to the rules once, and
// moves the text to the spool.
void LiveChecker::flush() {
  if (pending_.empty()) return;
  if (!finished_) {
    const mllog::ParsedLog& chunk = stream_->add(pending_, [this](const std::function<void(std::string_view)>& sink) {
      spooled_pieces(sink);
    });
    if (!second_) {
      int key = chunk.find_key("run_start");
      if (key >= 0)
        for (const auto& e : chunk.events) {
          if (e.key_id != static_cast<uint32_t>(key)) continue;
          if (!has_run_start_) {
            has_run_start_ = true;
            run_start_line_ = e.file_line;
            continue;
          }
          // The same finding as second_run_start over the whole log.
          mllog::ParsedLog two;
          two.keys = {"run_start"};
          mllog::Event first, second = e;
          first.file_line = run_start_line_;
          first.key_id = second.key_id = 0;
          two.events = {first, second};
          second_ = second_run_start(two);
          break;
        }
    }
  }
  if (!spool_failed_) {
    size_t wrote = std::fwrite(pending_.data(), 1, pending_.size(), spool_);
    if (wrote != pending_.size()) {
      // No room for the spool (or no temporary directory): the text stays in memory, as it once did.
      memory_ = spooled_file();
      spool_failed_ = true;
      memory_.append(pending_, wrote);
    }
  } else {
    memory_ += pending_;
  }
  pending_.clear();
  if (pending_.capacity() > 4 * kChunkBytes) pending_.shrink_to_fit();
}

std::string LiveChecker::spooled() { return spool_failed_ ? memory_ : spooled_file(); }

void LiveChecker::spooled_pieces(const std::function<void(std::string_view)>& sink) {
  if (spool_failed_) {
    if (!memory_.empty()) sink(memory_);
    return;
  }
  if (!spool_ || std::fflush(spool_) != 0) return;
  long end = std::ftell(spool_);
  if (end > 0) base::read_in_line_pieces(fileno(spool_), static_cast<uint64_t>(end), sink);
}

std::string LiveChecker::spooled_file() {
  std::string out;
  if (!spool_) return out;
  std::fflush(spool_);
  long end = std::ftell(spool_);
  if (end <= 0) return out;
  out.resize(static_cast<size_t>(end));
  std::rewind(spool_);
  size_t got = std::fread(out.data(), 1, out.size(), spool_);
  out.resize(got);
  std::fseek(spool_, 0, SEEK_END);
  return out;
}

std::string LiveChecker::text() {
  std::string out = spooled();
  out += pending_;
  return out;
}

std::optional<rules::Finding> LiveChecker::first_irreparable(const rules::FileVerdict& v) {
  for (const auto& f : v.errors) {
    if (is_irreparable(f)) {
      reported_ = true;
      return f;
    }
  }
  return std::nullopt;
}

std::optional<rules::Finding> LiveChecker::check_now() {
  last_check_ = std::chrono::steady_clock::now();
  if (reported_ || finished_ || mllog_lines_ == checked_lines_) return std::nullopt;
  flush();
  if (second_) {
    checked_lines_ = mllog_lines_;
    ++checks_;
    reported_ = true;
    return second_;
  }
  if (stream_->whole_log()) {
    // The rules need the whole log: the batch checker, when the log doubled.
    if (mllog_lines_ < next_full_) return std::nullopt;
    checked_lines_ = mllog_lines_;
    next_full_ = 2 * mllog_lines_;
    ++checks_;
    ++full_checks_;
    std::string all = text();
    mllog::ParsedLog log;
    reader_.parse(all, &log);
    rules::FileVerdict v = rules::check_log(rules_, log);
    // Lines that rule code made from the whole log (stable diffusion's
    // aggregated_eval_accuracy, from FID and CLIP lines logged apart) change
    // as later lines arrive: what is found about them can still be repaired.
    std::erase_if(v.errors, [&](const rules::Finding& f) { return !f.key.empty() && log.find_key(f.key) < 0; });
    return first_irreparable(v);
  }
  checked_lines_ = mllog_lines_;
  ++checks_;
  return first_irreparable(stream_->verdict());
}

rules::FileVerdict LiveChecker::verdict_so_far() {
  flush();
  if (stream_->whole_log() || finished_) return final_verdict();
  return stream_->verdict();
}

rules::FileVerdict LiveChecker::final_verdict() {
  flush();
  if (final_) return *final_;
  if (!stream_->whole_log()) {
    // What every line left in the rules' state, END blocks run once: no pass over the text.
    finished_ = true;
    final_ = stream_->final_verdict();
    return *final_;
  }
  mllog::ParsedLog log;
  if (spool_ && !spool_failed_ && std::fflush(spool_) == 0) {
    // The spool mapped, not copied: the log is read once more, from the page cache.
    mllog::FileBuffer buf;
    std::string err;
    if (buf.open(spool_path(), &err)) {
      reader_.parse(buf.view(), &log);
      return rules::check_log(rules_, log);
    }
  }
  std::string all = text();
  reader_.parse(all, &log);
  return rules::check_log(rules_, log);
}

std::string LiveChecker::spool_path() const { return spool_ ? "/proc/self/fd/" + std::to_string(fileno(spool_)) : ""; }

bool LiveChecker::save_text(const std::string& path, std::string* error) {
  flush();
  if (!spool_failed_ && spool_ && std::fflush(spool_) == 0) {
    base::Status s = base::copy_file_atomic(spool_path(), path);
    if (s.ok()) return true;
    // A temporary file that cannot be read back: the error names the file the run's log was to be.
    if (s.message.rfind("cannot read ", 0) != 0) {
      *error = s.message;
      return false;
    }
  }
  return base::write_file_atomic(path, spooled(), error);
}

}  // namespace referee::harness
