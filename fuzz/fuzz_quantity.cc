// Fuzz target: resource.Quantity parsing (api::Quantity::Parse).
//
// Input: the quantity text. Checks the documented contract of src/api/quantity.h: Parse
// either fails with a non-empty message or yields a value whose accessors agree:
// Value() == ceil(MilliValue() / 1000) (both round towards +inf, quantity.go), the sign
// agrees, and MilliValue() survives FromMilli().
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "api/quantity.h"

namespace {

int64_t CeilDiv1000(int64_t m) {
  const int64_t q = m / 1000;
  return (m % 1000 > 0) ? q + 1 : q;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  phalanx::api::Quantity q;
  std::string error;
  if (!phalanx::api::MoveOrMessage(phalanx::api::Quantity::Parse(text), &q, &error)) {
    if (error.empty()) std::abort();  // a rejection must say why
    return 0;
  }
  const int64_t milli = q.MilliValue();
  const int64_t value = q.Value();
  if (value != CeilDiv1000(milli)) std::abort();
  if (q.IsZero() && (milli != 0 || q.IsNegative())) std::abort();
  if (q.IsNegative() && milli > 0) std::abort();
  if (phalanx::api::Quantity::FromMilli(milli).MilliValue() != milli) std::abort();
  return 0;
}
