// Tests of the CEL device-selector subset (src/cel/cel.h).
//
// 1. CelUpstreamCompileTest: the table of k8s.io/dynamic-resource-allocation/cel/compile_test.go
//    (every case this subset supports; the rest are listed below with the reason).
// 2. Examples: selectors from the DRA drivers' published examples.
// 3. Rejected: malformed and unsupported expressions, each with its exact error and position.
// 4. Semantics: CEL language rules (error absorption, overflow, no int/double mixing, ...).
#include "cel/cel.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "cel/cel_internal.h"

namespace phalanx::cel {
namespace {

using ::testing::HasSubstr;

api::Quantity Q(const char* s) { return *api::Quantity::Parse(s); }

struct Case {
  std::string name;
  std::string expression;
  DeviceView device;
  std::string compile_error;  // substring of the compile error, "" = compiles
  std::string match_error;    // substring of the evaluation error, "" = no error
  bool match = false;
};

void RunCase(const Case& c) {
  SCOPED_TRACE(c.name + ": " + c.expression);
  auto sel = ParseSelector(c.expression, "");
  if (!c.compile_error.empty()) {
    ASSERT_FALSE(sel.ok()) << "compiled, expected error containing " << c.compile_error;
    EXPECT_THAT(std::string(sel.status().message()), HasSubstr(c.compile_error));
    return;
  }
  ASSERT_TRUE(sel.ok()) << sel.status().message();
  auto m = sel->Matches(c.device);
  if (!c.match_error.empty()) {
    ASSERT_FALSE(m.ok()) << "matched " << *m << ", expected error containing " << c.match_error;
    EXPECT_THAT(std::string(m.status().message()), HasSubstr(c.match_error));
    return;
  }
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(*m, c.match);
}

DeviceView Dev(std::string driver, std::map<std::string, AttributeValue> attrs = {},
               std::map<std::string, api::Quantity> capacity = {}) {
  DeviceView d;
  d.driver = std::move(driver);
  d.attributes = std::move(attrs);
  d.capacity = std::move(capacity);
  return d;
}

using A = AttributeValue;

// compile_test.go's `testcases`, ported. Not ported (list-type attributes, alpha
// DRAListTypeAttributes, are outside the subset): list-result-type-causes-match-error,
// includes-* (includes() comes with them, on scalar attributes too), list-of-*, macro-on-list-*,
// in-operator-on-list. allow_multiple_allocations_disabled (a feature gate this subset does not
// model: the field is always declared). "expensive" calls find(), which the subset rejects;
// CelSemantics.CostLimit runs the same nested loops without it. expectCost (the static cost
// estimate) has no counterpart: this evaluator enforces the runtime cost limit only.
std::vector<Case> UpstreamCases() {
  const std::string d = "dra.example.com";
  return {
      {"true", "true", {}, "", "", true},
      {"false", "false", {}, "", "", false},
      {"syntax-error", "?!", {}, "Syntax error", "", false},
      {"type-error", "1", {}, "must evaluate to bool or the unknown type, not int", "", false},
      {"runtime-error-lookup-identifier",
       R"(device.attributes["no-such-domain"].noSuchAttr.isGreaterThan(quantity("0")))",
       {},
       "",
       "no such key: noSuchAttr"},
      {"runtime-error-lookup-map",
       R"(device.attributes["no-such-domain"]["noSuchAttr"].isGreaterThan(quantity("0")))",
       {},
       "",
       "no such key: noSuchAttr"},
      {"domain-check-negative", R"("no-such-domain" in device.attributes)", {}, "", "", false},
      {"domain-check-positive", R"("dra.example.com" in device.attributes)",
       Dev("", {{"dra.example.com/something", A::Bool(true)}}), "", "", true},
      {"empty-driver-name", R"(device.driver == "")", {}, "", "", true},
      {"real-driver-name", R"(device.driver == "dra.example.com")", Dev(d), "", "", true},
      {"driver-name-qualifier", R"(device.attributes["dra.example.com"].name)",
       Dev(d, {{"name", A::Bool(true)}}), "", "", true},
      {"driver-name-qualifier-map-lookup", R"(device.attributes["dra.example.com"]["name"])",
       Dev(d, {{"name", A::Bool(true)}}), "", "", true},
      {"bind", R"(cel.bind(dra, device.attributes["dra.example.com"], dra.name))",
       Dev(d, {{"name", A::Bool(true)}}), "", "", true},
      {"qualified-attribute-name", R"(device.attributes["other.example.com"].name)",
       Dev(d, {{"other.example.com/name", A::Bool(true)}}), "", "", true},
      {"bool", R"(device.attributes["dra.example.com"].name)", Dev(d, {{"name", A::Bool(true)}}),
       "", "", true},
      {"int", R"(device.attributes["dra.example.com"].name > 0)", Dev(d, {{"name", A::Int(1)}}), "",
       "", true},
      {"string", R"(device.attributes["dra.example.com"].name == "fish")",
       Dev(d, {{"name", A::String("fish")}}), "", "", true},
      {"macro-exists-on-int", R"(device.attributes["dra.example.com"].name.exists(x, x > 0))",
       Dev(d, {{"name", A::Int(1)}}), "", "got 'types.Int', expected iterable type"},
      {"macro-exists-on-bool", R"(device.attributes["dra.example.com"].name.exists(x, x == true))",
       Dev(d, {{"name", A::Bool(true)}}), "", "got 'types.Bool', expected iterable type"},
      {"macro-exists-on-string",
       R"(device.attributes["dra.example.com"].name.exists(x, x == "fish"))",
       Dev(d, {{"name", A::String("fish")}}), "", "got 'types.String', expected iterable type"},
      {"version", R"(device.attributes["dra.example.com"].name.isGreaterThan(semver("0.0.1")))",
       Dev(d, {{"name", A::Version("1.0.0")}}), "", "", true},
      {"version_v",
       R"(device.attributes["dra.example.com"].name.isGreaterThan(semver("v0.0.1", true)) && isSemver("v1.0.0", true))",
       Dev(d, {{"name", A::Version("1.0.0")}}), "", "", true},
      {"macro-exists-on-version",
       R"(device.attributes["dra.example.com"].name.exists(x, x.isGreaterThan(semver("0.0.1"))))",
       Dev(d, {{"name", A::Version("1.0.0")}}), "", "got 'cel.Semver', expected iterable type"},
      {"quantity", R"(device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki")))",
       Dev(d, {}, {{"name", Q("1Mi")}}), "", "", true},
      {"check-positive",
       R"("name" in device.capacity["dra.example.com"] && device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki")))",
       Dev(d, {}, {{"name", Q("1Mi")}}), "", "", true},
      {"check-negative",
       R"(!("name" in device.capacity["dra.example.com"]) || device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki")))",
       {},
       "",
       "",
       true},
      {"all", R"(
device.capacity["dra.example.com"].quantity.isGreaterThan(quantity("1Ki")) &&
device.attributes["dra.example.com"].bool &&
device.attributes["dra.example.com"].int > 0 &&
device.attributes["dra.example.com"].string == "fish" &&
device.attributes["dra.example.com"].version.isGreaterThan(semver("0.0.1")) &&
device.capacity["dra.example.com"]["quantity"].isGreaterThan(quantity("1Ki")) &&
device.attributes["dra.example.com"]["bool"] &&
device.attributes["dra.example.com"]["int"] > 0 &&
device.attributes["dra.example.com"]["string"] == "fish" &&
device.attributes["dra.example.com"]["version"].isGreaterThan(semver("0.0.1"))
)",
       Dev(d,
           {{"bool", A::Bool(true)},
            {"int", A::Int(1)},
            {"string", A::String("fish")},
            {"version", A::Version("1.0.0")}},
           {{"quantity", Q("1Mi")}}),
       "", "", true},
      {"many",
       R"(device.attributes["dra.example.com"].a && device.attributes["dra.example.com"].b && device.attributes["dra.example.com"].c)",
       Dev(d, {{"a", A::Bool(true)}, {"b", A::Bool(true)}, {"c", A::Bool(true)}}), "", "", true},
      {"check_attribute_domains", R"(device.attributes.exists_one(x, x == "dra.example.com"))",
       Dev(d, {{"services", A::String("some_example_value")}}), "", "", true},
      {"check_attribute_ids",
       R"(device.attributes["dra.example.com"].exists_one(x, x == "services"))",
       Dev(d, {{"services", A::String("some_example_value")}}), "", "", true},
      {"split_attribute",
       R"(device.attributes["dra.example.com"].services.split("example").size() >= 2)",
       Dev(d, {{"services", A::String("some_example_value")}}), "", "", true},
      {"regexp_attribute", R"(device.attributes["dra.example.com"].services.matches("[^a]?sym"))",
       Dev(d, {{"services", A::String("asymetric")}}), "", "", true},
      {"check_capacity_domains", R"(device.capacity.exists_one(x, x == "dra.example.com"))",
       Dev(d, {}, {{"memory", Q("1Mi")}}), "", "", true},
      {"check_capacity_ids", R"(device.capacity["dra.example.com"].exists_one(x, x == "memory"))",
       Dev(d, {}, {{"memory", Q("1Mi")}}), "", "", true},
      {"allow_multiple_allocations", "device.allowMultipleAllocations == true",
       [&] {
         DeviceView v = Dev(d);
         v.allow_multiple_allocations = true;
         return v;
       }(),
       "", "", true},
      {"allow_multiple_allocations_default", "device.allowMultipleAllocations == false", Dev(d), "",
       "", true},
      // _false, _new and _enabled set the field to false explicitly (the last two in the
      // NewExpressions environment with DRAConsumableCapacity on, the field declared).
      {"allow_multiple_allocations_false", "device.allowMultipleAllocations == false", Dev(d), "",
       "", true},
      {"allow_multiple_allocations_new", "device.allowMultipleAllocations == false", Dev(d), "", "",
       true},
      {"allow_multiple_allocations_enabled", "device.allowMultipleAllocations == false", Dev(d), "",
       "", true},
  };
}

