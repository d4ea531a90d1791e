#include "rules/compliance.h"
#include "rules/heap_pool.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <regex>

namespace referee::rules {

namespace {

std::string clip(std::string_view s, size_t n = 240) {
  if (s.size() <= n) return std::string(s);
  return std::string(s.substr(0, n)) + "...";
}

std::string base_name(const std::string& rel) {
  auto p = rel.rfind('/');
  return p == std::string::npos ? rel : rel.substr(p + 1);
}

// Messages keyed by log key replace each other, as in the consortium's checker.
class Messages {
 public:
  void put(const std::string& key, Finding f) {
    if (key.empty()) {
      fixed_.push_back(std::move(f));
      return;
    }
    for (auto& [k, v] : keyed_)
      if (k == key) {
        v = std::move(f);
        return;
      }
    keyed_.emplace_back(key, std::move(f));
  }
  void warn(const std::string& key, Finding f) {
    for (auto& [k, v] : warnings_)
      if (k == key) {
        v = std::move(f);
        return;
      }
    warnings_.emplace_back(key, std::move(f));
  }
  // Replays what `o` recorded (a rule file's own messages) on top of these.
  void absorb(const Messages& o) {
    for (const auto& [k, v] : o.keyed_) put(k, v);
    for (const auto& f : o.fixed_) fixed_.push_back(f);
  }
  void drop(const std::string& key) {
    keyed_.erase(std::remove_if(keyed_.begin(), keyed_.end(), [&](const auto& e) { return e.first == key; }),
                 keyed_.end());
  }
  void finish(FileVerdict* out) {
    for (auto& [k, v] : keyed_) out->errors.push_back(std::move(v));
    for (auto& f : fixed_) out->errors.push_back(std::move(f));
    for (auto& [k, v] : warnings_) out->warnings.push_back(std::move(v));
    std::stable_sort(out->errors.begin(), out->errors.end(),
                     [](const Finding& a, const Finding& b) { return a.line < b.line; });
    out->compliant = out->errors.empty();
  }

 private:
  std::vector<std::pair<std::string, Finding>> keyed_;
  std::vector<Finding> fixed_;
  std::vector<std::pair<std::string, Finding>> warnings_;
};

// Runs a rule file's BEGIN or END PRE code (`what`); a Python exception
// becomes the finding "<file> <what>": "<what> code raised ...", with the
// code itself as what was expected when `quote_code`.
void exec_reporting(const Code& code, Frame& fr, const RuleFile& rf, const char* what, Messages& out,
                    bool quote_code) {
  try {
    code.exec(fr);
  } catch (const PyError& e) {
    Finding f;
    f.rule = base_name(rf.rel) + " " + what;
    f.message = std::string(what) + " code raised " + e.what();
    if (quote_code) f.expected = clip(code.source());
    out.put("", std::move(f));
  }
}

// Equality of two values read from JSON, as list.count() sees them in the
// consortium's checker: Python's json returns one shared NaN object and
// list comparison tests identity first, so NaN equals NaN here.
// Whether py_repr(a) == py_repr(b) is sure without writing them: the same
// scalar (a float to the bit).
bool same_repr(const Value& a, const Value& b) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case VKind::None: return true;
    case VKind::Bool: return a.b == b.b;
    case VKind::Int: return a.i == b.i;
    case VKind::Float: return std::memcmp(&a.f, &b.f, sizeof a.f) == 0;
    case VKind::Str: return a.h == b.h || a.s() == b.s();
    default: return false;
  }
}

bool json_same(const Value& a, const Value& b) {
  if (a.kind == VKind::Float && b.kind == VKind::Float && std::isnan(a.f) && std::isnan(b.f)) return true;
  if ((a.kind == VKind::List || a.kind == VKind::Tuple || a.kind == VKind::Dict) && a.kind == b.kind)
    return py_items_eq(a, b, json_same);
  return py_eq(a, b);
}

struct Slot {
  uint32_t key;    // index into Run::keys_
  uint32_t event;  // index into log.events, or UINT32_MAX for lines made by rule code
  Value obj;       // the LineObj, made on first use
};

// What one rule file keeps about one of its KEY records while the lines go by:
// counts and the few lines and values its requirements report, never the
// list of occurrences.
struct RecState {
  size_t n = 0;
  bool done = false;        // submission_* keys run their code once
  int64_t atleast = -1;     // ATLEAST_ONE_CHECK passes, -1 before the first occurrence
  bool exactly_one = false;
  Value first;              // EXACTLY_ONE: the first value,
  bool all_same = true;     // whether every later one equals it,
  std::vector<std::string> distinct;  // and the distinct values as text (at most kMaxDistinct)
  // Occurrences the findings name: slots in a batch run, lines in a live one.
  size_t s0 = 0, s1 = 0, chosen = 0, last = 0;
  uint32_t l0 = 0, l1 = 0, lchosen = 0, llast = 0;
  Value last_line;          // live: the last occurrence in the chunk being fed, and
  std::string last_value;   // its value's text, written when the file is done with the chunk
};
constexpr size_t kMaxDistinct = 64;

// One rule file's pass over the log: its `s`, and per KEY record what the
// requirements after the lines need.
struct FileState {
  const RuleFile* rf = nullptr;
  Vars state;
  std::vector<int> rec_of;  // log key id -> record, -1 when the file has none
  std::vector<RecState> recs;
  bool seen_run_stop = false;
  // Live runs only.
  Messages own;                 // what the file recorded, replayed in queue order
  int parent = -1;              // the file whose code enqueued it (-1: the entry)
  int64_t at_line = -1;         // MLLOG line index of the enqueuing line, -1 for BEGIN code
  uint64_t seq = 0;             // call order
  bool has_finding = false;     // a file that could not be found or loaded:
  Finding finding;              // its finding
  bool catch_up = false;        // enqueued late: has not seen the lines before the current chunk
};

