// Internal to src/api: exact arithmetic on Quantity values.
//
// Every Quantity accepted by Quantity::Parse is a whole number of nano units (Parse rounds
// up to 1n as upstream does) with a magnitude below 2^63 milli units, so its value in nano
// units fits a signed 128-bit integer exactly. pod_resources.cc sums requests in these
// units and converts once at the end, as upstream sums resource.Quantity values before
// calling MilliValue()/Value().
#pragma once

#include <cstdint>

#include "api/quantity.h"

namespace phalanx::api {

using Int128 = __int128;

struct QuantityInternal {
  // Value in nano units (value * 10^9), saturating at +-(2^126) for values that do not fit
  // (only reachable through FromValue/FromMilli with extreme inputs).
  static Int128 Nano(const Quantity& q);
  // The exact Quantity of `nano` nano units (inverse of Nano).
  static Quantity FromNano(Int128 nano);
};

// ceil(nano / 10^(9 - scale_exponent)) for scale_exponent 0 (Value) or 3 (MilliValue),
// rounded towards +infinity and clamped to the int64 range.
int64_t NanoToScaledCeil(Int128 nano, int32_t scale_exponent);

}  // namespace phalanx::api
