#include "cli/review_cli.h"

#include <iostream>

#include "cli/commands.h"
#include "mllog/json_writer.h"

namespace referee::cli {

int exit_code_for(int status) {
  if (status >= 200 && status < 300) return kPass;
  // 404: a name it was given is unknown (a round, organisation, result, run,
  // objection): exit 2, as from the store's questions.
  if (status == 400 || status == 401 || status == 404 || status == 0 || status >= 500) return kCannotCheck;
  return kFail;
}

std::string json_str(const std::string& s) {
  std::string out;
  mllog::append_json_string(&out, s, mllog::JsonText::kUtf8);
  return out;
}

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

std::string url_escape(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char ch : s) {
    if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '-' || ch == '.' ||
        ch == '_' || ch == '~' || ch == '+') {
      out += static_cast<char>(ch);
    } else {
      out += '%';
      out += hex[ch >> 4];
      out += hex[ch & 15];
    }
  }
  return out;
}

int send_and_print(const char* cmd, const ClientOptions& o, const review::Request& r, bool json,
                   const std::function<void(const mllog::Json&)>& render) {
  ClientOptions opts = o;
  resolve_client_options(&opts);
  review::Response resp = call_api(opts, r);
  mllog::Json body;
  std::string perr;
  bool parsed = mllog::parse_json_permissive(resp.body, &body, &perr);
  if (resp.status < 200 || resp.status >= 300) {
    const mllog::Json* e = parsed ? body.find("error") : nullptr;
    std::string msg = e ? text_of(e->find("message")) : resp.body;
    std::string hint = e ? text_of(e->find("hint")) : "";
    std::cerr << "referee " << cmd << ": " << msg << "\n";
    if (!hint.empty()) std::cerr << "  hint: " << hint << "\n";
    return exit_code_for(resp.status);
  }
  if (json || !parsed) {
    std::cout << resp.body << "\n";
    return kPass;
  }
  render(body);
  return kPass;
}

}  // namespace referee::cli
