// Users and their tokens as typed operations (review/identity.h).
#include "review/identity.h"
#include "review/notify.h"

#include <sodium.h>

#include <algorithm>
#include <functional>
#include <set>

#include "base/csv.h"
#include "base/digest.h"
#include "base/text.h"
#include "mllog/json_writer.h"
#include "review/api.h"
#include "review/events.h"
#include "review/policy.h"
#include "review/router.h"
#include "review/verify.h"

namespace referee::review {

namespace {

bool valid_name(const std::string& n) {
  if (n.empty() || n.size() > 64) return false;
  for (char ch : n)
    if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' ||
          ch == '-' || ch == '@'))
      return false;
  return true;
}

// Makes a token for `user_id` inside the caller's transaction.
bool new_token(submissions::Store& s, long long user_id, std::string* token, std::string* prefix, Error* err) {
  if (sodium_init() < 0) {
    *err = make_error(500, "entropy", "libsodium could not initialise: no token can be made");
    return false;
  }
  unsigned char raw[32];
  randombytes_buf(raw, sizeof raw);
  *token = "rft_" + base::hex(raw, sizeof raw);
  *prefix = token->substr(0, 12);
  submissions::Stmt ins(s.db(), "INSERT INTO tokens (user_id, hash, prefix, created_at) VALUES (?1, ?2, ?3, ?4)");
  ins.bind(1, user_id).bind(2, token_hash(*token)).bind(3, *prefix).bind(4, now_utc());
  if (!ins.run()) {
    *err = store_error(s, ins.rc(), "storing the token");
    return false;
  }
  return true;
}

const char* const kUserColumns =
    "SELECT u.id, u.name, COALESCE(o.name, ''), u.role, u.created_at FROM users u LEFT JOIN organisations o ON o.id = "
    "u.organisation_id";

User user_row(submissions::Stmt& q) { return {q.col_int(0), q.col_text(1), q.col_text(2), q.col_text(3), q.col_text(4), {}}; }

bool find_user(submissions::Store& s, const std::string& name, User* out) {
  submissions::Stmt q(s.db(), (std::string(kUserColumns) + " WHERE u.name = ?1").c_str());
  q.bind(1, name);
  if (!q.step()) return false;
  *out = user_row(q);
  return true;
}

// A write by an administrator to user `name`: `change` makes it inside the transaction.
template <typename T>
Result<T> user_write(submissions::Store& s, const Actor& who, const std::string& name,
                     const std::function<Result<T>(const User&, Change*)>& change) {
  Error e;
  if (!may_manage_users(who, &e)) return e;
  T answer;
  auto w = write(s, who, [&](Change* event) -> Result<long long> {
    User u;
    if (!find_user(s, name, &u)) return make_error(404, "not-found", "no user " + name);
    Result<T> r = change(u, event);
    if (!r.ok()) return r.error();
    answer = r.value();
    return u.id;
  });
  if (!w.ok()) return w.error();
  return answer;
}

}  // namespace

bool may_manage_users(const Actor& who, Error* err) {
  if (authorize(who, Action::ManageUsers, {}, "") != Access::Forbidden) return true;
  *err = forbidden("only an administrator manages users and tokens (you are " + who.user + ", " + role_name(who.role) +
                   ")");
  return false;
}

bool check_add_user(const AddUser& in, Error* err) {
  const std::string& name = in.name;
  const std::string& org = in.organisation;
  if (!valid_name(name)) {
    *err = make_error(400, "bad-field", "user name '" + name + "' is not 1 to 64 of A-Z a-z 0-9 . _ - @");
    return false;
  }
  // The name the log gives the store file's administrator: nobody else may read as it.
  if (base::iequals(name, "local-admin")) {
    *err = make_error(400, "bad-field", "user name 'local-admin' is reserved: the review log names the store file's "
                                        "administrator so", "choose another name");
    return false;
  }
  Role role;
  if (!parse_role(in.role, &role)) {
    *err = make_error(400, "bad-field", "role '" + in.role + "' is not member, chair or admin");
    return false;
  }
  if (org.empty() && role == Role::Member) {
    *err = make_error(400, "missing-field", "a member belongs to an organisation: --org ORG (API field `organisation`) is required");
    return false;
  }
  if (!org.empty() && (org.size() > 128 || org.find('/') != std::string::npos || !valid_utf8(org))) {
    *err = make_error(400, "bad-field", "organisation '" + org + "' is not a folder name");
    return false;
  }
  return true;
}

