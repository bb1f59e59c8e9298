// resource.Quantity as Kubernetes parses it (k8s.io/apimachinery/pkg/api/resource).
//
// Grammar (quantity.go):  <signedNumber><suffix>
//   suffix := binarySI (Ki Mi Gi Ti Pi Ei) | decimalSI (n u m "" k M G T P E)
//           | decimalExponent (e<signedNumber> | E<signedNumber>)
// Examples: "100m" (0.1), "1.5", "2Gi", "1e3", "500M", "-1".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "api/status.h"

namespace phalanx::api {

// A parsed quantity stored exactly as value = mantissa * 10^exponent (decimal) with
// mantissa up to 38 digits. Binary suffixes are folded into the mantissa.
class Quantity {
 public:
  Quantity() = default;

  // Parses `text`. InvalidArgumentError (e.g. "quantities must match the regular
  // expression ..." or "quantity out of range") on malformed input.
  // Values whose magnitude exceeds 2^63 in milli units are rejected as out of range so
  // that every accepted quantity has an exact MilliValue().
  static StatusOr<Quantity> Parse(std::string_view text);

  // Whole-unit value rounded up (towards +inf), as Quantity.Value() does. E.g. "100m" -> 1.
  int64_t Value() const;
  // Milli-unit value rounded up, as Quantity.MilliValue(). E.g. "1.5" -> 1500, "1n" -> 1.
  int64_t MilliValue() const;
  bool IsNegative() const { return negative_ && mantissa_ != 0; }
  bool IsZero() const { return mantissa_ == 0; }

  // Exact comparison, as Quantity.Cmp: -1, 0 or 1 (e.g. "1Ki" vs "1024" -> 0). Used by
  // the CEL quantity library (src/cel/cel.h: compareTo, isGreaterThan, ==).
  int Compare(const Quantity& other) const;
  // Exact sum / difference, as Quantity.Add / Quantity.Sub (saturating far outside the
  // range Parse accepts, which only FromValue/FromMilli with extreme inputs can reach).
  Quantity Plus(const Quantity& other) const;
  Quantity Minus(const Quantity& other) const;
  // The value as a double, as Quantity.AsApproximateFloat64 (may lose precision).
  double AsApproximateFloat64() const;
  // The value as int64 when it is a whole number that fits, as Quantity.AsInt64;
  // false (and *out untouched) for "1500m" or values beyond int64.
  bool AsInt64(int64_t* out) const;

  static Quantity FromMilli(int64_t milli);
  static Quantity FromValue(int64_t value);

 private:
  // value = (negative ? -1 : 1) * mantissa_ * 10^exponent_
  unsigned __int128 mantissa_ = 0;
  int32_t exponent_ = 0;
  bool negative_ = false;
  int64_t ScaledCeil(int32_t scale_exponent) const;  // ceil(value * 10^scale_exponent)
  // Exact nano-unit access for api/*.cc (see api/quantity_internal.h).
  friend struct QuantityInternal;
};

}  // namespace phalanx::api
