#include "rules/package.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>
#include <unordered_map>

#include "base/digest.h"
#include "base/file.h"
#include "base/memory.h"
#include "base/lines.h"
#include "base/text.h"
#include "mllog/json_writer.h"
#include "rules/score.h"
#include "rules/scoring.h"

namespace fs = std::filesystem;

namespace referee::rules {

namespace {

std::string read_text(const fs::path& p, bool* ok) {
  std::string text;
  *ok = base::read_regular_file(p, &text).ok();  // never waits on a FIFO put where a file was
  return text;
}

// The folders in `p`, sorted. A folder that cannot be listed is named in
// *unreadable (what was not checked must not pass unseen).
std::vector<fs::path> sub_dirs(const fs::path& p, std::vector<std::string>* unreadable) {
  std::vector<fs::path> out;
  std::error_code ec;
  fs::directory_iterator it(p, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    std::error_code dec;
    if (it->is_directory(dec)) out.push_back(it->path());
  }
  if (ec) unreadable->push_back(p.string() + ": " + ec.message());
  std::sort(out.begin(), out.end());
  return out;
}

// Python's glob('result_*.txt'): no hidden files.
bool is_result_name(const std::string& n) {
  return n.size() >= 11 && n.rfind("result_", 0) == 0 && n.compare(n.size() - 4, 4, ".txt") == 0;
}

// package_checker_params: the consortium compares whole lines, newline
// included, so only a last line without a trailing newline counts.
void read_params(const fs::path& p, bool* rcp, bool* seed, std::vector<Finding>* warnings) {
  std::error_code ec;
  if (!fs::exists(p, ec)) return;
  bool ok = false;
  std::string raw = read_text(p, &ok);
  // Python reads the file in text mode: "\r\n" and a lone "\r" end lines as "\n" does.
  std::string text;
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] == '\r') {
      text += '\n';
      if (i + 1 < raw.size() && raw[i + 1] == '\n') ++i;
    } else {
      text += raw[i];
    }
  }
  size_t start = 0;
  int lineno = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    ++lineno;
    std::string line = text.substr(start, nl == std::string::npos ? std::string::npos : nl - start + 1);
    start = nl == std::string::npos ? text.size() : nl + 1;
    std::string bare = line;
    while (!bare.empty() && (bare.back() == '\n' || bare.back() == '\r' || bare.back() == ' ')) bare.pop_back();
    if (line == "rcp-bypass") *rcp = true;
    else if (line == "seed-checker-bypass") *seed = true;
    else if (bare == "rcp-bypass" || bare == "seed-checker-bypass") {
      Finding f;
      f.line = static_cast<uint32_t>(lineno);
      f.rule = "package_checker_params";
      f.message = "'" + bare + "' is ignored: the consortium's checker only honours it on a last line without a trailing newline";
      f.expected = bare + " (no newline after it)";
      f.found = bare + " followed by a newline";
      f.hint = "remove the trailing newline (printf '" + bare + "' > package_checker_params) if the bypass is intended";
      warnings->push_back(f);
    }
  }
}

const char* json_type_name(const Value& v) {
  switch (v.kind) {
    case VKind::None: return "null";
    case VKind::Bool: return "a boolean";
    case VKind::Int:
    case VKind::Float: return "a number";
    case VKind::List:
    case VKind::Tuple: return "a list";
    case VKind::Dict: return "an object";
    default: return "not text";
  }
}

// The JSON text of a scalar, for the message and the fix.
std::string json_scalar(const Value& v) {
  switch (v.kind) {
    case VKind::None: return "null";
    case VKind::Bool: return v.b ? "true" : "false";
    default: return py_str(v);
  }
}


}  // namespace

// The result summarizer's availability map (its config.yaml): the spellings
// systems used before the values were fixed, and the value each stands for.
// "" when the value is not one of them.
std::string canonical_availability(const std::string& status) {
  static const std::pair<const char*, const char*> map[] = {
      {"available on-premise", "Available on-premise"},
      {"onprem", "Available on-premise"},
      {"available", "Available on-premise"},
      {"available onprem", "Available on-premise"},
      {"available cloud", "Available cloud"},
      {"cloud", "Available cloud"},
      {"research, development, or internal (rdi)", "Research, Development, or Internal (RDI)"},
      {"rdi", "Research, Development, or Internal (RDI)"},
      {"research", "Research, Development, or Internal (RDI)"},
      {"development", "Research, Development, or Internal (RDI)"},
      {"internal", "Research, Development, or Internal (RDI)"},
      {"preview", "Preview"},
  };
  std::string lower = base::lower(status);
  for (const auto& [k, v] : map)
    if (lower == k) return v;
  return "";
}

std::string availability_category(const std::string& status) {
  if (std::string c = canonical_availability(status); !c.empty()) return c;
  // Words of the text, lower case, hyphens, underscores and punctuation as spaces.
  std::vector<std::string> words;
  std::string w;
  for (char ch : base::lower(status)) {
    if (std::isalnum(static_cast<unsigned char>(ch))) {
      w += ch;
    } else if (!w.empty()) {
      words.push_back(w);
      w.clear();
    }
  }
  if (!w.empty()) words.push_back(w);
  std::vector<std::string> kept;
  for (const auto& x : words)
    if (x != "in" && x != "on" && x != "the" && x != "a") kept.push_back(x);
  auto has = [&](const char* x) { return std::find(kept.begin(), kept.end(), x) != kept.end(); };
  auto has_prefix = [&](const char* x) {
    for (const auto& k : kept)
      if (k.rfind(x, 0) == 0) return true;
    return false;
  };
  if (kept.empty() || has("not") || has("no") || has("unavailable")) return "";
  if (has("preview") && kept.size() <= 4) return "Preview";
  if (has("cloud") && (kept.size() == 1 || has("available"))) return "Available cloud";
  if ((has_prefix("prem") || has("onprem") || has("onpremise") || has("onpremises")) &&
      (kept.size() == 1 || has("available")))
    return "Available on-premise";
  if (kept.size() == 1 && kept[0] == "available") return "Available on-premise";
  if (has("rdi") || (kept[0] == "research" && kept.size() <= 4)) return "Research, Development, or Internal (RDI)";
  return "";
}

