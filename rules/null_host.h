// Running rule code alone, with no log behind it (benchmarks, fuzz targets):
// a Host that has nothing to give, and a current line made by hand.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "rules/interp.h"
#include "rules/value.h"

namespace referee::rules {

// enqueue_config does nothing, a line's value loads as {} and loglines() is [].
class NullHost : public Host {
 public:
  void enqueue_config(const std::string&) override {}
  void load_line_value(const LineObj& line) override {
    line.value = Value::dict();
    line.value_loaded = true;
  }
  Value loglines() override { return Value::list(); }
};

// A line (`ll`) whose value dict is already loaded, as a KEY record's CHECK
// gets it. `json` is not copied: it must outlive the line.
inline Value loaded_line(Value key, Value timestamp, Value lineno, std::string_view json, Value value) {
  auto l = std::make_shared<LineObj>();
  l->key = std::move(key);
  l->timestamp = std::move(timestamp);
  l->lineno = std::move(lineno);
  l->json = json;
  l->value = std::move(value);
  l->value_loaded = true;
  Value v;
  v.kind = VKind::Line;
  v.h = std::move(l);
  return v;
}

}  // namespace referee::rules