TEST(CelUpstreamCompileTest, Table) {
  for (const Case& c : UpstreamCases()) RunCase(c);
}

// Selectors published with DRA drivers, evaluated against devices shaped like the ones
// those drivers publish in their ResourceSlices.
TEST(CelExamples, DriverSelectors) {
  const DeviceView example_gpu =  // kubernetes-sigs/dra-example-driver, profile gpu
      Dev("gpu.dra-example-driver.sigs.k8s.io",
          {{"model", A::String("LATEST-GPU-MODEL")},
           {"driverVersion", A::Version("1.0.0")},
           {"index", A::Int(0)}},
          {{"memory", Q("80Gi")}});
  const DeviceView a100 = Dev("gpu.nvidia.com",
                              {{"productName", A::String("NVIDIA A100 80GB")},
                               {"type", A::String("gpu")},
                               {"cudaComputeCapability", A::Version("8.0.0")},
                               {"brand", A::String("Nvidia")}},
                              {{"memory", Q("80Gi")}});
  const DeviceView a10g = Dev(
      "gpu.nvidia.com",
      {{"productName", A::String("NVIDIA A10G")}, {"cudaComputeCapability", A::Version("8.6.0")}},
      {{"memory", Q("24Gi")}});
  const DeviceView mig =
      Dev("gpu.nvidia.com", {{"type", A::String("mig")}, {"profile", A::String("1g.5gb")}},
          {{"memory", Q("4864Mi")}});
  const DeviceView flex =
      Dev("gpu.intel.com", {{"family", A::String("Flex")}, {"model", A::String("Flex 170")}},
          {{"memory", Q("16Gi")}, {"millicores", Q("1k")}});
  const DeviceView nic = Dev("dra.net", {{"rdma", A::Bool(true)}, {"numaNode", A::Int(1)}});
  const std::vector<Case> cases = {
      // dra-example-driver demo/examples/cel-selector/cel-selector.yaml
      {"example model",
       "device.attributes['gpu.dra-example-driver.sigs.k8s.io'].model == 'LATEST-GPU-MODEL'",
       example_gpu, "", "", true},
      {"example memory",
       "device.capacity['gpu.dra-example-driver.sigs.k8s.io'].memory.compareTo(quantity('4Gi')) >= "
       "0",
       example_gpu, "", "", true},
      // NVIDIA k8s-dra-driver-gpu style selectors
      {"a100 product+memory",
       R"(device.attributes["gpu.nvidia.com"].productName == "NVIDIA A100 80GB"
          && device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("80Gi")) >= 0)",
       a100, "", "", true},
      {"a10g memory too small",
       R"(device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0)", a10g, "", "",
       false},
      {"a10g class",
       R"(device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].productName.matches(".*A10G.*"))",
       a10g, "", "", true},
      {"a100 is not a10g",
       R"(device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].productName.matches(".*A10G.*"))",
       a100, "", "", false},
      {"startsWith", R"(device.attributes["gpu.nvidia.com"].productName.startsWith("NVIDIA A100"))",
       a100, "", "", true},
      {"compute capability",
       R"(device.attributes["gpu.nvidia.com"].cudaComputeCapability.compareTo(semver("8.6.0")) >= 0)",
       a100, "", "", false},
      {"compute capability a10g",
       R"(device.attributes["gpu.nvidia.com"].cudaComputeCapability.compareTo(semver("8.6.0")) >= 0)",
       a10g, "", "", true},
      {"mig profile", "device.attributes['gpu.nvidia.com'].profile == '1g.5gb'", mig, "", "", true},
      {"mig type on full gpu", "device.attributes['gpu.nvidia.com'].type == 'mig'", a100, "", "",
       false},
      {"mig profile missing on gpu", "device.attributes['gpu.nvidia.com'].profile == '1g.5gb'",
       a100, "", "no such key: profile"},
      {"guarded profile",
       "has(device.attributes['gpu.nvidia.com'].profile) && "
       "device.attributes['gpu.nvidia.com'].profile == '1g.5gb'",
       a100, "", "", false},
      // Intel resource-drivers-for-gpu deployments/gpu/examples
      {"intel family", R"(device.attributes["gpu.intel.com"].family == 'Flex')", flex, "", "",
       true},
      {"intel memory", R"(device.capacity["gpu.intel.com"].memory.compareTo(quantity("4Gi")) >= 0)",
       flex, "", "", true},
      // DRANET
      {"dranet rdma", R"(device.attributes["dra.net"].rdma == true)", nic, "", "", true},
      // resourceapi.CELDeviceSelector's documentation
      {"doc bind",
       R"(cel.bind(dra, device.attributes["dra.example.com"], dra.someBool && dra.anotherBool))",
       Dev("dra.example.com", {{"someBool", A::Bool(true)}, {"anotherBool", A::Bool(false)}}), "",
       "", false},
      // Seen in the wild, not valid CEL: quantities are compared with compareTo().
      {"quantity >=", R"(device.capacity["gpu.nvidia.com"].memory >= quantity("40Gi"))", a100,
       "found no matching overload for '_>=_' applied to '(kubernetes.Quantity, "
       "kubernetes.Quantity)'",
       "", false},
  };
  for (const Case& c : cases) RunCase(c);
}