void check_system(const fs::path& p, const RoundFacts& facts, SystemFile* out, std::string* division) {
  out->name = p.filename().string();
  bool ok = false;
  std::string text = read_text(p, &ok);
  if (size_t at = 0; ok && !base::valid_utf8(text, &at)) {
    // Python's json.load reads the file as UTF-8: UnicodeDecodeError before
    // anything is checked, so no one can say the package is good. Invalid, as
    // a description that is not JSON is.
    char byte[8];
    std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned char>(text[at]));
    const bool utf16 = text.size() >= 2 && ((text[0] == '\xFF' && text[1] == '\xFE') || (text[0] == '\xFE' && text[1] == '\xFF'));
    out->valid = false;
    Finding f;
    f.rule = "system description: encoding";
    f.message = "systems/" + out->name + " is not UTF-8: " +
                (utf16 ? std::string("it is UTF-16 (it starts with the byte-order mark ") + (text[0] == '\xFF' ? "FF FE" : "FE FF") + ")"
                       : "byte " + std::string(byte) + " at offset " + std::to_string(at));
    f.expected = "UTF-8 text";
    f.found = utf16 ? "UTF-16" : std::string("byte ") + byte;
    f.hint = utf16 ? "save the file as UTF-8 (iconv -f utf-16 -t utf-8)"
                   : "save the file as UTF-8 (iconv -f latin1 -t utf-8, for a file written in latin-1)";
    out->errors.push_back(f);
    out->consortium_stops = "its package checker reads systems/" + out->name + " with json.load and stops with "
                            "UnicodeDecodeError (byte " + byte + " at offset " + std::to_string(at) + " is not UTF-8)";
    return;
  }
  if (ok && text.rfind("\xEF\xBB\xBF", 0) == 0) {
    // json.load of text that starts with U+FEFF: "Unexpected UTF-8 BOM".
    out->valid = false;
    Finding f;
    f.rule = "system description: encoding";
    f.message = "systems/" + out->name + " starts with a UTF-8 byte-order mark (EF BB BF)";
    f.expected = "UTF-8 text without a byte-order mark";
    f.found = "EF BB BF at offset 0";
    f.hint = "remove the first three bytes (sed -i '1s/^\\xEF\\xBB\\xBF//' FILE)";
    out->errors.push_back(f);
    out->consortium_stops = "its package checker reads systems/" + out->name + " with json.load and stops with "
                            "JSONDecodeError (Unexpected UTF-8 BOM)";
    return;
  }
  std::string err;
  Value v = value_from_json(text, &ok, &err);
  if (!ok || v.kind != VKind::Dict) {
    out->valid = false;
    Finding f;
    f.rule = "system description";
    f.message = "not a JSON object" + (err.empty() ? "" : ": " + err);
    f.hint = "systems/<system>.json must be one JSON object with the required fields";
    out->errors.push_back(f);
    out->consortium_stops = "its package checker reads systems/" + out->name + " with json.load and stops " +
                            (!ok ? "with JSONDecodeError" : "with a TypeError (the file holds JSON that is not an object)");
    return;
  }
  if (Value* d = v.d().find_str("division"); d && d->kind == VKind::Str) *division = d->s();
  out->lacks_division = !v.d().find_str("division");
  if (!facts.system_check) return;
  for (const auto& field : required_system_fields()) {
    if (v.d().find_str(field)) continue;
    out->valid = false;
    Finding f;
    f.rule = "system description: required fields";
    f.message = "Missing field " + field;
    f.expected = "a \"" + field + "\" field";
    f.found = "none";
    if (field == "status" && facts.system_status_check) {
      std::string values;
      for (const auto& a : availability_values()) values += (values.empty() ? "" : ", ") + ("\"" + a + "\"");
      f.hint = "add \"status\" with one of " + values + " (from ruleset 4.0.0 on no other value is accepted)";
    } else {
      f.hint = "add \"" + field + "\" (use \"\" or \"N/A\" when it does not apply)";
    }
    out->errors.push_back(f);
  }
  Value* st = v.d().find_str("status");
  const auto& allowed = availability_values();
  bool status_good = st && st->kind == VKind::Str && std::find(allowed.begin(), allowed.end(), st->s()) != allowed.end();
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + ("\"" + a + "\"");
  std::string suggestion;
  if (st && st->kind == VKind::Str)
    if (std::string c = canonical_availability(st->s()); !c.empty() && c != st->s())
      suggestion = "; \"" + st->s() + "\" is written \"" + c + "\" today";
  // MLPerf HPC has no availability values in the consortium's checker: nothing to say there.
  const bool training = facts.ruleset.rfind("training-", 0) == 0;
  if (st && !status_good && !facts.system_status_check && training) {
    // Today's consortium checker enforces the list only from ruleset 4.0.0 on.
    Finding f;
    f.rule = "system description: status";
    f.message = "status " + py_repr(*st) + " is accepted for " + facts.ruleset +
                ": today's consortium checker requires one of the availability values only from ruleset 4.0.0 on";
    f.expected = "one of " + list + " (from 4.0.0 on)";
    f.found = py_repr(*st);
    f.hint = "nothing to do for this round" + suggestion;
    out->warnings.push_back(f);
  }
  if (facts.system_status_check) {
    if (st) {
      bool good = status_good;
      if (!good) {
        // The consortium replaces earlier reasons with this one.
        out->valid = false;
        out->errors.clear();
        Finding f;
        f.rule = "system description: status";
        f.message = "Field status contains a non valid value: " + py_str(*st);
        f.expected = "one of " + list;
        f.found = py_repr(*st);
        f.hint = "the rule changed since " + facts.ruleset + " was reviewed: today's consortium checker refuses any "
                 "other value for every round from 4.0.0 on, so a package published in its round with another value "
                 "fails today" + suggestion;
        out->errors.push_back(f);
      }
    }
  }
  // The consortium joins these fields before it looks at status; a value that
  // is not a string stops it there (TypeError), whatever else the file holds.
  for (Finding& f : system_field_type_errors(v)) {
    out->valid = false;
    if (out->consortium_stops.empty())
      out->consortium_stops = "its package checker joins \"" + f.key + "\" of systems/" + out->name +
                              " as text and stops with a TypeError (" + f.found + ", not a string)";
    out->errors.push_back(std::move(f));
  }
}

