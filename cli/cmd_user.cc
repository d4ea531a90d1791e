// referee user add|import|list|revoke|token: users of the review and their tokens.
// The flags fill the typed operations of review/identity.h: run on the local
// store, or sent to --server as the request made from the same value.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>

#include "cli/commands.h"
#include "base/url.h"
#include "review/notify_codec.h"
#include "cli/review_cli.h"
#include "cli/review_output.h"
#include "base/file.h"
#include "base/text.h"
#include "review/identity.h"
#include "review/identity_codec.h"

namespace referee::cli {

namespace {

namespace fs = std::filesystem;

// referee user import: every row checked, the tokens' folder and the names
// checked against the users there are, before any user is added; then each
// added (as `user add`: the local store, or the server) and its token
// written at once to <tokens>/<name>.token (mode 0600), so that a failure
// half way leaves every user added so far with their token on disk.
int import_users(ClientOptions client, const std::string& file, const std::string& tokens_dir, bool create_org,
                 bool skip_existing, bool by_webhook) {
  namespace rv = review;
  const char* cmd = "referee user import";
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    std::cerr << cmd << ": cannot read " << file << "\n";
    return kCannotCheck;
  }
  std::ostringstream text;
  text << in.rdbuf();
  std::vector<rv::ImportRow> rows;
  std::vector<std::string> problems;
  if (!rv::parse_user_import(text.str(), file, create_org, &rows, &problems)) {
    for (const auto& p : problems) std::cerr << cmd << ": " << p << "\n";
    std::cerr << cmd << ": nothing was added\n";
    return kCannotCheck;
  }
  std::error_code ec;
  // The tokens' folder: a new one (made 0700 below, once the import may go on), or one of the
  // caller's own that nobody else may enter; never a shared folder, never through a link.
  struct stat dst {};
  bool exists = by_webhook || ::lstat(tokens_dir.c_str(), &dst) == 0;
  if (exists && !by_webhook) {
    std::string why;
    if (S_ISLNK(dst.st_mode)) why = "is a symbolic link";
    else if (!S_ISDIR(dst.st_mode)) why = "is not a folder";
    else if (dst.st_uid != ::geteuid()) why = "belongs to another user";
    else if (dst.st_mode & 077) why = "may be entered by others (chmod 700 it, or name a new folder)";
    else if (::access(tokens_dir.c_str(), W_OK | X_OK) != 0) why = "is not writable";
    if (!why.empty()) {
      std::cerr << cmd << ": the tokens' folder " << tokens_dir << " " << why
                << ": tokens go to a new folder or one only you may enter (nothing was added)\n";
      return kCannotCheck;
    }
  } else if (!by_webhook) {
    fs::path parent = fs::absolute(tokens_dir, ec).parent_path();
    if (!fs::is_directory(parent, ec) || ::access(parent.c_str(), W_OK | X_OK) != 0) {
      std::cerr << cmd << ": cannot make the tokens' folder " << tokens_dir << ": " << parent.string()
                << " is not a folder you may write (nothing was added)\n";
      return kCannotCheck;
    }
  }
  std::vector<std::string> taken;
  for (const auto& r : rows)
    if (exists && !by_webhook && fs::symlink_status(fs::path(tokens_dir) / (r.user.name + ".token"), ec).type() != fs::file_type::not_found)
      taken.push_back(r.user.name + ".token");
  if (!taken.empty()) {
    std::string names;
    for (const auto& t : taken) names.append(names.empty() ? "" : ", ").append(t);
    std::cerr << cmd << ": " << tokens_dir << " already holds " << names
              << ": a token file is never overwritten; give another --tokens folder (nothing was added)\n";
    return kCannotCheck;
  }
  resolve_client_options(&client);
  // Tokens by webhook: every organisation named has a hook that takes them (else nobody is added).
  if (by_webhook) {
    rv::Request r;
    r.method = "GET";
    r.path = "/api/v1/webhooks";
    rv::Response got = call_review(client, r, [](submissions::Store& s, const rv::Actor& who) {
      return rv::webhooks_answer(rv::list_webhooks(s, who));
    });
    if (got.status != 200) return review_cli::review_print("user import", got, false, [](const mllog::Json&) {});
    // Only a hook an administrator registered takes tokens (review/notify.h): the administrators, by name.
    std::set<std::string> admins{"local-admin"};
    {
      rv::Request u;
      u.method = "GET";
      u.path = "/api/v1/users";
      rv::Response users = call_review(client, u, [](submissions::Store& s, const rv::Actor& who) {
        return rv::users_answer(rv::list_users(s, who));
      });
      mllog::Json ub;
      std::string uerr;
      if (users.status == 200 && mllog::parse_json_permissive(users.body, &ub, &uerr))
        if (const auto* list = ub.find("users"))
          for (const auto& x : list->items)
            if (text_of(x.find("role")) == "admin") admins.insert(text_of(x.find("name")));
    }
    mllog::Json body;
    std::string perr;
    std::set<std::string> ready;
    if (mllog::parse_json_permissive(got.body, &body, &perr))
      if (const auto* hooks = body.find("webhooks"))
        for (const auto& h : hooks->items) {
          const std::string url = text_of(h.find("url"));
          bool takes = false;
          if (const auto* es = h.find("events"))
            for (const auto& e : es->items) takes = takes || e.s == "*" || e.s == "user.token";
          if (text_of(h.find("scope")) == "organisation" && text_of(h.find("removed_at")).empty() && takes &&
              admins.count(text_of(h.find("created_by"))) &&
              (url.rfind("https://", 0) == 0 || base::is_loopback_host(base::url_host(url))))
            ready.insert(base::lower(text_of(h.find("organisation"))));
        }
    std::vector<std::string> problems;
    for (const auto& row : rows) {
      if (row.user.organisation.empty())
        problems.push_back(file + ":" + std::to_string(row.line) + ": user " + row.user.name +
                           " has no organisation, whose webhook would take the token");
      else if (!ready.count(base::lower(row.user.organisation)))
        problems.push_back(file + ":" + std::to_string(row.line) + ": " + row.user.organisation +
                           " has no webhook that takes its members' tokens (a live organisation hook an administrator "
                           "registered, https:// or to this machine, taking user.token): referee webhook add --url "
                           "https://... --organisation " +
                           row.user.organisation);
    }
    if (!problems.empty()) {
      for (const auto& p : problems) std::cerr << cmd << ": " << p << "\n";
      std::cerr << cmd << ": nothing was added\n";
      return kCannotCheck;
    }
  }
  // The users there are: none of the file's may be one of them (the file would be half applied).
  {
    rv::Request r;
    r.method = "GET";
    r.path = "/api/v1/users";
    rv::Response got = call_review(client, r, [](submissions::Store& s, const rv::Actor& who) {
      return rv::users_answer(rv::list_users(s, who));
    });
    if (got.status != 200) return review_cli::review_print("user import", got, false, [](const mllog::Json&) {});
    mllog::Json body;
    std::string perr;
    std::set<std::string> existing;
    if (mllog::parse_json_permissive(got.body, &body, &perr))
      if (const auto* users = body.find("users"))
        for (const auto& u : users->items) existing.insert(base::lower(text_of(u.find("name"))));
    std::vector<std::string> already;
    std::vector<rv::ImportRow> left;
    for (auto& row : rows) {
      if (!existing.count(base::lower(row.user.name))) {
        left.push_back(std::move(row));
      } else if (skip_existing) {
        std::cout << "skipped " << row.user.name << ": already a user (" << file << ":" << row.line << ")\n";
      } else {
        already.push_back(file + ":" + std::to_string(row.line) + ": user " + row.user.name +
                          " already exists (--skip-existing leaves such users as they are)");
      }
    }
    rows = std::move(left);
    if (!already.empty()) {
      for (const auto& a : already) std::cerr << cmd << ": " << a << "\n";
      std::cerr << cmd << ": nothing was added (make a new token with referee user token NAME)\n";
      return kCannotCheck;
    }
  }
  if (!by_webhook && !exists && ::mkdir(tokens_dir.c_str(), 0700) != 0) {
    std::cerr << cmd << ": cannot make the tokens' folder " << tokens_dir << ": " << std::strerror(errno)
              << " (nothing was added)\n";
    return kCannotCheck;
  }
  size_t added = 0;
  for (const auto& row : rows) {
    rv::Request r;
    r.method = "POST";
    rv::AddUser user = row.user;
    user.deliver_token = by_webhook;
    r.path = "/api/v1/users";
    r.body = rv::request_body(user);
    rv::Response got = call_review(client, r, [&](submissions::Store& s, const rv::Actor& who) {
      return rv::added_user_answer(rv::add_user(s, who, user));
    });
    mllog::Json body;
    std::string perr;
    std::string token, hook;
    if (got.status == 201 && mllog::parse_json_permissive(got.body, &body, &perr)) {
      token = text_of(body.find("token"));
      hook = text_of(body.find("token_to_webhook"));
    }
    if (by_webhook ? hook.empty() : token.empty()) {
      std::cerr << cmd << ": " << file << ":" << row.line << ": user " << row.user.name << " was not added; "
                << added << " of " << rows.size() << " were"
                << (by_webhook ? ", their tokens queued to their organisations' webhooks (after a fix, run it again with "
                                 "--skip-existing)\n"
                               : ", their tokens in " + tokens_dir +
                                     " (after a fix, run it again with --skip-existing and another --tokens folder)\n");
      return review_cli::review_print("user import", got, false, [](const mllog::Json&) {});
    }
    if (by_webhook) {
      ++added;
      std::cout << "added " << row.user.name << " (" << base::lower(row.user.role) << " of " << row.user.organisation
                << "): token queued to webhook " << hook << " (referee webhook deliveries " << hook << ")\n";
      continue;
    }
    std::string content = token + "\n";
    fs::path to = fs::path(tokens_dir) / (row.user.name + ".token");
    if (base::Status st = base::write_file_atomic(to.string(), content, 0600); !st.ok()) {
      std::cerr << cmd << ": user " << row.user.name << " was added, and " << st.message
                << ": revoke its token (referee user revoke " << row.user.name << ") and make a new one (referee user token "
                << row.user.name << "); " << added << " of " << rows.size() << " added before it\n";
      return kCannotCheck;
    }
    ++added;
    const mllog::Json* u = body.find("user");
    std::string org = u ? text_of(u->find("organisation")) : row.user.organisation;
    std::cout << "added " << row.user.name << " (" << base::lower(row.user.role)
              << (org.empty() ? "" : " of " + org) << "): token in " << to.string()
              << (row.email.empty() ? "" : ", to send to " + row.email) << "\n";
  }
  if (by_webhook)
    std::cout << added << " user(s) added; each token goes to its organisation's webhook (signed, retried) and is kept "
                 "nowhere once delivered\n";
  else
    std::cout << added << " user(s) added; each token is shown nowhere else (the store keeps only its hash): give each "
                 "user their file, as REFEREE_TOKEN\n";
  return 0;
}

}  // namespace

