#include "rules/compliance.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
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

// Equality of two values read from JSON, as list.count() sees them in the
// consortium's checker: Python's json returns one shared NaN object and
// list comparison tests identity first, so NaN equals NaN here.
bool json_same(const Value& a, const Value& b) {
  if (a.kind == VKind::Float && b.kind == VKind::Float && std::isnan(a.f) && std::isnan(b.f)) return true;
  if ((a.kind == VKind::List || a.kind == VKind::Tuple) && a.kind == b.kind) {
    const auto& x = a.items();
    const auto& y = b.items();
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i)
      if (!json_same(x[i], y[i])) return false;
    return true;
  }
  if (a.kind == VKind::Dict && b.kind == VKind::Dict) {
    if (a.d().entries.size() != b.d().entries.size()) return false;
    for (auto& [k, v] : a.d().entries) {
      Value* o = b.d().find(k);
      if (!o || !json_same(v, *o)) return false;
    }
    return true;
  }
  return py_eq(a, b);
}

struct Slot {
  uint32_t key;    // index into Run::keys_
  uint32_t event;  // index into log.events, or UINT32_MAX for lines made by rule code
  Value obj;       // the LineObj, made on first use
};

class Run : public Host {
 public:
  Run(const RuleSet& rules, const mllog::ParsedLog& log) : rules_(rules), log_(log) {
    keys_ = log.keys;
    for (const auto& k : keys_) key_values_.push_back(Value::str(k));
    slots_.reserve(log.events.size());
    for (uint32_t i = 0; i < log.events.size(); ++i) slots_.push_back(Slot{log.events[i].key_id, i, Value()});
  }

