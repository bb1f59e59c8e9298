// The functions of the CEL subset and their overloads:
//   - CEL standard: size, contains, startsWith, endsWith, matches, int, uint, double,
//     string, bool (cel-spec doc/langdef.md, "List of Standard Definitions");
//   - cel-go ext strings: lowerAscii, upperAscii, split (cel-go ext/strings.go);
//   - Kubernetes quantity library (k8s.io/apiserver/pkg/cel/library/quantity.go):
//     quantity, isQuantity, sign, isGreaterThan, isLessThan, compareTo,
//     asApproximateFloat, asInteger, isInteger, add, sub;
//   - Kubernetes semver library (semverlib.go): semver, isSemver, major, minor, patch,
//     isGreaterThan, isLessThan, compareTo.
// Error texts follow the upstream implementations ("cannot convert value to integer").
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
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

// split(sep, n): Go's strings.SplitN (cel-go ext/strings.go splitN): n == 0 gives no
// pieces, n < 0 all of them, n > 0 at most n (the last holds the rest).
Value SplitLimit(const Value* a, EvalContext& ctx) {
  const int64_t n = std::get<int64_t>(a[2].v);
  if (n < 0) return Split(a, ctx);
  const std::string& s = Str(a, 0);
  const std::string& sep = Str(a, 1);
  if (!ctx.Charge(s.size() + 1)) return Cancelled();
  auto out = std::make_shared<List>();
  if (n == 0) return Value{ListPtr(std::move(out))};
  if (sep.empty()) {
    size_t i = 0;
    while (i < s.size() && out->size() + 1 < static_cast<uint64_t>(n)) {
      size_t j = i + 1;
      while (j < s.size() && (static_cast<unsigned char>(s[j]) & 0xC0) == 0x80) ++j;
      out->push_back(Value{s.substr(i, j - i)});
      i = j;
    }
    if (i < s.size()) out->push_back(Value{s.substr(i)});
  } else {
    for (std::string_view part : SplitN(s, sep, static_cast<size_t>(n))) {
      out->push_back(Value{std::string(part)});
    }
  }
  return Value{ListPtr(std::move(out))};
}

// ---- conversions ----
// As cel-go's ConvertToType (common/types/int.go, uint.go, double.go, string.go, bool.go):
// strings parse as Go's strconv.ParseInt / ParseUint (base 10) / ParseFloat / ParseBool,
// doubles print as Go's fmt "%g", and out-of-range values are "integer overflow" /
// "unsigned integer overflow".
Value ConversionError(std::string_view from, std::string_view to) {
  return Value::Error(Cat("type conversion error from '", from, "' to '", to, "'"));
}

// Go's strconv.ParseInt(s, 10, 64) / ParseUint: an optional sign (ParseInt only), then
// decimal digits; no spaces, no underscores, no base prefix.
bool ParseGoInt(const std::string& s, bool allow_sign, int64_t* i, uint64_t* u) {
  size_t k = 0;
  if (allow_sign && !s.empty() && (s[0] == '+' || s[0] == '-')) k = 1;
  if (k == s.size()) return false;
  for (size_t j = k; j < s.size(); ++j) {
    if (s[j] < '0' || s[j] > '9') return false;
  }
  return i != nullptr ? absl::SimpleAtoi(s, i) : absl::SimpleAtoi(s, u);
}

// Go's strconv.ParseFloat(s, 64): decimal ([+-]digits[.digits][e[+-]digits]), hexadecimal
// with a mandatory p exponent (0x1.8p1), or inf / infinity / nan (any case; a sign only
// before inf). A finite literal beyond the double range is an error (ErrRange); underflow
// is 0.
bool ParseGoFloat(const std::string& s, double* out) {
  const auto lower = absl::AsciiStrToLower(s);
  std::string_view body = lower;
  const bool neg = !body.empty() && body[0] == '-';
  if (!body.empty() && (body[0] == '+' || body[0] == '-')) body.remove_prefix(1);
  if (body == "inf" || body == "infinity") {
    *out = neg ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
    return true;
  }
  if (lower == "nan") {
    *out = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  const bool hex = body.size() > 2 && body[0] == '0' && body[1] == 'x';
  size_t k = hex ? 2 : 0;
  const auto digit = [&](char c) {
    return (c >= '0' && c <= '9') || (hex && c >= 'a' && c <= 'f');
  };
  size_t mantissa = 0;
  while (k < body.size() && digit(body[k])) ++k, ++mantissa;
  if (k < body.size() && body[k] == '.') {
    ++k;
    while (k < body.size() && digit(body[k])) ++k, ++mantissa;
  }
  if (mantissa == 0) return false;
  if (k < body.size() && body[k] == (hex ? 'p' : 'e')) {
    ++k;
    if (k < body.size() && (body[k] == '+' || body[k] == '-')) ++k;
    const size_t exp_start = k;
    while (k < body.size() && body[k] >= '0' && body[k] <= '9') ++k;
    if (k == exp_start) return false;
  } else if (hex) {
    return false;
  }
  if (k != body.size()) return false;
  char* end = nullptr;  // strtod reads the C locale's '.' (Phalanx never calls setlocale)
  const double d = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || std::isinf(d)) return false;
  *out = d;
  return true;
}