namespace {

// A seed's file and lineno as Python compares them in a tuple: numbers by
// value (1272 == 1272.0 == True + 1271), everything else by type and value.
std::string seed_key_part(const Value& v) {
  if (v.is_num()) {
    double d = v.as_double();
    if (v.kind != VKind::Float || (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9e15)) {
      long long i = v.kind == VKind::Int ? v.i : v.kind == VKind::Bool ? v.b : static_cast<long long>(d);
      return std::to_string(i);
    }
    return py_repr(v);
  }
  if (v.kind == VKind::Str) return v.s();  // printed bare, as Python prints a file name
  return py_repr(v);
}

std::string seed_key_type(const Value& v) { return v.is_num() ? "n:" : v.kind == VKind::Str ? "s:" : "o:"; }

// An evaluation line as the report draws it.
ResultFile::EvalPoint eval_point(const mllog::Event& ev) {
  Value lv = line_value_from_json(ev.json);
  ResultFile::EvalPoint p;
  p.time_ms = ev.time_ms;
  Value* val = lv.d().find_str("value");
  Value* meta = lv.d().find_str("metadata");
  if (val && val->is_num()) {
    p.metric = val->as_double();
    p.has_metric = true;
  }
  if (val) p.value_json = py_repr(*val);
  if (meta && meta->kind == VKind::Dict) {
    if (Value* e = meta->d().find_str("epoch_num"); e && e->is_num()) {
      p.epoch = e->as_double();
      p.has_epoch = true;
    }
    if (Value* sc = meta->d().find_str("samples_count"); sc && sc->is_num()) {
      p.samples = sc->as_double();
      p.has_samples = true;
    }
  }
  return p;
}

// Whether a line of this key is part of a run's fingerprint: all but the
// submission_* lines.
bool in_fingerprint(std::string_view key) { return key.rfind("submission_", 0) != 0; }

// One line of a run's fingerprint: the key, a tab, the time as "%.17g"
// prints it (std::to_chars with a precision is specified to print as printf
// does, without printf's cost), a newline.
void append_fingerprint(std::string* out, std::string_view key, double time_ms) {
  out->append(key);
  out->push_back('\t');
  char num[40];
  auto r = std::to_chars(num, num + sizeof num, time_ms, std::chars_format::general, 17);
  out->append(num, r.ptr);
  out->push_back('\n');
}

// Reads a result file in pieces of whole lines: the verdict from the rules'
// streaming check, the convergence (*conv) and, when `details`, the
// evaluations (*evals), *sha256 and *fingerprint as check_file computes them
// from the whole file; in *facts its seed, run_start and run_stop lines (their
// JSON in *arena), numbered as in the whole file, and its first line that does
// not parse. Memory: a piece of a few MiB and what the rules keep (the
// evaluations too with `details`). False with *whole when the rule set reads
// the whole log (check it whole then), or with *error when it cannot be read.
bool stream_file(const RuleSet& rules, const std::string& path, bool details, FileVerdict* verdict,
                 mllog::ParsedLog* facts, std::deque<std::string>* arena, ConvergenceReader* conv,
                 std::vector<ResultFile::EvalPoint>* evals, uint64_t* bytes, std::string* sha256,
                 std::string* fingerprint, bool* whole, std::string* error) {
  *whole = false;
  // O_NONBLOCK: a FIFO named like a result file must not hold the check up
  // (it is refused below); it changes nothing for a regular file.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    *error = "cannot open " + path + ": " + std::strerror(errno);
    return false;
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    *error = "cannot stat " + path + ": " + std::strerror(errno);
    return false;
  }
  if (S_ISDIR(st.st_mode)) {
    *error = path + " is a directory, not a result file";
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    *error = path + " is not a regular file (a FIFO, a device or a socket), not a result file";
    return false;
  }
  // Pieces of 4 MiB: a rule file enqueued by a line of the first piece sees
  // that piece from its start, while one enqueued later has the text before
  // its piece read and parsed again; round 3.1's GPT-3 logs (2.6 MB, the
  // benchmark named after 10,752 init_start lines) fit in one piece.
  constexpr size_t kPiece = 4 << 20;
  LogStream stream(rules);
  base::Sha256 sha, fp;
  // One buffer per thread, kept from file to file: a fresh one per file (or
  // per piece) costs a page fault for every 4 KiB of it, each time, which on
  // some machines is most of the time a check takes; mapped in 2 MiB pages
  // where the kernel allows (base::map_buffer). Not a std::string: growing
  // one fills the new room with zeros.
  struct ReadBuffer {
    char* mem = nullptr;
    size_t cap = 0;
    ~ReadBuffer() { base::free_buffer(mem, cap); }
  };
  thread_local ReadBuffer kept;
  char*& mem = kept.mem;
  size_t& cap = kept.cap;
  size_t have = 0;
  uint64_t consumed = 0;
  // What a late rule file reads again: the file up to the piece, in pieces.
  TextPieces prefix = [&](const std::function<void(std::string_view)>& sink) {
    base::read_in_line_pieces(fd, consumed, sink, kPiece);
  };
  std::vector<int> key_of;  // the piece's key ids in *facts
  // What each of the piece's keys is for (decided once per key, not per line).
  enum : uint8_t { kFingerprint = 1, kEval = 2, kFact = 4 };
  std::vector<uint8_t> key_use;
  std::string fp_text;  // the piece's fingerprint lines, hashed at once
  bool eof = false;
  // A rule file that reads the whole log (`loglines`) stops the checking as
  // the log is read; when the log is one piece, its parse is the whole log's
  // and the batch checker runs on it at once, rather than on a second reading.
  bool whole_checked = false;
  FileVerdict whole_verdict;
  while (!eof) {
    if (cap - have < kPiece) {
      // Room for one more piece after what is left of the last line (two
      // pieces at first, so that a short remainder never calls for more).
      size_t want = std::max(have + kPiece, 2 * kPiece);
      char* bigger = static_cast<char*>(base::map_buffer(want));
      if (!bigger) {
        *error = "cannot read " + path + ": out of memory for a line of " + std::to_string(have) + " bytes";
        return false;
      }
      if (have) std::memcpy(bigger, mem, have);
      base::free_buffer(mem, cap);
      mem = bigger;
      cap = want;
    }
    ssize_t n = ::pread(fd, mem + have, kPiece, static_cast<off_t>(consumed + have));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *error = "cannot read " + path + ": " + std::strerror(errno);
      return false;
    }
    have += static_cast<size_t>(n);
    eof = n == 0;
    std::string_view buf(mem, have);
    size_t end = eof ? buf.size() : buf.rfind('\n');
    if (end == std::string_view::npos) continue;  // a line longer than a piece: read on
    if (!eof) ++end;
    std::string_view piece(buf.data(), end);
    if (piece.empty()) break;
    const mllog::ParsedLog& c = stream.add(piece, prefix);
    if (stream.whole_log() && consumed == 0 && piece.size() == static_cast<uint64_t>(st.st_size)) {
      whole_verdict = check_log(rules, c);
      whole_checked = true;
    }
    if (details) sha.update(piece);
    if (facts->errors.empty() && !c.errors.empty()) facts->errors.push_back(c.errors[0]);
    key_of.assign(c.keys.size(), -1);
    key_use.resize(c.keys.size());
    for (size_t i = 0; i < c.keys.size(); ++i) {
      const std::string& k = c.keys[i];
      key_use[i] = static_cast<uint8_t>((in_fingerprint(k) ? kFingerprint : 0) |
                                        (k == "eval_accuracy" ? kEval : 0) |
                                        (k == "seed" || k == "run_start" || k == "run_stop" || k == "number_of_nodes" ||
                                                 k == "accelerators_per_node"
                                             ? kFact
                                             : 0));
    }
    fp_text.clear();
    for (const auto& ev : c.events) {
      const std::string& k = c.keys[ev.key_id];
      const uint8_t use = key_use[ev.key_id];
      if (details && (use & kFingerprint)) append_fingerprint(&fp_text, k, ev.time_ms);
      conv->add(ev.json, k);
      if (details && (use & kEval)) evals->push_back(eval_point(ev));
      if (!(use & kFact)) continue;
      int& id = key_of[ev.key_id];
      if (id < 0) {
        id = facts->find_key(k);
        if (id < 0) {
          id = static_cast<int>(facts->keys.size());
          facts->keys.push_back(k);
        }
      }
      arena->emplace_back(ev.json);
      mllog::Event e = ev;
      e.key_id = static_cast<uint32_t>(id);
      e.json = arena->back();
      facts->events.push_back(e);
    }
    if (details) fp.update(fp_text);
    consumed += end;
    std::memmove(mem, mem + end, have - end);
    have -= end;
  }
  *bytes += consumed;
  if (stream.whole_log() && !whole_checked) {
    *whole = true;
    return false;
  }
  *verdict = whole_checked ? std::move(whole_verdict) : stream.final_verdict();
  facts->mllog_lines = static_cast<uint32_t>(stream.mllog_lines());
  facts->bytes = consumed;
  if (details) {
    *sha256 = sha.hex_digest();
    *fingerprint = fp.hex_digest();
  }
  return true;
}