struct Rejected {
  std::string expression;
  std::string error;  // the full message, where = "ResourceClaim ns/c"
};

// Each malformed or unsupported expression fails to compile with this exact message.
TEST(CelRejected, ExactErrors) {
  const std::vector<Rejected> cases = {
      {"?!", "ResourceClaim ns/c: column 1: Syntax error: unexpected '?'"},
      {"", "ResourceClaim ns/c: column 1: Syntax error: unexpected end of expression"},
      {"device.driver = \"x\"",
       "ResourceClaim ns/c: column 15: Syntax error: token recognition error at: '=' (use '==')"},
      {"device.driver == 'x' & true",
       "ResourceClaim ns/c: column 22: Syntax error: token recognition error at: '&' (use '&&')"},
      {"(device.driver == 'x'",
       "ResourceClaim ns/c: column 22: Syntax error: missing ')' at end of expression"},
      {"device.driver == 'x",
       "ResourceClaim ns/c: column 18: Syntax error: unterminated string literal"},
      {"device.attributes[\"a\"].",
       "ResourceClaim ns/c: column 24: Syntax error: expected a field or method name after '.'"},
      // cel.HomogeneousAggregateLiterals (the Kubernetes base environment): one element type.
      {"device.driver in ['a', 1]",
       "ResourceClaim ns/c: column 24: expected type 'string' but found 'int'"},
      {"[[1], [2u]].size() == 2",
       "ResourceClaim ns/c: column 7: expected type 'list(int)' but found 'list(uint)'"},
      {"device.attributes['gpu.nvidia.com'].memory >= 80.GiB",
       "ResourceClaim ns/c: column 50: type 'int' does not support field selection"},
      {"1 + 1", "ResourceClaim ns/c: column 3: must evaluate to bool or the unknown type, not int"},
      {"device.driver",
       "ResourceClaim ns/c: column 8: must evaluate to bool or the unknown type, not string"},
      {"devices.driver == 'x'",
       "ResourceClaim ns/c: column 1: undeclared reference to 'devices' (the only variable of a "
       "device selector is 'device')"},
      {"device.name == 'gpu-0'",
       "ResourceClaim ns/c: column 8: undefined field 'name' (a device has 'driver', 'attributes', "
       "'capacity' and 'allowMultipleAllocations')"},
      {"device.driver.foo('x')", "ResourceClaim ns/c: column 15: undeclared reference to 'foo'"},
      {"device.driver.indexOf('x') == 0",
       "ResourceClaim ns/c: column 15: function 'indexOf' is not supported by this CEL subset (see "
       "docs/dra-cel.md)"},
      {"timestamp('2024-01-01T00:00:00Z') < timestamp('2025-01-01T00:00:00Z')",
       "ResourceClaim ns/c: column 1: function 'timestamp' is not supported by this CEL subset "
       "(see docs/dra-cel.md)"},
      {"1 + 1.0 == 2.0",
       "ResourceClaim ns/c: column 3: found no matching overload for '_+_' applied to '(int, "
       "double)'"},
      {"'a' == 1",
       "ResourceClaim ns/c: column 5: found no matching overload for '_==_' applied to '(string, "
       "int)'"},
      {"device.driver.startsWith(1)",
       "ResourceClaim ns/c: column 15: found no matching overload for 'string.startsWith' applied "
       "to '(int)'"},
      {"quantity('1Gi') > quantity('1Mi')",
       "ResourceClaim ns/c: column 17: found no matching overload for '_>_' applied to "
       "'(kubernetes.Quantity, kubernetes.Quantity)'"},
      {"device.driver && true",
       "ResourceClaim ns/c: column 8: found no matching overload for '_&&_': operand of type "
       "'string' is not bool"},
      {"{'a': 1}.size() == 1",
       "ResourceClaim ns/c: column 1: map literals ('{...}') are not supported by this CEL subset"},
      {"b'abc' == b'abc'",
       "ResourceClaim ns/c: column 1: bytes literals are not supported by this CEL subset"},
      {"[1, 2].map(x, x * 2).size() == 2",
       "ResourceClaim ns/c: column 8: the 'map' macro is not supported by this CEL subset"},
      {"[1, 2].filter(x, x > 1).size() == 1",
       "ResourceClaim ns/c: column 8: the 'filter' macro is not supported by this CEL subset"},
      {"device.attributes[?'a'].hasValue()",
       "ResourceClaim ns/c: column 18: optional syntax ('?.' and '[?') is not supported by this "
       "CEL subset"},
      {"has(device)",
       "ResourceClaim ns/c: column 5: invalid argument to has() macro: it takes one field "
       "selection, e.g. has(a.b)"},
      {"[1].all(1, true)", "ResourceClaim ns/c: column 9: all(): argument must be a simple name"},
      {"[1].exists(x)",
       "ResourceClaim ns/c: column 5: exists() macro takes a variable name (or two: index or key, "
       "and value) and a condition"},
      {"[1].all(x, x, true)", "ResourceClaim ns/c: column 12: duplicate variable name: x"},
      // A library function of Kubernetes' environment under a namespace.
      {"strings.quote(device.driver) == 'x'",
       "ResourceClaim ns/c: column 9: function 'strings.quote' is not supported by this CEL subset "
       "(see docs/dra-cel.md)"},
      {"sets.contains([1], [1])",
       "ResourceClaim ns/c: column 6: function 'sets.contains' is not supported by this CEL subset "
       "(see docs/dra-cel.md)"},
      {"[1].transformList(i, v, v * 2).size() == 1",
       "ResourceClaim ns/c: column 5: the 'transformList' macro is not supported by this CEL "
       "subset"},
      {"device.driver.matches('[a-')",
       "ResourceClaim ns/c: column 23: error parsing regexp: missing closing ]: `[a-`"},
      {"device.driver.matches('(?i)nvidia')",
       "ResourceClaim ns/c: column 23: error parsing regexp: flags and named groups ('(?i)', "
       "'(?P<name>') are not supported"},
      {"9223372036854775808 > 0",
       "ResourceClaim ns/c: column 1: invalid int literal: out of range"},
      {"device.driver == 'a' ||\n  device.driver = 'b'",
       "ResourceClaim ns/c: line 2, column 17: Syntax error: token recognition error at: '=' (use "
       "'==')"},
      {"if == 1", "ResourceClaim ns/c: column 1: reserved identifier: if"},
      {"'\\q' == 'q'",
       "ResourceClaim ns/c: column 2: Syntax error: invalid escape sequence in string literal"},
      {"device.driver == 'x' # comment",
       "ResourceClaim ns/c: column 22: Syntax error: token recognition error at: '#'"},
      {"size(device.attributes) == 1 ? 1 : 'a'",
       "ResourceClaim ns/c: column 30: found no matching overload for '_?_:_' applied to '(bool, "
       "int, string)'"},
      {"1.exists(x, true)",
       "ResourceClaim ns/c: column 3: expression of type 'int' cannot be range of a comprehension "
       "(must be list, map, or dynamic)"},
      {"'wörld' == devic",  // columns count characters, not bytes
       "ResourceClaim ns/c: column 12: undeclared reference to 'devic' (the only variable of a "
       "device selector is 'device')"},
      {"cel.index(1)",
       "ResourceClaim ns/c: column 5: cel.index() is not supported by this CEL subset"},
  };
  for (const Rejected& r : cases) {
    SCOPED_TRACE(r.expression);
    auto sel = ParseSelector(r.expression, "ResourceClaim ns/c");
    ASSERT_FALSE(sel.ok()) << "compiled";
    EXPECT_EQ(std::string(sel.status().message()), r.error);
    EXPECT_EQ(sel.status().code(), absl::StatusCode::kInvalidArgument);
  }
  EXPECT_GE(cases.size(), 20u);
}