  FileVerdict run(const std::string& entry) {
    FileVerdict out;
    out.mllog_lines = log_.mllog_lines;
    if (!log_.errors.empty()) {
      for (const auto& e : log_.errors) {
        Finding f;
        f.line = e.file_line;
        f.rule = "parse";
        f.message = "MLLOG line does not parse: " + e.message;
        f.expected = "one JSON object with key, value, metadata and time_ms after \":::MLLOG \"";
        f.found = e.text;
        f.log_text = e.text;
        f.hint = "a truncated or interleaved line is the usual cause: make sure each rank writes whole lines";
        msgs_.put("", std::move(f));
      }
    }
    if (slots_.empty()) {
      Finding f;
      f.rule = "parse";
      f.message = "No log lines detected";
      f.expected = "lines containing \":::MLLOG {json}\"";
      if (log_.errors.empty()) {
        f.found = "none";
        f.hint = "is this the right file? result files hold the MLLOG output of one run";
      } else {
        // Lines with the token exist, but none of them parses (listed above).
        f.found = std::to_string(log_.errors.size()) + " line(s) with \":::MLLOG \", none of them valid JSON";
        f.hint = "the log is damaged or not written by an MLLOG logger: each line that does not parse is listed with this file";
      }
      msgs_.put("", std::move(f));
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
    queue_.push_back(std::move(e));
  }

  void load_line_value(const LineObj& line) override {
    line.value = line_value_from_json(line.json);
    line.value_loaded = true;
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
      auto l = std::make_shared<LineObj>();
      const auto& ev = log_.events[s.event];
      l->key = key_values_[s.key];
      l->timestamp = Value::number(ev.time_ms);
      l->lineno = Value::integer(ev.lineno);
      l->json = ev.json;
      s.obj.kind = VKind::Line;
      s.obj.h = std::move(l);
    }
    return s.obj;
  }

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
    if (s.event != UINT32_MAX) return log_.events[s.event].file_line;
    if (s.obj.kind == VKind::Line) {
      // lines copied by rule code keep their json view; find it
      const LineObj& l = s.obj.line();
      for (const auto& ev : log_.events)
        if (ev.json.data() == l.json.data()) return ev.file_line;
    }
    return 0;
  }

  std::string line_text(size_t slot) const {
    const Slot& s = slots_[slot];
    if (s.obj.kind == VKind::Line && s.obj.line().full_loaded) return clip(py_str(s.obj.line().full_string));
    if (s.event != UINT32_MAX) return clip(std::string(mllog::kToken) + std::string(log_.events[s.event].json));
    if (s.obj.kind == VKind::Line) return clip(std::string(mllog::kToken) + std::string(s.obj.line().json));
    return "";
  }

  std::string value_text(size_t slot) {
    const Value& o = obj_or_existing(slot);
    if (o.kind != VKind::Line) return "";
    const LineObj& l = o.line();
    if (!l.value_loaded) load_line_value(l);
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
    if (err) {
      f.message = "evaluating " + what + " for '" + rec.name + "' raised " + err->what();
      f.hint = "the line lacks a field the rule reads, or has a value of the wrong type";
    } else {
      f.message = what + " for '" + rec.name + "' failed";
      f.hint = hint_for(rec.name, code.source());
    }
    msgs_.put(slots_key(slot), std::move(f));
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
    msgs_.put(slots_key(slot), std::move(f));
  }

  void run_file(const RuleFile& rf) {
    cur_file_ = &rf;
    cur_key_.clear();
    cur_slot_ = SIZE_MAX;
    Vars state;
    state.set(kNameS, Value::dict());
    if (rf.has_begin) {
      Vars locals;
      Frame fr{&locals, &state, nullptr, this, 0};
      try {
        rf.begin.exec(fr);
      } catch (const PyError& e) {
        Finding f;
        f.rule = base_name(rf.rel) + " BEGIN";
        f.message = "BEGIN code raised " + e.what();
        f.expected = clip(rf.begin.source());
        msgs_.put("", std::move(f));
      }
      adopt_loglines();
    }
    // Records of this file replace earlier files' messages about the same keys.
    for (const auto& k : rf.keys) msgs_.drop(k.name);

    std::vector<int> rec_of(keys_.size(), -1);
    for (size_t i = 0; i < keys_.size(); ++i) rec_of[i] = rf.find(keys_[i]);
    std::vector<std::vector<uint32_t>> occurrences(rf.keys.size());
    std::vector<bool> done(rf.keys.size(), false);  // submission_* keys run once
    std::vector<int64_t> atleast_passes(rf.keys.size(), -1);

    Vars locals;
    for (size_t i = 0; i < slots_.size(); ++i) {
      uint32_t key = slots_[i].key;
      if (key >= rec_of.size()) {
        rec_of.resize(keys_.size(), -1);
        for (size_t k = 0; k < keys_.size(); ++k) rec_of[k] = rf.find(keys_[k]);
      }
      int r = rec_of[key];
      if (r < 0) continue;
      const KeyRecord& rec = rf.keys[static_cast<size_t>(r)];
      occurrences[static_cast<size_t>(r)].push_back(static_cast<uint32_t>(i));
      cur_key_ = rec.name;
      cur_slot_ = i;
      const Value& ll = obj_or_existing(i);
      locals.vars.clear();
      Frame fr{&locals, &state, &ll, this, 0};
      if (!done[static_cast<size_t>(r)]) {
        if (rec.has_pre) {
          try { rec.pre.exec(fr); } catch (const PyError& e) { code_failed(rf, rec, i, "PRE", e); }
        }
        for (const auto& c : rec.checks) {
          try {
            if (!py_truthy(c.eval(fr))) check_failed(rf, rec, i, "CHECK", c, state, nullptr);
          } catch (const PyError& e) {
            check_failed(rf, rec, i, "CHECK", c, state, &e);
          }
        }
        if (rec.has_post) {
          locals.vars.clear();
          try { rec.post.exec(fr); } catch (const PyError& e) { code_failed(rf, rec, i, "POST", e); }
        }
      }
      if (rec.has_first_check && occurrences[static_cast<size_t>(r)].size() == 1) {
        try {
          if (!py_truthy(rec.first_check.eval(fr))) check_failed(rf, rec, i, "FIRST_CHECK", rec.first_check, state, nullptr);
        } catch (const PyError& e) {
          check_failed(rf, rec, i, "FIRST_CHECK", rec.first_check, state, &e);
        }
      }
      if (rec.has_atleast_one) {
        int64_t& n = atleast_passes[static_cast<size_t>(r)];
        if (n < 0) n = 0;
        try {
          if (py_truthy(rec.atleast_one_check.eval(fr))) ++n;
        } catch (const PyError&) {
          // The consortium's checker stops with a traceback here; referee counts it as not passing.
        }
      }
      if (rec.name.find("submission_") != std::string::npos) done[static_cast<size_t>(r)] = true;
    }

    cur_key_.clear();
    cur_slot_ = SIZE_MAX;
    for (size_t r = 0; r < rf.keys.size(); ++r) {
      if (atleast_passes[r] != 0) continue;
      const KeyRecord& rec = rf.keys[r];
      Finding f;
      f.key = rec.name;
      f.rule = base_name(rf.rel) + " KEY " + rec.name + " ATLEAST_ONE_CHECK";
      f.message = "no '" + rec.name + "' line passes the check: the run never reached its target";
      f.expected = "at least one line with " + rec.atleast_one_check.source();
      const auto& occ = occurrences[r];
      f.found = std::to_string(occ.size()) + " line(s)";
      if (!occ.empty()) {
        f.found += ", last value " + value_text(occ.back());
        f.line = line_of(occ.back());
      }
      f.hint = "a run that does not reach the quality target must end with run_stop status \"aborted\" and cannot be scored";
      msgs_.put("", std::move(f));
    }

    // Occurrence requirements.
    std::vector<std::vector<std::string>> alternatives;
    for (size_t r = 0; r < rf.keys.size(); ++r) {
      const KeyRecord& rec = rf.keys[r];
      if (rec.req.empty()) continue;
      size_t n = occurrences[r].size();
      std::string where = base_name(rf.rel) + " KEY " + rec.name + " REQ " + rec.req;
      if (rec.req == "EXACTLY_ONE" && n != 1) {
        bool all_same = n > 0;
        std::vector<std::string> distinct;
        if (n > 0) {
          Value first = line_value(occurrences[r][0]);
          for (uint32_t s : occurrences[r]) {
            Value x = line_value(s);
            if (!json_same(x, first)) all_same = false;
            std::string t = clip(py_repr(x), 80);
            if (std::find(distinct.begin(), distinct.end(), t) == distinct.end()) distinct.push_back(t);
          }
        }
        Finding f;
        f.key = rec.name;
        f.rule = where;
        f.expected = "exactly one '" + rec.name + "' line";
        f.found = std::to_string(n);
        if (n > 0) {
          f.line = line_of(occurrences[r][1 < n ? 1 : 0]);
          f.found += " lines";
          if (!all_same) {
            std::string vals;
            for (const auto& d : distinct) vals += (vals.empty() ? "" : ", ") + d;
            f.found += " with different values: [" + vals + "]";
          }
        }
        if (all_same) {
          f.message = "'" + rec.name + "' is logged " + std::to_string(n) + " times with the same value (a warning only)";
          if (rec.name == "run_start") {
            // The summarizer's run_start: the last one before the first run_stop.
            size_t stop = SIZE_MAX;
            for (size_t i = 0; i < slots_.size(); ++i)
              if (keys_[slots_[i].key] == "run_stop") {
                stop = i;
                break;
              }
            uint32_t chosen = occurrences[r][0];
            for (uint32_t o : occurrences[r])
              if (o < stop) chosen = o;
            f.hint = "a relaunched run? the consortium accepts the log with this warning, and its summarizer times the "
                     "run from the last run_start before run_stop: line " + std::to_string(line_of(chosen));
          }
          msgs_.warn(rec.name, std::move(f));
        } else {
          f.message = n == 0 ? "required line '" + rec.name + "' is missing"
                             : "'" + rec.name + "' must be logged exactly once but appears " + std::to_string(n) + " times";
          if (n == 0 && rec.name == "run_stop") f.hint = "the run did not finish: the log ends before run_stop (truncated, or killed)";
          else if (n == 0) f.hint = "log '" + rec.name + "' once with mllog";
          else f.hint = "log it once (rank 0 only), or make every copy carry the same value";
          msgs_.put(rec.name, std::move(f));
        }
      } else if (rec.req == "AT_LEAST_ONE" && n < 1) {
        Finding f;
        f.key = rec.name;
        f.rule = where;
        f.message = "required line '" + rec.name + "' is missing";
        f.expected = "at least one '" + rec.name + "' line";
        f.found = "0";
        f.hint = "log '" + rec.name + "' with mllog";
        msgs_.put(rec.name, std::move(f));
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
          msgs_.put(rec.name, std::move(f));
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
        if (r >= 0 && !occurrences[static_cast<size_t>(r)].empty()) any = true;
      }
      if (any) continue;
      Finding f;
      std::string names;
      for (const auto& a : alts) names += (names.empty() ? "'" : " or '") + a + "'";
      f.rule = base_name(rf.rel) + " REQ AT_LEAST_ONE_OR";
      f.message = "required at least one occurrence of " + names;
      f.expected = names;
      f.found = "none";
      msgs_.put("", std::move(f));
    }

    if (rf.has_end) {
      Frame fr{&state, &state, nullptr, this, 0};
      if (rf.has_end_pre) {
        try {
          rf.end_pre.exec(fr);
        } catch (const PyError& e) {
          Finding f;
          f.rule = base_name(rf.rel) + " END PRE";
          f.message = "END PRE code raised " + e.what();
          msgs_.put("", std::move(f));
        }
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
        msgs_.put("", std::move(f));
      }
    }
  }

  Value line_value(uint32_t slot) {
    const Value& o = obj_or_existing(slot);
    const LineObj& l = o.line();
    if (!l.value_loaded) load_line_value(l);
    if (l.value.kind == VKind::Dict)
      if (Value* v = l.value.d().find_str("value")) return *v;
    return Value();
  }

  const RuleSet& rules_;
  const mllog::ParsedLog& log_;
  std::vector<std::string> keys_;
  std::vector<Value> key_values_;
  std::vector<Slot> slots_;
  std::vector<Enqueued> queue_;
  const RuleFile* cur_file_ = nullptr;  // what enqueue_config reports as its origin
  std::string cur_key_;
  size_t cur_slot_ = SIZE_MAX;
  Value loglines_;
  Messages msgs_;
};

}  // namespace

FileVerdict check_log(const RuleSet& rules, const mllog::ParsedLog& log, const std::string& entry) {
  Run run(rules, log);
  return run.run(entry);
}

}  // namespace referee::rules