// Reads, parses and checks one result file; extracts seeds and convergence.
// The file is read in pieces and checked as it is read (stream_file), unless
// the rule set reads the whole log: then it is mapped and checked whole.
void check_file(const RuleSet& rules, const BenchmarkFacts& bf, mllog::LogReader& reader, ResultFile* rf,
                uint64_t* bytes, bool details) {
  auto unreadable = [&](const std::string& err) {
    rf->readable = false;
    rf->verdict.compliant = false;
    Finding f;
    f.rule = "read";
    f.message = err;
    rf->verdict.errors.push_back(f);
    rf->seed_error = err;
  };
  if (!rf->refused.empty()) return unreadable(rf->refused);
  std::string err, streamed_sha, streamed_fp;
  bool whole = false;
  std::deque<std::string> arena;
  mllog::ParsedLog log;
  mllog::FileBuffer buf;
  ConvergenceReader conv(rules.id().version, bf.convergence);
  bool streamed = stream_file(rules, rf->path, details, &rf->verdict, &log, &arena, &conv, &rf->evals, bytes,
                              &streamed_sha, &streamed_fp, &whole, &err);
  if (!streamed && !whole) return unreadable(err);
  if (!streamed) {
    if (!buf.open(rf->path, &err)) return unreadable(err);
    log = mllog::ParsedLog{};
    arena.clear();
    rf->evals.clear();
    reader.parse(buf.view(), &log);
    rf->verdict = check_log(rules, log);
  }
  if (!log.errors.empty()) {
    rf->seed_error = "Log lines had parsing errors (first at line " + std::to_string(log.errors[0].file_line) + ")";
  } else {
    int seed_key = log.find_key("seed");
    if (seed_key >= 0) {
      for (const auto& ev : log.events) {
        if (ev.key_id != static_cast<uint32_t>(seed_key)) continue;
        // The value and metadata.file and metadata.lineno, read alone where
        // they are scalars; else the reader's events are JSON objects with a
        // value and metadata: those two are built.
        LineObj line;
        line.json = ev.json;
        line_member_starts(line, ev.value_at, ev.meta_at);
        Value value_v, meta_v, file_v, lineno_v;
        Value* val = &value_v;
        Value* file = &file_v;
        Value* lineno = &lineno_v;
        int rv = line_member_scalar(line, LineMember::Value, &value_v);
        int rfile = line_member_entry(line, LineMember::Metadata, "file", &file_v, true);
        int rline = line_member_entry(line, LineMember::Metadata, "lineno", &lineno_v, true);
        if (rv < 0 || rfile < 0 || rline < 0) {
          line_members_from_json(ev.json, &value_v, &meta_v);
          Value* meta = &meta_v;
          file = meta->kind == VKind::Dict ? meta->d().find_str("file") : nullptr;
          lineno = meta->kind == VKind::Dict ? meta->d().find_str("lineno") : nullptr;
        } else {
          if (!rfile) file = nullptr;
          if (!rline) lineno = nullptr;
        }
        if (!file || !lineno || !val) {
          rf->seed_error = "line " + std::to_string(ev.file_line) + ": seed without metadata.file/metadata.lineno";
          rf->seeds.clear();
          break;
        }
        int64_t s = 0;
        if (val->kind == VKind::Int) s = val->i;
        else if (val->kind == VKind::Bool) s = val->b;
        else if (val->kind == VKind::Float && std::isfinite(val->f)) s = static_cast<int64_t>(std::trunc(val->f));
        else if (val->kind == VKind::Str) {
          char* end = nullptr;
          long long x = std::strtoll(val->s().c_str(), &end, 10);
          if (end == val->s().c_str() || *end) {
            rf->seed_error = "line " + std::to_string(ev.file_line) + ": seed " + py_repr(*val) + " is not an integer";
            rf->seeds.clear();
            break;
          }
          s = x;
        } else {
          rf->seed_error = "line " + std::to_string(ev.file_line) + ": seed " + py_repr(*val) + " is not an integer";
          rf->seeds.clear();
          break;
        }
        rf->seeds.push_back({seed_key_part(*file), seed_key_part(*lineno), s,
                             seed_key_type(*file) + seed_key_part(*file) + '\0' + seed_key_type(*lineno) + seed_key_part(*lineno)});
      }
    }
  }
  rf->convergence = streamed ? conv.result() : read_convergence(log, rules.id().version, bf.convergence);
  rf->parse_errors = !log.errors.empty();
  // The summarizer's time to train (rules/scoring.h).
  TimeToTrain t = time_to_train(log);
  rf->has_times = t.has_times;
  rf->run_start_ms = t.run_start_ms;
  rf->run_stop_ms = t.run_stop_ms;
  rf->run_starts = t.run_starts;
  rf->run_start_line = t.run_start_line;
  rf->first_run_start_line = t.first_run_start_line;
  rf->first_run_start_ms = t.first_run_start_ms;
  rf->instance = instance_scale(log);
  if (!details) return;
  if (streamed) {
    rf->sha256 = streamed_sha;
    rf->fingerprint = streamed_fp;
  } else {
    rf->sha256 = base::sha256_hex(buf.view());
    std::string fp;
    fp.reserve(log.events.size() * 24);
    for (const auto& ev : log.events) {
      const std::string& k = log.keys[ev.key_id];
      if (in_fingerprint(k)) append_fingerprint(&fp, k, ev.time_ms);
    }
    rf->fingerprint = base::sha256_hex(fp);
    int eval_key = log.find_key("eval_accuracy");
    for (const auto& ev : log.events)
      if (eval_key >= 0 && static_cast<int>(ev.key_id) == eval_key) rf->evals.push_back(eval_point(ev));
  }
}

// The benchmark the consortium's RCP checker takes for a directory
// (rcp_checker.get_submission_epochs): the first submission_benchmark its
// files log, unless they disagree on it or on global_batch_size, in which
// case it takes None. Returns "" with *why set where it takes None.
std::string consortium_rcp_benchmark(const std::vector<ResultFile>& files, std::string* why) {
  Value bs = Value::integer(-1);
  std::string bench;
  bool have_bench = false;
  for (const auto& f : files) {
    const RunConvergence& c = f.convergence;
    Value cur = c.has_bs ? c.bs : Value::integer(-1);
    if (py_eq(bs, Value::integer(-1))) {
      bs = cur;
    } else if (!py_eq(cur, bs)) {
      *why = f.name + (c.has_bs ? " logs global_batch_size " + py_repr(cur) : std::string(" logs no global_batch_size")) +
             " where the files before it log " + py_repr(bs);
      return "";
    }
    if (!have_bench) {
      if (!c.benchmark.empty()) bench = c.benchmark, have_bench = true;
    } else if (c.benchmark != bench) {
      *why = f.name + " logs submission_benchmark " + (c.benchmark.empty() ? "nothing" : "'" + c.benchmark + "'") +
             " where the files before it log '" + bench + "'";
      return "";
    }
  }
  if (!have_bench) *why = "no result file logs submission_benchmark";
  return bench;
}

void check_seeds(BenchmarkDir* d) {
  // (key, seed) -> the file that logged it first. A directory of a large
  // system logs a seed per process: tens of thousands of lines.
  struct SeedHash {
    size_t operator()(const std::pair<std::string_view, int64_t>& k) const {
      return std::hash<std::string_view>()(k.first) ^ (std::hash<int64_t>()(k.second) * 0x9e3779b97f4a7c15ULL);
    }
  };
  // Most directories repeat none: sorted, the (key, seed) pairs say so, and
  // the table that names the files is built only when one repeats.
  std::vector<std::pair<std::string_view, int64_t>> all;
  for (const auto& f : d->files)
    if (f.seed_error.empty())
      for (const auto& s : f.seeds) all.emplace_back(s.key, s.seed);
  std::sort(all.begin(), all.end());
  const bool repeats = std::adjacent_find(all.begin(), all.end()) != all.end();
  std::unordered_map<std::pair<std::string_view, int64_t>, const std::string*, SeedHash> seen;
  if (repeats) seen.reserve(all.size());
  for (const auto& f : d->files) {
    if (!f.seed_error.empty()) {
      Finding x;
      x.rule = "seeds";
      x.message = "Error found when querying seeds from " + f.name + ": " + f.seed_error;
      x.hint = "fix the file's log lines so the seed checker can read them";
      d->seed_errors.push_back(x);
      continue;
    }
    if (f.seeds.empty()) {
      Finding x;
      x.rule = "seeds";
      x.message = "Result file " + f.name + " logs no seed.";
      x.expected = "a 'seed' line (mllog key \"seed\") in every run";
      x.found = "none";
      x.hint = "log the seed with mllog's SEED key; closed-division runs must each use a distinct, logged seed";
      d->seed_errors.push_back(x);
    }
    if (!repeats) continue;
    for (const auto& s : f.seeds) {
      auto [it, first] = seen.try_emplace(std::make_pair(std::string_view(s.key), s.seed), &f.name);
      if (!first) {
        const std::string& earlier = *it->second;
        Finding x;
        x.rule = "seeds";
        x.message = "Result file " + f.name + " logs seed " + std::to_string(s.seed) + " on " + s.file + ":" + s.lineno +
                    ". However, result file " + earlier + " already logs the same seed on the same line.";
        x.expected = "distinct seeds per run";
        x.found = "seed " + std::to_string(s.seed) + " in " + earlier + " and " + f.name;
        x.hint = "each run must draw its own seed";
        d->seed_errors.push_back(x);
      }
    }
  }
  d->seeds_ok = d->seed_errors.empty();
}

}  // namespace

const std::vector<std::string>& system_text_fields() {
  static const std::vector<std::string> fields = {"submitter", "system_name", "host_processor_model_name",
                                                  "host_processor_core_count", "accelerator_model_name",
                                                  "accelerators_per_node", "framework"};
  return fields;
}

