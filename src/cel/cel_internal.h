// Internal to src/cel: the values, types and syntax tree of the CEL subset (cel.h).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "absl/strings/string_view.h"
#include "api/quantity.h"
#include "api/status.h"
#include "cel/cel.h"

namespace phalanx::cel {

// String building for messages. (Debian's Abseil has its own absl::string_view, so
// absl::StrCat does not take std::string_view.)
inline void AppendPiece(std::string& out, std::string_view s) { out.append(s); }
inline void AppendPiece(std::string& out, const char* s) { out.append(s); }
inline void AppendPiece(std::string& out, absl::string_view s) { out.append(s.data(), s.size()); }
inline void AppendPiece(std::string& out, const std::string& s) { out.append(s); }
template <typename T,
          typename = std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, char> &&
                                      !std::is_same_v<T, bool>>>
void AppendPiece(std::string& out, T v) {
  out.append(std::to_string(v));
}
template <typename... A>
std::string Cat(const A&... pieces) {
  std::string out;
  (AppendPiece(out, pieces), ...);
  return out;
}
// Joins pieces with `sep`.
std::string Join(const std::vector<std::string>& pieces, std::string_view sep);
// Splits `s` at `sep` (non-empty) into at most `max_parts` pieces (0: no limit), as Go's
// strings.SplitN.
std::vector<std::string_view> SplitN(std::string_view s, std::string_view sep,
                                     size_t max_parts = 0);

// ---- semantic versions (github.com/blang/semver/v4, as semverlib.go uses) ----
struct Semver {
  uint64_t major = 0, minor = 0, patch = 0;
  std::vector<std::string> pre;    // pre-release identifiers ("alpha", "1")
  std::vector<std::string> build;  // build metadata, ignored by comparisons
};
// semver.Parse; with `normalize`, semverlib.go's normalizeAndParse first (drop a leading
// "v", fill missing minor/patch with 0, strip leading zeros). Error text as blang/semver.
absl::StatusOr<Semver> ParseSemver(std::string_view s, bool normalize);
// semver.Version.Compare: -1, 0, 1 (build metadata ignored).
int CompareSemver(const Semver& a, const Semver& b);

// ---- regular expressions for matches() (cel_regex.cc) ----
// A linear-time (Thompson NFA) matcher of an RE2 subset; see docs/dra-cel.md.
class Regex {
 public:
  // InvalidArgumentError "error parsing regexp: ..." for an unsupported or bad pattern.
  static absl::StatusOr<std::shared_ptr<const Regex>> Compile(std::string_view pattern);
  // RE2 PartialMatch semantics (CEL matches(): true when any substring matches).
  bool Search(std::string_view text) const;
  size_t size() const { return prog_.size(); }

  struct Inst {
    enum Op : uint8_t { kChar, kClass, kAny, kAnyNotNL, kSplit, kJmp, kBol, kEol, kMatch };
    Op op;
    uint32_t c = 0;    // kChar
    int x = 0, y = 0;  // kSplit / kJmp targets; kClass: index into classes_
  };
  struct Class {
    bool negated = false;
    std::vector<std::pair<uint32_t, uint32_t>> ranges;
    bool Contains(uint32_t c) const;
  };