TEST(CelRejected, Limits) {
  std::string deep(kMaxNesting + 1, '(');
  deep += "true";
  deep += std::string(kMaxNesting + 1, ')');
  auto sel = ParseSelector(deep, "DeviceClass gpu");
  ASSERT_FALSE(sel.ok());
  EXPECT_EQ(std::string(sel.status().message()),
            "DeviceClass gpu: column 251: expression nested deeper than 250 levels");

  std::string long_chain = "device.driver == 'x'";
  while (long_chain.size() <= kMaxExpressionLength) long_chain += " || device.driver == 'x'";
  sel = ParseSelector(long_chain, "DeviceClass gpu");
  ASSERT_FALSE(sel.ok());
  EXPECT_THAT(std::string(sel.status().message()),
              HasSubstr("DeviceClass gpu: Too long: may not be more than 10240 bytes"));

  // A long || chain under the limit is one flat node, not 400 nested ones.
  std::string flat = "device.driver == 'x'";
  for (int i = 0; i < 400; ++i) flat += "||false";
  EXPECT_TRUE(ParseSelector(flat, "").ok());

  std::string sum = "0";
  for (int i = 0; i < 300; ++i) sum += "+1";
  sel = ParseSelector(sum + " > 0", "");
  ASSERT_FALSE(sel.ok());
  EXPECT_THAT(std::string(sel.status().message()),
              HasSubstr("expression nested deeper than 250 levels"));

  sel = ParseSelector("device.driver == '\xff'", "x");
  ASSERT_FALSE(sel.ok());
  EXPECT_EQ(std::string(sel.status().message()), "x: column 19: invalid UTF-8");
}

