#include "harness/run_output.h"

namespace referee::harness {

std::string last_output_line(const std::string& output, size_t max) {
  size_t end = output.size();
  while (end > 0) {
    size_t start = output.rfind('\n', end - 1);
    start = start == std::string::npos ? 0 : start + 1;
    std::string line = output.substr(start, end - start);
    while (!line.empty() && (line.back() == '\r' || line.back() == '\n' || line.back() == ' ' || line.back() == '\t'))
      line.pop_back();
    size_t lead = line.find_first_not_of(" \t");
    if (lead != std::string::npos) {
      line = line.substr(lead);
      if (line.size() > max) {
        size_t cut = max;
        while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80) --cut;  // not inside a character
        line = line.substr(0, cut) + "...";
      }
      return line;
    }
    if (start == 0) break;
    end = start - 1;
  }
  return "";
}

}  // namespace referee::harness
