#include "cli/review_output.h"

#include <cctype>
#include <iostream>

#include "base/url.h"
#include "cli/review_cli.h"

namespace referee::cli::review_cli {

int review_exit(const char* cmd, const review::Response& r) {
  if (r.status >= 200 && r.status < 300) return 0;
  mllog::Json body;
  std::string perr, message = r.body, hint;
  if (mllog::parse_json_permissive(r.body, &body, &perr)) {
    if (const auto* e = body.find("error")) {
      message = jstr(*e, "message");
      hint = jstr(*e, "hint");
    }
  }
  std::cerr << "referee " << cmd << ": " << message << "\n";
  if (!hint.empty()) std::cerr << "hint: " << hint << "\n";
  if (r.status == 0 || r.status == 400 || r.status == 401 || r.status == 404 || r.status >= 500) return 2;
  return 1;
}

int review_print(const char* cmd, const review::Response& r, bool json,
                 const std::function<void(const mllog::Json&)>& render) {
  if (r.status < 200 || r.status >= 300) return review_exit(cmd, r);
  if (json || r.content_type.rfind("application/json", 0) != 0) {
    std::cout << r.body;
    if (!r.body.empty() && r.body.back() != '\n') std::cout << "\n";
    return 0;
  }
  mllog::Json body;
  std::string perr;
  if (!mllog::parse_json_permissive(r.body, &body, &perr)) {
    std::cerr << "referee " << cmd << ": the answer is not JSON: " << perr << "\n";
    return 2;
  }
  render(body);
  return 0;
}

std::string path_segment(const std::string& s) {
  // '+' is a '+' in a path (base/url.h): kept, so Azure+NVIDIA reads as it is.
  return base::percent_encode(s, [](unsigned char c) {
    return std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || c == '+';
  });
}

void add_answer_options(CLI::App& sub, bool* json, ClientOptions* client) {
  sub.add_flag("--json", *json, "print the JSON answer");
  add_client_options(sub, client);
}

std::function<int()> command_group(CLI::App& group,
                                   const std::vector<std::tuple<const char*, const char*, SubSetup>>& subs) {
  group.require_subcommand(1);
  auto chosen = std::make_shared<std::function<int()>>();
  for (const auto& [name, description, setup] : subs) {
    CLI::App* sub = group.add_subcommand(name, description);
    auto run = setup(*sub);
    sub->callback([chosen, run] { *chosen = run; });
  }
  return [chosen]() -> int { return *chosen ? (*chosen)() : 2; };
}

SubSetup round_request(const char* cmd, const char* method, const char* suffix, bool positional, RoundCall local,
                       std::function<void(const mllog::Json&)> render) {
  return [=](CLI::App& sub) -> std::function<int()> {
    struct Opts {
      ClientOptions client;
      std::string round;
      bool json = false;
    };
    auto o = std::make_shared<Opts>();
    if (positional) sub.add_option("ROUND", o->round, "round: training-3.1.0 or 3.1.0")->required();
    else sub.add_option("--round", o->round, "round: training-3.1.0 or 3.1.0")->required();
    add_answer_options(sub, &o->json, &o->client);
    return [=]() -> int {
      review::Request r{method, "/api/v1/rounds/" + path_segment(o->round) + suffix, {}, "", "", "", false};
      auto typed = [&](submissions::Store& s, const review::Actor& who) { return local(s, who, o->round); };
      return send_and_print(cmd, o->client, r, typed, o->json, render);
    };
  };
}

std::string jstr(const mllog::Json& j, const char* key) {
  const auto* v = j.find(key);
  if (!v) return "";
  if (v->kind == mllog::Json::Kind::String) return v->s;
  if (v->kind == mllog::Json::Kind::Int) return std::to_string(v->i);
  if (v->kind == mllog::Json::Kind::Bool) return v->b ? "true" : "false";
  return "";
}

long long jint(const mllog::Json& j, const char* key) {
  const auto* v = j.find(key);
  return v && v->kind == mllog::Json::Kind::Int ? v->i : 0;
}

}  // namespace referee::cli::review_cli