bool parse_user_import(std::string_view csv, const std::string& file, bool create_org, std::vector<ImportRow>* out,
                       std::vector<std::string>* errors) {
  out->clear();
  errors->clear();
  std::vector<base::CsvRecord> records;
  std::string error;
  if (!base::parse_csv(csv, &records, &error)) {
    errors->push_back(file + ": " + error);
    return false;
  }
  if (records.empty()) {
    errors->push_back(file + ": no header line (name,organisation,role,email) and no users");
    return false;
  }
  // The header: which column is which.
  int col_name = -1, col_org = -1, col_role = -1, col_email = -1;
  const auto& header = records[0].fields;
  for (size_t i = 0; i < header.size(); ++i) {
    std::string h = base::lower(base::trim(header[i]));
    int* slot = h == "name" ? &col_name : h == "organisation" || h == "organization" || h == "org" ? &col_org
                : h == "role" ? &col_role : h == "email" ? &col_email : nullptr;
    if (!slot) {
      errors->push_back(file + ":" + std::to_string(records[0].line) + ": unknown column '" + header[i] +
                        "' (the columns are name, organisation, role, email)");
      continue;
    }
    if (*slot >= 0) errors->push_back(file + ":" + std::to_string(records[0].line) + ": column '" + h + "' given twice");
    *slot = static_cast<int>(i);
  }
  for (auto [col, what] : {std::pair<int, const char*>{col_name, "name"}, {col_role, "role"}})
    if (col < 0) errors->push_back(file + ":" + std::to_string(records[0].line) + ": the header has no '" + what + "' column");
  if (!errors->empty()) return false;
  std::set<std::string> seen;
  for (size_t r = 1; r < records.size(); ++r) {
    const auto& f = records[r].fields;
    const std::string at = file + ":" + std::to_string(records[r].line) + ": ";
    if (f.size() != header.size()) {
      errors->push_back(at + std::to_string(f.size()) + " field(s), the header names " + std::to_string(header.size()));
      continue;
    }
    auto field = [&](int c) { return c < 0 ? std::string() : base::trim(f[static_cast<size_t>(c)]); };
    ImportRow row;
    row.line = records[r].line;
    row.user = AddUser{field(col_name), field(col_org), field(col_role), create_org};
    row.email = field(col_email);
    Error e;
    if (!check_add_user(row.user, &e)) {
      errors->push_back(at + e.message);
      continue;
    }
    if (!row.email.empty() &&
        (row.email.find('@') == std::string::npos || row.email.find_first_of(" \t,;<>") != std::string::npos ||
         std::any_of(row.email.begin(), row.email.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }) ||
         row.email.front() == '@' || row.email.back() == '@')) {
      errors->push_back(at + "email '" + row.email + "' is not an address");
      continue;
    }
    if (!seen.insert(base::lower(row.user.name)).second) {
      errors->push_back(at + "user " + row.user.name + " is named twice in the file");
      continue;
    }
    out->push_back(std::move(row));
  }
  if (errors->empty() && out->empty()) errors->push_back(file + ": no users after the header");
  return errors->empty();
}

Result<NewToken> add_user(submissions::Store& s, const Actor& who, const AddUser& in) {
  Error e;
  if (!may_manage_users(who, &e)) return e;
  const std::string& name = in.name;
  const std::string& org = in.organisation;
  if (!check_add_user(in, &e)) return e;
  Role role;
  parse_role(in.role, &role);
  std::string token, prefix, org_name = org;
  long long hook = 0;
  auto w = write(s, who, [&](Change* event) -> Result<long long> {
    User existing;
    if (find_user(s, name, &existing))
      return make_error(409, "exists", "user " + name + " already exists", "make a new token with referee user token " + name);
    long long org_id = 0;
    bool created = false;
    if (!org.empty() && !find_organisation(s, org, &org_id, &org_name)) {
      if (!in.create_organisation)
        return make_error(404, "unknown-organisation", "organisation " + org + " is not in the store",
                          "import its package first, or create it with --create-org (create_organisation: true)");
      submissions::Stmt ins(s.db(), "INSERT INTO organisations (name) VALUES (?1)");
      ins.bind(1, org);
      if (!ins.run()) return store_error(s, ins.rc(), "creating the organisation");
      org_id = sqlite3_last_insert_rowid(s.db());
      created = true;
    }
    submissions::Stmt ins(s.db(), "INSERT INTO users (name, organisation_id, role, created_at) VALUES (?1, ?2, ?3, ?4)");
    ins.bind(1, name);
    if (org_id) ins.bind(2, org_id); else ins.bind_null(2);
    ins.bind(3, std::string(role_name(role))).bind(4, now_utc());
    if (!ins.run()) return store_error(s, ins.rc(), "adding the user");
    long long uid = sqlite3_last_insert_rowid(s.db());
    Error e;
    if (!new_token(s, uid, &token, &prefix, &e)) return e;
    if (in.deliver_token) {
      if (!org_id)
        return make_error(422, "no-organisation", "user " + name + " has no organisation, whose webhook would take the token",
                          "leave deliver_token out: the answer holds the token");
      hook = queue_token_delivery(s, org_id, name, role_name(role), token, &e);
      if (!hook) return e;
    }
    mllog::JsonWriter p(0, mllog::JsonText::kUtf8);
    p.begin_object().key("user").value(name).key("organisation").value(org_name).key("role").value(role_name(role));
    p.key("organisation_created").value(created).key("token_prefix").value(prefix);
    p.key("token_sha256").value(token_digest(token_hash(token)));
    if (hook) p.key("token_to_webhook").value(hook);
    p.end_object();
    *event = Change{"user.add", "user/" + name, p.str()};
    return uid;
  });
  if (!w.ok()) return w.error();
  NewToken out;
  find_user(s, name, &out.user);
  out.token = hook ? "" : token;
  out.prefix = prefix;
  out.webhook = hook;
  return out;
}