std::vector<Finding> system_field_type_errors(const Value& desc) {
  std::vector<Finding> out;
  if (desc.kind != VKind::Dict) return out;
  for (const auto& field : system_text_fields()) {
    const Value* v = desc.d().find_str(field);
    if (!v || v->kind == VKind::Str) continue;
    bool scalar = v->kind == VKind::None || v->is_num();
    Finding f;
    f.rule = "system description: field type";
    f.key = field;
    f.message = "\"" + field + "\" is " + json_type_name(*v) +
                ", not a string: the consortium's package checker joins this field as text and stops with a "
                "TypeError, so it cannot check the package";
    f.expected = "a JSON string, as in every published system file";
    f.found = v->kind == VKind::None ? std::string("null")
              : scalar                ? json_scalar(*v) + " (" + json_type_name(*v) + ")"
                                      : std::string(json_type_name(*v));
    f.hint = v->kind == VKind::Int || v->kind == VKind::Float
                 ? "write the value in quotes: \"" + field + "\": \"" + json_scalar(*v) + "\""
                 : "write the value as one string, e.g. \"" + field + "\": \"N/A\" when it does not apply";
    out.push_back(std::move(f));
  }
  return out;
}

namespace {

// A package's folders listed and its system descriptions checked, into *out;
// false (with *error) when it cannot be checked at all.
bool list_package(const RoundFacts& facts, const std::string& org_dir, const PackageOptions& opt, PackageReport* out,
                  std::string* error) {
  *out = PackageReport{};
  fs::path root(org_dir);
  std::error_code ec;
  if (!fs::is_directory(root, ec)) {
    *error = base::read_error(ec) ? "cannot read " + org_dir + ": " + ec.message() : org_dir + " is not a directory";
    return false;
  }
  out->path = org_dir;
  out->package = fs::weakly_canonical(root, ec).filename().string();
  const fs::path package_root = fs::weakly_canonical(root, ec);
  fs::path results = root / "results";
  fs::path systems = root / "systems";
  if (!fs::is_directory(results, ec)) {
    if (base::read_error(ec)) {
      *error = "cannot read " + org_dir + ": " + ec.message() + "; give referee read access to the whole package";
      return false;
    }
    *error = org_dir + " has no results/ folder: expected <org>/results/<system>/<benchmark>/result_N.txt";
    // A round's folder (organisation folders in it) given where one package is wanted: say which to give.
    std::vector<std::string> orgs;
    std::error_code lec;
    for (const auto& e : fs::directory_iterator(root, lec)) {
      std::error_code dec;
      if (fs::is_directory(e.path() / "results", dec)) orgs.push_back(e.path().filename().string());
    }
    if (!orgs.empty()) {
      std::sort(orgs.begin(), orgs.end());
      std::string names;
      for (size_t i = 0; i < orgs.size() && i < 3; ++i) names += (i ? ", " : "") + orgs[i];
      if (orgs.size() > 3) names += ", ...";
      *error += "; it holds " + std::to_string(orgs.size()) + " organisation folder" + (orgs.size() == 1 ? "" : "s") +
                " (" + names + "): give one of them, e.g. " + (fs::path(org_dir) / orgs[0]).string() +
                " (check-package and import also take a whole round)";
    }
    return false;
  }

  std::vector<std::string> unreadable;  // folders that could not be listed
  // System descriptions.
  std::map<std::string, std::string> division_of;
  std::set<std::string> without_division;  // descriptions that have no "division" field
  std::map<std::string, std::string> unreadable_system;  // before 1.0: descriptions the checker stops on, and how
  std::map<std::string, std::string> no_division;  // invalid descriptions that give no division, and why
  if (fs::is_directory(systems, ec)) {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(systems, ec))
      if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path());
    if (ec) unreadable.push_back(systems.string() + ": " + ec.message());
    std::sort(files.begin(), files.end());
    for (const auto& p : files) {
      SystemFile s;
      std::string div;
      if (fs::path real; !base::resolves_within(p, package_root, &real, true)) {
        Finding f;
        f.rule = "files: link";
        f.message = "systems/" + p.filename().string() + " leads outside the package (to " + real.string() + ")";
        f.hint = "copy the file into the package: an uploaded package holds no links, and referee import does not "
                 "read a file that leads outside its package";
        if (opt.details) {
          // The store reads nothing outside a package: the description is not read, so not valid.
          s.name = p.filename().string();
          s.valid = false;
          f.message += ": not read";
          s.errors.push_back(f);
          division_of[p.stem().string()] = "";
          out->systems.push_back(std::move(s));
          continue;
        }
        s.warnings.push_back(f);
      }
      check_system(p, facts, &s, &div);
      division_of[p.stem().string()] = div;
      if (!s.valid && div.empty())
        no_division[p.stem().string()] = s.errors.empty() ? std::string("it is not valid") : s.errors.front().message;
      if (s.lacks_division) without_division.insert(p.stem().string());
      if (!s.consortium_stops.empty()) {
        // From 1.0 on the consortium's checker reads every description before
        // any result; before, the descriptions of result folders only.
        if (facts.system_check && out->consortium_stops.empty()) out->consortium_stops = s.consortium_stops;
        else if (!facts.system_check) unreadable_system[p.stem().string()] = s.consortium_stops;
      }
      out->systems.push_back(std::move(s));
    }
  }

  // Benchmark directories and their files.
  for (const auto& sys : sub_dirs(results, &unreadable)) {
    bool sys_rcp = false, sys_seed = false;
    std::vector<Finding> sys_warnings;
    read_params(sys / "package_checker_params", &sys_rcp, &sys_seed, &sys_warnings);
    // Training: results/<system>/<benchmark>. HPC: results/<system>/strong|weak/<benchmark>.
    std::vector<std::pair<std::string, fs::path>> bdirs;
    if (!facts.scaling_folders) {
      for (const auto& bdir : sub_dirs(sys, &unreadable)) bdirs.emplace_back("", bdir);
    } else {
      for (const auto& sc : sub_dirs(sys, &unreadable)) {
        std::string name = sc.filename().string();
        if (name != "strong" && name != "weak") {
          // The consortium's checker takes every folder here for a scaling
          // folder: the folders in it for benchmark folders, each of which it
          // asserts lies under strong/ or weak/ (an AssertionError stops it).
          // One without folders in it, it passes over.
          const std::string where = "results/" + sys.filename().string() + "/" + name;
          Finding f;
          f.rule = "scaling";
          f.expected = "strong or weak";
          f.found = name;
          f.hint = facts.find(name) ? "move " + where + " to results/" + sys.filename().string() + "/strong/" + name +
                                          " (one model: time to train) or results/" + sys.filename().string() + "/weak/" +
                                          name + " (many models at once)"
                                    : "move the benchmark folders in " + where + " under results/" +
                                          sys.filename().string() + "/strong/ or weak/";
          std::vector<std::string> ignored;
          if (sub_dirs(sc, &ignored).empty()) {
            f.message = where + " is neither strong/ nor weak/ and holds no folders: it was not checked (the "
                        "consortium's checker passes over it too). MLPerf HPC results are "
                        "results/<system>/strong/<benchmark> or results/<system>/weak/<benchmark>";
            out->warnings.push_back(f);
            continue;
          }
          f.message = where + " is neither strong/ nor weak/: MLPerf HPC results are results/<system>/strong/<benchmark> "
                      "(time to train) or results/<system>/weak/<benchmark> (many models at once)";
          out->errors.push_back(f);
          out->pass = false;
          if (out->consortium_stops.empty())
            out->consortium_stops = "its package checker asserts that the folders in " + where +
                                    " lie under strong/ or weak/ and stops (AssertionError)";
          continue;
        }
        for (const auto& bdir : sub_dirs(sc, &unreadable)) bdirs.emplace_back(name, bdir);
      }
    }
    for (const auto& [scaling, bdir] : bdirs) {
      BenchmarkDir d;
      d.system = sys.filename().string();
      d.benchmark = bdir.filename().string();
      d.scaling = scaling;
      d.path = bdir.string();
      d.warnings = sys_warnings;
      const BenchmarkFacts* bf = facts.find(d.benchmark);
      auto div = division_of.find(d.system);
      if (div == division_of.end()) {
        Finding f;
        f.rule = "system description";
        f.message = "no systems/" + d.system + ".json for results/" + d.system;
        f.expected = "systems/" + d.system + ".json";
        std::error_code sec;
        f.found = fs::is_directory(systems / (d.system + ".json"), sec) ? "a folder of that name, not a file" : "missing";
        f.hint = "every results/<system> folder needs a systems/<system>.json";
        d.consortium_stops = "its package checker opens systems/" + d.system + ".json for every result directory and "
                             "stops with " + std::string(f.found == "missing" ? "FileNotFoundError" : "IsADirectoryError");
        if (facts.system_check) {
          d.errors.push_back(f);
          d.pass = false;
        } else {
          // Before 1.0 the round's package checker read no system descriptions.
          f.message += " (the package checker of " + facts.ruleset + " did not read system descriptions: not a failure here)";
          d.warnings.push_back(f);
        }
      } else {
        d.division = div->second == "closed" ? "closed" : div->second;
        if (without_division.count(d.system))
          d.consortium_stops = "its package checker reads \"division\" from systems/" + d.system +
                               ".json for every result directory and stops with KeyError('division'), which that "
                               "description lacks";
        if (auto u = unreadable_system.find(d.system); u != unreadable_system.end())
          d.consortium_stops = u->second + " (it reads the description of every result directory)";
        // A description that cannot be read gives no division: the checks of the closed division (seeds,
        // RCPs) cannot be chosen, so the directory is not passed as if it had none.
        if (auto n = no_division.find(d.system); n != no_division.end() && facts.system_check) {
          Finding f;
          f.rule = "system description";
          f.message = "the division of results/" + d.system + " is unknown: systems/" + d.system +
                      ".json gives none (" + n->second + ")";
          f.expected = "a valid systems/" + d.system + ".json with \"division\": \"closed\" or \"open\"";
          f.found = "no division";
          f.hint = "fix systems/" + d.system + ".json; the closed division's checks (seeds, RCPs) follow from it";
          d.errors.push_back(f);
          d.pass = false;
        }
      }
      if (!bf) {
        d.skipped = true;
        Finding f;
        f.rule = "benchmarks";
        f.message = "Skipping benchmark: " + d.benchmark + " is not a benchmark of " + facts.ruleset;
        // A folder named like one of the round's benchmarks: a typo, or the wrong case.
        for (const auto& b : facts.benchmarks)
          if (base::lower(d.benchmark) == b.name ||
              base::edit_distance(base::lower(d.benchmark), b.name) <= std::max<size_t>(1, b.name.size() / 4))
            f.hint = "did you mean " + b.name + "? rename the folder to results/" + d.system + "/" +
                     (d.scaling.empty() ? "" : d.scaling + "/") + b.name;
        if (f.hint.empty() && !facts.scaling_folders && consortium_rcp_table_has("hpc", d.benchmark))
          f.hint = d.benchmark + " is an MLPerf HPC benchmark: check HPC packages with --ruleset hpc-X.Y.Z";
        d.warnings.push_back(f);
        out->benchmarks.push_back(std::move(d));
        continue;
      }
      bool dir_rcp = false, dir_seed = false;
      read_params(bdir / "package_checker_params", &dir_rcp, &dir_seed, &d.warnings);
      d.rcp_bypass = opt.rcp_bypass || sys_rcp || dir_rcp;
      d.seeds_bypassed = opt.seed_bypass || sys_seed || dir_seed;
      d.expected_count = bf->runs;
      size_t others = 0;
      // A folder reached through a link out of the package: each of its files leads outside. (A file
      // that is itself a link is found by its directory entry, at no cost.)
      fs::path real_dir;
      const bool dir_outside = !base::resolves_within(bdir, package_root, &real_dir, true);
      for (const auto& e : fs::directory_iterator(bdir, ec)) {
        std::string n = e.path().filename().string();
        if (is_result_name(n)) {
          ResultFile rf;
          rf.name = n;
          rf.path = e.path().string();
          fs::path real;
          std::error_code lec;
          const bool outside = (dir_outside || opt.details || e.is_symlink(lec)) &&
                               !base::resolves_within(e.path(), package_root, &real, true);
          if (outside && opt.details) {
            // The store reads nothing outside a package (a link to the server's own files).
            rf.refused = rf.path + " leads outside the package (to " + real.string() +
                         "): not read; copy the file into the package";
          } else if (outside) {
            // Checked as the consortium's checker checks it (it follows the link), and said.
            Finding f;
            f.rule = "files: link";
            f.message = d.key() + "/" + n + " leads outside the package (to " + real.string() + ")";
            f.hint = "copy the file into the package: an uploaded package holds no links, and referee import "
                     "refuses a result file that leads outside its package";
            d.warnings.push_back(f);
          }
          d.files.push_back(std::move(rf));
        } else if (n == "power") {
          // Checked by the power pass below.
        } else if (n != "package_checker_params" && n[0] != '.') {
          ++others;
          Finding f;
          f.rule = "files";
          f.message = "unexpected file " + n + " in " + d.key();
          f.hint = e.is_directory() ? "only result_<n>.txt files, package_checker_params and a power/ folder are read here"
                                    : "result files must be named result_<n>.txt; should this one be renamed?";
          d.warnings.push_back(f);
        }
      }
      (void)others;
      if (ec) unreadable.push_back(bdir.string() + ": " + ec.message());
      std::sort(d.files.begin(), d.files.end(), [](const ResultFile& a, const ResultFile& b) { return a.name < b.name; });
      d.result_count = static_cast<int>(d.files.size());
      out->benchmarks.push_back(std::move(d));
    }
  }
  if (!unreadable.empty()) {
    // A folder that could not be listed was not checked: no verdict.
    *error = "cannot read " + unreadable[0] +
             (unreadable.size() > 1 ? " (and " + std::to_string(unreadable.size() - 1) + " more)" : "") +
             "; nothing in it was checked: give referee read access to the whole package";
    return false;
  }
  return true;
}