Command user_command() {
  return {"user", "Review users and their tokens: add, import, list, revoke, token", [](CLI::App& sub) -> std::function<int()> {
            struct Opts {
              ClientOptions client;
              std::string name, org, role, file, tokens_dir;
              bool create_org = false, json = false, skip_existing = false, by_webhook = false;
            };
            auto o = std::make_shared<Opts>();
            sub.require_subcommand(1);
            auto* add = sub.add_subcommand("add", "add a user and print their token (shown once)");
            add->add_option("NAME", o->name, "user name")->required();
            add->add_option("--org", o->org, "the organisation they act for (its folder name, e.g. NVIDIA)");
            add->add_option("--role", o->role, "member | chair | admin")->required();
            add->add_flag("--create-org", o->create_org, "create the organisation when the store has no package of it");
            auto* imp = sub.add_subcommand(
                "import", "add the users a CSV file names (name,organisation,role,email), each token to a file of its own");
            imp->add_option("FILE", o->file, "CSV with a header line: name,organisation,role[,email]")->required();
            auto* tokens_opt = imp->add_option("--tokens", o->tokens_dir,
                                               "folder for the tokens: <name>.token each, readable by you alone (made if missing)");
            auto* hook_opt = imp->add_flag("--tokens-by-webhook", o->by_webhook,
                                           "send each token to its organisation's webhook instead (kind user.token)");
            tokens_opt->excludes(hook_opt);
            imp->add_flag("--create-org", o->create_org, "create organisations the store has no package of");
            imp->add_flag("--skip-existing", o->skip_existing, "leave users that exist as they are (else: refused)");
            auto* list = sub.add_subcommand("list", "list users and their tokens (prefixes only)");
            auto* revoke = sub.add_subcommand("revoke", "revoke every token of a user");
            revoke->add_option("NAME", o->name, "user name")->required();
            auto* token = sub.add_subcommand("token", "make a new token for a user (shown once)");
            token->add_option("NAME", o->name, "user name")->required();
            for (auto* s : {add, imp, list, revoke, token}) {
              add_client_options(*s, &o->client);
              s->add_flag("--json", o->json, "print the answer as JSON");
            }
            return [o, add, imp, list, revoke, token]() -> int {
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
              if (imp->parsed()) {
                if (o->tokens_dir.empty() && !o->by_webhook) {
                  std::cerr << "referee user import: say where the tokens go: --tokens DIR (a file each) or "
                               "--tokens-by-webhook (each organisation's webhook)\n";
                  return kCannotCheck;
                }
                return import_users(o->client, o->file, o->tokens_dir, o->create_org, o->skip_existing, o->by_webhook);
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