absl::StatusOr<bool> Eval(const std::string& expr, const DeviceView& d = {}) {
  auto sel = ParseSelector(expr, "test");
  if (!sel.ok()) return sel.status();
  return sel->Matches(d);
}

void ExpectTrue(const std::string& expr, const DeviceView& d = {}) {
  auto r = Eval(expr, d);
  ASSERT_TRUE(r.ok()) << expr << ": " << r.status().message();
  EXPECT_TRUE(*r) << expr;
}
void ExpectFalse(const std::string& expr, const DeviceView& d = {}) {
  auto r = Eval(expr, d);
  ASSERT_TRUE(r.ok()) << expr << ": " << r.status().message();
  EXPECT_FALSE(*r) << expr;
}
void ExpectError(const std::string& expr, const std::string& error, const DeviceView& d = {}) {
  auto r = Eval(expr, d);
  ASSERT_FALSE(r.ok()) << expr << " evaluated to " << *r;
  EXPECT_EQ(std::string(r.status().message()), error) << expr;
}

const DeviceView kDev = Dev("d.example.com",
                            {{"int", A::Int(5)},
                             {"big", A::Int(9223372036854775807)},
                             {"str", A::String("Hello, Wörld")},
                             {"flag", A::Bool(true)},
                             {"ver", A::Version("1.2.3-rc.1")},
                             {"other.com/x", A::Int(7)}},
                            {{"mem", Q("1536Mi")}, {"cores", Q("1500m")}});

TEST(CelSemantics, LogicalOperatorsAbsorbErrors) {
  // cel-spec: && and || are commutative and an error loses to a deciding value.
  ExpectTrue("device.attributes['d.example.com'].missing || true", kDev);
  ExpectTrue("true || device.attributes['d.example.com'].missing", kDev);
  ExpectFalse("device.attributes['d.example.com'].missing && false", kDev);
  ExpectError("device.attributes['d.example.com'].missing && true", "no such key: missing", kDev);
  ExpectError("device.attributes['d.example.com'].missing || false", "no such key: missing", kDev);
  ExpectError("!device.attributes['d.example.com'].missing", "no such key: missing", kDev);
  // A dynamic non-bool operand is an error, never true.
  ExpectError("device.attributes['d.example.com'].int && true",
              "no such overload: _&&_ applied to int", kDev);
  ExpectError("device.attributes['d.example.com'].str",
              "CEL result of type string could not be converted to bool", kDev);
  ExpectTrue(
      "device.attributes['d.example.com'].flag ? true : device.attributes['d.example.com'].missing",
      kDev);
  ExpectFalse(
      "!device.attributes['d.example.com'].flag ? device.attributes['d.example.com'].missing : "
      "false",
      kDev);
}

TEST(CelSemantics, IntegersAndDoubles) {
  ExpectError("device.attributes['d.example.com'].big + 1 > 0", "integer overflow", kDev);
  ExpectError("-9223372036854775808 - 1 < 0", "integer overflow");
  ExpectTrue("-9223372036854775808 < 0");
  ExpectError("1 / (device.attributes['d.example.com'].int - 5) == 0", "division by zero", kDev);
  ExpectError("1 % (device.attributes['d.example.com'].int - 5) == 0", "modulus by zero", kDev);
  ExpectTrue("7 / 2 == 3 && -7 / 2 == -3 && -7 % 3 == -1");
  ExpectTrue("0x10 == 16 && 3u + 4u == 7u && 1.5 * 2.0 == 3.0 && 1e3 == 1000.0");
  ExpectError("0u - 1u == 0u", "unsigned integer overflow");
  // No implicit conversion: a dynamic int plus a double fails at runtime...
  ExpectError("device.attributes['d.example.com'].int + 1.0 > 0.0",
              "no such overload: _+_ applied to (int, double)", kDev);
  // ...but comparisons and equality across numeric types are defined.
  ExpectTrue(
      "device.attributes['d.example.com'].int > 4.5 && device.attributes['d.example.com'].int == "
      "5.0",
      kDev);
  ExpectTrue("double(device.attributes['d.example.com'].int) + 0.5 == 5.5", kDev);
  ExpectTrue("int('42') == 42 && string(42) == '42' && uint(3) == 3u");
  ExpectError("int('4x') == 4", "type conversion error from 'string' to 'int'");
  ExpectTrue(".5 + .5 == 1.0");
  // A dynamic receiver of the wrong type: a runtime error naming the function and types.
  ExpectError("device.attributes['d.example.com'].int.startsWith('x')",
              "no such overload: startsWith(int, string)", kDev);
}