// The result files of `packages`, checked by `opt.jobs` threads that share
// them all: largest first, so that threads finish together, and the files of
// a round's small packages fill in where a large one's last files would
// leave a thread idle.
void check_files(const RuleSet& rules, const RoundFacts& facts, const PackageOptions& opt,
                 const std::vector<PackageReport*>& packages) {
  struct Job {
    PackageReport* package;
    size_t dir;
    size_t file;
    uintmax_t size;
  };
  std::vector<Job> jobs;
  for (PackageReport* p : packages)
    for (size_t i = 0; i < p->benchmarks.size(); ++i)
      for (size_t j = 0; j < p->benchmarks[i].files.size(); ++j) {
        std::error_code ec;
        jobs.push_back({p, i, j, fs::file_size(p->benchmarks[i].files[j].path, ec)});
      }
  std::stable_sort(jobs.begin(), jobs.end(), [](const Job& a, const Job& b) { return a.size > b.size; });

  std::vector<uint64_t> job_bytes(jobs.size(), 0);  // each written by the one thread that checks the job
  std::atomic<size_t> next{0};
  auto worker = [&] {
    base::tune_thread_heap();
    mllog::LogReader reader;
    while (true) {
      size_t k = next.fetch_add(1);
      if (k >= jobs.size()) break;
      BenchmarkDir& d = jobs[k].package->benchmarks[jobs[k].dir];
      check_file(rules, *facts.find(d.benchmark), reader, &d.files[jobs[k].file], &job_bytes[k], opt.details);
    }
  };
  int n = std::max(1, opt.jobs);
  n = static_cast<int>(std::min<size_t>(static_cast<size_t>(n), std::max<size_t>(1, jobs.size())));
  std::vector<std::thread> threads;
  for (int t = 1; t < n; ++t) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
  for (size_t k = 0; k < jobs.size(); ++k) {
    jobs[k].package->bytes += job_bytes[k];
    ++jobs[k].package->files;
  }
}

