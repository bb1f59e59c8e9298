// Quantity::Parse against upstream's ParseQuantity behaviour
// (apimachinery pkg/api/resource/quantity_test.go TestQuantityParse and friends).
#include "api/quantity.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "api/quantity_internal.h"

namespace phalanx::api {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

struct ValidCase {
  std::string in;
  int64_t milli;
  int64_t value;
};

class QuantityValidTest : public ::testing::TestWithParam<ValidCase> {};

TEST_P(QuantityValidTest, Parses) {
  const ValidCase& c = GetParam();
  Quantity q;
  std::string err;
  ASSERT_TRUE(MoveOrMessage(Quantity::Parse(c.in), &q, &err)) << c.in << ": " << err;
  EXPECT_EQ(q.MilliValue(), c.milli) << c.in;
  EXPECT_EQ(q.Value(), c.value) << c.in;
  EXPECT_EQ(q.IsZero(), c.milli == 0 && c.value == 0) << c.in;
  EXPECT_FALSE(q.IsNegative()) << c.in;

  // Upstream's table is also run with an explicit sign.
  Quantity plus;
  ASSERT_TRUE(MoveOrMessage(Quantity::Parse("+" + c.in), &plus, &err))
      << "+" << c.in << ": " << err;
  EXPECT_EQ(plus.MilliValue(), c.milli);
  Quantity minus;
  ASSERT_TRUE(MoveOrMessage(Quantity::Parse("-" + c.in), &minus, &err))
      << "-" << c.in << ": " << err;
  EXPECT_EQ(minus.IsNegative(), !q.IsZero()) << "-" << c.in;
}

constexpr int64_t kKi = 1024;
constexpr int64_t kMi = kKi * 1024;
constexpr int64_t kGi = kMi * 1024;
constexpr int64_t kTi = kGi * 1024;
constexpr int64_t kPi = kTi * 1024;

INSTANTIATE_TEST_SUITE_P(
    Table, QuantityValidTest,
    ::testing::Values(
        // The brief's examples.
        ValidCase{"100m", 100, 1}, ValidCase{"1.5", 1500, 2},
        ValidCase{"2Gi", 2 * kGi * 1000, 2 * kGi}, ValidCase{"1e3", 1'000'000, 1000},
        ValidCase{"500M", 500'000'000'000, 500'000'000}, ValidCase{"0.1", 100, 1},
        ValidCase{"1n", 1, 1},
        // Zeros in every suffix.
        ValidCase{"0", 0, 0}, ValidCase{"0n", 0, 0}, ValidCase{"0u", 0, 0}, ValidCase{"0m", 0, 0},
        ValidCase{"0Ki", 0, 0}, ValidCase{"0k", 0, 0}, ValidCase{"0Mi", 0, 0},
        ValidCase{"0M", 0, 0}, ValidCase{"0Gi", 0, 0}, ValidCase{"0T", 0, 0},
        ValidCase{"000.000", 0, 0},
        // Binary SI.
        ValidCase{"1Ki", kKi * 1000, kKi}, ValidCase{"7Mi", 7 * kMi * 1000, 7 * kMi},
        ValidCase{"5Ti", 5 * kTi * 1000, 5 * kTi}, ValidCase{"4Pi", 4 * kPi * 1000, 4 * kPi},
        ValidCase{"8388Ti", 8388 * kTi * 1000, 8388 * kTi},
        // Decimal SI.
        ValidCase{"5n", 1, 1}, ValidCase{"4u", 1, 1}, ValidCase{"3m", 3, 1},
        ValidCase{"9", 9000, 9}, ValidCase{"8k", 8'000'000, 8000},
        ValidCase{"50k", 50'000'000, 50'000}, ValidCase{"7M", 7'000'000'000, 7'000'000},
        ValidCase{"6G", 6'000'000'000'000, 6'000'000'000},
        ValidCase{"5T", 5'000'000'000'000'000, 5'000'000'000'000},
        ValidCase{"2P", 2'000'000'000'000'000'000, 2'000'000'000'000'000},
        // Decimal exponents.
        ValidCase{"1E-3", 1, 1}, ValidCase{"1e9", 1'000'000'000'000, 1'000'000'000},
        ValidCase{"1.2e3", 1'200'000, 1200}, ValidCase{"1.3E+6", 1'300'000'000, 1'300'000},
        ValidCase{"0.5e-2", 5, 1},
        ValidCase{"1.6e15", 1'600'000'000'000'000'000, 1'600'000'000'000'000},
        // Floating-point look-alikes.
        ValidCase{"0.001", 1, 1}, ValidCase{"0.0005k", 500, 1},
        ValidCase{"100.035k", 100'035'000, 100'035}, ValidCase{"9.01", 9010, 10},
        ValidCase{"7.123456M", 7'123'456'000, 7'123'456},
        ValidCase{"6.987654321G", 6'987'654'321'000, 6'987'654'321},
        // Rounding up to whole nano units at parse time, then ceil.
        ValidCase{"3.001n", 1, 1}, ValidCase{"0.0000000001", 1, 1},
        ValidCase{"0.00000012345", 1, 1}, ValidCase{"1.0001m", 2, 1},
        ValidCase{"999.9999m", 1000, 1},
        // Fractional binary quantities.
        ValidCase{"100.035Ki", 102'435'840, 102'436}, ValidCase{"0.5Mi", 524'288'000, 524'288},
        ValidCase{"0.05Gi", 53'687'091'200, 53'687'092},
        ValidCase{"1.5Gi", 1'610'612'736'000, 1'610'612'736}, ValidCase{"0.000000000001Ki", 1, 1},
        // "Things written by trolls" that upstream accepts.
        ValidCase{".001", 1, 1}, ValidCase{".0001k", 100, 1}, ValidCase{"1.", 1000, 1},
        ValidCase{"1.G", 1'000'000'000'000, 1'000'000'000}, ValidCase{".", 0, 0},
        ValidCase{"Ki", 0, 0}, ValidCase{"m", 0, 0},
        // Many digits, all exact.
        ValidCase{"0.000000000000000000000000000000000000000000000001", 1, 1},
        ValidCase{"1.000000000000000000000000000000000000000000000000", 1000, 1},
        ValidCase{"000000000000000000000000000000000000000000000000123", 123'000, 123},
        // The largest accepted magnitude: 2^63-1 milli units.
        ValidCase{"9223372036854775807m", kMax, 9'223'372'036'854'776},
        ValidCase{"9223372036854775.807", kMax, 9'223'372'036'854'776}));

TEST(QuantityTest, NegativeValuesRoundTowardsPositiveInfinity) {
  struct Case {
    std::string in;
    int64_t milli;
    int64_t value;
  };
  for (const Case& c : {Case{"-1", -1000, -1}, Case{"-1.5", -1500, -1}, Case{"-100m", -100, 0},
                        Case{"-1n", 0, 0}, Case{"-2Gi", -2 * kGi * 1000, -2 * kGi},
                        Case{"-0.0009999995", -1, 0},  // rounds away from zero to -1000000n first
                        Case{"-9223372036854775807m", -kMax, -9'223'372'036'854'775}}) {
    Quantity q;
    std::string err;
    ASSERT_TRUE(MoveOrMessage(Quantity::Parse(c.in), &q, &err)) << c.in << ": " << err;
    EXPECT_TRUE(q.IsNegative()) << c.in;
    EXPECT_EQ(q.MilliValue(), c.milli) << c.in;
    EXPECT_EQ(q.Value(), c.value) << c.in;
  }
  Quantity zero;
  std::string err;
  ASSERT_TRUE(MoveOrMessage(Quantity::Parse("-0"), &zero, &err));
  EXPECT_FALSE(zero.IsNegative());
  EXPECT_TRUE(zero.IsZero());
  ASSERT_TRUE(
      MoveOrMessage(Quantity::Parse("-"), &zero, &err));  // upstream parses a bare sign as zero
  EXPECT_TRUE(zero.IsZero());
}

struct InvalidCase {
  std::string in;
  std::string message;
};

class QuantityInvalidTest : public ::testing::TestWithParam<InvalidCase> {};

constexpr char kFormat[] =
    "quantities must match the regular expression "
    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
constexpr char kSuffix[] = "unable to parse quantity's suffix";
constexpr char kRange[] = "quantity out of range";

TEST_P(QuantityInvalidTest, Rejects) {
  const InvalidCase& c = GetParam();
  Quantity q = Quantity::FromValue(42);
  std::string err;
  EXPECT_FALSE(MoveOrMessage(Quantity::Parse(c.in), &q, &err)) << "'" << c.in << "' parsed";
  EXPECT_EQ(err, c.message) << "'" << c.in << "'";
  EXPECT_EQ(q.Value(), 42) << "output must be untouched on error";
}

INSTANTIATE_TEST_SUITE_P(
    Table, QuantityInvalidTest,
    ::testing::Values(
        InvalidCase{"", kFormat}, InvalidCase{"abc", kFormat}, InvalidCase{"aoeu", kFormat},
        InvalidCase{"1.2.3", kFormat}, InvalidCase{"1.1.M", kFormat}, InvalidCase{"1Gb", kFormat},
        InvalidCase{" 1", kFormat}, InvalidCase{"1 ", kFormat}, InvalidCase{"1+1.0M", kFormat},
        InvalidCase{"0.1am", kFormat}, InvalidCase{"1e3e", kFormat}, InvalidCase{"1,5", kFormat},
        // Well-formed but unknown suffixes are ErrSuffix upstream.
        InvalidCase{"--1", kSuffix}, InvalidCase{"0.1mi", kSuffix}, InvalidCase{".5i", kSuffix},
        InvalidCase{"1i", kSuffix}, InvalidCase{"-3.01i", kSuffix}, InvalidCase{"-3.01e-", kSuffix},
        InvalidCase{"1e", kSuffix}, InvalidCase{"1K", kSuffix}, InvalidCase{"1Mi5", kSuffix},
        InvalidCase{"1e99999999999999999999", kSuffix},
        // Above 2^63-1 milli units.
        InvalidCase{"1e308", kRange}, InvalidCase{"9Ei", kRange}, InvalidCase{"1Ei", kRange},
        InvalidCase{"12E", kRange}, InvalidCase{"9223372036854775808m", kRange},
        InvalidCase{"9223372036854775.8071", kRange}, InvalidCase{"-1e308", kRange},
        InvalidCase{"9223372036854775807Ki", kRange}, InvalidCase{"8389Ti", kRange}));

TEST(QuantityTest, NullErrorPointerIsAllowed) {
  Quantity q;
  EXPECT_FALSE(MoveOrMessage(Quantity::Parse("x"), &q, nullptr));
  EXPECT_TRUE(MoveOrMessage(Quantity::Parse("1"), &q, nullptr));
}

TEST(QuantityTest, FromMilliAndFromValue) {
  EXPECT_EQ(Quantity::FromMilli(1500).MilliValue(), 1500);
  EXPECT_EQ(Quantity::FromMilli(1500).Value(), 2);
  EXPECT_EQ(Quantity::FromMilli(-1500).Value(), -1);
  EXPECT_TRUE(Quantity::FromMilli(-1).IsNegative());
  EXPECT_TRUE(Quantity::FromMilli(0).IsZero());
  EXPECT_EQ(Quantity::FromValue(3).MilliValue(), 3000);
  EXPECT_EQ(Quantity::FromValue(kMin).Value(), kMin);
  // MilliValue of a value beyond 2^63-1 milli saturates rather than overflowing.
  EXPECT_EQ(Quantity::FromValue(kMax).MilliValue(), kMax);
  EXPECT_EQ(Quantity::FromValue(kMin).MilliValue(), kMin);
  EXPECT_TRUE(Quantity().IsZero());
  EXPECT_EQ(Quantity().MilliValue(), 0);
}

TEST(QuantityTest, ExactNanoUnits) {
  Quantity q;
  ASSERT_TRUE(MoveOrMessage(Quantity::Parse("1.1Gi"), &q, nullptr));
  // 1.1 * 2^30 = 1181116006.4 exactly.
  EXPECT_EQ(QuantityInternal::Nano(q), static_cast<Int128>(1181116006400000000LL));
  EXPECT_EQ(NanoToScaledCeil(QuantityInternal::Nano(q) * 2, 0), 2362232013);
  EXPECT_EQ(NanoToScaledCeil(-1, 3), 0);
  EXPECT_EQ(NanoToScaledCeil(1, 3), 1);
  EXPECT_EQ(NanoToScaledCeil(-1'000'001, 3), -1);
  EXPECT_EQ(QuantityInternal::Nano(Quantity::FromMilli(-7)), -7'000'000);
}

// Compare / Plus / Minus / AsInt64 / AsApproximateFloat64 (Quantity.Cmp, Add, Sub,
// AsInt64, AsApproximateFloat64), used by the DRA CEL quantity library.
TEST(QuantityTest, ExactArithmetic) {
  auto q = [](const char* s) { return *Quantity::Parse(s); };
  EXPECT_EQ(q("1Ki").Compare(q("1024")), 0);
  EXPECT_EQ(q("200M").Compare(q("0.2G")), 0);
  EXPECT_EQ(q("50M").Compare(q("50Mi")), -1);
  EXPECT_EQ(q("50Mi").Compare(q("50M")), 1);
  EXPECT_EQ(q("1n").Compare(q("0")), 1);  // below milli precision, still ordered
  EXPECT_EQ(q("-1").Compare(q("1n")), -1);
  EXPECT_EQ(q("1Gi").Plus(q("512Mi")).Compare(q("1.5Gi")), 0);
  EXPECT_EQ(q("1").Minus(q("1500m")).MilliValue(), -500);
  int64_t v = 0;
  EXPECT_TRUE(q("2k").AsInt64(&v));
  EXPECT_EQ(v, 2000);
  EXPECT_FALSE(q("1500m").AsInt64(&v));
  EXPECT_EQ(v, 2000);  // untouched
  EXPECT_TRUE(Quantity::FromValue(std::numeric_limits<int64_t>::min()).AsInt64(&v));
  EXPECT_EQ(v, -9223372036854775807 - 1);
  EXPECT_FALSE(Quantity::FromValue(std::numeric_limits<int64_t>::max()).Plus(q("1")).AsInt64(&v));
  EXPECT_DOUBLE_EQ(q("1500m").AsApproximateFloat64(), 1.5);
  EXPECT_DOUBLE_EQ(q("1Gi").AsApproximateFloat64(), 1073741824.0);
}

}  // namespace
}  // namespace phalanx::api
