// Tests of the Kubernetes CEL libraries in the subset, ported from
// k8s.io/apiserver/pkg/cel/library: quantity_test.go (TestQuantity) and semver_test.go
// (TestSemver), each case by its upstream name. As upstream, an expected error is a regular
// expression searched in the message.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <variant>
#include <vector>

#include "cel/cel.h"
#include "cel/cel_internal.h"
#include "cel/cel_testing.h"

namespace phalanx::cel {
namespace {

struct LibraryCase {
  std::string name;
  std::string expr;
  // Exactly one of: the result, a runtime error pattern, a compile error pattern.
  std::optional<Value> value;
  std::string runtime_error;
  std::string compile_error;
  double tolerance = 0;  // doubles: |got - want| < tolerance (0: exact)
};

Value Qty(const char* s) { return Value{*api::Quantity::Parse(s)}; }
Value Ver(const char* s) {
  return Value{std::shared_ptr<const Semver>(
      std::make_shared<Semver>(*ParseSemver(s, /*normalize=*/false)))};
}

// The result equals the expectation: quantities and versions compare by value (as
// upstream's res.Equal), other values by type and value.
bool SameResult(const Value& got, const Value& want, double tolerance) {
  if (got.v.index() != want.v.index()) return false;
  if (const auto* q = std::get_if<api::Quantity>(&want.v)) {
    return std::get<api::Quantity>(got.v).Compare(*q) == 0;
  }
  if (const auto* v = std::get_if<std::shared_ptr<const Semver>>(&want.v)) {
    return CompareSemver(*std::get<std::shared_ptr<const Semver>>(got.v), **v) == 0;
  }
  if (const auto* d = std::get_if<double>(&want.v)) {
    const double g = std::get<double>(got.v);
    return tolerance > 0 ? std::fabs(g - *d) < tolerance : g == *d;
  }
  if (const auto* b = std::get_if<bool>(&want.v)) return std::get<bool>(got.v) == *b;
  if (const auto* i = std::get_if<int64_t>(&want.v)) return std::get<int64_t>(got.v) == *i;
  return false;
}

void RunLibraryCase(const LibraryCase& c) {
  SCOPED_TRACE(c.name + ": " + c.expr);
  auto [error, root, slots] = ParseAndCheck(c.expr);
  if (!c.compile_error.empty()) {
    ASSERT_TRUE(error.has_value()) << "compiled, expected " << c.compile_error;
    EXPECT_TRUE(std::regex_search(error->message, std::regex(c.compile_error))) << error->message;
    return;
  }
  ASSERT_FALSE(error.has_value()) << error->message;
  EvalContext ctx;
  ctx.slots.resize(static_cast<size_t>(slots));
  const Value got = Evaluate(*root, ctx);
  if (!c.runtime_error.empty()) {
    ASSERT_TRUE(got.IsError()) << "no runtime error, expected " << c.runtime_error;
    const std::string& message = std::get<ErrorValue>(got.v).message;
    EXPECT_TRUE(std::regex_search(message, std::regex(c.runtime_error))) << message;
    return;
  }
  ASSERT_FALSE(got.IsError()) << std::get<ErrorValue>(got.v).message;
  ASSERT_TRUE(c.value.has_value());
  EXPECT_TRUE(SameResult(got, *c.value, c.tolerance)) << "got " << ValueTypeName(got);
}

TEST(CelLibraryQuantity, Table) {
  const Value t{true};
  const Value f{false};
  const std::vector<LibraryCase> cases = {
      {"parse", R"(quantity("12Mi"))", Qty("12Mi")},
      {"parseInvalidSuffix",
       R"(quantity("10Mo"))",
       {},
       "quantities must match the regular expression.*"},
      {"parseInvalidSuffixPassesRegex",
       R"(quantity("10Mm"))",
       {},
       "unable to parse quantity's suffix"},
      {"isQuantity", R"(isQuantity("20"))", t},
      {"isQuantity_megabytes", R"(isQuantity("20M"))", t},
      {"isQuantity_mebibytes", R"(isQuantity("20Mi"))", t},
      {"isQuantity_invalidSuffix", R"(isQuantity("20Mo"))", f},
      {"isQuantity_passingRegex", R"(isQuantity("10Mm"))", f},
      {"isQuantity_noOverload",
       R"(isQuantity([1, 2, 3]))",
       {},
       "",
       "found no matching overload for 'isQuantity' applied to.*"},
      {"equality_reflexivity", R"(quantity("200M") == quantity("200M"))", t},
      {"equality_symmetry",
       R"(quantity("200M") == quantity("0.2G") && quantity("0.2G") == quantity("200M"))", t},
      {"equality_transitivity",
       R"(quantity("2M") == quantity("0.002G") && quantity("2000k") == quantity("2M") && quantity("0.002G") == quantity("2000k"))",
       t},
      {"inequality", R"(quantity("200M") == quantity("0.3G"))", f},
      {"quantity_less", R"(quantity("50M").isLessThan(quantity("50Mi")))", t},
      {"quantity_less_obvious", R"(quantity("50M").isLessThan(quantity("100M")))", t},
      {"quantity_less_false", R"(quantity("100M").isLessThan(quantity("50M")))", f},
      {"quantity_greater", R"(quantity("50Mi").isGreaterThan(quantity("50M")))", t},
      {"quantity_greater_obvious", R"(quantity("150Mi").isGreaterThan(quantity("100Mi")))", t},
      {"quantity_greater_false", R"(quantity("50M").isGreaterThan(quantity("100M")))", f},
      {"compare_equal", R"(quantity("200M").compareTo(quantity("0.2G")))", Value{int64_t{0}}},
      {"compare_less", R"(quantity("50M").compareTo(quantity("50Mi")))", Value{int64_t{-1}}},
      {"compare_greater", R"(quantity("50Mi").compareTo(quantity("50M")))", Value{int64_t{1}}},
      {"add_quantity", R"(quantity("50k").add(quantity("20")) == quantity("50.02k"))", t},
      {"add_int", R"(quantity("50k").add(20).isLessThan(quantity("50020")))", f},
      {"sub_quantity", R"(quantity("50k").sub(quantity("20")) == quantity("49.98k"))", t},
      {"sub_int", R"(quantity("50k").sub(20) == quantity("49980"))", t},
      // mul, div and divInt are outside the subset (docs/dra-cel.md): a compile error.
      {"multiply",
       R"(quantity("50k").mul(2) == quantity("100000"))",
       {},
       "",
       "function 'mul' is not supported by this CEL subset"},
      {"divide_float_result",
       R"(quantity("10000").div(3).asApproximateFloat())",
       {},
       "",
       "function 'div' is not supported by this CEL subset"},
      {"divide_scaled",
       R"(quantity("10k").div(2) == quantity("5000"))",
       {},
       "",
       "function 'div' is not supported by this CEL subset"},
      {"integer_division",
       R"(quantity("10000").divInt(3) == quantity("3333"))",
       {},
       "",
       "function 'divInt' is not supported by this CEL subset"},
      {"arith_chain_1", R"(quantity("50k").add(20).sub(quantity("100k")).asInteger())",
       Value{int64_t{-49980}}},
      {"arith_chain", R"(quantity("50k").add(20).sub(quantity("100k")).sub(-50000).asInteger())",
       Value{int64_t{20}}},
      {"as_integer", R"(quantity("50k").asInteger())", Value{int64_t{50000}}},
      // Upstream parses this quantity (resource.Quantity falls back to inf.Dec) and fails in
      // asInteger(); api::Quantity rejects magnitudes beyond 2^63 milli-units at parse time
      // (so that MilliValue() is exact), so quantity() fails first. Both are errors.
      {"as_integer_error",
       R"(quantity("9999999999999999999999999999999999999G").asInteger())",
       {},
       "quantity out of range"},
      // The same bound: upstream's false is an error here, so a selector using it does not
      // match and reports the error (never true).
      {"is_integer",
       R"(quantity("9999999999999999999999999999999999999G").isInteger())",
       {},
       "quantity out of range"},
      {"is_integer", R"(quantity("50").isInteger())", t},
      {"as_float", R"(quantity("50.703k").asApproximateFloat())", Value{50703.0}},
  };
  for (const LibraryCase& c : cases) RunLibraryCase(c);
}

TEST(CelLibrarySemver, Table) {
  const Value t{true};
  const Value f{false};
  // semver_test.go's `version` field selects SemverVersion(1) (the normalize argument); the
  // Kubernetes base environment has version 1 since 1.33, so every case runs in it.
  const std::vector<LibraryCase> cases = {
      {"parse", R"(semver("1.2.3"))", Ver("1.2.3")},
      {"parseInvalidVersion", R"(semver("v1.0"))", {}, "No Major.Minor.Patch elements found"},
      {"isSemver", R"(isSemver("1.2.3-beta.1+build.1"))", t},
      {"isSemver_empty_false", R"(isSemver(""))", f},
      {"isSemver_v_prefix_false", R"(isSemver("v1.0.0"))", f},
      {"isSemver_v_leading_whitespace_false", R"(isSemver(" 1.0.0"))", f},
      {"isSemver_v_contains_whitespace_false", R"(isSemver("1. 0.0"))", f},
      {"isSemver_v_trailing_whitespace_false", R"(isSemver("1.0.0 "))", f},
      {"isSemver_leading_zeros_false", R"(isSemver("01.01.01"))", f},
      {"isSemver_major_only_false", R"(isSemver("1"))", f},
      {"isSemver_major_minor_only_false", R"(isSemver("1.1"))", f},
      {"isSemver_empty_normalize_false", R"(isSemver("", true))", f},
      {"isSemver_v_leading_whitespace_normalize_false", R"(isSemver(" 1.0.0", true))", f},
      {"isSemver_v_contains_whitespace_normalize_false", R"(isSemver("1. 0.0", true))", f},
      {"isSemver_v_trailing_whitespace_normalize_false", R"(isSemver("1.0.0 ", true))", f},
      {"isSemver_v_prefix_normalize_true", R"(isSemver("v1.0.0", true))", t},
      {"isSemver_leading_zeros_normalize_true", R"(isSemver("01.01.01", true))", t},
      {"isSemver_major_only_normalize_true", R"(isSemver("1", true))", t},
      {"isSemver_major_minor_only_normalize_true", R"(isSemver("1.1", true))", t},
      {"isSemver_noOverload",
       R"(isSemver([1, 2, 3]))",
       {},
       "",
       "found no matching overload for 'isSemver' applied to.*"},
      {"equality_normalize", R"(semver("v01.01", true) == semver("1.1.0"))", t},
      {"equality_reflexivity", R"(semver("1.2.3") == semver("1.2.3"))", t},
      {"inequality", R"(semver("1.2.3") == semver("1.0.0"))", f},
      {"semver_less", R"(semver("1.0.0").isLessThan(semver("1.2.3")))", t},
      {"semver_less_false", R"(semver("1.0.0").isLessThan(semver("1.0.0")))", f},
      {"semver_greater", R"(semver("1.2.3").isGreaterThan(semver("1.0.0")))", t},
      {"semver_greater_false", R"(semver("1.0.0").isGreaterThan(semver("1.0.0")))", f},
      {"compare_equal", R"(semver("1.2.3").compareTo(semver("1.2.3")))", Value{int64_t{0}}},
      {"compare_less", R"(semver("1.0.0").compareTo(semver("1.2.3")))", Value{int64_t{-1}}},
      {"compare_greater", R"(semver("1.2.3").compareTo(semver("1.0.0")))", Value{int64_t{1}}},
      {"major", R"(semver("1.2.3").major())", Value{int64_t{1}}},
      {"minor", R"(semver("1.2.3").minor())", Value{int64_t{2}}},
      {"patch", R"(semver("1.2.3").patch())", Value{int64_t{3}}},
  };
  for (const LibraryCase& c : cases) RunLibraryCase(c);
}

}  // namespace
}  // namespace phalanx::cel