bool uses_whole_log(const RuleFile& rf) {
  auto reads = [](const Code& c) { return c.source().find("loglines") != std::string::npos; };
  if (reads(rf.begin) || reads(rf.end_pre)) return true;
  if (rf.end_pre.source().find("enqueue_config") != std::string::npos) return true;
  for (const auto& c : rf.end_checks)
    if (reads(c) || c.source().find("enqueue_config") != std::string::npos) return true;
  for (const auto& k : rf.keys) {
    if (reads(k.pre) || reads(k.post) || reads(k.first_check) || reads(k.atleast_one_check)) return true;
    for (const auto& c : k.checks)
      if (reads(c)) return true;
  }
  return false;
}

Finding parse_finding(const mllog::ParseError& e) {
  Finding f;
  f.line = e.file_line;
  f.rule = "parse";
  f.message = "MLLOG line does not parse: " + e.message;
  f.expected = "one JSON object with key, value, metadata and time_ms after \":::MLLOG \"";
  f.found = e.text;
  f.log_text = e.text;
  f.hint = "a truncated or interleaved line is the usual cause: make sure each rank writes whole lines";
  return f;
}

// Lines that do not parse are listed up to kMaxParseFindings; the rest are counted in one more finding.
constexpr size_t kMaxParseFindings = 100;

Finding more_parse_errors(size_t total) {
  Finding f;
  f.rule = "parse";
  f.message = std::to_string(total - kMaxParseFindings) + " more MLLOG line(s) do not parse (the first " +
              std::to_string(kMaxParseFindings) + " are listed)";
  f.expected = "one JSON object with key, value, metadata and time_ms after \":::MLLOG \"";
  f.found = std::to_string(total) + " lines that do not parse";
  f.hint = "a damaged log: look at how it was written (interleaved ranks, a full disk, a binary dump)";
  return f;
}

Finding no_lines_finding(size_t parse_errors) {
  Finding f;
  f.rule = "parse";
  f.message = "No log lines detected";
  f.expected = "lines containing \":::MLLOG {json}\"";
  if (parse_errors == 0) {
    f.found = "none";
    f.hint = "is this the right file? result files hold the MLLOG output of one run";
  } else {
    // Lines with the token exist, but none of them parses (listed above).
    f.found = std::to_string(parse_errors) + " line(s) with \":::MLLOG \", none of them valid JSON";
    f.hint = "the log is damaged or not written by an MLLOG logger: each line that does not parse is listed with this file";
  }
  return f;
}

// A line of a live run is a LineObj whose `json` views the chunk it was
// parsed from while the chunk is fed; a line rule code keeps (in `s`, say)
// takes a copy of its text into `text` before the chunk goes
// (Run::release_slots).

class Run : public Host {
  // A rule file to run, and the code that asked for it.
  struct Enqueued {
    std::string rel;
    std::string by_file;   // the rule file whose code enqueued it ("" for the entry)
    std::string by_key;    // the KEY record whose code did, "" for BEGIN/END code
    bool by_line = false;  // code that ran for a log line:
    uint32_t line = 0;     // its line in the file,
    Value value;           // its v['value'],
    std::string log_text;  // and its text
  };

 public:
  Run(const RuleSet& rules, const mllog::ParsedLog& log) : rules_(rules), log_(&log) {
    keys_ = log.keys;
    for (uint32_t i = 0; i < keys_.size(); ++i) {
      key_values_.push_back(Value::str(keys_[i]));
      if (keys_[i] == "run_stop") run_stop_key_ = i;
    }
    slots_.reserve(log.events.size());
    for (uint32_t i = 0; i < log.events.size(); ++i) slots_.push_back(Slot{log.events[i].key_id, i, Value()});
  }
  // A live run: lines come in chunks (live_feed).
  explicit Run(const RuleSet& rules) : rules_(rules), log_(&empty_), live_(true) {}

  FileVerdict run(const std::string& entry) {
    FileVerdict out;
    out.mllog_lines = log_->mllog_lines;
    for (size_t i = 0; i < log_->errors.size() && i < kMaxParseErrors; ++i) msgs_.put("", parse_finding(log_->errors[i]));
    if (log_->errors.size() > kMaxParseErrors) msgs_.put("", more_parse_errors(log_->errors.size()));
    if (slots_.empty()) {
      msgs_.put("", no_lines_finding(log_->errors.size()));
      // Not a log: that is the reason, alone. The consortium's checker also
      // runs every rule over no lines, and fails for the same reason with
      // dozens of "missing" messages that say nothing more.
      msgs_.finish(&out);
      return out;
    }
    queue_.push_back(Enqueued{entry.empty() ? rules_.entry() : entry, "", "", false, 0, Value(), ""});
    size_t guard = 0;
    while (!queue_.empty()) {
      Enqueued item = std::move(queue_.front());
      queue_.erase(queue_.begin());
      if (++guard > 1000) break;  // enqueue loops
      std::string why;
      const RuleFile* rf = rules_.resolve(item.rel, &why);
      std::string load_error;
      if (!rf) rules_.file(item.rel, &load_error);
      if (!rf && !load_error.empty()) {
        // A rule file of the set that does not load: the rule set is broken, not the log.
        Finding f;
        f.rule = "enqueue_config";
        f.message = "rule file " + item.rel + " cannot be loaded: " + load_error;
        f.hint = "the rule set is broken; fix the file (referee rules list --ruleset " + rules_.id().id() + " checks every file)";
        msgs_.put("", std::move(f));
        continue;
      }
      if (!rf) {
        msgs_.put("", missing_file(item, why));
        continue;
      }
      run_file(*rf);
    }
    msgs_.finish(&out);
    return out;
  }

  // Host
  void enqueue_config(const std::string& path) override {
    Enqueued e{path, cur_file_ ? base_name(cur_file_->rel) : "", cur_key_, false, 0, Value(), ""};
    if (cur_slot_ < slots_.size()) {
      // What the line is now: later BEGIN code may rebuild the list of lines.
      e.by_line = true;
      e.line = line_of(cur_slot_);
      e.value = line_value(static_cast<uint32_t>(cur_slot_));
      e.log_text = line_text(cur_slot_);
    }
    if (live_) {
      pending_.push_back(Pending{std::move(e), cur_index_,
                                 cur_slot_ < slots_.size() ? static_cast<int64_t>(log_->events[slots_[cur_slot_].event].lineno) : -1,
                                 ++seq_});
      return;
    }
    queue_.push_back(std::move(e));
  }

