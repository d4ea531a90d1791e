#include "cli/review_cli.h"

#include <iostream>

#include "mllog/json_writer.h"

namespace referee::cli {

std::string text_of(const mllog::Json* v) {
  if (!v) return "";
  switch (v->kind) {
    case mllog::Json::Kind::String: return v->s;
    case mllog::Json::Kind::Int: return std::to_string(v->i);
    case mllog::Json::Kind::Float: return mllog::py_float_repr(v->f);
    case mllog::Json::Kind::Bool: return v->b ? "true" : "false";
    default: return "";
  }
}

const mllog::Json* listed(const mllog::Json& b, const char* key, const char* none) {
  const auto* list = b.find(key);
  if (list && !list->items.empty()) return list;
  std::cout << none << "\n";
  return nullptr;
}

int send_and_print(const char* cmd, const ClientOptions& o, const review::Request& r, bool json,
                   const std::function<void(const mllog::Json&)>& render) {
  ClientOptions opts = o;
  resolve_client_options(&opts);
  return review_cli::review_print(cmd, call_api(opts, r), json, render);
}

int send_and_print(const char* cmd, const ClientOptions& o, const review::Request& r, const LocalCall& local, bool json,
                   const std::function<void(const mllog::Json&)>& render) {
  ClientOptions opts = o;
  resolve_client_options(&opts);
  return review_cli::review_print(cmd, call_review(opts, r, local), json, render);
}

}  // namespace referee::cli
