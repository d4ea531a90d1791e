// Where rule sets come from: `--rules DIR`, the REFEREE_RULES variable, the
// cache that `referee rules fetch` fills, and the project's own sets in
// rules/sets. The first root that has the requested rule set wins.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "rules/ruleset.h"

namespace referee::rules {

struct RuleSource {
  std::string root;    // rules root (holds compliance_checker/ and rcp_checker/)
  std::string origin;  // "--rules", "REFEREE_RULES", "cache (release 4.1.59)", "built-in"
};

// The cache directory: $REFEREE_CACHE, else $XDG_CACHE_HOME/referee, else ~/.cache/referee.
std::string cache_dir();

// Rule roots installed in the cache, newest release first.
std::vector<RuleSource> cached_rule_roots();

// The project's own rule sets (rules/sets beside the binary's sources, or
// $REFEREE_SETS).
std::string builtin_sets_dir();

// Candidate roots in search order.
std::vector<RuleSource> rule_search_path(const std::string& rules_flag);

// Every place a rule set is looked for, as messages name them: each root of
// rule_search_path ("REFEREE_RULES=DIR", "built-in rule sets (DIR)", ...),
// then, without --rules, the places that hold none: "the cache (DIR/rules:
// no rule sets installed)", "REFEREE_RULES (not set)".
std::vector<std::string> places_looked(const std::string& rules_flag);

// Finds and loads `ruleset` ("training-3.1.0"). On failure returns null and
// sets *error to a message that lists where it looked.
std::unique_ptr<RuleSet> resolve_ruleset(const std::string& ruleset, const std::string& rules_flag,
                                         RuleSource* source, std::string* error);

}  // namespace referee::rules