  // ---- Live runs.
  //
  // Every rule file the log enqueues gets its own FileState, fed each chunk
  // of new lines once. Files are independent (each has its own `s`), so a
  // file may see a chunk before or after another; what the batch order
  // decides (which messages replace which) is replayed in live_verdict in
  // the batch queue order. A file enqueued late first reads the lines
  // before the current chunk again (`prefix`), once.

  // Feeds the lines of `chunk`: its events' file_line and lineno are already
  // those of the whole log. `prefix` returns the text of the log before the chunk.
  void live_feed(const mllog::ParsedLog& chunk, const TextPieces& prefix) {
    for (const auto& e : chunk.errors) {
      ++parse_error_count_;
      if (parse_errors_.size() < kMaxParseErrors) parse_errors_.push_back(parse_finding(e));
    }
    if (whole_log_ || chunk.events.empty()) return;
    set_chunk(chunk);
    if (!started_) {
      started_ = true;
      add_file(Enqueued{rules_.entry(), "", "", false, 0, Value(), ""}, -1, -1, 0);
      settle_pending();
    }
    for (size_t f = 0; f < files_.size() && !whole_log_; ++f) {
      FileState& fs = *files_[f];
      if (!fs.rf) continue;
      if (fs.catch_up) {
        fs.catch_up = false;
        if (events_before_ > 0) {
          // Enqueued while this chunk was read: the lines before it, again,
          // piece by piece (numbered as LogStream::add numbers them).
          const mllog::ParsedLog* saved = log_;
          std::vector<Slot> saved_slots = std::move(slots_);
          mllog::ParsedLog before;
          mllog::LogReader reader;
          uint64_t breaks = 0, mllog = 0;
          prefix([&](std::string_view piece) {
            reader.parse(piece, &before);
            for (auto& e : before.events) e.file_line += static_cast<uint32_t>(breaks), e.lineno += static_cast<uint32_t>(mllog);
            breaks += before.line_breaks;
            mllog += before.mllog_lines;
            if (before.events.empty()) return;
            set_chunk(before);
            feed_file(f);
            release_slots();  // the piece's text goes when this returns
          });
          log_ = saved;
          slots_ = std::move(saved_slots);
        }
      }
      feed_file(f);
    }
    events_before_ += chunk.events.size();
    release_slots();
    log_ = &empty_;
  }