Result<std::vector<User>> list_users(submissions::Store& s, const Actor& who) {
  if (authorize(who, Action::ListUsers, {}, "") == Access::Forbidden)
    return forbidden("only administrators and review chairs list users");
  submissions::Stmt q(s.db(), (std::string(kUserColumns) + " ORDER BY u.name").c_str());
  std::vector<User> out;
  while (q.step()) {
    User u = user_row(q);
    submissions::Stmt t(s.db(), "SELECT prefix, created_at, revoked_at FROM tokens WHERE user_id = ?1 ORDER BY id");
    t.bind(1, u.id);
    while (t.step()) u.tokens.push_back({t.col_text(0), t.col_text(1), t.col_null(2) ? "" : t.col_text(2), !t.col_null(2)});
    out.push_back(std::move(u));
  }
  if (!q.ok()) return store_error(s, q.rc(), "reading users");
  return out;
}

Result<NewToken> issue_token(submissions::Store& s, const Actor& who, const IssueToken& in) {
  return user_write<NewToken>(s, who, in.user, [&](const User& u, Change* event) -> Result<NewToken> {
    NewToken out;
    out.user.name = u.name;
    Error e;
    if (!new_token(s, u.id, &out.token, &out.prefix, &e)) return e;
    mllog::JsonWriter p(0, mllog::JsonText::kUtf8);
    p.begin_object().key("user").value(u.name).key("token_prefix").value(out.prefix);
    p.key("token_sha256").value(token_digest(token_hash(out.token))).end_object();
    *event = Change{"token.create", "user/" + u.name, p.str()};
    return out;
  });
}

Result<Revoked> revoke_user(submissions::Store& s, const Actor& who, const RevokeUser& in) {
  return user_write<Revoked>(s, who, in.user, [&](const User& u, Change* event) -> Result<Revoked> {
    submissions::Stmt up(s.db(), "UPDATE tokens SET revoked_at = ?2 WHERE user_id = ?1 AND revoked_at IS NULL");
    up.bind(1, u.id).bind(2, now_utc());
    if (!up.run()) return store_error(s, up.rc(), "revoking tokens");
    Revoked out;
    out.user = u.name;
    out.revoked = sqlite3_changes(s.db());
    mllog::JsonWriter p(0, mllog::JsonText::kUtf8);
    p.begin_object().key("user").value(u.name).key("revoked").value(out.revoked).end_object();
    *event = Change{"user.revoke", "user/" + u.name, p.str()};
    return out;
  });
}

Result<Revoked> revoke_token(submissions::Store& s, const Actor& who, const RevokeToken& in) {
  Error e;
  if (!may_manage_users(who, &e)) return e;
  const std::string& prefix = in.prefix;
  // A prefix is what `user list` shows: never echo anything longer (it may be the whole secret).
  if (prefix.size() != 12 || prefix.rfind("rft_", 0) != 0)
    return make_error(400, "bad-field", "a token prefix is its first 12 characters (rft_ and 8 hex digits), as referee user list shows them");
  Revoked out;
  auto w = write(s, who, [&](Change* event) -> Result<long long> {
    submissions::Stmt q(s.db(),
                        "SELECT t.id, u.name FROM tokens t JOIN users u ON u.id = t.user_id WHERE t.prefix = ?1 AND "
                        "t.revoked_at IS NULL");
    q.bind(1, prefix);
    std::vector<std::pair<long long, std::string>> hits;
    while (q.step()) hits.emplace_back(q.col_int(0), q.col_text(1));
    if (hits.empty()) return make_error(404, "not-found", "no live token starts with " + prefix);
    if (hits.size() > 1)
      return make_error(409, "ambiguous", "more than one live token has prefix " + prefix,
                        "revoke every token of the user with referee user revoke NAME");
    submissions::Stmt up(s.db(), "UPDATE tokens SET revoked_at = ?2 WHERE id = ?1");
    up.bind(1, hits[0].first).bind(2, now_utc());
    if (!up.run()) return store_error(s, up.rc(), "revoking the token");
    out = {hits[0].second, prefix, 1};
    mllog::JsonWriter p(0, mllog::JsonText::kUtf8);
    p.begin_object().key("user").value(hits[0].second).key("token_prefix").value(prefix).key("revoked").value(1).end_object();
    *event = Change{"token.revoke", "user/" + hits[0].second, p.str()};
    return hits[0].first;
  });
  if (!w.ok()) return w.error();
  return out;
}

}  // namespace referee::review