// The verdicts of a package whose files are checked: of each directory
// (result count, olympic scoring, seeds, RCPs) and of the package.
// The consortium's RCP pass writes scaling.json in a directory it evaluates
// (the normalisation factor, where the runs converged faster than the RCPs
// allow) or removes it; its summarizer then scores the directory with what
// is there. A package whose scaling.json says something else (a factor
// edited by hand, or left from an earlier check) is scored with a figure the
// consortium's own pass would not have left: said with the two factors.
void note_stale_scaling(const PackageReport& pkg, BenchmarkDir* d) {
  std::error_code ec;
  const fs::path root = fs::weakly_canonical(pkg.path, ec);
  if (ec) return;
  const ScalingFile sf = read_scaling_json(d->path, root);
  if (!sf.present) return;
  if (!sf.usable) {
    // The summarizer reads it before the consortium's pass could rewrite it in a package checked as it is.
    Finding f;
    f.rule = "scaling.json";
    f.message = "scaling.json cannot be applied: " + sf.problem + "; referee score gives this directory no score";
    f.hint = "write {\"scaling_factor\": <number>} (or remove the file); --write-scaling writes what the consortium's "
             "RCP pass writes";
    d->warnings.push_back(f);
    return;
  }
  const RcpOutcome& c = d->rcp;
  const bool written = c.evaluated && c.pass && !c.bypassed && c.submission_mean < c.rcp_mean;
  if (written && std::fabs(sf.factor - c.norm_factor) <= 1e-9 * std::fabs(c.norm_factor)) return;
  if (!written && sf.factor == 1.0) return;  // removed or 1: the same score

  Finding f;
  f.rule = "scaling.json";
  f.message = "scaling.json gives a factor of " + mllog::json_number(sf.factor) + ", which score applies; the " +
              "consortium's RCP pass " +
              (written ? "writes " + mllog::json_number(c.norm_factor) + " there" : std::string("removes the file here")) +
              " (its normalisation of this directory)";
  f.expected = written ? "{\"scaling_factor\": " + mllog::json_number(c.norm_factor) + "}" : "no scaling.json";
  f.found = "{\"scaling_factor\": " + mllog::json_number(sf.factor) + "}";
  f.hint = "a factor the review committee set (a normalisation for a failed RCP check) stands as decided; any other "
           "is what --write-scaling replaces with what the consortium's pass writes";
  d->warnings.push_back(f);
}

void finish_package(const RuleSet& rules, const RoundFacts& facts, PackageReport* out) {
  // Directory verdicts.
  std::map<std::string, std::pair<std::unique_ptr<RcpTable>, std::string>> tables;
  for (auto& d : out->benchmarks) {
    if (d.skipped) continue;
    const BenchmarkFacts& bf = *facts.find(d.benchmark);
    if (d.scaling == "weak") {
      // Weak scaling: at least the required number of models.
      if (d.result_count < d.expected_count) {
        d.pass = false;
        Finding f;
        f.rule = "result count";
        f.message = "Expected at least " + std::to_string(d.expected_count) + " runs, but detected " +
                    std::to_string(d.result_count) + " runs";
        f.expected = "at least " + std::to_string(d.expected_count) + " result_<n>.txt files";
        f.found = std::to_string(d.result_count);
        f.hint = "a weak-scaling " + d.benchmark + " result trains at least " + std::to_string(d.expected_count) +
                 " models, one result file each";
        d.errors.push_back(f);
      }
    } else if (d.result_count != d.expected_count) {
      d.pass = false;
      Finding f;
      f.rule = "result count";
      f.message = "Incorrect number of files in dir, or wrong file names: found " + std::to_string(d.result_count) +
                  ", expected " + std::to_string(d.expected_count);
      f.expected = std::to_string(d.expected_count) + " result_<n>.txt files";
      f.found = std::to_string(d.result_count);
      f.hint = d.benchmark + " needs " + std::to_string(d.expected_count) + " runs";
      d.errors.push_back(f);
    }
    // The files that do not comply: non-compliant logs and runs the power
    // checker rejects, each counted once.
    std::set<std::string> failing_names;
    for (const auto& f : d.files)
      if (!f.verdict.compliant) failing_names.insert(f.name.substr(0, f.name.size() - 4));
    {
      std::vector<std::string> names;
      for (const auto& f : d.files) names.push_back(f.name);
      d.power = check_power(d.path, names);
      failing_names.insert(d.power.failing.begin(), d.power.failing.end());
      for (const auto& w : d.power.warnings) d.warnings.push_back(w);
    }
    int failing = static_cast<int>(failing_names.size());
    if (failing > bf.allowed_failures || (failing > 0 && failing > bf.allowed_failures)) {
      d.pass = false;
      Finding f;
      f.rule = "olympic scoring";
      f.message = std::to_string(failing) + " files do not comply, directory cannot be accepted";
      f.expected = "at most " + std::to_string(bf.allowed_failures) + " non-compliant file" + (bf.allowed_failures == 1 ? "" : "s");
      f.found = std::to_string(failing);
      d.errors.push_back(f);
    } else if (failing > 0) {
      Finding f;
      f.rule = "olympic scoring";
      f.message = std::to_string(failing) + " file" + (failing == 1 ? " does" : "s do") +
                  " not comply, accepted under olympic scoring";
      d.warnings.push_back(f);
    }
    bool closed = d.division == "closed";
    if (!closed && d.division != "open" && !d.division.empty()) {
      // The consortium's checker compares with "closed" exactly: "Closed" turns
      // the seed and RCP checks off without a word. Same verdict, said aloud.
      Finding f;
      f.rule = "division";
      f.message = "division \"" + d.division + "\" in systems/" + d.system +
                  ".json is neither \"closed\" nor \"open\": as in the consortium's checker, the seed and RCP "
                  "checks run only for \"closed\", so they were not run";
      f.expected = "\"closed\" or \"open\"";
      f.found = "\"" + d.division + "\"";
      f.hint = "write the division in lower case in systems/" + d.system + ".json";
      d.warnings.push_back(f);
    }
    if (closed && facts.seed_check) {
      d.seeds_checked = true;
      if (!d.seeds_bypassed) {
        check_seeds(&d);
        if (!d.seeds_ok) d.pass = false;
      }
    }
    if (closed && facts.rcp_check && bf.rcp) {
      d.rcp_checked = true;
      std::vector<RunConvergence> runs;
      std::string bench;
      for (const auto& f : d.files) {
        runs.push_back(f.convergence);
        if (bench.empty()) bench = f.convergence.benchmark;
      }
      if (bench.empty()) bench = d.benchmark;
      // One table per benchmark: its statistics and pruning are the same for every directory.
      auto cached = tables.find(bench);
      if (cached == tables.end()) {
        auto t = std::make_unique<RcpTable>();
        std::string err;
        std::string path = rules.rcp_dir() + "/rcps_" + bench + ".json";
        int n_runs = facts.find(bench) ? facts.find(bench)->runs : rcp_submission_runs(bench);
        bool ok = t->load(path, bench, n_runs, &err, rules.id().version);
        cached = tables.emplace(bench, std::make_pair(ok ? std::move(t) : nullptr, err)).first;
      }
      const RcpTable* table = cached->second.first.get();
      const std::string& err = cached->second.second;
      if (!table) {
        // Without a table nothing matches: the consortium's checker stops here with an error.
        d.rcp.status = "no_rcps";
        d.rcp.message = "Cannot find any RCPs";
        d.rcp.explanation = err;
        d.rcp.pass = false;
      } else {
        d.rcp = table->evaluate(runs, d.rcp_bypass);
      }
      note_stale_scaling(*out, &d);
      if (!d.rcp.pass) {
        d.pass = false;
        Finding f;
        f.rule = "RCP";
        f.message = "RCP Test Failed: " + d.rcp.message;
        f.found = d.rcp.explanation;
        if (d.rcp.evaluated && d.rcp.too_few_runs) {
          char buf[200];
          std::snprintf(buf, sizeof buf, "at least %d runs, whose olympic mean is >= %.6g (RCP mean %.6g / max speedup %.6g)",
                        d.benchmark == "unet3d" ? 9 : 3, d.rcp.rcp_mean / d.rcp.max_speedup, d.rcp.rcp_mean,
                        d.rcp.max_speedup);
          f.expected = buf;
        } else if (d.rcp.evaluated) {
          char buf[200];
          std::snprintf(buf, sizeof buf, "olympic mean >= %.6g (RCP mean %.6g / max speedup %.6g)",
                        d.rcp.rcp_mean / d.rcp.max_speedup, d.rcp.rcp_mean, d.rcp.max_speedup);
          f.expected = buf;
        }
        f.hint = d.rcp.too_few_runs ? "submit the " + std::to_string(d.expected_count) + " result files the benchmark requires"
                 : d.rcp.status == "missing" ? "submit an RCP for this batch size, or run at a batch size the RCPs cover"
                 : d.rcp.status == "not_converged" ? "only one run may fail to converge"
                 : d.rcp.status == "no_batch_size" ? "every result file must log the same global_batch_size"
                 : "convergence faster than the reference needs review; a justified exception uses package_checker_params rcp-bypass";
        // A file that could not be read has no batch size, epochs or convergence: that is the
        // cause to name, not what the other files lack.
        std::string unread;
        for (const auto& rf : d.files)
          if (!rf.readable) unread += (unread.empty() ? "" : ", ") + rf.name;
        if (!unread.empty()) {
          f.found = unread + (unread.find(',') == std::string::npos ? " cannot be read, so it gives" : " cannot be read, so they give") +
                    " the check no global_batch_size, epochs or convergence";
          f.expected.clear();
          f.hint = "make every result file of the directory a readable regular file, then check again";
        }
        d.errors.push_back(f);
      }
    }
  }
  // Where the consortium's current RCP checker stops: it looks up the run
  // count of the benchmark the logs name (None when they name none, or
  // disagree on it or on the batch size) in a table without the benchmarks
  // retired before 3.0.
  for (auto& d : out->benchmarks) {
    if (d.skipped || !d.consortium_stops.empty()) continue;
    for (const auto& f : d.files)
      if (!f.readable && d.consortium_stops.empty())
        d.consortium_stops = "it cannot read " + f.name + " and stops (" +
                             (f.verdict.errors.empty() ? std::string("unreadable") : f.verdict.errors[0].message) + ")";
    if (!d.rcp_checked || !d.consortium_stops.empty()) continue;
    std::string why;
    std::string bench = consortium_rcp_benchmark(d.files, &why);
    if (!why.empty())
      d.consortium_stops = "its RCP checker stops with KeyError(None): " + why;
    else if (!consortium_rcp_table_has(rules.id().usage, bench))
      d.consortium_stops = "its RCP checker stops with KeyError('" + bench + "'): its table of run counts has no " + bench +
                           " (a benchmark of rounds before 3.0); referee holds the directory to the " + facts.ruleset +
                           " RCPs with the round's " + std::to_string(d.expected_count) + " runs";
  }
  for (const auto& s : out->systems)
    if (!s.valid) out->pass = false;
  for (const auto& d : out->benchmarks)
    if (!d.skipped && !d.pass) out->pass = false;
  // Nothing checked is no reason to pass quietly (the consortium's checker
  // says SUCCESS there): say what was passed over.
  size_t skipped = 0, checked = 0;
  for (const auto& d : out->benchmarks) (d.skipped ? skipped : checked)++;
  if (checked == 0 && out->errors.empty()) {
    Finding f;
    f.rule = "benchmarks";
    f.message = "no result directory of a benchmark of " + facts.ruleset + " was found" +
                (skipped ? " (" + std::to_string(skipped) + " passed over: not benchmarks of the round)" : "") +
                ": nothing was checked";
    std::string names;
    for (const auto& b : facts.benchmarks) names += (names.empty() ? "" : ", ") + b.name;
    f.expected = "results/<system>/" + std::string(facts.scaling_folders ? "strong|weak/" : "") + "<benchmark> for " + names;
    f.hint = "is --ruleset right for this package? (training-X.Y.Z for MLPerf Training, hpc-X.Y.Z for MLPerf HPC)";
    out->warnings.push_back(f);
  }
}

}  // namespace

