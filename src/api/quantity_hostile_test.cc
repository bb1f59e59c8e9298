// Hostile quantities: absurd magnitudes, huge exponents and 10 MB strings are
// rejected with upstream's messages or parsed exactly, never crash, overflow or hang.
// Pod requests that are negative or out of range are errors naming the field.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "api/decode.h"
#include "api/quantity.h"

namespace phalanx::api {
namespace {

constexpr char kOutOfRange[] = "quantity out of range";
constexpr char kFormat[] = "quantities must match the regular expression";

std::string ParseError(const std::string& text) {
  Quantity q;
  std::string err;
  if (MoveOrMessage(Quantity::Parse(text), &q, &err)) return "";
  return err;
}

TEST(QuantityHostileTest, AbsurdMagnitudesAreOutOfRange) {
  for (const std::string s : {"1e308", "-1e308", "1E308", "1e19", "9223372036854775808",
                              "99999999999999999999999999999999999999999", "8Ei"}) {
    EXPECT_EQ(ParseError(s), kOutOfRange) << s;
  }
  // The largest accepted value is 2^63-1 milli units (exact MilliValue()).
  Quantity q;
  std::string err;
  ASSERT_TRUE(MoveOrMessage(Quantity::Parse("9223372036854775807m"), &q, &err)) << err;
  EXPECT_EQ(q.MilliValue(), std::numeric_limits<int64_t>::max());
}

TEST(QuantityHostileTest, NegativeQuantitiesParseAsNegative) {
  Quantity q;
  std::string err;
  ASSERT_TRUE(MoveOrMessage(Quantity::Parse("-1"), &q, &err)) << err;
  EXPECT_TRUE(q.IsNegative());
  EXPECT_EQ(q.MilliValue(), -1000);
  ASSERT_TRUE(MoveOrMessage(Quantity::Parse("-1e-308"), &q, &err))
      << err;                    // rounds to -1n as upstream
  EXPECT_EQ(q.MilliValue(), 0);  // ceil towards +inf
}

TEST(QuantityHostileTest, HugeExponentsDoNotOverflow) {
  // Exponents beyond int64 are a suffix error (strconv.ParseInt fails); within int64 they
  // decide between out of range and rounding up to 1n.
  EXPECT_EQ(ParseError("1e9223372036854775807"), kOutOfRange);
  EXPECT_EQ(ParseError("1e9223372036854775808"), "unable to parse quantity's suffix");
  EXPECT_EQ(ParseError("1e-9223372036854775808"), "");
  EXPECT_EQ(ParseError("1e99999999999999999999999"), "unable to parse quantity's suffix");
  Quantity q;
  std::string err;
  ASSERT_TRUE(MoveOrMessage(Quantity::Parse("1e-9223372036854775808"), &q, &err)) << err;
  EXPECT_EQ(q.MilliValue(), 1);  // 1n rounds up to 1m
  EXPECT_EQ(q.Value(), 1);
}

TEST(QuantityHostileTest, TenMegabyteStrings) {
  const size_t n = 10 << 20;
  EXPECT_EQ(ParseError(std::string(n, '9')), kOutOfRange);
  EXPECT_EQ(ParseError(std::string(n, 'x')),
            kFormat + std::string(" '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"));
  EXPECT_EQ(ParseError("1" + std::string(n, 'e')), "unable to parse quantity's suffix");

  // Leading zeros and a long fraction are exact: 0...01 is 1, 0.000...1 rounds up to 1n.
  Quantity q;
  std::string err;
  ASSERT_TRUE(MoveOrMessage(Quantity::Parse(std::string(n, '0') + "1"), &q, &err)) << err;
  EXPECT_EQ(q.Value(), 1);
  ASSERT_TRUE(MoveOrMessage(Quantity::Parse("0." + std::string(n, '0') + "1"), &q, &err)) << err;
  EXPECT_EQ(q.MilliValue(), 1);
  ASSERT_TRUE(MoveOrMessage(Quantity::Parse("2." + std::string(n, '0')), &q, &err)) << err;
  EXPECT_EQ(q.MilliValue(), 2000);
}

// In a manifest the same values are errors naming file, object and field.
TEST(QuantityHostileTest, PodRequestsNameTheField) {
  struct Case {
    std::string cpu;
    std::string want;
  };
  for (const Case& c :
       {Case{"1e308", kOutOfRange}, Case{"-1", "must be greater than or equal to 0"},
        Case{std::string(1 << 20, '7'), kOutOfRange}}) {
    const std::string text =
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns}\nspec:\n  containers:\n"
        "  - name: c\n    resources: {requests: {cpu: \"" +
        c.cpu + "\"}}\n";
    Manifests m;
    std::string err;
    ASSERT_FALSE(OkOrMessage(DecodeManifests(text, "hostile.yaml", &m), &err))
        << c.cpu.substr(0, 20);
    EXPECT_NE(err.find("hostile.yaml: Pod ns/p: spec.containers[0].resources.requests.cpu"),
              std::string::npos)
        << err.substr(0, 300);
    EXPECT_NE(err.find(c.want), std::string::npos) << err.substr(0, 300);
    EXPECT_TRUE(m.pods.empty());
  }
}

}  // namespace
}  // namespace phalanx::api
