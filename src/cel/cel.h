// CEL device selectors of Dynamic Resource Allocation (resource.k8s.io DeviceSelector.cel),
// evaluated by a small evaluator of the subset that selectors use. No C++ CEL library is
// packaged for Debian, so this module has its own lexer, parser, type checker and
// evaluator; docs/dra-cel.md lists what is supported.
//
// Semantics copied from:
//   - k8s.io/dynamic-resource-allocation/cel/compile.go: the `device` variable (driver,
//     attributes, capacity), the domain rule (an attribute name without "domain/" belongs
//     to the driver's domain; a lookup of an unknown domain yields an empty map, so
//     device.attributes["x.com"].y fails with "no such key: y"), results must be bool, the
//     cost limit (resourceapi.CELSelectorExpressionMaxCost = 1,000,000) and length limit
//     (CELSelectorExpressionMaxLength = 10 Ki).
//   - k8s.io/apiserver/pkg/cel/library/quantity.go and semverlib.go: quantity() and semver().
//   - the CEL language definition (cel-spec doc/langdef.md): short-circuit && and || that
//     absorb errors, `in`, has(), ?:, int overflow errors, no implicit int/double mixing.
//
// Usage: compile once, evaluate against many devices.
//   auto sel = cel::ParseSelector(expr, "ResourceClaim ns/c: spec.devices.requests[0]"
//                                 ".selectors[0].cel.expression");
//   if (!sel.ok()) { /* sel.status().message(): "<where>: column 12: undeclared ..." */ }
//   absl::StatusOr<bool> m = sel->Matches(device);  // error: the device does not match
//   // several selectors, one device: PreparedDevice::Prepare(device) once, Matches(prepared)
//
// Thread safety: a Selector is immutable after ParseSelector; Matches is const and may run
// concurrently on several threads.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "api/quantity.h"
#include "api/status.h"

namespace phalanx::cel {

// Upstream's limits (k8s.io/api/resource/v1 types.go): selector length in bytes and the
// runtime cost budget. kMaxNesting is this evaluator's bound on syntactic nesting (cel-go's
// parser stops at a recursion depth of 250 too).
inline constexpr size_t kMaxExpressionLength = 10 * 1024;
inline constexpr uint64_t kMaxCost = 1000000;
inline constexpr int kMaxNesting = 250;

// One device attribute value (resourceapi.DeviceAttribute): exactly one of int, bool,
// string or version (a semantic version string, parsed when the expression reads it).
struct AttributeValue {
  enum class Kind { kInt, kBool, kString, kVersion };
  Kind kind = Kind::kBool;
  int64_t int_value = 0;
  bool bool_value = false;
  std::string string_value;  // kString and kVersion

  static AttributeValue Int(int64_t v);
  static AttributeValue Bool(bool v);
  static AttributeValue String(std::string v);
  static AttributeValue Version(std::string v);
};

// The device as the expression sees it (upstream's cel.Device). Attribute and capacity
// names are resourceapi.QualifiedName: "domain/id", or "id" in the driver's domain.
struct DeviceView {
  std::string driver;
  std::map<std::string, AttributeValue> attributes;
  std::map<std::string, api::Quantity> capacity;
  // device.allowMultipleAllocations (DRAConsumableCapacity, Kubernetes 1.34); false when
  // the device does not set it.
  bool allow_multiple_allocations = false;
};

struct Node;   // the checked expression (cel_internal.h)
struct Value;  // a CEL value (cel_internal.h)

// A device converted once for evaluation by many selectors (the domain maps built, version
// attributes parsed), e.g. one device of a ResourceSlice checked against a DeviceClass's
// and a request's selectors. Immutable, cheap to copy, safe to share between threads.
class PreparedDevice {
 public:
  // InvalidArgumentError "attribute NAME: parse semantic version: ..." for a VersionValue
  // that is not a semantic version (compile.go getAttributeValue).
  [[nodiscard]] static absl::StatusOr<PreparedDevice> Prepare(const DeviceView& device);

 private:
  friend class Selector;
  std::shared_ptr<const Value> value_;
};

// A compiled selector. Copyable (shares the immutable tree).
class Selector {
 public:
  // true / false, or an error that makes the device not match, e.g. "no such key: model",
  // "CEL result of type int could not be converted to bool", "operation cancelled: actual
  // cost limit exceeded", "integer overflow" (cel-go's wording).
  [[nodiscard]] absl::StatusOr<bool> Matches(const DeviceView& device) const;
  // The same against a prepared device (no per-call conversion).
  [[nodiscard]] absl::StatusOr<bool> Matches(const PreparedDevice& device) const;
  const std::string& expression() const { return expression_; }

 private:
  friend absl::StatusOr<Selector> ParseSelector(std::string_view, std::string_view);
  std::string expression_;
  std::shared_ptr<const Node> root_;
  int slots_ = 0;  // macro variables
};

// Parses and type-checks `expression`. InvalidArgumentError "<where>: column C: <what>"
// (1-based column counted in characters; "line L, column C" when the expression has
// several lines) for a syntax error, an unsupported construct, an unknown function or
// field, a type error (e.g. "found no matching overload for '_+_' applied to '(int,
// double)'"), a result that is not bool, or an expression beyond the limits above.
// `where` names the claim or class and field; it may be empty.
[[nodiscard]] absl::StatusOr<Selector> ParseSelector(std::string_view expression,
                                                     std::string_view where);

}  // namespace phalanx::cel