std::vector<PackageOutcome> check_packages(const RuleSet& rules, const RoundFacts& facts,
                                           const std::vector<std::string>& org_dirs, const PackageOptions& opt) {
  std::vector<PackageOutcome> out(org_dirs.size());
  std::vector<PackageReport*> listed;
  for (size_t i = 0; i < org_dirs.size(); ++i) {
    out[i].ok = list_package(facts, org_dirs[i], opt, &out[i].report, &out[i].error);
    if (out[i].ok) listed.push_back(&out[i].report);
  }
  check_files(rules, facts, opt, listed);
  for (PackageReport* p : listed) finish_package(rules, facts, p);
  return out;
}

bool check_package(const RuleSet& rules, const RoundFacts& facts, const std::string& org_dir,
                   const PackageOptions& opt, PackageReport* out, std::string* error) {
  auto outcomes = check_packages(rules, facts, {org_dir}, opt);
  *out = std::move(outcomes[0].report);
  if (!outcomes[0].ok) *error = outcomes[0].error;
  return outcomes[0].ok;
}

std::vector<std::string> write_scaling_files(const PackageReport& report, std::string* error) {
  std::vector<std::string> changed;
  std::error_code root_ec;
  const fs::path package_root = fs::weakly_canonical(report.path, root_ec);
  for (const auto& d : report.benchmarks) {
    if (!d.rcp_checked) continue;
    fs::path target = fs::path(d.path) / "scaling.json";
    std::error_code ec;
    // A benchmark folder that is a link out of the package: its scaling.json
    // is someone else's file; nothing is written or removed there.
    if (fs::path real; root_ec || !base::resolves_within(d.path, package_root, &real, true)) {
      *error = "not writing " + target.string() + ": the folder " + d.path + " leads outside the package (to " +
               real.string() + "); make it a folder of the package, not a link";
      return changed;
    }
    bool write = d.rcp.evaluated && d.rcp.pass && !d.rcp.bypassed && d.rcp.submission_mean < d.rcp.rcp_mean;
    if (!write) {
      // The consortium's RCP pass deletes the scaling.json of every directory it evaluates.
      if (fs::exists(target, ec)) {
        fs::remove(target, ec);
        if (ec) {
          *error = "cannot remove " + target.string() + ": " + ec.message();
          return changed;
        }
        changed.push_back("removed " + target.string());
      }
      continue;
    }
    fs::path tmp = fs::path(d.path) / ".scaling.json.tmp";
    std::string body = "{\"scaling_factor\": " + mllog::json_number(d.rcp.norm_factor) + "}";
    {
      std::ofstream o(tmp, std::ios::binary | std::ios::trunc);
      o << body;
      o.flush();
      if (!o) {
        *error = "cannot write " + tmp.string();
        fs::remove(tmp, ec);
        return changed;
      }
    }
    fs::rename(tmp, target, ec);
    if (ec) {
      *error = "cannot write " + target.string() + ": " + ec.message();
      fs::remove(tmp, ec);
      return changed;
    }
    changed.push_back("wrote " + target.string());
  }
  return changed;
}

}  // namespace referee::rules
