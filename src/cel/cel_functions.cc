// The functions of the CEL subset and their overloads:
//   - CEL standard: size, contains, startsWith, endsWith, matches, int, uint, double,
//     string (cel-spec doc/langdef.md, "List of Standard Definitions");
//   - cel-go ext strings: lowerAscii, upperAscii, split (cel-go ext/strings.go);
//   - Kubernetes quantity library (k8s.io/apiserver/pkg/cel/library/quantity.go):
//     quantity, isQuantity, sign, isGreaterThan, isLessThan, compareTo,
//     asApproximateFloat, asInteger, isInteger, add, sub;
//   - Kubernetes semver library (semverlib.go): semver, isSemver, major, minor, patch,
//     isGreaterThan, isLessThan, compareTo.
// Error texts follow the upstream implementations ("cannot convert value to integer").
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "cel/cel_internal.h"
#include "fmt/format.h"

namespace phalanx::cel {
namespace {

const std::string& Str(const Value* a, int i) { return std::get<std::string>(a[i].v); }
const api::Quantity& Qty(const Value* a, int i) { return std::get<api::Quantity>(a[i].v); }
const Semver& Ver(const Value* a, int i) {
  return *std::get<std::shared_ptr<const Semver>>(a[i].v);
}
Value Cancelled() { return Value::Error(std::string(kCostExceeded)); }

// String work costs its length / 10 (cel-go's checker/cost.go uses 0.1 per character).
bool ChargeStrings(EvalContext& ctx, size_t n) { return ctx.Charge(n / 10 + 1); }

int64_t CodePoints(std::string_view s) {
  int64_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80 ? 1 : 0;
  return n;
}

Value SizeString(const Value* a, EvalContext&) { return Value{CodePoints(Str(a, 0))}; }
Value SizeList(const Value* a, EvalContext&) {
  return Value{static_cast<int64_t>(std::get<ListPtr>(a[0].v)->size())};
}
Value SizeMap(const Value* a, EvalContext&) {
  return Value{static_cast<int64_t>(std::get<MapPtr>(a[0].v)->entries.size())};
}

Value Contains(const Value* a, EvalContext& ctx) {
  if (!ChargeStrings(ctx, Str(a, 0).size() + Str(a, 1).size())) return Cancelled();
  return Value{Str(a, 0).find(Str(a, 1)) != std::string::npos};
}
Value StartsWith(const Value* a, EvalContext& ctx) {
  if (!ChargeStrings(ctx, Str(a, 1).size())) return Cancelled();
  return Value{Str(a, 0).rfind(Str(a, 1), 0) == 0};
}
Value EndsWith(const Value* a, EvalContext& ctx) {
  if (!ChargeStrings(ctx, Str(a, 1).size())) return Cancelled();
  const std::string& s = Str(a, 0);
  const std::string& x = Str(a, 1);
  return Value{s.size() >= x.size() && s.compare(s.size() - x.size(), x.size(), x) == 0};
}

Value Matches(const Value* a, EvalContext& ctx) {
  std::shared_ptr<const Regex> re = ctx.call != nullptr ? ctx.call->regex : nullptr;
  if (re == nullptr) {
    auto compiled = Regex::Compile(Str(a, 1));
    if (!compiled.ok()) return Value::Error(std::string(compiled.status().message()));
    re = *std::move(compiled);
  }
  // The simulation is O(text * program).
  if (!ctx.Charge(Str(a, 0).size() * re->size() / 10 + 1)) return Cancelled();
  return Value{re->Search(Str(a, 0))};
}

Value LowerAscii(const Value* a, EvalContext& ctx) {
  if (!ChargeStrings(ctx, Str(a, 0).size())) return Cancelled();
  return Value{absl::AsciiStrToLower(Str(a, 0))};
}
Value UpperAscii(const Value* a, EvalContext& ctx) {
  if (!ChargeStrings(ctx, Str(a, 0).size())) return Cancelled();
  return Value{absl::AsciiStrToUpper(Str(a, 0))};
}

// Go's strings.Split: an empty separator splits after each UTF-8 sequence.
Value Split(const Value* a, EvalContext& ctx) {
  const std::string& s = Str(a, 0);
  const std::string& sep = Str(a, 1);
  if (!ctx.Charge(s.size() + 1)) return Cancelled();
  auto out = std::make_shared<List>();
  if (sep.empty()) {
    for (size_t i = 0; i < s.size();) {
      size_t j = i + 1;
      while (j < s.size() && (static_cast<unsigned char>(s[j]) & 0xC0) == 0x80) ++j;
      out->push_back(Value{s.substr(i, j - i)});
      i = j;
    }
  } else {
    for (std::string_view part : SplitN(s, sep)) out->push_back(Value{std::string(part)});
  }
  return Value{ListPtr(std::move(out))};
}

// ---- conversions ----
Value IntOf(const Value* a, EvalContext&) {
  const Value& v = a[0];
  if (const auto* i = std::get_if<int64_t>(&v.v)) return Value{*i};
  if (const auto* u = std::get_if<uint64_t>(&v.v)) {
    if (*u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return Value::Error("range error converting uint to int");
    }
    return Value{static_cast<int64_t>(*u)};
  }
  if (const auto* d = std::get_if<double>(&v.v)) {
    if (!(*d > -9223372036854775808.0 && *d < 9223372036854775808.0)) {
      return Value::Error("range error converting double to int");
    }
    return Value{static_cast<int64_t>(*d)};
  }
  int64_t out = 0;
  if (!absl::SimpleAtoi(std::get<std::string>(v.v), &out) ||
      std::get<std::string>(v.v).find_first_of(" \t\n+") != std::string::npos) {
    return Value::Error(Cat("cannot convert string '", std::get<std::string>(v.v), "' to int"));
  }
  return Value{out};
}

Value UintOf(const Value* a, EvalContext&) {
  const Value& v = a[0];
  if (const auto* u = std::get_if<uint64_t>(&v.v)) return Value{*u};
  if (const auto* i = std::get_if<int64_t>(&v.v)) {
    if (*i < 0) return Value::Error("range error converting int to uint");
    return Value{static_cast<uint64_t>(*i)};
  }
  if (const auto* d = std::get_if<double>(&v.v)) {
    if (!(*d > -1.0 && *d < 18446744073709551616.0)) {
      return Value::Error("range error converting double to uint");
    }
    return Value{static_cast<uint64_t>(*d)};
  }
  uint64_t out = 0;
  const std::string& s = std::get<std::string>(v.v);
  if (s.empty() || s[0] < '0' || s[0] > '9' || !absl::SimpleAtoi(s, &out)) {
    return Value::Error(Cat("cannot convert string '", s, "' to uint"));
  }
  return Value{out};
}

Value DoubleOf(const Value* a, EvalContext&) {
  const Value& v = a[0];
  if (const auto* d = std::get_if<double>(&v.v)) return Value{*d};
  if (const auto* i = std::get_if<int64_t>(&v.v)) return Value{static_cast<double>(*i)};
  if (const auto* u = std::get_if<uint64_t>(&v.v)) return Value{static_cast<double>(*u)};
  double out = 0;
  if (!absl::SimpleAtod(std::get<std::string>(v.v), &out)) {
    return Value::Error(Cat("cannot convert string '", std::get<std::string>(v.v), "' to double"));
  }
  return Value{out};
}

Value StringOf(const Value* a, EvalContext&) {
  const Value& v = a[0];
  if (const auto* s = std::get_if<std::string>(&v.v)) return Value{*s};
  if (const auto* i = std::get_if<int64_t>(&v.v)) return Value{Cat(*i)};
  if (const auto* u = std::get_if<uint64_t>(&v.v)) return Value{Cat(*u)};
  if (const auto* b = std::get_if<bool>(&v.v)) return Value{std::string(*b ? "true" : "false")};
  return Value{fmt::format("{}", std::get<double>(v.v))};
}

// ---- quantity ----
Value QuantityOf(const Value* a, EvalContext&) {
  auto q = api::Quantity::Parse(Str(a, 0));
  if (!q.ok()) return Value::Error(std::string(q.status().message()));
  return Value{*q};
}
Value IsQuantity(const Value* a, EvalContext&) {
  return Value{api::Quantity::Parse(Str(a, 0)).ok()};
}
Value QuantitySign(const Value* a, EvalContext&) {
  const api::Quantity& q = Qty(a, 0);
  return Value{int64_t{q.IsZero() ? 0 : (q.IsNegative() ? -1 : 1)}};
}
Value QuantityGreater(const Value* a, EvalContext&) {
  return Value{Qty(a, 0).Compare(Qty(a, 1)) == 1};
}
Value QuantityLess(const Value* a, EvalContext&) {
  return Value{Qty(a, 0).Compare(Qty(a, 1)) == -1};
}
Value QuantityCompare(const Value* a, EvalContext&) {
  return Value{int64_t{Qty(a, 0).Compare(Qty(a, 1))}};
}
Value QuantityFloat(const Value* a, EvalContext&) {
  return Value{Qty(a, 0).AsApproximateFloat64()};
}
Value QuantityInteger(const Value* a, EvalContext&) {
  int64_t v = 0;
  if (!Qty(a, 0).AsInt64(&v)) return Value::Error("cannot convert value to integer");
  return Value{v};
}
Value QuantityIsInteger(const Value* a, EvalContext&) {
  int64_t v = 0;
  return Value{Qty(a, 0).AsInt64(&v)};
}
Value QuantityAdd(const Value* a, EvalContext&) { return Value{Qty(a, 0).Plus(Qty(a, 1))}; }
Value QuantitySub(const Value* a, EvalContext&) { return Value{Qty(a, 0).Minus(Qty(a, 1))}; }
Value QuantityAddInt(const Value* a, EvalContext&) {
  return Value{Qty(a, 0).Plus(api::Quantity::FromValue(std::get<int64_t>(a[1].v)))};
}
Value QuantitySubInt(const Value* a, EvalContext&) {
  return Value{Qty(a, 0).Minus(api::Quantity::FromValue(std::get<int64_t>(a[1].v)))};
}

// ---- semver ----
Value SemverOf(const Value* a, bool normalize) {
  auto v = ParseSemver(Str(a, 0), normalize);
  if (!v.ok()) return Value::Error(std::string(v.status().message()));
  return Value{std::shared_ptr<const Semver>(std::make_shared<Semver>(*std::move(v)))};
}
Value Semver1(const Value* a, EvalContext&) { return SemverOf(a, false); }
Value Semver2(const Value* a, EvalContext&) { return SemverOf(a, std::get<bool>(a[1].v)); }
Value IsSemver1(const Value* a, EvalContext&) { return Value{ParseSemver(Str(a, 0), false).ok()}; }
Value IsSemver2(const Value* a, EvalContext&) {
  return Value{ParseSemver(Str(a, 0), std::get<bool>(a[1].v)).ok()};
}
Value SemverMajor(const Value* a, EvalContext&) {
  return Value{static_cast<int64_t>(Ver(a, 0).major)};
}
Value SemverMinor(const Value* a, EvalContext&) {
  return Value{static_cast<int64_t>(Ver(a, 0).minor)};
}
Value SemverPatch(const Value* a, EvalContext&) {
  return Value{static_cast<int64_t>(Ver(a, 0).patch)};
}
Value SemverGreater(const Value* a, EvalContext&) {
  return Value{CompareSemver(Ver(a, 0), Ver(a, 1)) == 1};
}
Value SemverLess(const Value* a, EvalContext&) {
  return Value{CompareSemver(Ver(a, 0), Ver(a, 1)) == -1};
}
Value SemverCompare(const Value* a, EvalContext&) {
  return Value{int64_t{CompareSemver(Ver(a, 0), Ver(a, 1))}};
}

}  // namespace

const std::vector<Overload>& Overloads() {
  using K = Kind;
  static const std::vector<Overload>* const kAll = new std::vector<Overload>{
      {"size", false, {K::kString}, K::kInt, SizeString},
      {"size", false, {K::kList}, K::kInt, SizeList},
      {"size", false, {K::kMap}, K::kInt, SizeMap},
      {"size", true, {K::kString}, K::kInt, SizeString},
      {"size", true, {K::kList}, K::kInt, SizeList},
      {"size", true, {K::kMap}, K::kInt, SizeMap},
      {"contains", true, {K::kString, K::kString}, K::kBool, Contains},
      {"startsWith", true, {K::kString, K::kString}, K::kBool, StartsWith},
      {"endsWith", true, {K::kString, K::kString}, K::kBool, EndsWith},
      {"matches", true, {K::kString, K::kString}, K::kBool, Matches},
      {"matches", false, {K::kString, K::kString}, K::kBool, Matches},
      {"lowerAscii", true, {K::kString}, K::kString, LowerAscii},
      {"upperAscii", true, {K::kString}, K::kString, UpperAscii},
      {"split", true, {K::kString, K::kString}, K::kList, Split},
      {"int", false, {K::kInt}, K::kInt, IntOf},
      {"int", false, {K::kUint}, K::kInt, IntOf},
      {"int", false, {K::kDouble}, K::kInt, IntOf},
      {"int", false, {K::kString}, K::kInt, IntOf},
      {"uint", false, {K::kInt}, K::kUint, UintOf},
      {"uint", false, {K::kUint}, K::kUint, UintOf},
      {"uint", false, {K::kDouble}, K::kUint, UintOf},
      {"uint", false, {K::kString}, K::kUint, UintOf},
      {"double", false, {K::kInt}, K::kDouble, DoubleOf},
      {"double", false, {K::kUint}, K::kDouble, DoubleOf},
      {"double", false, {K::kDouble}, K::kDouble, DoubleOf},
      {"double", false, {K::kString}, K::kDouble, DoubleOf},
      {"string", false, {K::kString}, K::kString, StringOf},
      {"string", false, {K::kInt}, K::kString, StringOf},
      {"string", false, {K::kUint}, K::kString, StringOf},
      {"string", false, {K::kDouble}, K::kString, StringOf},
      {"string", false, {K::kBool}, K::kString, StringOf},
      {"quantity", false, {K::kString}, K::kQuantity, QuantityOf},
      {"isQuantity", false, {K::kString}, K::kBool, IsQuantity},
      {"sign", false, {K::kQuantity}, K::kInt, QuantitySign},
      {"sign", true, {K::kQuantity}, K::kInt, QuantitySign},
      {"isGreaterThan", true, {K::kQuantity, K::kQuantity}, K::kBool, QuantityGreater},
      {"isLessThan", true, {K::kQuantity, K::kQuantity}, K::kBool, QuantityLess},
      {"compareTo", true, {K::kQuantity, K::kQuantity}, K::kInt, QuantityCompare},
      {"asApproximateFloat", true, {K::kQuantity}, K::kDouble, QuantityFloat},
      {"asInteger", true, {K::kQuantity}, K::kInt, QuantityInteger},
      {"isInteger", true, {K::kQuantity}, K::kBool, QuantityIsInteger},
      {"add", true, {K::kQuantity, K::kQuantity}, K::kQuantity, QuantityAdd},
      {"add", true, {K::kQuantity, K::kInt}, K::kQuantity, QuantityAddInt},
      {"sub", true, {K::kQuantity, K::kQuantity}, K::kQuantity, QuantitySub},
      {"sub", true, {K::kQuantity, K::kInt}, K::kQuantity, QuantitySubInt},
      {"semver", false, {K::kString}, K::kSemver, Semver1},
      {"semver", false, {K::kString, K::kBool}, K::kSemver, Semver2},
      {"isSemver", false, {K::kString}, K::kBool, IsSemver1},
      {"isSemver", false, {K::kString, K::kBool}, K::kBool, IsSemver2},
      {"major", true, {K::kSemver}, K::kInt, SemverMajor},
      {"minor", true, {K::kSemver}, K::kInt, SemverMinor},
      {"patch", true, {K::kSemver}, K::kInt, SemverPatch},
      {"isGreaterThan", true, {K::kSemver, K::kSemver}, K::kBool, SemverGreater},
      {"isLessThan", true, {K::kSemver, K::kSemver}, K::kBool, SemverLess},
      {"compareTo", true, {K::kSemver, K::kSemver}, K::kInt, SemverCompare},
  };
  return *kAll;
}

bool IsKnownUnsupportedFunction(std::string_view name) {
  static constexpr std::string_view kNames[] = {"timestamp",
                                                "duration",
                                                "bytes",
                                                "dyn",
                                                "type",
                                                "getFullYear",
                                                "getMonth",
                                                "getDate",
                                                "getDayOfWeek",
                                                "getHours",
                                                "getMinutes",
                                                "getSeconds",
                                                "getMilliseconds",
                                                "charAt",
                                                "indexOf",
                                                "lastIndexOf",
                                                "replace",
                                                "substring",
                                                "trim",
                                                "join",
                                                "format",
                                                "quote",
                                                "reverse",
                                                "find",
                                                "findAll",
                                                "includes",
                                                "url",
                                                "isURL",
                                                "ip",
                                                "isIP",
                                                "cidr",
                                                "isCIDR",
                                                "sum",
                                                "min",
                                                "max",
                                                "distinct",
                                                "flatten",
                                                "slice",
                                                "sort",
                                                "indexOfLast",
                                                "mul",
                                                "div",
                                                "divInt",
                                                "optional",
                                                "hasValue",
                                                "value",
                                                "orValue",
                                                "base64",
                                                "math",
                                                "strings",
                                                "lists",
                                                "sets",
                                                "regex",
                                                "isSorted",
                                                "first",
                                                "last",
                                                "range"};
  for (std::string_view n : kNames) {
    if (n == name) return true;
  }
  return false;
}

}  // namespace phalanx::cel