// Conversions as cel-go's ConvertToType, with Go's strconv and fmt rules underneath.
// Cases named Type/... are cel-go's common/types tables (TestDoubleConvertToType,
// TestIntConvertToType, TestUintConvertToType, TestStringConvertToType); those named Go/...
// state the Go library rule cel-go relies on (strconv.ParseInt / ParseUint / ParseFloat /
// ParseBool, fmt "%g"). The expression compares the conversion with the expected value, or
// fails with the expected error.
TEST(CelSemantics, Conversions) {
  struct Conv {
    std::string name;
    std::string expr;   // bool; or, when error is set, an expression that fails
    std::string error;  // the whole message
  };
  const std::string int_overflow = "integer overflow";
  const std::string uint_overflow = "unsigned integer overflow";
  const std::vector<Conv> cases = {
      {"Type/DoubleToDouble", "double(-4.2) == -4.2"},
      {"Type/DoubleToInt", "int(4.2) == 4"},
      {"Type/DoubleToIntNaN", "int(0.0 / 0.0) == 0", int_overflow},
      {"Type/DoubleToIntPosInf", "int(1.0 / 0.0) == 0", int_overflow},
      {"Type/DoubleToIntPosOverflow", "int(9223372036854775807.0) == 0", int_overflow},
      {"Type/DoubleToIntNegOverflow", "int(-9223372036854775808.0) == 0", int_overflow},
      {"Type/DoubleToUint", "uint(4.7) == 4u"},
      {"Type/DoubleToUintNaN", "uint(0.0 / 0.0) == 0u", uint_overflow},
      {"Type/DoubleToUintPosInf", "uint(1.0 / 0.0) == 0u", uint_overflow},
      {"Type/DoubleToUintPosOverflow", "uint(18446744073709551615.0) == 0u", uint_overflow},
      {"Type/DoubleToUintNegOverflow", "uint(-0.1) == 0u", uint_overflow},
      {"Type/DoubleToString", "string(4.5) == '4.5'"},
      {"Type/IntToInt", "int(4) == 4"},
      {"Type/IntToUint", "uint(4) == 4u"},
      {"Type/IntToUintOverflow", "uint(-1) == 0u", uint_overflow},
      {"Type/IntToDouble", "double(4) == 4.0"},
      {"Type/IntToString", "string(-4) == '-4'"},
      {"Type/UintToUint", "uint(4u) == 4u"},
      {"Type/UintToInt", "int(4u) == 4"},
      {"Type/UintToIntOverflow", "int(9223372036854775808u) == 0", int_overflow},
      {"Type/UintToDouble", "double(4u) == 4.0"},
      {"Type/UintToString", "string(4u) == '4'"},
      {"Type/StringToInt", "int('-1') == -1"},
      {"Type/StringToBool", "bool('false') == false"},
      {"Type/StringToUint", "uint('1') == 1u"},
      {"Type/StringToDouble", "double('2.5') == 2.5"},
      {"Type/StringToString", "string('goodbye') == 'goodbye'"},
      {"Go/ParseInt/plus_sign", "int('+1') == 1"},
      {"Go/ParseInt/space", "int(' 1') == 1", "type conversion error from 'string' to 'int'"},
      {"Go/ParseInt/hex", "int('0x10') == 16", "type conversion error from 'string' to 'int'"},
      {"Go/ParseUint/plus_sign", "uint('+1') == 1u",
       "type conversion error from 'string' to 'uint'"},
      {"Go/ParseFloat/space", "double(' 1.5') == 1.5",
       "type conversion error from 'string' to 'double'"},
      {"Go/ParseFloat/overflow", "double('1e400') > 0.0",
       "type conversion error from 'string' to 'double'"},
      {"Go/ParseFloat/underflow", "double('1e-400') == 0.0"},
      {"Go/ParseFloat/hex", "double('0x1p-2') == 0.25 && double('-0X1.8P1') == -3.0"},
      {"Go/ParseFloat/hex_needs_exponent", "double('0x1') == 1.0",
       "type conversion error from 'string' to 'double'"},
      {"Go/ParseFloat/infinity", "double('Infinity') == double('+inf') && double('-INF') < 0.0"},
      {"Go/ParseFloat/nan", "double('NaN') != double('nan')"},
      {"Go/ParseFloat/signed_nan", "double('+NaN') != 0.0",
       "type conversion error from 'string' to 'double'"},
      {"Go/ParseBool/spellings",
       "bool('1') && bool('t') && bool('T') && bool('TRUE') && bool('True') && !bool('0') && "
       "!bool('f') && !bool('F') && !bool('FALSE') && !bool('False')"},
      {"Go/ParseBool/mixed_case", "bool('TrUe')", "type conversion error from 'string' to 'bool'"},
      {"Go/%g/shortest", "string(0.1) == '0.1' && string(1.0) == '1' && string(-0.0) == '-0'"},
      {"Go/%g/exponent_at_least_6",
       "string(123456.0) == '123456' && string(1234567.0) == '1.234567e+06' && string(1e21) == "
       "'1e+21'"},
      {"Go/%g/exponent_below_-4",
       "string(0.0001) == '0.0001' && string(0.00001) == '1e-05' && string(5e-324) == '5e-324'"},
      {"Go/%g/special",
       "string(1.0 / 0.0) == '+Inf' && string(-1.0 / 0.0) == '-Inf' && string(0.0 / 0.0) == 'NaN'"},
  };
  for (const Conv& c : cases) {
    SCOPED_TRACE(c.name);
    if (c.error.empty()) {
      ExpectTrue(c.expr);
    } else {
      ExpectError(c.expr, c.error);
    }
  }
}

