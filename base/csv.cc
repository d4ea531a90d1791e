#include "base/csv.h"

namespace referee::base {

bool parse_csv(std::string_view text, std::vector<CsvRecord>* out, std::string* error) {
  out->clear();
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  size_t line = 1, i = 0;
  while (i < text.size()) {
    CsvRecord rec;
    rec.line = line;
    std::string field;
    bool any = false;  // the record has a field (an empty line has none)
    for (;;) {
      if (i < text.size() && text[i] == '"') {
        size_t open_line = line;
        ++i;
        for (;;) {
          if (i >= text.size()) {
            *error = "line " + std::to_string(open_line) + ": a quoted field is not closed";
            return false;
          }
          char c = text[i++];
          if (c == '"') {
            if (i < text.size() && text[i] == '"') {
              field += '"';
              ++i;
              continue;
            }
            break;
          }
          if (c == '\n') ++line;
          field += c;
        }
        if (i < text.size() && text[i] != ',' && text[i] != '\n' && text[i] != '\r') {
          *error = "line " + std::to_string(line) + ": text after a closing quote (a quote inside a quoted field is \"\")";
          return false;
        }
        any = true;
      } else {
        while (i < text.size() && text[i] != ',' && text[i] != '\n' && text[i] != '\r') field += text[i++];
        any = any || !field.empty() || (i < text.size() && text[i] == ',');
      }
      if (i < text.size() && text[i] == ',') {
        rec.fields.push_back(std::move(field));
        field.clear();
        any = true;
        ++i;
        continue;
      }
      // The record's end: CRLF, LF, a lone CR, or the end of the text.
      if (i < text.size() && text[i] == '\r') ++i;
      if (i < text.size() && text[i] == '\n') ++i;
      ++line;
      break;
    }
    if (any) {
      rec.fields.push_back(std::move(field));
      out->push_back(std::move(rec));
    }
  }
  return true;
}

}  // namespace referee::base
