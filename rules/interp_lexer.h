// The rule language's tokens: rule code as names, numbers, strings,
// operators and the layout (new lines, indents, dedents) of its blocks.
// Internal to the interpreter (rules/interp*.cc).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "rules/interp.h"
#include "rules/value.h"

namespace referee::rules::interp {

enum class Tok { Name, Number, String, Op, Newline, Indent, Dedent, End };

struct Token {
  Tok kind;
  std::string text;  // name, operator, or decoded string
  Value num;         // Number
  int line, col;
};

// Splits `src` into tokens ending with one Tok::End. Returns false and fills
// *err on a character or literal outside the language.
bool tokenize(std::string_view src, std::vector<Token>* out, CompileError* err);

}  // namespace referee::rules::interp