TEST(CelSemantics, InHasAndMaps) {
  ExpectTrue(
      "'int' in device.attributes['d.example.com'] && !('nope' in "
      "device.attributes['d.example.com'])",
      kDev);
  ExpectTrue("device.attributes['other.com'].x == 7", kDev);  // qualified name -> its own domain
  ExpectTrue(
      "has(device.attributes['d.example.com'].int) && "
      "!has(device.attributes['d.example.com'].nope)",
      kDev);
  ExpectFalse("has(device.attributes['unknown.com'].int)", kDev);
  ExpectFalse("'unknown.com' in device.attributes", kDev);
  ExpectTrue("size(device.attributes['unknown.com']) == 0", kDev);  // unknown domain = empty map
  ExpectTrue("2 in [1, 2, 3] && !(4 in [1, 2, 3]) && 'b' in ['a', 'b']");
  ExpectTrue("device.attributes['d.example.com'].int in [1.0, 5.0]",
             kDev);  // dyn: numeric equality
  ExpectTrue(
      "[1, 2, 3].all(x, x > 0) && [1, 2, 3].exists(x, x == 2) && [1, 2, 3].exists_one(x, x > 2)");
  ExpectFalse("[1, 2, 3].exists_one(x, x > 1)");
  ExpectTrue("[1, 2, 3].existsOne(x, x > 2) && ![1, 2, 3].existsOne(x, x > 1)");
  // Two variables (ext.TwoVarComprehensions): a list's index and element, a map's key and
  // value.
  ExpectTrue(
      "[10, 20, 30].all(i, v, v == (i + 1) * 10) && [10, 20].exists(i, v, i == 1 && v == 20)");
  ExpectTrue(
      "[1, 1, 2].existsOne(i, v, v == 1 && i > 0) && [1, 1].exists_one(i, v, v == 1) == false");
  ExpectTrue(
      "device.attributes['d.example.com'].exists(k, v, k == 'int' && v == 5) && "
      "device.capacity.all(domain, m, size(m) > 0)",
      kDev);
  ExpectError("[0, 1].exists(i, v, 1 / v == 7)", "division by zero");
  ExpectError("[1, 2][2] == 1", "index out of range: 2");
  ExpectTrue("[1, 2][1] == 2 && [[1], [2, 3]][1].size() == 2 && [1] + [2] == [1, 2]");
  ExpectTrue("device.attributes['d.example.com'].size() == 5 && size(device.capacity) == 1", kDev);
  // all() absorbs an error when another element decides false.
  ExpectFalse("[0, 1].all(x, 1 / x > 5)");
  ExpectError("[1, 0].all(x, 1 / x < 5)", "division by zero");
  ExpectTrue("[0, 1].exists(x, 1 / x == 1)");
  ExpectTrue("cel.bind(a, device.attributes['d.example.com'], a.int == 5 && a.flag)", kDev);
}