// Go's fmt.Sprintf("%g", d): the shortest digits that read back as d, in %e form when the
// decimal exponent is below -4 or at least 6 ("1.23456789e+08", "1e-05"), otherwise in %f
// form ("123456", "0.0045"); "+Inf", "-Inf", "NaN".
std::string FormatGoDouble(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "+Inf" : "-Inf";
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  const std::string_view sci(buf, static_cast<size_t>(res.ptr - buf));  // "-1.2345e+08"
  const size_t e = sci.find('e');
  std::string_view mant = sci.substr(0, e);
  std::string out;
  if (!mant.empty() && mant[0] == '-') {
    out.push_back('-');
    mant.remove_prefix(1);
  }
  std::string digits;
  for (char c : mant) {
    if (c != '.') digits.push_back(c);
  }
  int exp = 0;
  std::from_chars(sci.data() + e + (sci[e + 1] == '+' ? 2 : 1), sci.data() + sci.size(), exp);
  const int nd = static_cast<int>(digits.size());
  if (exp < -4 || exp >= 6) {
    out += digits.substr(0, 1);
    if (nd > 1) out += "." + digits.substr(1);
    out += exp < 0 ? "e-" : "e+";
    const int a = exp < 0 ? -exp : exp;
    if (a < 10) out.push_back('0');
    out += std::to_string(a);
    return out;
  }
  const int dp = exp + 1;  // digits before the decimal point
  if (dp <= 0) {
    out += "0." + std::string(static_cast<size_t>(-dp), '0') + digits;
  } else if (dp >= nd) {
    out += digits + std::string(static_cast<size_t>(dp - nd), '0');
  } else {
    out += digits.substr(0, static_cast<size_t>(dp)) + "." + digits.substr(static_cast<size_t>(dp));
  }
  return out;
}

Value IntOf(const Value* a, EvalContext&) {
  const Value& v = a[0];
  if (const auto* i = std::get_if<int64_t>(&v.v)) return Value{*i};
  if (const auto* u = std::get_if<uint64_t>(&v.v)) {
    if (*u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return Value::Error(std::string(kIntOverflow));
    }
    return Value{static_cast<int64_t>(*u)};
  }
  if (const auto* d = std::get_if<double>(&v.v)) {
    // doubleToInt64Checked: NaN, infinities and values at or beyond +-2^63 overflow.
    if (!(*d > -9223372036854775808.0 && *d < 9223372036854775808.0)) {
      return Value::Error(std::string(kIntOverflow));
    }
    return Value{static_cast<int64_t>(*d)};
  }
  int64_t out = 0;
  if (!ParseGoInt(std::get<std::string>(v.v), /*allow_sign=*/true, &out, nullptr)) {
    return ConversionError("string", "int");
  }
  return Value{out};
}

Value UintOf(const Value* a, EvalContext&) {
  const Value& v = a[0];
  if (const auto* u = std::get_if<uint64_t>(&v.v)) return Value{*u};
  if (const auto* i = std::get_if<int64_t>(&v.v)) {
    if (*i < 0) return Value::Error(std::string(kUintOverflow));
    return Value{static_cast<uint64_t>(*i)};
  }
  if (const auto* d = std::get_if<double>(&v.v)) {
    // doubleToUint64Checked: NaN, infinities, negative values and 2^64 and beyond overflow.
    if (!(*d >= 0.0 && *d < 18446744073709551616.0)) {
      return Value::Error(std::string(kUintOverflow));
    }
    return Value{static_cast<uint64_t>(*d)};
  }
  uint64_t out = 0;
  if (!ParseGoInt(std::get<std::string>(v.v), /*allow_sign=*/false, nullptr, &out)) {
    return ConversionError("string", "uint");
  }
  return Value{out};
}

Value DoubleOf(const Value* a, EvalContext&) {
  const Value& v = a[0];
  if (const auto* d = std::get_if<double>(&v.v)) return Value{*d};
  if (const auto* i = std::get_if<int64_t>(&v.v)) return Value{static_cast<double>(*i)};
  if (const auto* u = std::get_if<uint64_t>(&v.v)) return Value{static_cast<double>(*u)};
  double out = 0;
  if (!ParseGoFloat(std::get<std::string>(v.v), &out)) return ConversionError("string", "double");
  return Value{out};
}

Value StringOf(const Value* a, EvalContext&) {
  const Value& v = a[0];
  if (const auto* s = std::get_if<std::string>(&v.v)) return Value{*s};
  if (const auto* i = std::get_if<int64_t>(&v.v)) return Value{Cat(*i)};
  if (const auto* u = std::get_if<uint64_t>(&v.v)) return Value{Cat(*u)};
  if (const auto* b = std::get_if<bool>(&v.v)) return Value{std::string(*b ? "true" : "false")};
  return Value{FormatGoDouble(std::get<double>(v.v))};
}

// bool(): strconv.ParseBool's spellings.
Value BoolOf(const Value* a, EvalContext&) {
  const Value& v = a[0];
  if (const auto* b = std::get_if<bool>(&v.v)) return Value{*b};
  const std::string& s = std::get<std::string>(v.v);
  if (s == "1" || s == "t" || s == "T" || s == "true" || s == "TRUE" || s == "True") {
    return Value{true};
  }
  if (s == "0" || s == "f" || s == "F" || s == "false" || s == "FALSE" || s == "False") {
    return Value{false};
  }
  return ConversionError("string", "bool");
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
      {"split", true, {K::kString, K::kString, K::kInt}, K::kList, SplitLimit},
      {"bool", false, {K::kBool}, K::kBool, BoolOf},
      {"bool", false, {K::kString}, K::kBool, BoolOf},
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
