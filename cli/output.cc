#include "cli/output.h"

#include <unistd.h>

#include <cstdlib>

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
  os << ": " << f.rule << ": " << f.message << "\n";
  if (!f.log_text.empty()) os << indent << "    line:     " << f.log_text << "\n";
  if (!f.expected.empty()) os << indent << "    expected: " << f.expected << "\n";
  if (!f.found.empty()) os << indent << "    found:    " << f.found << "\n";
  if (!f.hint.empty()) os << indent << "    hint:     " << f.hint << "\n";
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