TEST(CelSemantics, Strings) {
  ExpectTrue("device.attributes['d.example.com'].str.size() == 12", kDev);  // characters, not bytes
  ExpectTrue(
      "device.attributes['d.example.com'].str.contains('Wö') && "
      "device.attributes['d.example.com'].str.endsWith('rld')",
      kDev);
  ExpectTrue("'NVIDIA A100'.lowerAscii() == 'nvidia a100' && 'a-ö'.upperAscii() == 'A-ö'");
  ExpectTrue("'a,b,,c'.split(',') == ['a', 'b', '', 'c'] && 'ab'.split('') == ['a', 'b']");
  ExpectTrue("'abc' < 'abd' && 'b' > 'abc' && 'x' + 'y' == 'xy'");
  ExpectTrue(R"('\x41\u00e9\n' == 'Aé' + "\012" && r'\d' == '\\d' && '''a'b''' == "a'b")");
  ExpectTrue("matches('abc', '^a.c$') && !'abcd'.matches('^a.c$')");
}

TEST(CelSemantics, Regex) {
  struct R {
    const char* text;
    const char* pattern;
    bool match;
  };
  const std::vector<R> cases = {
      {"NVIDIA A100-SXM4-80GB", "A100", true},
      {"NVIDIA A100-SXM4-80GB", "^A100", false},
      {"NVIDIA A100-SXM4-80GB", "^NVIDIA (A|H)100", true},
      {"NVIDIA H200", "^NVIDIA (A|H)100", false},
      {"gpu-12", "^gpu-[0-9]+$", true},
      {"gpu-12a", "^gpu-\\d+$", false},
      {"1g.5gb", "^[1-7]g\\.[0-9]+gb$", true},
      {"1gx5gb", "^[1-7]g\\.[0-9]+gb$", false},
      {"abab", "^(ab){2}$", true},
      {"ababab", "^(ab){2}$", false},
      {"aaa", "^a{2,3}$", true},
      {"a", "^a{2,}$", false},
      {"x y", "\\s", true},
      {"xy", "^\\w+$", true},
      {"x-y", "^[^-]+$", false},
      {"", "^$", true},
      {"line1\nline2", "^line2", false},
      {"a.b", "a\\.b", true},
      {"axb", "a\\.b", false},
      {"wörld", "^w.rld$", true},  // '.' is one character, not one byte
      {"abc", "(?:x|b)c", true},
      {"ab", "a|", true},
  };
  for (const R& r : cases) {
    auto re = Regex::Compile(r.pattern);
    ASSERT_TRUE(re.ok()) << r.pattern << ": " << re.status().message();
    EXPECT_EQ((*re)->Search(r.text), r.match) << r.text << " ~ " << r.pattern;
  }
  for (const char* bad :
       {"(", ")", "a**", "*a", "[z-a]", "\\b", "a{1001}", "[[:alpha:]]", "\\1", "a\\"}) {
    EXPECT_FALSE(Regex::Compile(bad).ok()) << bad;
  }
  // Linear time: a pattern that makes backtracking engines explode.
  const std::string text(5000, 'a');
  auto re = Regex::Compile("(a*)*(a|b)*c");
  ASSERT_TRUE(re.ok());
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE((*re)->Search(text));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  // A non-literal pattern is compiled at evaluation time; a bad one is an evaluation error.
  ExpectError("device.attributes['d.example.com'].str.matches(device.driver + '(')",
              "error parsing regexp: missing closing ): `d.example.com(`", kDev);
}

TEST(CelSemantics, Quantity) {
  ExpectTrue("device.capacity['d.example.com'].mem.compareTo(quantity('1.5Gi')) == 0", kDev);
  ExpectTrue("quantity('1536Mi') == quantity('1.5Gi') && quantity('1k') != quantity('1Ki')");
  ExpectTrue(
      "quantity('50M').compareTo(quantity('50Mi')) == -1 && "
      "quantity('50Mi').compareTo(quantity('50M')) == 1");
  ExpectTrue(
      "quantity('150Mi').isGreaterThan(quantity('100Mi')) && "
      "quantity('50M').isLessThan(quantity('100M'))");
  ExpectTrue("quantity('1n').isGreaterThan(quantity('0'))");  // exact, not rounded to milli
  ExpectTrue("device.capacity['d.example.com'].cores.asApproximateFloat() == 1.5", kDev);
  ExpectError("device.capacity['d.example.com'].cores.asInteger() == 1",
              "cannot convert value to integer", kDev);
  ExpectTrue(
      "!device.capacity['d.example.com'].cores.isInteger() && quantity('2k').asInteger() == 2000",
      kDev);
  ExpectTrue(
      "quantity('1Gi').add(quantity('1Gi')) == quantity('2Gi') && quantity('1').add(2) == "
      "quantity('3')");
  ExpectTrue("quantity('1Gi').sub(quantity('1536Mi')).sign() == -1 && sign(quantity('0')) == 0");
  ExpectTrue("isQuantity('1.5Gi') && !isQuantity('1.5 Gi')");
  // A bad literal fails at evaluation, so a short-circuit can still skip it (as upstream).
  ExpectFalse("false && quantity('1.5 Gi').sign() == 1");
  ExpectError("quantity('1.5 Gi').sign() == 1",
              "quantities must match the regular expression "
              "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
}

TEST(CelSemantics, Semver) {
  ExpectTrue(
      "semver('1.2.3').major() == 1 && semver('1.2.3').minor() == 2 && semver('1.2.3').patch() == "
      "3");
  ExpectTrue(
      "semver('1.2.3').compareTo(semver('1.2.3')) == 0 && "
      "semver('1.2.3').compareTo(semver('2.0.0')) == -1");
  ExpectTrue("semver('1.0.0-alpha').isLessThan(semver('1.0.0-alpha.1'))");
  ExpectTrue("semver('1.0.0-alpha.1').isLessThan(semver('1.0.0-alpha.beta'))");
  ExpectTrue("semver('1.0.0-beta.2').isLessThan(semver('1.0.0-beta.11'))");
  ExpectTrue("semver('1.0.0-rc.1').isLessThan(semver('1.0.0'))");
  ExpectTrue("semver('1.0.0+build.1') == semver('1.0.0+build.2')");
  ExpectTrue("semver('v1.0', true) == semver('1.0.0') && semver('01.01.01', true).minor() == 1");
  ExpectTrue(
      "isSemver('1.0.0') && !isSemver('v1.0') && isSemver('v1.0', true) && !isSemver('01.0.0')");
  ExpectTrue("device.attributes['d.example.com'].ver.isLessThan(semver('1.2.3'))", kDev);
  ExpectError("semver('1.0').major() == 1", "No Major.Minor.Patch elements found");
  ExpectError("semver('1.02.0').major() == 1",
              "Minor number must not contain leading zeroes \"02\"");
  ExpectError("semver('1.0', true) == semver('1.0-rc', true)",
              "short version cannot contain PreRelease/Build meta data");
  // A VersionValue attribute that is not a semantic version fails the device, as upstream.
  ExpectError(
      "true",
      "attribute bad: parse semantic version: Invalid character(s) found in patch number \"x\"",
      Dev("d", {{"bad", A::Version("1.0.x")}}));
}

TEST(CelSemantics, CostLimit) {
  // compile_test.go "expensive", without find(): 10^7 iterations exceed the 10^6 budget.
  const std::string l = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]";
  std::string expr = l + ".all(x, " + l + ".all(y, " + l + ".all(z, " + l + ".all(z2, " + l +
                     ".all(z3, " + l + ".all(z4, " + l + ".all(z5, 1 < 100)))))))";
  auto r = Eval(expr);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(std::string(r.status().message()), "operation cancelled: actual cost limit exceeded");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted);
  // An error absorbed by || does not hide the cancellation.
  r = Eval(expr + " || true");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(std::string(r.status().message()), "operation cancelled: actual cost limit exceeded");
  // String doubling through cel.bind is bounded by the cost of the copies.
  std::string grow = "cel.bind(s0, 'abcdefghij', ";
  for (int i = 1; i <= 40; ++i)
    grow += "cel.bind(s" + std::to_string(i) + ", s" + std::to_string(i - 1) + " + s" +
            std::to_string(i - 1) + ", ";
  grow += "size(s40) > 0" + std::string(41, ')');
  r = Eval(grow);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(std::string(r.status().message()), "operation cancelled: actual cost limit exceeded");
}

TEST(CelSemantics, SelectorIsReusable) {
  auto sel = ParseSelector("device.attributes['gpu.example.com'].index < 2", "DeviceClass gpu");
  ASSERT_TRUE(sel.ok());
  for (int64_t i = 0; i < 4; ++i) {
    auto m = sel->Matches(Dev("gpu.example.com", {{"index", A::Int(i)}}));
    ASSERT_TRUE(m.ok());
    EXPECT_EQ(*m, i < 2);
  }
  // One prepared device, several selectors.
  auto prepared = PreparedDevice::Prepare(Dev("gpu.example.com", {{"index", A::Int(1)}}));
  ASSERT_TRUE(prepared.ok());
  auto other = ParseSelector("device.attributes['gpu.example.com'].index > 1", "");
  ASSERT_TRUE(other.ok());
  EXPECT_TRUE(*sel->Matches(*prepared));
  EXPECT_FALSE(*other->Matches(*prepared));
  EXPECT_FALSE(PreparedDevice::Prepare(Dev("d", {{"v", A::Version("1")}})).ok());
  auto m = sel->Matches(Dev("gpu.example.com"));
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(std::string(m.status().message()), "no such key: index");
}

}  // namespace
}  // namespace phalanx::cel
