// Test support for the CEL tests that evaluate an expression directly (the conformance and
// library tables): the expression parsed and checked as ParseSelector does (cel.cc), without
// the selector's bool result type, so that a case of any result type can be evaluated.
#pragma once

#include <memory>
#include <optional>
#include <string_view>
#include <utility>
#include <variant>

#include "cel/cel_internal.h"

namespace phalanx::cel {

// `error`: the parse or check error, if any (then `root` may be null); else `root`, the
// checked tree, and `slots`, the comprehension variable slots EvalContext must hold.
struct CheckedExpression {
  std::optional<CompileError> error;
  std::unique_ptr<Node> root;
  int slots = 0;
};

inline CheckedExpression ParseAndCheck(std::string_view expr) {
  CheckedExpression out;
  auto parsed = Parse(expr);
  if (auto* e = std::get_if<CompileError>(&parsed)) {
    out.error = *e;
    return out;
  }
  out.root = std::move(std::get<std::unique_ptr<Node>>(parsed));
  out.error = Check(*out.root, &out.slots);
  return out;
}

}  // namespace phalanx::cel