  // The findings the batch checker would give over the lines fed so far,
  // but for END blocks (they run once, at the end: `with_end`, after which
  // no more lines may be fed).
  FileVerdict live_verdict(bool with_end = false) {
    FileVerdict out;
    Messages m;
    for (const auto& f : parse_errors_) m.put("", f);
    if (parse_error_count_ > kMaxParseErrors) m.put("", more_parse_errors(parse_error_count_));
    if (!started_) {
      m.put("", no_lines_finding(parse_error_count_));
      m.finish(&out);
      return out;
    }
    std::vector<size_t> order(files_.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return queue_before(a, b); });
    for (size_t i : order) {
      const FileState& fs = *files_[i];
      if (!fs.rf) {
        m.put("", fs.finding);
        continue;
      }
      for (const auto& k : fs.rf->keys) m.drop(k.name);
      m.absorb(fs.own);
      finish_file(fs, m);
      if (with_end) {
        cur_file_ = fs.rf;
        cur_index_ = static_cast<int>(i);
        run_end(*files_[i], m);
      }
    }
    m.finish(&out);
    return out;
  }

  // A rule file reads the whole log (`loglines`), or its END code enqueues
  // files, or the log enqueued too many files: only the batch checker over
  // the whole log gives its verdicts.
  bool whole_log() const { return whole_log_; }

 private:
  struct Pending {
    Enqueued item;
    int parent;
    int64_t at_line;
    uint64_t seq;
  };
  static constexpr size_t kMaxParseErrors = kMaxParseFindings;
  static constexpr size_t kMaxLiveFiles = 256;

  void set_chunk(const mllog::ParsedLog& chunk) {
    release_slots();
    log_ = &chunk;
    slots_.reserve(chunk.events.size());
    std::vector<uint32_t> ids;
    ids.reserve(chunk.keys.size());
    for (const auto& k : chunk.keys) ids.push_back(intern_key(k));
    for (uint32_t i = 0; i < chunk.events.size(); ++i) slots_.push_back(Slot{ids[chunk.events[i].key_id], i, Value()});
  }

  void feed_file(size_t f) {
    FileState& fs = *files_[f];
    cur_file_ = fs.rf;
    cur_index_ = static_cast<int>(f);
    sink_ = &fs.own;
    for (size_t i = 0; i < slots_.size(); ++i) feed_line(fs, i);
    // ATLEAST_ONE_CHECK's last value as the batch checker writes it: after
    // this file's code, before later files' code runs on the same lines.
    for (auto& st : fs.recs) {
      if (st.last_line.kind == VKind::None) continue;
      st.last_value = value_text_of(st.last_line);
      st.last_line = Value();
    }
    cur_key_.clear();
    cur_slot_ = SIZE_MAX;
    sink_ = &msgs_;
    settle_pending();
  }

  // Files enqueued by the code that just ran join the live set.
  void settle_pending() {
    while (!pending_.empty() && !whole_log_) {
      Pending p = std::move(pending_.front());
      pending_.erase(pending_.begin());
      add_file(std::move(p.item), p.parent, p.at_line, p.seq);
    }
  }

  void add_file(Enqueued item, int parent, int64_t at_line, uint64_t seq) {
    if (files_.size() >= kMaxLiveFiles) {
      whole_log_ = true;
      return;
    }
    auto fs = std::make_unique<FileState>();
    fs->parent = parent;
    fs->at_line = at_line;
    fs->seq = seq;
    fs->catch_up = true;
    std::string why;
    const RuleFile* rf = rules_.resolve(item.rel, &why);
    std::string load_error;
    if (!rf) rules_.file(item.rel, &load_error);
    if (!rf && !load_error.empty()) {
      fs->finding.rule = "enqueue_config";
      fs->finding.message = "rule file " + item.rel + " cannot be loaded: " + load_error;
      fs->finding.hint = "the rule set is broken; fix the file (referee rules list --ruleset " + rules_.id().id() + " checks every file)";
    } else if (!rf) {
      fs->finding = missing_file(item, why);
    }
    if (!rf) {
      files_.push_back(std::move(fs));
      return;
    }
    if (uses_whole_log(*rf)) {
      whole_log_ = true;
      return;
    }
    files_.push_back(std::move(fs));
    size_t index = files_.size() - 1;
    FileState& f = *files_[index];
    cur_index_ = static_cast<int>(index);
    sink_ = &f.own;
    begin_file(*rf, &f);
    sink_ = &msgs_;
  }

  // Whether file a comes before file b in the batch checker's queue: a FIFO
  // queue appends what a file enqueues while it runs, so files come in the
  // order of the files that enqueued them, then of the line that did.
  bool queue_before(size_t a, size_t b) const {
    if (a == b) return false;
    const FileState& x = *files_[a];
    const FileState& y = *files_[b];
    if (x.parent < 0) return true;
    if (y.parent < 0) return false;
    if (x.parent == y.parent) return x.at_line != y.at_line ? x.at_line < y.at_line : x.seq < y.seq;
    return queue_before(static_cast<size_t>(x.parent), static_cast<size_t>(y.parent));
  }

 public:

  void load_line_value(const LineObj& line) override {
    // Members read alone before are taken as they are: rule code may have changed them.
    Value value, meta;
    line_members_from_json(line.json, line.member_value_loaded ? nullptr : &value,
                           line.member_meta_loaded ? nullptr : &meta);
    if (line.member_value_loaded) value = line.member_value;
    if (line.member_meta_loaded) meta = line.member_meta;
    line.value = line_value_dict(std::move(value), std::move(meta));
    line.value_loaded = true;
  }

  bool line_text_lasts() const override { return !live_; }

  const Value* line_member(const LineObj& line, LineMember m) override {
    bool is_value = m == LineMember::Value;
    bool& loaded = is_value ? line.member_value_loaded : line.member_meta_loaded;
    Value& member = is_value ? line.member_value : line.member_meta;
    if (!loaded) {
      line_members_from_json(line.json, is_value ? &member : nullptr, is_value ? nullptr : &member);
      loaded = true;
    }
    return &member;
  }

  Value loglines() override {
    if (loglines_.kind != VKind::List) {
      std::vector<Value> items;
      items.reserve(slots_.size());
      for (size_t i = 0; i < slots_.size(); ++i) items.push_back(obj(i));
      loglines_ = Value::list(std::move(items));
    }
    return loglines_;
  }

 private:
  const Value& obj(size_t i) {
    Slot& s = slots_[i];
    if (s.obj.kind == VKind::None) {
      const auto& ev = log_->events[s.event];
      std::shared_ptr<LineObj> l;
      if (live_) {
        // The chunk's text lives while it is fed: no copy unless kept (release_slots).
        l = std::allocate_shared<LineObj>(HeapPool<LineObj>());
        l->json = ev.json;
      } else {
        l = std::make_shared<LineObj>();
        l->json = ev.json;
      }
      line_member_starts(*l, ev.value_at, ev.meta_at);
      l->key = key_values_[s.key];
      l->timestamp = Value::number(ev.time_ms);
      l->lineno = Value::integer(ev.lineno);
      s.obj.kind = VKind::Line;
      s.obj.h = std::move(l);
    }
    return s.obj;
  }


  // "Could not find config file", and when the path was built from a logged
  // value, which line, key and value chose it.
  Finding missing_file(const Enqueued& item, const std::string& why) {
    Finding f;
    f.rule = "enqueue_config";
    f.message = "Could not find config file: " + item.rel;
    f.expected = "a rule file " + item.rel + " under " + rules_.checker_root();
    f.found = why;
    f.hint = "the log names a benchmark or division this rule set does not have (see submission_benchmark and submission_division)";
    if (!item.by_line) return f;
    const Value& v = item.value;
    std::string text = v.kind == VKind::None ? "" : py_str(v);
    f.line = item.line;
    f.key = item.by_key;
    f.log_text = item.log_text;
    size_t at = text.empty() ? std::string::npos : item.rel.find(text);
    if (at == std::string::npos) {
      f.message += " (enqueued by " + item.by_file + " KEY " + item.by_key + " for this line)";
      return f;
    }
    f.rule = item.by_file + " KEY " + item.by_key + " enqueue_config";
    f.message = "Could not find config file: " + item.rel + ", chosen by the logged value " + item.by_key + " = " +
                clip(py_repr(v), 80);
    // Which values would have found a file: the path with the value as a wildcard.
    std::string head = item.rel.substr(0, at), tail = item.rel.substr(at + text.size());
    std::vector<std::string> values;
    std::error_code ec;
    std::filesystem::path dir = std::filesystem::path(rules_.checker_root()) / std::filesystem::path(item.rel).parent_path();
    std::string dir_rel = std::filesystem::path(item.rel).parent_path().generic_string();
    std::string dir_prefix = dir_rel.empty() ? "" : dir_rel + "/";
    if (head.rfind(dir_prefix, 0) == 0 && tail.find('/') == std::string::npos && std::filesystem::is_directory(dir, ec)) {
      std::string name_head = head.substr(dir_prefix.size());
      for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
        std::string name = e.path().filename().string();
        if (name.size() > name_head.size() + tail.size() && name.rfind(name_head, 0) == 0 &&
            name.compare(name.size() - tail.size(), tail.size(), tail) == 0)
          values.push_back(name.substr(name_head.size(), name.size() - name_head.size() - tail.size()));
      }
      std::sort(values.begin(), values.end());
    }
    std::string listed;
    for (const auto& x : values) listed += (listed.empty() ? "'" : ", '") + x + "'";
    f.expected = "a value of '" + item.by_key + "' with a rule file " + head + "<value>" + tail +
                 (listed.empty() ? "" : ": one of " + listed);
    f.found = item.by_key + " = " + clip(py_repr(v), 80) + " (" + item.rel + ": " + why + ")";
    f.hint = "the rules check '" + item.by_key + "' further only for the values they have a file for; log one of them, or submit to the open division";
    return f;
  }

  uint32_t intern_key(const std::string& k) {
    for (uint32_t i = 0; i < keys_.size(); ++i)
      if (keys_[i] == k) return i;
    keys_.push_back(k);
    key_values_.push_back(Value::str(k));
    if (k == "run_stop") run_stop_key_ = static_cast<uint32_t>(keys_.size() - 1);
    return static_cast<uint32_t>(keys_.size() - 1);
  }

  // After BEGIN code touched `loglines`, the list is the truth.
  void adopt_loglines() {
    if (loglines_.kind != VKind::List) return;
    std::vector<Slot> next;
    for (const auto& item : loglines_.items()) {
      if (item.kind != VKind::Line) continue;
      const LineObj& l = item.line();
      std::string key = l.key.kind == VKind::Str ? l.key.s() : py_str(l.key);
      uint32_t event = UINT32_MAX;
      // keep the event index when the object is an original line
      next.push_back(Slot{intern_key(key), event, item});
    }
    slots_ = std::move(next);
    loglines_ = Value();
  }

  uint32_t line_of(size_t slot) const {
    const Slot& s = slots_[slot];
    if (s.event != UINT32_MAX) return log_->events[s.event].file_line;
    if (s.obj.kind == VKind::Line) {
      // lines copied by rule code keep their json view; find it
      const LineObj& l = s.obj.line();
      for (const auto& ev : log_->events)
        if (ev.json.data() == l.json.data()) return ev.file_line;
    }
    return 0;
  }

  std::string line_text(size_t slot) const {
    const Slot& s = slots_[slot];
    if (s.obj.kind == VKind::Line && s.obj.line().full_loaded) return clip(py_str(s.obj.line().full_string));
    if (s.event != UINT32_MAX) return clip(std::string(mllog::kToken) + std::string(log_->events[s.event].json));
    if (s.obj.kind == VKind::Line) return clip(std::string(mllog::kToken) + std::string(s.obj.line().json));
    return "";
  }

  std::string value_text(size_t slot) { return value_text_of(obj_or_existing(slot)); }
  // The `value` of a line object, as a finding shows it.
  std::string value_text_of(const Value& o) {
    if (o.kind != VKind::Line) return "";
    const LineObj& l = o.line();
    if (!l.value_loaded) return clip(py_repr(line_member_of(l, LineMember::Value, *this)), 160);
    if (l.value.kind == VKind::Dict) {
      Value* v = l.value.d().find_str("value");
      if (v) return clip(py_repr(*v), 160);
    }
    return clip(py_repr(l.value), 160);
  }
  const Value& obj_or_existing(size_t slot) {
    if (slots_[slot].event != UINT32_MAX) return obj(slot);
    return slots_[slot].obj;
  }

  // Values of s['...'] that a failed check reads: they explain most failures.
  static std::string context_for(const std::string& src, Vars& globals) {
    static const std::regex re(R"(s\[\s*'([^']+)'\s*\])");
    std::string out;
    Value* s = globals.find(kNameS);
    if (!s || s->kind != VKind::Dict) return out;
    std::vector<std::string> seen;
    for (auto it = std::sregex_iterator(src.begin(), src.end(), re); it != std::sregex_iterator(); ++it) {
      std::string k = (*it)[1].str();
      if (std::find(seen.begin(), seen.end(), k) != seen.end()) continue;
      seen.push_back(k);
      Value* x = s->d().find_str(k);
      if (!out.empty()) out += ", ";
      out += "s['" + k + "'] = " + (x ? clip(py_repr(*x), 80) : std::string("<unset>"));
    }
    return out;
  }

  std::string hint_for(const std::string& key, const std::string& src) const {
    if (src.find("first_init_start") != std::string::npos)
      return "initialization took longer than the rules allow; time from the first init_start to init_stop must stay within the limit";
    if (src.find("init_stopped") != std::string::npos && key == "run_start")
      return "run_start must come after init_stop";
    if (src.find("'status' in") != std::string::npos) return "run_stop needs metadata.status (\"success\" or \"aborted\")";
    if (src.find("v['value'] ==") != std::string::npos || src.find("v['value'] in") != std::string::npos)
      return "closed division fixes this hyperparameter: log the reference value or submit to the open division";
    if (src.find("run_started") != std::string::npos) return "this line must come after run_start";
    return "";
  }

  void check_failed(const RuleFile& rf, const KeyRecord& rec, size_t slot, const std::string& what,
                    const Code& code, Vars& globals, const PyError* err) {
    Finding f;
    f.line = line_of(slot);
    f.key = rec.name;
    f.rule = base_name(rf.rel) + " KEY " + rec.name + " " + what;
    f.log_text = line_text(slot);
    f.expected = code.source();
    std::string ctx = context_for(code.source(), globals);
    f.found = "value = " + value_text(slot) + (ctx.empty() ? "" : "; " + ctx);
    // A time window (ll.timestamp - s['first_init_start'] < ...): the gap itself, in minutes too.
    std::string gap_words;
    {
      static const std::regex gap_re(R"(ll\.timestamp\s*-\s*s\[\s*'([^']+)'\s*\])");
      std::smatch m;
      const std::string& src = code.source();
      Value* st = globals.find(kNameS);
      if (std::regex_search(src, m, gap_re) && st && st->kind == VKind::Dict)
        if (Value* from = st->d().find_str(m[1].str()); from && from->is_num()) {
          double gap = log_->events[slots_[slot].event].time_ms - from->as_double();
          char buf[160];
          std::snprintf(buf, sizeof buf, "; ll.timestamp - s['%s'] = %.0f ms (%.1f min)", m[1].str().c_str(), gap,
                        gap / 60000.0);
          f.found += buf;
          // The limit, in minutes: s['compile_time_mins'] * 60 * 1e3 in the training rules.
          static const std::regex window_re(R"(s\[\s*'([^']+)'\s*\]\s*\*\s*60)");
          std::smatch w;
          Value* window = std::regex_search(src, w, window_re) ? st->d().find_str(w[1].str()) : nullptr;
          if (m[1].str() == "first_init_start" && window && window->is_num()) {
            std::snprintf(buf, sizeof buf, "initialization took %.1f minutes (from the first init_start to %s); the rules "
                          "allow less than %s", gap / 60000.0, rec.name.c_str(), py_str(*window).c_str());
            gap_words = std::string(buf) + " minutes";
          }
        }
    }
    if (err) {
      f.message = "evaluating " + what + " for '" + rec.name + "' raised " + err->what();
      f.hint = "the line lacks a field the rule reads, or has a value of the wrong type";
    } else {
      f.message = what + " for '" + rec.name + "' failed" + (gap_words.empty() ? "" : ": " + gap_words);
      f.hint = hint_for(rec.name, code.source());
    }
    sink_->put(slots_key(slot), std::move(f));
  }

  std::string slots_key(size_t slot) const { return keys_[slots_[slot].key]; }

  void code_failed(const RuleFile& rf, const KeyRecord& rec, size_t slot, const std::string& what, const PyError& err) {
    Finding f;
    f.line = line_of(slot);
    f.key = rec.name;
    f.rule = base_name(rf.rel) + " KEY " + rec.name + " " + what;
    f.message = "running " + what + " code for '" + rec.name + "' raised " + err.what();
    f.log_text = line_text(slot);
    f.expected = what == "PRE" ? rec.pre.source() : rec.post.source();
    f.found = "value = " + value_text(slot);
    sink_->put(slots_key(slot), std::move(f));
  }

  void run_file(const RuleFile& rf) {
    FileState fs;
    begin_file(rf, &fs);
    for (size_t i = 0; i < slots_.size(); ++i) feed_line(fs, i);
    cur_key_.clear();
    cur_slot_ = SIZE_MAX;
    finish_file(fs, msgs_);
    run_end(fs, msgs_);
  }

  // The file's fresh state and its BEGIN code; its records replace earlier
  // files' messages about the same keys (in msgs_: a batch run).
  void begin_file(const RuleFile& rf, FileState* fs) {
    cur_file_ = &rf;
    cur_key_.clear();
    cur_slot_ = SIZE_MAX;
    fs->rf = &rf;
    fs->state.set(kNameS, Value::dict());
    fs->recs.resize(rf.keys.size());
    for (size_t r = 0; r < rf.keys.size(); ++r) fs->recs[r].exactly_one = rf.keys[r].req == "EXACTLY_ONE";
    if (rf.has_begin) {
      Vars locals;
      Frame fr{&locals, &fs->state, nullptr, this, 0};
      exec_reporting(rf.begin, fr, rf, "BEGIN", *sink_, true);
      if (!live_) adopt_loglines();
    }
    if (!live_)
      for (const auto& k : rf.keys) msgs_.drop(k.name);
  }

  // Line i (a slot) through one rule file, as the consortium's loop does.
  void feed_line(FileState& fs, size_t i) {
    const RuleFile& rf = *fs.rf;
    uint32_t key = slots_[i].key;
    if (key >= fs.rec_of.size()) {
      size_t from = fs.rec_of.size();
      fs.rec_of.resize(keys_.size(), -1);
      for (size_t k = from; k < keys_.size(); ++k) fs.rec_of[k] = rf.find(keys_[k]);
    }
    int r = fs.rec_of[key];
    if (r < 0) {
      if (key == run_stop_key_) fs.seen_run_stop = true;
      return;
    }
    feed_record(fs, static_cast<size_t>(r), i);
    if (key == run_stop_key_) fs.seen_run_stop = true;
  }

  void feed_record(FileState& fs, size_t r, size_t i) {
    const RuleFile& rf = *fs.rf;
    const KeyRecord& rec = rf.keys[r];
    RecState& st = fs.recs[r];
    ++st.n;
    cur_key_ = rec.name;
    cur_slot_ = i;
    const Value& ll = obj_or_existing(i);
    Vars& locals = locals_;
    locals.vars.clear();
    Frame fr{&locals, &fs.state, &ll, this, 0};
    if (!st.done) {
      // Each piece of code runs with fresh locals, as the consortium's
      // checker gives each exec() and eval() its own {'ll': ..., 'v': ...}:
      // what PRE binds is not seen by the CHECKs, nor POST's by FIRST_CHECK.
      if (rec.has_pre) {
        try { rec.pre.exec(fr); } catch (const PyError& e) { code_failed(rf, rec, i, "PRE", e); }
        locals.vars.clear();
      }
      for (const auto& c : rec.checks) {
        try {
          if (!py_truthy(c.eval(fr))) check_failed(rf, rec, i, "CHECK", c, fs.state, nullptr);
        } catch (const PyError& e) {
          check_failed(rf, rec, i, "CHECK", c, fs.state, &e);
        }
      }
      if (rec.has_post) {
        locals.vars.clear();
        try { rec.post.exec(fr); } catch (const PyError& e) { code_failed(rf, rec, i, "POST", e); }
      }
    }
    if (rec.has_first_check && st.n == 1) {
      locals.vars.clear();
      try {
        if (!py_truthy(rec.first_check.eval(fr))) check_failed(rf, rec, i, "FIRST_CHECK", rec.first_check, fs.state, nullptr);
      } catch (const PyError& e) {
        check_failed(rf, rec, i, "FIRST_CHECK", rec.first_check, fs.state, &e);
      }
    }
    if (rec.has_atleast_one) {
      if (st.atleast < 0) st.atleast = 0;
      locals.vars.clear();
      try {
        if (py_truthy(rec.atleast_one_check.eval(fr))) ++st.atleast;
      } catch (const PyError&) {
        // The consortium's checker stops with a traceback here; referee counts it as not passing.
      }
    }
    if (rec.name.find("submission_") != std::string::npos) st.done = true;
    // What the requirements after the lines report.
    uint32_t line = live_ ? line_of(i) : 0;
    if (st.n == 1) {
      st.s0 = st.chosen = i;
      st.l0 = st.lchosen = line;
    } else {
      if (st.n == 2) st.s1 = i, st.l1 = line;
      // The summarizer's run_start: the last one before the first run_stop.
      if (!fs.seen_run_stop) st.chosen = i, st.lchosen = line;
    }
    st.last = i;
    st.llast = line;
    if (live_ && rec.has_atleast_one) st.last_line = obj_or_existing(i);
    if (st.exactly_one) {
      Value x = line_value(static_cast<uint32_t>(i));
      if (st.n == 1) st.first = x;
      else if (st.all_same && !json_same(x, st.first)) st.all_same = false;
      // A value written as the first one was (the many seed lines of a run
      // with a seed per process) adds no distinct text.
      if (st.distinct.size() < kMaxDistinct && !(st.n > 1 && same_repr(x, st.first))) {
        std::string t = clip(py_repr(x), 80);
        if (std::find(st.distinct.begin(), st.distinct.end(), t) == st.distinct.end()) st.distinct.push_back(std::move(t));
      }
    }
  }

  uint32_t rec_line(size_t slot, uint32_t line) const { return live_ ? line : line_of(slot); }

  // After the lines: ATLEAST_ONE_CHECK and REQ of one file, into `out`.
  // Reads the file's state only, so a live run can ask at any time.
  void finish_file(const FileState& fs, Messages& out) {
    const RuleFile& rf = *fs.rf;
    cur_key_.clear();
    cur_slot_ = SIZE_MAX;
    for (size_t r = 0; r < rf.keys.size(); ++r) {
      const RecState& st = fs.recs[r];
      if (st.atleast != 0) continue;
      const KeyRecord& rec = rf.keys[r];
      Finding f;
      f.key = rec.name;
      f.rule = base_name(rf.rel) + " KEY " + rec.name + " ATLEAST_ONE_CHECK";
      f.message = "no '" + rec.name + "' line passes the check: the run never reached its target";
      f.expected = "at least one line with " + rec.atleast_one_check.source();
      f.found = std::to_string(st.n) + " line(s)";
      if (st.n > 0) {
        f.found += ", last value " + (live_ ? st.last_value : value_text(st.last));
        f.line = rec_line(st.last, st.llast);
      }
      f.hint = "a run that does not reach the quality target must end with run_stop status \"aborted\" and cannot be scored";
      out.put("", std::move(f));
    }

    // Occurrence requirements.
    std::vector<std::vector<std::string>> alternatives;
    for (size_t r = 0; r < rf.keys.size(); ++r) {
      const KeyRecord& rec = rf.keys[r];
      const RecState& st = fs.recs[r];
      if (rec.req.empty()) continue;
      size_t n = st.n;
      std::string where = base_name(rf.rel) + " KEY " + rec.name + " REQ " + rec.req;
      if (rec.req == "EXACTLY_ONE" && n != 1) {
        bool all_same = n > 0 && st.all_same;
        Finding f;
        f.key = rec.name;
        f.rule = where;
        f.expected = "exactly one '" + rec.name + "' line";
        f.found = std::to_string(n);
        if (n > 0) {
          f.line = 1 < n ? rec_line(st.s1, st.l1) : rec_line(st.s0, st.l0);
          f.found += " lines";
          if (!all_same) {
            std::string vals;
            for (const auto& d : st.distinct) vals += (vals.empty() ? "" : ", ") + d;
            if (st.distinct.size() >= kMaxDistinct) vals += ", ...";
            f.found += " with different values: [" + vals + "]";
          }
        }
        if (all_same) {
          f.message = "'" + rec.name + "' is logged " + std::to_string(n) + " times with the same value (a warning only)";
          if (rec.name == "run_start") {
            f.hint = "a relaunched run? the consortium accepts the log with this warning, and its summarizer times the "
                     "run from the last run_start before run_stop: line " + std::to_string(rec_line(st.chosen, st.lchosen));
          }
          out.warn(rec.name, std::move(f));
        } else {
          f.message = n == 0 ? "required line '" + rec.name + "' is missing"
                             : "'" + rec.name + "' must be logged exactly once but appears " + std::to_string(n) + " times";
          if (n == 0 && rec.name == "run_stop") f.hint = "the run did not finish: the log ends before run_stop (truncated, or killed)";
          else if (n == 0) f.hint = "log '" + rec.name + "' once with mllog";
          else f.hint = "log it once (rank 0 only), or make every copy carry the same value";
          out.put(rec.name, std::move(f));
        }
      } else if (rec.req == "AT_LEAST_ONE" && n < 1) {
        Finding f;
        f.key = rec.name;
        f.rule = where;
        f.message = "required line '" + rec.name + "' is missing";
        f.expected = "at least one '" + rec.name + "' line";
        f.found = "0";
        f.hint = "log '" + rec.name + "' with mllog";
        out.put(rec.name, std::move(f));
      } else if (rec.req.rfind("AT_LEAST(", 0) == 0) {
        // The loader admits only digits here; Python's int() has no upper bound,
        // so a number too large for size_t saturates (no log has that many lines).
        size_t want = 0;
        for (char ch : rec.req.substr(9, rec.req.size() - 10)) {
          size_t d = static_cast<size_t>(ch - '0');
          want = want > (SIZE_MAX - d) / 10 ? SIZE_MAX : want * 10 + d;
        }
        if (n < want) {
          Finding f;
          f.key = rec.name;
          f.rule = where;
          f.message = "'" + rec.name + "' must appear at least " + std::to_string(want) + " times";
          f.expected = "at least " + std::to_string(want);
          f.found = std::to_string(n);
          out.put(rec.name, std::move(f));
        }
      } else if (rec.req.rfind("AT_LEAST_ONE_OR(", 0) == 0) {
        std::string inner = rec.req.substr(16, rec.req.size() - 17);
        std::vector<std::string> alts{rec.name};
        size_t pos = 0;
        while (pos <= inner.size()) {
          size_t c = inner.find(',', pos);
          std::string a = inner.substr(pos, c == std::string::npos ? std::string::npos : c - pos);
          a.erase(0, a.find_first_not_of(" \t"));
          a.erase(a.find_last_not_of(" \t") + 1);
          if (std::find(alts.begin(), alts.end(), a) == alts.end()) alts.push_back(a);
          if (c == std::string::npos) break;
          pos = c + 1;
        }
        std::sort(alts.begin(), alts.end());
        if (std::find(alternatives.begin(), alternatives.end(), alts) == alternatives.end()) alternatives.push_back(alts);
      }
    }
    for (const auto& alts : alternatives) {
      bool any = false;
      for (const auto& a : alts) {
        int r = rf.find(a);
        if (r >= 0 && fs.recs[static_cast<size_t>(r)].n > 0) any = true;
      }
      if (any) continue;
      Finding f;
      std::string names;
      for (const auto& a : alts) names += (names.empty() ? "'" : " or '") + a + "'";
      f.rule = base_name(rf.rel) + " REQ AT_LEAST_ONE_OR";
      f.message = "required at least one occurrence of " + names;
      f.expected = names;
      f.found = "none";
      out.put("", std::move(f));
    }
  }

  // END code: runs once, at the very end (it may change `s`).
  void run_end(FileState& fs, Messages& out) {
    const RuleFile& rf = *fs.rf;
    Vars& state = fs.state;
    if (rf.has_end) {
      Frame fr{&state, &state, nullptr, this, 0};
      if (rf.has_end_pre) {
        exec_reporting(rf.end_pre, fr, rf, "END PRE", out, false);
      }
      for (const auto& c : rf.end_checks) {
        Finding f;
        f.rule = base_name(rf.rel) + " END CHECK";
        f.expected = c.source();
        try {
          if (py_truthy(c.eval(fr))) continue;
          f.message = "END CHECK failed";
        } catch (const PyError& e) {
          f.message = "END CHECK raised " + e.what();
        }
        std::string ctx = context_for(c.source(), state);
        f.found = ctx;
        out.put("", std::move(f));
      }
    }
  }

  Value line_value(uint32_t slot) { return line_member_of(obj_or_existing(slot).line(), LineMember::Value, *this); }

  // Live runs: the current chunk's lines go. Those rule code still holds
  // take a copy of their text.
  void release_slots() {
    if (live_) {
      for (auto& s : slots_) {
        if (s.obj.kind != VKind::Line || s.obj.h.use_count() == 1) continue;
        LineObj& l = s.obj.line();
        if (l.json.data() != l.text.data()) {
          l.text.assign(l.json);
          l.json = l.text;
        }
      }
    }
    slots_.clear();
  }

  const RuleSet& rules_;
  const mllog::ParsedLog* log_;  // the lines being fed (a live run: the current chunk)
  mllog::ParsedLog empty_;
  bool live_ = false;
  Vars locals_;
  std::vector<std::string> keys_;
  uint32_t run_stop_key_ = UINT32_MAX;  // "run_stop"'s index in keys_, once it has one
  std::vector<Value> key_values_;
  std::vector<Slot> slots_;
  std::vector<Enqueued> queue_;
  const RuleFile* cur_file_ = nullptr;  // what enqueue_config reports as its origin
  std::string cur_key_;
  size_t cur_slot_ = SIZE_MAX;
  Value loglines_;
  Messages msgs_;
  Messages* sink_ = &msgs_;  // where line findings go: msgs_, or a live file's own
  // Live runs.
  std::vector<std::unique_ptr<FileState>> files_;
  std::vector<Pending> pending_;
  std::vector<Finding> parse_errors_;
  size_t parse_error_count_ = 0;
  size_t events_before_ = 0;
  int cur_index_ = -1;
  uint64_t seq_ = 0;
  bool started_ = false;
  bool whole_log_ = false;
};

}  // namespace

