// Fuzz target: DRA CEL device selectors (cel/cel.h): lexer, parser, type checker, regex
// compiler (matches() patterns) and evaluator.
//
// Input: the expression text. It is compiled once and evaluated against three fixed
// devices that carry every attribute type (int, bool, string, version), capacities, a
// second domain and an invalid version. Checks the documented contract: ParseSelector
// either fails with a message that names the place ("fuzz: ") or yields a selector whose
// Matches returns a bool or an error with a non-empty message; evaluating twice gives the
// same answer, directly and through a PreparedDevice (no hidden state); nothing crashes, leaks,
// recurses without bound or runs past the cost limit.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "cel/cel.h"

namespace {

using phalanx::cel::AttributeValue;
using phalanx::cel::DeviceView;

std::vector<DeviceView> Devices() {
  DeviceView gpu;
  gpu.driver = "gpu.example.com";
  gpu.attributes = {{"model", AttributeValue::String("A100")},
                    {"index", AttributeValue::Int(3)},
                    {"big", AttributeValue::Int(9223372036854775807)},
                    {"mig", AttributeValue::Bool(true)},
                    {"driverVersion", AttributeValue::Version("1.2.3-rc.1+b")},
                    {"other.example.com/numa", AttributeValue::Int(-1)}};
  gpu.capacity = {{"memory", *phalanx::api::Quantity::Parse("80Gi")},
                  {"cores", *phalanx::api::Quantity::Parse("1500m")}};
  DeviceView empty;
  DeviceView bad = gpu;
  bad.attributes["broken"] = AttributeValue::Version("not-a-version");
  bad.allow_multiple_allocations = true;
  return {gpu, empty, bad};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<DeviceView>* const kDevices = new std::vector<DeviceView>(Devices());
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto sel = phalanx::cel::ParseSelector(text, "fuzz");
  if (!sel.ok()) {
    if (sel.status().message().substr(0, 6) != "fuzz: ") std::abort();  // names the place
    return 0;
  }
  for (const DeviceView& d : *kDevices) {
    const auto first = sel->Matches(d);
    const auto prepared = phalanx::cel::PreparedDevice::Prepare(d);
    const auto second = prepared.ok() ? sel->Matches(*prepared) : prepared.status();
    if (first.ok() != second.ok()) std::abort();
    if (first.ok()) {
      if (*first != *second) std::abort();
    } else if (first.status().message().empty() || first.status() != second.status()) {
      std::abort();
    }
  }
  return 0;
}
