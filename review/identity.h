// Users of the review and their tokens as typed operations: add a user
// (with their first token), list them, make a new token, revoke every token
// of a user or one token by its prefix. Administrators only (chairs may
// list). No HTTP and no JSON parsing here: the routes (identity_routes.cc)
// decode a request into these values, and the CLI fills them from its
// flags. Every write goes through policy's write(). A token is "rft_" and 64
// hex digits of libsodium randomness, returned once; the store keeps only
// its hash (token_hash, as Api::authenticate computes it) and its first 12
// characters.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "review/actor.h"
#include "review/result.h"
#include "submissions/store.h"

namespace referee::review {

// POST /users.
struct AddUser {
  std::string name;          // 1 to 64 of A-Z a-z 0-9 . _ - @
  std::string organisation;  // its folder name; required for a member
  std::string role;          // member | chair | admin (any case)
  bool create_organisation = false;  // create it when the store has no package of it
  // Send the token through the organisation's webhook (review/notify.h,
  // queue_token_delivery) instead of answering with it.
  bool deliver_token = false;
};

// POST /users/{name}/tokens, POST /users/{name}/revoke.
struct IssueToken {
  std::string user;
};
struct RevokeUser {
  std::string user;
};
// POST /tokens/revoke: the one live token starting with `prefix`.
struct RevokeToken {
  std::string prefix;
};

struct TokenInfo {
  std::string prefix, created_at, revoked_at;
  bool revoked = false;  // revoked_at is set
};

struct User {
  long long id = 0;
  std::string name, organisation, role, created_at;  // organisation "" = none
  std::vector<TokenInfo> tokens;                     // filled by list_users only
};

// A token made for `user`: the token itself (shown once) and its prefix.
struct NewToken {
  User user;
  std::string token, prefix;  // token "" when it went to a webhook
  long long webhook = 0;      // the hook the token was queued to (deliver_token)
};

// Tokens revoked: how many, and (revoke_token) the prefix named.
struct Revoked {
  std::string user, token_prefix;
  long long revoked = 0;
};

// Whether the actor may manage users and tokens (an administrator); else
// false with the 403. Every operation here but list_users checks it first;
// the routes check it before they read the body.
bool may_manage_users(const Actor& who, Error* err);

Result<NewToken> add_user(submissions::Store& s, const Actor& who, const AddUser& in);

// What add_user checks of its input before it looks at the store (the name,
// the role, a member's organisation): false with the 400.
bool check_add_user(const AddUser& in, Error* err);

// A file of users to add at once (referee user import): CSV with a header
// naming the columns name, organisation, role and, optionally, email (in any
// order and case). Every row is checked as add_user checks one, and for an
// email that is no address and a name given twice; every problem is listed
// with its line ("users.csv:4: role 'owner' is not member, chair or admin"),
// and none is added unless the whole file is right.
struct ImportRow {
  size_t line = 0;
  AddUser user;
  std::string email;  // "" when none: where the token is to be sent
};
bool parse_user_import(std::string_view csv, const std::string& file, bool create_org, std::vector<ImportRow>* out,
                       std::vector<std::string>* errors);
// Every user, by name, with their tokens (prefixes only).
Result<std::vector<User>> list_users(submissions::Store& s, const Actor& who);
// `user` of the answer carries only the name.
Result<NewToken> issue_token(submissions::Store& s, const Actor& who, const IssueToken& in);
Result<Revoked> revoke_user(submissions::Store& s, const Actor& who, const RevokeUser& in);
Result<Revoked> revoke_token(submissions::Store& s, const Actor& who, const RevokeToken& in);

}  // namespace referee::review
