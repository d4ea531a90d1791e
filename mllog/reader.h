// Reading MLLOG result files the way the consortium's parser does.
//
// A file is read whole (memory-mapped when it is a regular file). Lines are
// split on "\n", "\r\n" and a lone "\r" (Python's universal newlines). A line
// is an MLLOG line when it contains ":::MLLOG "; the text after the *last*
// occurrence of that token, stripped of white space, is one JSON object.
// Bytes are taken as latin-1, so no byte sequence fails a file.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace referee::mllog {

inline constexpr std::string_view kToken = ":::MLLOG ";

// The bytes of one file. Owns a mapping or a heap copy; views into it stay
// valid for the buffer's lifetime.
class FileBuffer {
 public:
  FileBuffer() = default;
  ~FileBuffer();
  FileBuffer(const FileBuffer&) = delete;
  FileBuffer& operator=(const FileBuffer&) = delete;
  FileBuffer(FileBuffer&& o) noexcept;
  FileBuffer& operator=(FileBuffer&& o) noexcept;

  // Reads `path`. Returns false and sets *error ("cannot open ...: reason").
  bool open(const std::string& path, std::string* error);
  // Takes a copy of `text` (tests, stdin, live streams).
  void assign(std::string text);

  std::string_view view() const { return {data_, size_}; }

 private:
  void release();
  const char* data_ = "";
  size_t size_ = 0;
  void* map_ = nullptr;
  std::string owned_;
};

// One parsed MLLOG line. Views point into the FileBuffer.
struct Event {
  uint32_t key_id = 0;      // index into ParsedLog::keys
  uint32_t lineno = 0;      // index among the MLLOG lines, from 0 (ll.lineno)
  uint32_t file_line = 0;   // line number in the file, from 1
  double time_ms = 0.0;     // float(time_ms)
  std::string_view json;    // the JSON object text (ll.full_string minus the token)
  // Where the values of "value" and "metadata" start in `json` (the last of
  // repeated names), when the line was read by the fast scan; 0: not known.
  uint32_t value_at = 0;
  uint32_t meta_at = 0;
};

struct ParseError {
  uint32_t file_line = 0;
  uint32_t lineno = 0;
  std::string text;     // the offending JSON text (truncated to 300 bytes)
  std::string message;  // what is wrong
};

struct ParsedLog {
  std::vector<std::string> keys;  // distinct keys, in order of first appearance
  std::vector<Event> events;      // lines that parsed
  std::vector<ParseError> errors; // lines that did not
  uint32_t mllog_lines = 0;       // events.size() + errors.size()
  uint64_t bytes = 0;
  // Line breaks in the text ("\n", "\r\n" and a lone "\r" once each),
  // counted as the lines were found: a reader of the log in pieces numbers
  // the next piece's lines from it without another pass over the bytes.
  uint64_t line_breaks = 0;

  // Index of `key` in keys, or -1.
  int find_key(std::string_view key) const;
};

// Parses all MLLOG lines of `text`. Never fails: bad lines become errors.
// Reuses internal buffers between calls; one LogReader per thread.
class LogReader {
 public:
  LogReader();
  ~LogReader();
  LogReader(const LogReader&) = delete;
  LogReader& operator=(const LogReader&) = delete;

  void parse(std::string_view text, ParsedLog* out);

 private:
  uint32_t intern(ParsedLog* out, std::string_view key);
  bool scan_payload(std::string_view json, Event* ev, ParsedLog* out);
  bool parse_slow(std::string_view json, ParsedLog* out, Event* ev, std::string* error);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Python's str.strip() white space for latin-1 text.
bool is_py_space(unsigned char c);

// Python's float(str): accepts surrounding white space, "nan", "inf",
// "infinity" (any case, optional sign) and underscores between digits.
bool py_float_from_string(std::string_view s, double* out);

}  // namespace referee::mllog
