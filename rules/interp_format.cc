// str.format: positional replacement fields and the format specs rule files
// use, with Python 3.11's results and errors.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "rules/interp_runtime.h"

namespace referee::rules::interp {

namespace {

// A decimal number in a format string, as CPython's get_integer reads it:
// above PY_SSIZE_T_MAX it is "Too many decimal digits in format string".
int64_t format_number(const std::string& digits) {
  int64_t n = 0;
  for (char c : digits) {
    int d = c - '0';
    if (n > (INT64_MAX - d) / 10) raise("ValueError", "Too many decimal digits in format string");
    n = n * 10 + d;
  }
  return n;
}

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// printf's text of one number.
template <class T>
std::string c_format(const std::string& cfmt, T x) {
  std::string out;
  int n = std::snprintf(nullptr, 0, cfmt.c_str(), x);
  out.resize(static_cast<size_t>(n) + 1);
  std::snprintf(out.data(), out.size(), cfmt.c_str(), x);
  out.pop_back();
  return out;
}

// One replacement field's format spec, for the subset rule files use:
// [sign][#][0][width][.precision][type] with type f F e E g G d or none.
// Anything else raises ValueError, as an unsupported spec must not pass.
std::string format_value(const Value& v, const std::string& spec) {
  if (spec.empty()) return py_str(v);
  size_t i = 0;
  std::string flags;
  if (i < spec.size() && (spec[i] == '+' || spec[i] == '-' || spec[i] == ' ')) flags += spec[i++];
  if (i < spec.size() && spec[i] == '#') flags += spec[i++];
  if (i < spec.size() && spec[i] == '0') flags += spec[i++];
  std::string width, precision;
  while (i < spec.size() && spec[i] >= '0' && spec[i] <= '9') width += spec[i++];
  bool has_precision = false;
  if (i < spec.size() && spec[i] == '.') {
    has_precision = true;
    ++i;
    while (i < spec.size() && spec[i] >= '0' && spec[i] <= '9') precision += spec[i++];
    if (precision.empty()) raise("ValueError", "Format specifier missing precision");
  }
  // Python reads the numbers before it looks at the rest of the spec.
  int64_t w = width.empty() ? -1 : format_number(width);
  int64_t p = precision.empty() ? -1 : format_number(precision);
  std::string type = spec.substr(i);
  static const std::string kTypes = "fFeEgGd";
  if (type.size() != 1 || kTypes.find(type[0]) == std::string::npos)
    raise("ValueError", "format spec '" + spec + "' is not supported");
  constexpr int64_t kMaxField = 4096;
  if (w > kMaxField || p > kMaxField)
    raise("ValueError", "format width or precision above " + std::to_string(kMaxField) + " is not supported: '" + spec + "'");
  std::string cfmt = "%" + flags + width + (has_precision ? "." + precision : std::string());
  if (type[0] == 'd') {
    if (v.kind != VKind::Int && v.kind != VKind::Bool)
      raise("ValueError", std::string("Unknown format code 'd' for object of type '") + py_type_name(v) + "'");
    if (has_precision) raise("ValueError", "Precision not allowed in integer format specifier");
    if (flags.find('#') != std::string::npos) raise("ValueError", "Alternate form (#) not allowed with integer format specifier 'd'");
    cfmt += "lld";
    return c_format(cfmt, v.kind == VKind::Int ? static_cast<long long>(v.i) : static_cast<long long>(v.b));
  }
  if (!v.is_num())
    raise("ValueError", std::string("Unknown format code '") + type + "' for object of type '" + py_type_name(v) + "'");
  cfmt += type;
  double x = v.as_double();
  if (std::isnan(x)) x = std::fabs(x);  // Python prints "nan", never "-nan"
  return c_format(cfmt, x);
}

}  // namespace

// str.format with positional fields: {} {0} {0:spec} {0!r} {0!s}, {{ and }}.
std::string format_str(const std::string& fmt, const std::vector<Value>& args) {
  std::string out;
  size_t auto_idx = 0;
  enum { kNone, kAuto, kManual } numbering = kNone;
  for (size_t i = 0; i < fmt.size(); ++i) {
    char c = fmt[i];
    if (c == '{') {
      if (i + 1 < fmt.size() && fmt[i + 1] == '{') { out += '{'; ++i; continue; }
      size_t close = fmt.find('}', i);
      if (close == std::string::npos) raise("ValueError", "Single '{' encountered in format string");
      std::string field = fmt.substr(i + 1, close - i - 1);
      std::string spec;
      size_t colon = field.find(':');
      if (colon != std::string::npos) {
        spec = field.substr(colon + 1);
        field = field.substr(0, colon);
      }
      char conversion = 0;
      size_t bang = field.find('!');
      if (bang != std::string::npos) {
        std::string conv = field.substr(bang + 1);
        field = field.substr(0, bang);
        if (conv.size() != 1) raise("ValueError", "expected ':' after conversion specifier");
        if (conv[0] != 'r' && conv[0] != 's') raise("ValueError", "Unknown conversion specifier " + conv);
        conversion = conv[0];
      }
      size_t idx = 0;
      if (field.empty()) {
        if (numbering == kManual)
          raise("ValueError", "cannot switch from manual field specification to automatic field numbering");
        numbering = kAuto;
        idx = auto_idx++;
      } else if (all_digits(field)) {
        int64_t n = format_number(field);
        if (numbering == kAuto)
          raise("ValueError", "cannot switch from automatic field numbering to manual field specification");
        numbering = kManual;
        idx = static_cast<size_t>(n);
        if (idx >= args.size())
          raise("IndexError", "Replacement index " + std::to_string(n) + " out of range for positional args tuple");
      } else {
        raise("KeyError", "'" + field + "'");
      }
      if (idx >= args.size())
        raise("IndexError", "Replacement index " + std::to_string(idx) + " out of range for positional args tuple");
      const Value& v = args[idx];
      if (conversion == 'r') out += format_value(Value::str(py_repr(v)), spec);
      else if (conversion == 's') out += format_value(Value::str(py_str(v)), spec);
      else out += format_value(v, spec);
      i = close;
      continue;
    }
    if (c == '}') {
      if (i + 1 < fmt.size() && fmt[i + 1] == '}') { out += '}'; ++i; continue; }
      raise("ValueError", "Single '}' encountered in format string");
    }
    out += c;
  }
  return out;
}

}  // namespace referee::rules::interp
