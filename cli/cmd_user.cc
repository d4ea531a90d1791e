// referee user add|list|revoke|token: users of the review and their tokens.
// The flags fill the typed operations of review/identity.h: run on the local
// store, or sent to --server as the request made from the same value.
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/review_cli.h"
#include "review/identity.h"
#include "review/identity_codec.h"

namespace referee::cli {

Command user_command() {
  return {"user", "Review users and their tokens: add, list, revoke, token", [](CLI::App& sub) -> std::function<int()> {
            struct Opts {
              ClientOptions client;
              std::string name, org, role;
              bool create_org = false, json = false;
            };
            auto o = std::make_shared<Opts>();
            sub.require_subcommand(1);
            auto* add = sub.add_subcommand("add", "add a user and print their token (shown once)");
            add->add_option("NAME", o->name, "user name")->required();
            add->add_option("--org", o->org, "the organisation they act for (its folder name, e.g. NVIDIA)");
            add->add_option("--role", o->role, "member | chair | admin")->required();
            add->add_flag("--create-org", o->create_org, "create the organisation when the store has no package of it");
            auto* list = sub.add_subcommand("list", "list users and their tokens (prefixes only)");
            auto* revoke = sub.add_subcommand("revoke", "revoke every token of a user");
            revoke->add_option("NAME", o->name, "user name")->required();
            auto* token = sub.add_subcommand("token", "make a new token for a user (shown once)");
            token->add_option("NAME", o->name, "user name")->required();
            for (auto* s : {add, list, revoke, token}) {
              add_client_options(*s, &o->client);
              s->add_flag("--json", o->json, "print the answer as JSON");
            }
            return [o, add, list, revoke, token]() -> int {
              namespace rv = review;
              review::Request r;
              if (add->parsed()) {
                rv::AddUser in{o->name, o->org, o->role, o->create_org};
                r.method = "POST";
                r.path = "/api/v1/users";
                r.body = rv::request_body(in);
                auto local = [&](submissions::Store& s, const rv::Actor& who) {
                  return rv::added_user_answer(rv::add_user(s, who, in));
                };
                return send_and_print("user add", o->client, r, local, o->json, [](const mllog::Json& b) {
                  const auto* u = b.find("user");
                  std::string org = u ? text_of(u->find("organisation")) : "";
                  std::cout << "user " << text_of(u ? u->find("name") : nullptr) << " added: "
                            << text_of(u ? u->find("role") : nullptr) << (org.empty() ? "" : " of " + org) << "\n"
                            << "token: " << text_of(b.find("token")) << "\n"
                            << "The token is shown only this once; the store keeps only its hash. "
                               "Give it to the user as REFEREE_TOKEN.\n";
                });
              }
              if (list->parsed()) {
                r.method = "GET";
                r.path = "/api/v1/users";
                auto local = [](submissions::Store& s, const rv::Actor& who) {
                  return rv::users_answer(rv::list_users(s, who));
                };
                return send_and_print("user list", o->client, r, local, o->json, [](const mllog::Json& b) {
                  const auto* users = listed(b, "users", "no users");
                  if (!users) return;
                  for (const auto& u : users->items) {
                    int live = 0, all = 0;
                    std::string prefixes;
                    if (const auto* t = u.find("tokens"))
                      for (const auto& k : t->items) {
                        ++all;
                        bool revoked = text_of(k.find("revoked_at")) != "";
                        if (!revoked) ++live;
                        prefixes += ' ';
                        prefixes += text_of(k.find("prefix"));
                        if (revoked) prefixes += "(revoked)";
                      }
                    std::string org = text_of(u.find("organisation"));
                    std::cout << text_of(u.find("name")) << "  " << text_of(u.find("role")) << "  "
                              << (org.empty() ? "-" : org) << "  tokens: " << live << " live of " << all << prefixes
                              << "\n";
                  }
                });
              }
              if (revoke->parsed()) {
                r.method = "POST";
                r.path = "/api/v1/users/" + review_cli::path_segment(o->name) + "/revoke";
                auto local = [&](submissions::Store& s, const rv::Actor& who) {
                  return rv::revoked_answer(rv::revoke_user(s, who, rv::RevokeUser{o->name}));
                };
                return send_and_print("user revoke", o->client, r, local, o->json, [](const mllog::Json& b) {
                  std::cout << "revoked " << text_of(b.find("revoked")) << " token(s) of " << text_of(b.find("user"))
                            << "\n";
                });
              }
              r.method = "POST";
              r.path = "/api/v1/users/" + review_cli::path_segment(o->name) + "/tokens";
              (void)token;
              auto local = [&](submissions::Store& s, const rv::Actor& who) {
                return rv::token_answer(rv::issue_token(s, who, rv::IssueToken{o->name}));
              };
              return send_and_print("user token", o->client, r, local, o->json, [](const mllog::Json& b) {
                std::cout << "new token for " << text_of(b.find("user")) << ": " << text_of(b.find("token")) << "\n"
                          << "The token is shown only this once; the store keeps only its hash.\n";
              });
            };
          }};
}

}  // namespace referee::cli
