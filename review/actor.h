// Who is acting: a user of the store, the organisation they act for and
// their role. Every review action and every question asked of a server is
// made by an Actor; the policy (review/policy.h) says what each may do.
#pragma once

#include <string>

namespace referee::review {

enum class Role { Member, Chair, Admin };

// "member", "chair", "admin".
const char* role_name(Role r);
// Parses a role name (any case); false when it is none of them.
bool parse_role(const std::string& text, Role* out);

struct Actor {
  long long user_id = 0;     // 0 for the local administrator
  std::string user;          // user name
  std::string organisation;  // the organisation they act for; "" for an administrator without one
  Role role = Role::Member;
  // A command run on a local store without a token: whoever can write the
  // file administers it (user "local-admin", role admin).
  bool local_admin = false;
};

}  // namespace referee::review
