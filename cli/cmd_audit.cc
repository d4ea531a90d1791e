#include <cctype>
#include <cstdio>
#include <iostream>
#include <memory>

#include "cli/client.h"
#include "cli/commands.h"
#include "mllog/json.h"
#include "mllog/json_writer.h"
#include "review/text_format.h"

namespace referee::cli {

namespace {

struct AuditOpts {
  std::string target, round;
  bool json = false;
  ClientOptions client;
};

// Whether `t` is a round as users type it: a version with at least one dot
// (3.1.0), optionally after a usage and a dash (training-3.1.0, mini-1.0.0).
// Anything else is an organisation.
bool is_round_name(const std::string& t) {
  size_t dash = t.rfind('-');
  std::string v = dash == std::string::npos ? t : t.substr(dash + 1);
  if (dash != std::string::npos)
    for (size_t i = 0; i < dash; ++i)
      if (!std::isalpha(static_cast<unsigned char>(t[i]))) return false;
  if (v.empty() || v.front() == '.' || v.back() == '.' || v.find('.') == std::string::npos) return false;
  for (char c : v)
    if (!(c == '.' || (c >= '0' && c <= '9'))) return false;
  return true;
}

std::string str(const mllog::Json* v) { return v && v->kind == mllog::Json::Kind::String ? v->s : ""; }

// A number of the answer as text: an integer as it is, a fraction by `fmt`
// (review/text_format.h: 6 significant digits unless told); --json keeps every digit.
std::string num(const mllog::Json* v, std::string (*fmt)(double) = review::figure_text) {
  if (!v) return "";
  if (v->kind == mllog::Json::Kind::Int) return std::to_string(v->i);
  if (v->kind == mllog::Json::Kind::Float) return fmt(v->f);
  return "";
}

void print_finding(const mllog::Json& f, bool brief) {
  std::string result = str(f.find("result"));
  // A finding of a round whose findings are not stored (published) has no id to file it by.
  const std::string id = num(f.find("id"));
  std::cout << (id.empty() || id == "0" ? std::string("-") : "#" + id) << "  " << str(f.find("state")) << "  " << str(f.find("kind")) << "  "
            << (result.empty() ? str(f.find("organisation")) : result) << "\n";
  std::cout << "    " << str(f.find("summary")) << "\n";
  if (brief) return;
  std::cout << "    rule: " << str(f.find("rule")) << "\n";
  if (const auto* ev = f.find("evidence"))
    for (const auto& e : ev->items) {
      if (e.find("figure"))
        std::cout << "    " << str(e.find("figure")) << ": "
                  << num(e.find("value"), str(e.find("unit")) == "min" ? review::minutes_text : review::figure_text)
                  << (str(e.find("unit")).empty() ? "" : " " + str(e.find("unit"))) << "\n";
      else if (num(e.find("line")) == "0")
        std::cout << "    " << str(e.find("file")) << ": " << str(e.find("text")) << "\n";
      else
        std::cout << "    " << str(e.find("file")) << ":" << num(e.find("line")) << ": " << str(e.find("text")) << "\n";
    }
  if (const auto* im = f.find("impact_minutes"); im && im->kind != mllog::Json::Kind::Null)
    std::cout << "    score if it holds: " << num(im, review::minutes_text) << " min\n";
}

int run(AuditOpts o) {
  resolve_client_options(&o.client);
  if (!o.client.rules.empty() && !o.client.server.empty()) {
    std::cerr << "referee audit: --rules is for an audit of a local store; a server (" << o.client.server
              << ") looks for rule sets where it runs\n"
              << "hint: install them there (referee rules fetch, or REFEREE_RULES=DIR for referee serve), or leave out --server\n";
    return kCannotCheck;
  }
  review::Request r;
  r.method = "POST";
  r.path = "/api/v1/audit";
  mllog::JsonWriter w(0, mllog::JsonText::kUtf8);
  w.begin_object();
  if (is_round_name(o.target)) {
    if (!o.round.empty()) {
      std::cerr << "referee audit: " << o.target << " is a round; --round goes with an organisation\n"
                << "hint: referee audit ROUND, or referee audit ORG --round ROUND\n";
      return kCannotCheck;
    }
    w.key("round").value(o.target);
  } else {
    w.key("organisation").value(o.target);
    if (!o.round.empty()) w.key("round").value(o.round);
  }
  w.end_object();
  r.body = w.str();
  review::Response resp = call_api(o.client, r);
  mllog::Json j;
  std::string perr;
  bool parsed = mllog::parse_json_permissive(resp.body, &j, &perr);
  if (resp.status != 200) {
    const mllog::Json* e = parsed ? j.find("error") : nullptr;
    std::cerr << "referee audit: " << (e ? str(e->find("message")) : resp.body) << "\n";
    if (e && !str(e->find("hint")).empty()) std::cerr << "hint: " << str(e->find("hint")) << "\n";
    bool input = resp.status == 0 || resp.status == 400 || resp.status == 401 || resp.status == 404 || resp.status >= 500;
    return input ? kCannotCheck : kFail;
  }
  if (o.json) {
    std::cout << resp.body << "\n";
    return kPass;
  }
  if (!parsed) {
    std::cerr << "referee audit: the answer is not JSON: " << perr << "\n";
    return kCannotCheck;
  }
  const auto* fs = j.find("findings");
  const auto* gone = j.find("gone");
  size_t n = fs ? fs->items.size() : 0, g = gone ? gone->items.size() : 0;
  std::string org = str(j.find("organisation"));
  std::cout << "audit of " << (org.empty() ? "every organisation" : org) << " in " << str(j.find("round")) << ": " << n
            << " finding(s), " << num(j.find("added")) << " new, " << g << " gone\n";
  if (fs)
    for (const auto& f : fs->items) {
      std::cout << "\n";
      print_finding(f, false);
    }
  if (g) {
    std::cout << "\nno longer found (kept, not deleted):\n";
    for (const auto& f : gone->items) print_finding(f, true);
  }
  bool stored = true;
  if (const auto* notes = j.find("notes"); notes && !notes->items.empty()) {
    std::cout << "\nnotes:\n";
    for (const auto& note : notes->items) {
      std::cout << "  " << note.s << "\n";
      if (note.s.find("findings were computed but not stored") != std::string::npos) stored = false;
    }
  }
  if (n && stored) std::cout << "\nto object: referee objection file --from-finding ID\n";
  return kPass;
}

}  // namespace

Command audit_command() {
  return {"audit", "Find what a reviewer hunts for in a round's results (stored findings, ready to file)",
          [](CLI::App& sub) -> std::function<int()> {
            auto o = std::make_shared<AuditOpts>();
            sub.add_option("TARGET", o->target, "a round (3.1.0, training-3.1.0): every organisation; or an organisation")
                ->required();
            sub.add_option("--round", o->round, "with an organisation: the round (default: its latest)");
            sub.add_flag("--json", o->json, "print the server's JSON answer");
            add_client_options(sub, &o->client);
            sub.add_option("--rules", o->client.rules,
                           "local store: the rule sets' root (holds compliance_checker/), the only place looked for the "
                           "round's rule set (default: REFEREE_RULES, then the cache of referee rules fetch); a server "
                           "uses its own");
            return [o] { return run(*o); };
          }};
}

}  // namespace referee::cli