 private:
  std::vector<Inst> prog_;
  std::vector<Class> classes_;
  friend class RegexCompiler;
};

// ---- values ----
struct Value;
struct MapData;
using List = std::vector<Value>;
using ListPtr = std::shared_ptr<const List>;
using MapPtr = std::shared_ptr<const MapData>;
struct ErrorValue {
  std::string message;
};
struct NullValue {};

struct Value {
  std::variant<NullValue, bool, int64_t, uint64_t, double, std::string, ListPtr, MapPtr,
               api::Quantity, std::shared_ptr<const Semver>, ErrorValue>
      v;
  bool IsError() const { return std::holds_alternative<ErrorValue>(v); }
  static Value Error(std::string message) { return Value{ErrorValue{std::move(message)}}; }
};

// A string-keyed map (the device's attributes and capacity; map values of device.*).
// default_empty: a missing key reads as an empty map (compile.go's mapper for the outer
// domain maps); `in` and has() still report it missing.
struct MapData {
  std::map<std::string, Value, std::less<>> entries;
  bool default_empty = false;
};

// ---- static types ----
enum class Kind : uint8_t {
  kDyn,
  kNull,
  kBool,
  kInt,
  kUint,
  kDouble,
  kString,
  kList,
  kMap,
  kQuantity,
  kSemver,
  kDevice,
  kError  // runtime only
};
std::string_view KindName(Kind k);
Kind KindOf(const Value& v);

struct Type {
  Kind kind = Kind::kDyn;
  std::shared_ptr<const Type> elem;  // list element or map value (keys are strings)
  static Type Of(Kind k) { return Type{k, nullptr}; }
  static Type ListOf(Type e) { return Type{Kind::kList, std::make_shared<Type>(std::move(e))}; }
  static Type MapOf(Type e) { return Type{Kind::kMap, std::make_shared<Type>(std::move(e))}; }
  Type Elem() const { return elem ? *elem : Type::Of(Kind::kDyn); }
  std::string Name() const;
};

// ---- syntax tree ----
enum class Op : uint8_t {
  kLiteral,
  kIdent,
  kSelect,
  kHas,
  kIndex,
  kCall,
  kList,
  kAnd,
  kOr,
  kNot,
  kNeg,
  kTernary,
  kBinary,
  kIn,
  kAll,
  kExists,
  kExistsOne,
  kBind
};
enum class BinOp : uint8_t { kAdd, kSub, kMul, kDiv, kMod, kEq, kNe, kLt, kLe, kGt, kGe };
std::string_view BinOpName(BinOp op);  // CEL's function name: "_+_", "_==_", ...

struct Overload;

struct Node {
  Op op = Op::kLiteral;
  size_t pos = 0;           // byte offset into the expression
  std::string name;         // ident, field, function or bound variable
  std::string name2;        // kAll..kExistsOne with two variables: the value's name
  Value literal;            // kLiteral
  BinOp bin = BinOp::kAdd;  // kBinary
  bool member = false;      // kCall: receiver-style call (args[0] is the receiver)
  std::vector<std::unique_ptr<Node>> args;
  // Filled by the checker:
  Type type;
  int slot = -1;                           // kIdent of a bound variable; kAll..kBind: its slot
  int slot2 = -1;                          // kAll..kExistsOne: name2's slot
  std::vector<const Overload*> overloads;  // kCall candidates
  std::shared_ptr<const Regex> regex;      // matches() with a literal pattern
};

// A parse or check error at byte offset `pos` of the expression.
struct CompileError {
  size_t pos = 0;
  std::string message;
};

// Parses `expr` (already checked against kMaxExpressionLength). Macros (has, all, exists,
// exists_one, cel.bind) are recognised here.
std::variant<std::unique_ptr<Node>, CompileError> Parse(std::string_view expr);
// Resolves identifiers and functions and infers types (root->type is the result type).
// Returns the first error; *slots is the number of macro variables the evaluator needs.
std::optional<CompileError> Check(Node& root, int* slots);

// ---- functions (cel_functions.cc) ----
struct EvalContext;
using Builtin = Value (*)(const Value* args, EvalContext& ctx);
struct Overload {
  std::string_view name;
  bool member;               // receiver-style: args[0] is the receiver
  std::vector<Kind> params;  // receiver first for member overloads
  Kind result;
  Builtin fn;
};
const std::vector<Overload>& Overloads();
// A standard CEL or Kubernetes function this subset does not implement (for a clear error).
bool IsKnownUnsupportedFunction(std::string_view name);

struct EvalContext {
  uint64_t cost = 0;
  uint64_t cost_limit = kMaxCost;
  bool cancelled = false;
  std::vector<Value> slots;    // macro variables, by Node::slot
  Value device;                // the `device` variable
  const Node* call = nullptr;  // the kCall node being evaluated (for matches())
  // Adds `n` to the cost; false (and cancelled) once over the limit.
  bool Charge(uint64_t n) {
    cost += n;
    if (cost > cost_limit) cancelled = true;
    return !cancelled;
  }
};

Value Evaluate(const Node& node, EvalContext& ctx);
std::string ValueTypeName(const Value& v);
// cel-go's Go type name of a value ("types.Int"), as in "got 'types.Int', expected
// iterable type".
std::string_view GoTypeName(const Value& v);
inline constexpr std::string_view kCostExceeded = "operation cancelled: actual cost limit exceeded";
// cel-go's overflow errors (common/types/err.go errIntOverflow, errUintOverflow): int and
// uint arithmetic and conversions out of range.
inline constexpr std::string_view kIntOverflow = "integer overflow";
inline constexpr std::string_view kUintOverflow = "unsigned integer overflow";
// CEL equality (heterogeneous numeric equality; other type mixes are unequal).
bool ValuesEqual(const Value& a, const Value& b);

}  // namespace phalanx::cel