FileVerdict check_log(const RuleSet& rules, const mllog::ParsedLog& log, const std::string& entry) {
  Run run(rules, log);
  return run.run(entry);
}

struct LiveLog::Impl {
  explicit Impl(const RuleSet& rules) : run(rules) {}
  Run run;
};

LiveLog::LiveLog(const RuleSet& rules) : impl_(std::make_unique<Impl>(rules)) {}
LiveLog::~LiveLog() = default;

void LiveLog::feed(const mllog::ParsedLog& chunk, const TextPieces& prefix) {
  impl_->run.live_feed(chunk, prefix);
}

FileVerdict LiveLog::verdict() { return impl_->run.live_verdict(); }

FileVerdict LiveLog::final_verdict() { return impl_->run.live_verdict(true); }

bool LiveLog::whole_log() const { return impl_->run.whole_log(); }

uint64_t count_line_breaks(std::string_view text) {
  if (std::memchr(text.data(), '\r', text.size()) == nullptr)
    return static_cast<uint64_t>(std::count(text.begin(), text.end(), '\n'));
  uint64_t n = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n') ++n;
    else if (text[i] == '\r' && (i + 1 == text.size() || text[i + 1] != '\n')) ++n;
  }
  return n;
}

LogStream::LogStream(const RuleSet& rules) : live_(rules) {}
LogStream::~LogStream() = default;

const mllog::ParsedLog& LogStream::add(std::string_view text, const TextPieces& prefix) {
  reader_.parse(text, &chunk_);
  const uint32_t lines = static_cast<uint32_t>(breaks_), mllog = static_cast<uint32_t>(mllog_);
  for (auto& e : chunk_.events) e.file_line += lines, e.lineno += mllog;
  for (auto& e : chunk_.errors) e.file_line += lines, e.lineno += mllog;
  live_.feed(chunk_, prefix);
  breaks_ += chunk_.line_breaks;  // == count_line_breaks(text), counted by the reader
  mllog_ += chunk_.mllog_lines;
  return chunk_;
}

FileVerdict LogStream::final_verdict() {
  FileVerdict v = live_.final_verdict();
  v.mllog_lines = static_cast<uint32_t>(mllog_);
  return v;
}

}  // namespace referee::rules
