#include "cli/output.h"

#include <unistd.h>

#include <cstdlib>

#include "base/text.h"

namespace referee::cli {

bool use_color(std::ostream& os) {
  if (std::getenv("NO_COLOR")) return false;
  if (&os == &std::cout) return isatty(1);
  if (&os == &std::cerr) return isatty(2);
  return false;
}

std::string paint(bool on, const char* code, const std::string& text) {
  if (!on) return text;
  return std::string("\033[") + code + "m" + text + "\033[0m";
}

void print_finding(std::ostream& os, const std::string& path, const rules::Finding& f, const char* indent) {
  os << indent << path;
  if (f.line) os << ":" << f.line;
  // Each part as one line: a name, a log line or a value someone else wrote
  // (a file named with a line break, say) must not start a line of the report.
  os << ": " << base::one_line(f.rule) << ": " << base::one_line(f.message) << "\n";
  if (!f.log_text.empty()) os << indent << "    line:     " << base::one_line(f.log_text) << "\n";
  if (!f.expected.empty()) os << indent << "    expected: " << base::one_line(f.expected) << "\n";
  if (!f.found.empty()) os << indent << "    found:    " << base::one_line(f.found) << "\n";
  if (!f.hint.empty()) os << indent << "    hint:     " << base::one_line(f.hint) << "\n";
}

void write_finding_json(mllog::JsonWriter& w, const rules::Finding& f) {
  w.begin_object();
  w.key("line").value(static_cast<long long>(f.line));
  w.key("rule").value(f.rule);
  w.key("message").value(f.message);
  if (!f.key.empty()) w.key("key").value(f.key);
  if (!f.expected.empty()) w.key("expected").value(f.expected);
  if (!f.found.empty()) w.key("found").value(f.found);
  if (!f.hint.empty()) w.key("hint").value(f.hint);
  w.end_object();
}

void write_findings_json(mllog::JsonWriter& w, const char* key, const std::vector<rules::Finding>& findings) {
  w.key(key).begin_array();
  for (const auto& f : findings) write_finding_json(w, f);
  w.end_array();
}

}  // namespace referee::cli
