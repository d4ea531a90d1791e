// The rule language's grammar: tokens (rules/interp_lexer.h) to a syntax
// tree (rules/interp_ast.h), with every construct outside the subset a
// compile error that names it. Internal to the interpreter.
#pragma once

#include <string_view>

#include "rules/interp.h"
#include "rules/interp_ast.h"

namespace referee::rules::interp {

// The tree of `src`: one expression, or statements as a Block. Null, with
// *err filled, on a syntax error or a construct outside the subset.
NodeP parse(std::string_view src, bool expression, CompileError* err);

}  // namespace referee::rules::interp
