#include "schema/schema.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>

#include "schema/schema_testing.h"

namespace phalanx::schema {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// A small OpenAPI v3 document in kube-apiserver's shape: every $ref wrapped in allOf, the
// meta/v1 and resource types the real documents define.
json TestOpenApi() {
  return json::parse(R"({
  "openapi": "3.0.0",
  "components": {"schemas": {
    "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta": {"type": "object", "properties": {
      "name": {"type": "string"}, "namespace": {"type": "string"},
      "labels": {"type": "object", "additionalProperties": {"type": "string", "default": ""}},
      "managedFields": {"type": "array", "items": {"allOf": [{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry"}], "default": {}}}}},
    "io.k8s.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry": {"type": "object", "properties": {
      "manager": {"type": "string"},
      "fieldsV1": {"allOf": [{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1"}]}}},
    "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1": {"type": "object"},
    "io.k8s.apimachinery.pkg.runtime.RawExtension": {"type": "object"},
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time": {"type": "string", "format": "date-time"},
    "io.k8s.apimachinery.pkg.api.resource.Quantity": {"oneOf": [{"type": "string"}, {"type": "number"}]},
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": {"format": "int-or-string", "oneOf": [{"type": "integer"}, {"type": "string"}]},
    "io.k8s.apimachinery.pkg.apis.meta.v1.Condition": {"type": "object", "required": ["type", "status", "lastTransitionTime", "reason", "message"], "properties": {
      "type": {"type": "string", "default": ""}, "status": {"type": "string", "default": ""},
      "lastTransitionTime": {"allOf": [{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Time"}]},
      "reason": {"type": "string", "default": ""}, "message": {"type": "string", "default": ""}}},
    "com.example.v1.Empty": {"type": "object"},
    "com.example.v1.Item": {"type": "object", "required": ["name"], "properties": {
      "name": {"type": "string", "default": ""}, "count": {"type": "integer", "format": "int32"}}},
    "com.example.v1.WidgetSpec": {"type": "object", "required": ["size"], "properties": {
      "replicas": {"type": "integer", "format": "int32"},
      "size": {"allOf": [{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.api.resource.Quantity"}]},
      "port": {"allOf": [{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.util.intstr.IntOrString"}]},
      "when": {"allOf": [{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Time"}]},
      "raw": {"allOf": [{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.runtime.RawExtension"}]},
      "empty": {"allOf": [{"$ref": "#/components/schemas/com.example.v1.Empty"}]},
      "selector": {"type": "object", "additionalProperties": {"type": "string", "default": ""}},
      "items": {"type": "array", "items": {"allOf": [{"$ref": "#/components/schemas/com.example.v1.Item"}], "default": {}},
                "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                "x-kubernetes-patch-strategy": "merge", "x-kubernetes-patch-merge-key": "name"},
      "tags": {"type": "array", "items": {"type": "string", "default": ""}, "x-kubernetes-list-type": "set"},
      "plain": {"type": "array", "items": {"allOf": [{"$ref": "#/components/schemas/com.example.v1.Item"}], "default": {}}}}},
    "com.example.v1.WidgetStatus": {"type": "object", "properties": {
      "conditions": {"type": "array", "items": {"allOf": [{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Condition"}], "default": {}},
                     "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"]}}},
    "com.example.v1.Widget": {"type": "object", "required": ["spec"],
      "x-kubernetes-group-version-kind": [{"group": "example.com", "version": "v1", "kind": "Widget"}],
      "properties": {
        "apiVersion": {"type": "string"}, "kind": {"type": "string"},
        "metadata": {"allOf": [{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}], "default": {}},
        "spec": {"allOf": [{"$ref": "#/components/schemas/com.example.v1.WidgetSpec"}], "default": {}},
        "status": {"allOf": [{"$ref": "#/components/schemas/com.example.v1.WidgetStatus"}], "default": {}}}}
  }}})");
}

// A CRD (apiextensions.k8s.io/v1) using the structural-schema extensions.
json TestCrd() {
  const char* yaml = R"(
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.example.org}
spec:
  group: example.org
  names: {kind: Gadget, plural: gadgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          apiVersion: {type: string}
          kind: {type: string}
          metadata: {type: object}
          spec:
            type: object
            required: [minMember]
            properties:
              minMember: {type: integer, format: int32, minimum: 1}
              budget:
                anyOf: [{type: integer}, {type: string}]
                x-kubernetes-int-or-string: true
                pattern: '^[0-9]+%?$'
              extra:
                type: object
                x-kubernetes-preserve-unknown-fields: true
                properties:
                  level: {type: integer}
              template:
                type: object
                x-kubernetes-embedded-resource: true
                properties:
                  spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
              note: {type: string, nullable: true}
              mode: {type: string, enum: [Strict, NonStrict]}
              closed: {type: object}
              rule:
                type: string
                x-kubernetes-validations: [{rule: "self.size() > 0", message: "non-empty"}]
          status:
            type: object
            properties:
              phase: {type: string, enum: [Pending, Running]}
              running: {type: integer, format: int32, minimum: 0}
              scheduleStartTime: {type: string, format: date-time}
  - name: v0
    served: false
    storage: false
    schema: {openAPIV3Schema: {type: object}}
)";
  return YamlToJson(YAML::Load(yaml));
}

class SchemaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(set_.AddOpenApi(TestOpenApi(), "test-openapi.json").ok());
    ASSERT_TRUE(set_.AddCrd(TestCrd(), "test-crd.yaml").ok());
  }
  Result Check(const std::string& body, WriteKind kind = WriteKind::kObject) {
    return set_.Validate(json::parse(body), kind);
  }
  Result CheckAs(const std::string& body, const GroupVersionKind& gvk, WriteKind kind) {
    return set_.Validate(json::parse(body), gvk, kind);
  }
  static bool Has(const Result& r, const std::string& path, const std::string& text) {
    for (const auto& v : r.violations) {
      if (v.path == path && v.message.find(text) != std::string::npos) return true;
    }
    return false;
  }
  SchemaSet set_;
  const GroupVersionKind widget_{"example.com", "v1", "Widget"};
  const GroupVersionKind gadget_{"example.org", "v1", "Gadget"};
};

constexpr const char* kWidget = R"({"apiVersion": "example.com/v1", "kind": "Widget",
  "metadata": {"name": "w", "labels": {"a": "b"},
               "managedFields": [{"manager": "m", "fieldsV1": {"f:spec": {".": {}}}}]},
  "spec": {"replicas": 3, "size": "1500m", "port": "http", "when": "2026-01-02T03:04:05Z",
           "raw": {"anything": [1, {"goes": true}]}, "empty": {}, "selector": {"k": "v"},
           "items": [{"name": "a", "count": 1}, {"name": "b"}], "tags": ["x", "y"]},
  "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "Placed",
             "message": "", "lastTransitionTime": "2026-01-02T03:04:05.123Z"}]}})";

TEST_F(SchemaTest, AValidBuiltinObjectPasses) {
  const Result r = Check(kWidget);
  EXPECT_TRUE(r.ok()) << r.ToString();
  EXPECT_GT(r.values_checked, 25);
}

TEST_F(SchemaTest, ARenamedFieldFails) {
  json w = json::parse(kWidget);
  w["spec"]["replica"] = w["spec"]["replicas"];
  w["spec"].erase("replicas");
  const Result r = set_.Validate(w);
  ASSERT_EQ(r.violations.size(), 1u) << r.ToString();
  EXPECT_EQ(r.violations[0].path, "spec.replica");
  EXPECT_NE(r.violations[0].message.find("unknown field \"replica\""), std::string::npos);
}

TEST_F(SchemaTest, ARenamedFieldInsideAListItemFails) {
  json w = json::parse(kWidget);
  w["status"]["conditions"][0]["lastTransition"] = "2026-01-02T03:04:05Z";
  w["status"]["conditions"][0].erase("lastTransitionTime");
  const Result r = set_.Validate(w);
  EXPECT_TRUE(Has(r, "status.conditions[0].lastTransition", "unknown field")) << r.ToString();
  EXPECT_TRUE(Has(r, "status.conditions[0].lastTransitionTime", "required field missing"))
      << r.ToString();
}

TEST_F(SchemaTest, TypesFormatsAndQuantities) {
  json w = json::parse(kWidget);
  w["spec"]["replicas"] = "3";
  w["spec"]["size"] = "1.5 cores";
  w["spec"]["port"] = 1.5;
  w["spec"]["when"] = "yesterday";
  w["metadata"]["labels"]["n"] = 1;
  const Result r = set_.Validate(w);
  EXPECT_TRUE(Has(r, "spec.replicas", "must be of type integer, got string")) << r.ToString();
  EXPECT_TRUE(Has(r, "spec.size", "quantity syntax")) << r.ToString();
  EXPECT_TRUE(Has(r, "spec.port", "integer or a string")) << r.ToString();
  EXPECT_TRUE(Has(r, "spec.when", "RFC 3339")) << r.ToString();
  EXPECT_TRUE(Has(r, "metadata.labels[n]", "must be of type string")) << r.ToString();
  EXPECT_EQ(r.violations.size(), 5u) << r.ToString();
  w = json::parse(kWidget);
  w["spec"]["replicas"] = 2147483648LL;
  EXPECT_TRUE(Has(set_.Validate(w), "spec.replicas", "does not fit in int32"));
  w["spec"]["replicas"] = 3.0;  // Go's decoder refuses a float for an int32
  EXPECT_TRUE(Has(set_.Validate(w), "spec.replicas", "must be of type integer, got number"));
}

TEST_F(SchemaTest, EmptyStructTakesNoFieldsButRawExtensionTakesAny) {
  json w = json::parse(kWidget);
  w["spec"]["empty"] = {{"x", 1}};
  const Result r = set_.Validate(w);
  ASSERT_EQ(r.violations.size(), 1u) << r.ToString();
  EXPECT_EQ(r.violations[0].path, "spec.empty.x");
}

TEST_F(SchemaTest, RequiredFieldsOnlyForWholeObjects) {
  const std::string spec_without_size = R"({"spec": {"replicas": 1}})";
  EXPECT_TRUE(Has(CheckAs(spec_without_size, widget_, WriteKind::kObject), "spec.size",
                  "required field missing"));
  EXPECT_TRUE(CheckAs(spec_without_size, widget_, WriteKind::kMergePatch).ok());
  // A merge patch replaces lists: their items are whole objects.
  const Result r = CheckAs(R"({"status": {"conditions": [{"type": "Ready"}]}})", widget_,
                           WriteKind::kMergePatch);
  EXPECT_TRUE(Has(r, "status.conditions[0].status", "required field missing")) << r.ToString();
}

TEST_F(SchemaTest, NullDeletesInAPatchAndIsPrunedFromACrd) {
  EXPECT_TRUE(CheckAs(R"({"spec": {"replicas": null}})", widget_, WriteKind::kMergePatch).ok());
  EXPECT_TRUE(CheckAs(R"({"status": {"running": null}})", gadget_, WriteKind::kMergePatch).ok());
  const Result r =
      CheckAs(R"({"spec": {"minMember": 1, "mode": null}})", gadget_, WriteKind::kObject);
  EXPECT_TRUE(Has(r, "spec.mode", "not nullable")) << r.ToString();
  EXPECT_TRUE(
      CheckAs(R"({"spec": {"minMember": 1, "note": null}})", gadget_, WriteKind::kObject).ok());
  // Built-in types: Go's decoder leaves a null field unset (e.g. lastProbeTime: null).
  json w = json::parse(kWidget);
  w["spec"]["when"] = nullptr;
  EXPECT_TRUE(set_.Validate(w).ok());
  // A null list item is never right.
  EXPECT_TRUE(Has(CheckAs(R"({"spec": {"tags": [null]}})", widget_, WriteKind::kMergePatch),
                  "spec.tags[0]", "must not be null"));
}

TEST_F(SchemaTest, StrategicMergePatchKeysAndDirectives) {
  EXPECT_TRUE(
      CheckAs(R"({"spec": {"items": [{"name": "a", "count": 2}, {"name": "b", "$patch": "delete"}],
                                   "$setElementOrder/items": [{"name": "a"}]}})",
              widget_, WriteKind::kStrategicMergePatch)
          .ok());
  const Result no_key =
      CheckAs(R"({"spec": {"items": [{"count": 2}]}})", widget_, WriteKind::kStrategicMergePatch);
  EXPECT_TRUE(Has(no_key, "spec.items[0]", "merge key \"name\"")) << no_key.ToString();
  EXPECT_TRUE(Has(CheckAs(R"({"spec": {"$setElementOrder/itemz": []}})", widget_,
                          WriteKind::kStrategicMergePatch),
                  "spec.$setElementOrder/itemz", "unknown field \"itemz\""));
  EXPECT_TRUE(
      Has(CheckAs(R"({"spec": {"$frobnicate": 1}})", widget_, WriteKind::kStrategicMergePatch),
          "spec.$frobnicate", "unknown strategic merge patch directive"));
  // Directives are not fields of a merge patch or an object.
  EXPECT_TRUE(Has(CheckAs(R"({"spec": {"$patch": "replace"}})", widget_, WriteKind::kMergePatch),
                  "spec.$patch", "unknown field"));
  // Lists without a merge strategy are replaced: whole items.
  EXPECT_TRUE(Has(
      CheckAs(R"({"spec": {"plain": [{"count": 1}]}})", widget_, WriteKind::kStrategicMergePatch),
      "spec.plain[0].name", "required field missing"));
}

TEST_F(SchemaTest, ListTypesRefuseDuplicates) {
  json w = json::parse(kWidget);
  w["spec"]["items"].push_back({{"name", "a"}});
  w["spec"]["tags"].push_back("x");
  w["status"]["conditions"].push_back(w["status"]["conditions"][0]);
  const Result r = set_.Validate(w);
  EXPECT_TRUE(Has(r, "spec.items[2]", "duplicate entry")) << r.ToString();
  EXPECT_TRUE(Has(r, "spec.tags[2]", "duplicate value")) << r.ToString();
  EXPECT_TRUE(Has(r, "status.conditions[1]", "duplicate entry")) << r.ToString();
}

TEST_F(SchemaTest, ConditionsFollowMetaV1Validation) {
  json w = json::parse(kWidget);
  w["status"]["conditions"][0]["status"] = "Yes";
  w["status"]["conditions"][0]["reason"] = "has spaces";
  const Result r = set_.Validate(w);
  EXPECT_TRUE(Has(r, "status.conditions[0].status", "supported values")) << r.ToString();
  EXPECT_TRUE(Has(r, "status.conditions[0].reason", "does not match")) << r.ToString();
}

TEST_F(SchemaTest, CrdRootImpliesApiVersionKindAndObjectMeta) {
  const Result ok = Check(R"({"apiVersion": "example.org/v1", "kind": "Gadget",
    "metadata": {"name": "g", "labels": {"a": "b"}}, "spec": {"minMember": 2}})");
  EXPECT_TRUE(ok.ok()) << ok.ToString();
  const Result bad = Check(R"({"apiVersion": "example.org/v1", "kind": "Gadget",
    "metadata": {"name": "g", "label": {"a": "b"}}, "spec": {"minMember": 2}, "extra": 1})");
  EXPECT_TRUE(Has(bad, "metadata.label", "unknown field")) << bad.ToString();
  EXPECT_TRUE(Has(bad, "extra", "the API server prunes it")) << bad.ToString();
}

TEST_F(SchemaTest, CrdValueValidations) {
  const Result r = CheckAs(R"({"spec": {"minMember": 0, "mode": "Loose", "budget": "ten"},
                               "status": {"phase": "Done", "running": -1,
                                          "scheduleStartTime": "now"}})",
                           gadget_, WriteKind::kObject);
  EXPECT_TRUE(Has(r, "spec.minMember", "greater than or equal to 1")) << r.ToString();
  EXPECT_TRUE(Has(r, "spec.mode", "supported values: \"Strict\", \"NonStrict\"")) << r.ToString();
  EXPECT_TRUE(Has(r, "spec.budget", "pattern")) << r.ToString();
  EXPECT_TRUE(Has(r, "status.phase", "supported values")) << r.ToString();
  EXPECT_TRUE(Has(r, "status.running", "greater than or equal to 0")) << r.ToString();
  EXPECT_TRUE(Has(r, "status.scheduleStartTime", "RFC 3339")) << r.ToString();
  EXPECT_TRUE(
      CheckAs(R"({"spec": {"minMember": 1, "budget": 5}})", gadget_, WriteKind::kObject).ok());
  EXPECT_TRUE(
      Has(CheckAs(R"({"spec": {"minMember": 1, "budget": true}})", gadget_, WriteKind::kObject),
          "spec.budget", "int-or-string"));
}

TEST_F(SchemaTest, PreserveUnknownFieldsKeepsUnknownButChecksKnown) {
  EXPECT_TRUE(CheckAs(R"({"spec": {"minMember": 1, "extra": {"level": 2, "free": {"x": [1]}}}})",
                      gadget_, WriteKind::kObject)
                  .ok());
  EXPECT_TRUE(Has(CheckAs(R"({"spec": {"minMember": 1, "extra": {"level": "high"}}})", gadget_,
                          WriteKind::kObject),
                  "spec.extra.level", "must be of type integer"));
  // Without the extension an object without properties prunes everything.
  EXPECT_TRUE(
      Has(CheckAs(R"({"spec": {"minMember": 1, "closed": {"x": 1}}})", gadget_, WriteKind::kObject),
          "spec.closed.x", "unknown field"));
}

TEST_F(SchemaTest, EmbeddedResourceCarriesTypeAndObjectMeta) {
  EXPECT_TRUE(CheckAs(R"({"spec": {"minMember": 1, "template": {"apiVersion": "v1", "kind": "Pod",
                        "metadata": {"name": "p"}, "spec": {"anything": 1}}}})",
                      gadget_, WriteKind::kObject)
                  .ok());
  const Result r = CheckAs(R"({"spec": {"minMember": 1, "template": {"metadata": {"nam": "p"}}}})",
                           gadget_, WriteKind::kObject);
  EXPECT_TRUE(Has(r, "spec.template.apiVersion", "required")) << r.ToString();
  EXPECT_TRUE(Has(r, "spec.template.kind", "required")) << r.ToString();
  EXPECT_TRUE(Has(r, "spec.template.metadata.nam", "unknown field")) << r.ToString();
}

TEST_F(SchemaTest, CelRulesAreCountedNotEvaluated) {
  const Result r =
      CheckAs(R"({"spec": {"minMember": 1, "rule": ""}})", gadget_, WriteKind::kObject);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.cel_rules_not_evaluated, 1);
}

TEST_F(SchemaTest, UnknownKindsAndMismatchedTypeMeta) {
  const Result unknown = Check(R"({"apiVersion": "example.com/v1alpha1", "kind": "Widget"})");
  ASSERT_EQ(unknown.violations.size(), 1u);
  EXPECT_NE(unknown.violations[0].message.find("no schema for example.com/v1alpha1 Widget"),
            std::string::npos);
  // A version the CRD does not serve is not served.
  EXPECT_FALSE(set_.Has({"example.org", "v0", "Gadget"}));
  EXPECT_TRUE(
      Has(CheckAs(R"({"apiVersion": "example.com/v2", "kind": "Widget", "spec": {"size": "1"}})",
                  widget_, WriteKind::kObject),
          "apiVersion", "validated as example.com/v1"));
}

TEST_F(SchemaTest, MergePatchedResultIsCheckedWhole) {
  const json base = json::parse(kWidget);
  EXPECT_TRUE(
      set_.ValidateMergePatched(base, json::parse(R"({"spec": {"replicas": 5}})"), widget_).ok());
  // Deleting a required field passes as a patch, but not as what the server keeps.
  const Result r =
      set_.ValidateMergePatched(base, json::parse(R"({"spec": {"size": null}})"), widget_);
  EXPECT_TRUE(Has(r, "spec.size", "(in the patched object) required field missing"))
      << r.ToString();
}

TEST_F(SchemaTest, FieldPathsListTheSchema) {
  const auto paths = set_.FieldPaths(widget_);
  for (const char* p : {"spec.replicas", "spec.items[].name", "spec.selector",
                        "status.conditions[].lastTransitionTime", "metadata.labels"}) {
    EXPECT_NE(std::find(paths.begin(), paths.end(), p), paths.end()) << p;
  }
  const auto crd = set_.FieldPaths(gadget_);
  EXPECT_NE(std::find(crd.begin(), crd.end(), "status.scheduleStartTime"), crd.end());
  EXPECT_TRUE(set_.FieldPaths({"x", "v1", "Y"}).empty());
}

TEST(SchemaFiles, GitSymlinkCheckedOutAsTextIsFollowed) {
  const fs::path dir = fs::temp_directory_path() / ("phalanx_schema_" + std::to_string(getpid()));
  fs::create_directories(dir / "crds" / "real");
  {
    std::ofstream(dir / "crds" / "real" / "crd.yaml") << YAML::Dump(YAML::Load(TestCrd().dump()));
    std::ofstream(dir / "crds" / "example.org_gadgets.yaml") << "real/crd.yaml";
    std::ofstream(dir / "crds" / "example.net_gizmos.yaml") << "../missing/crd.yaml";
  }
  SchemaSet set;
  ASSERT_TRUE(set.AddCrdDir((dir / "crds").string()).ok());
  EXPECT_TRUE(set.Has({"example.org", "v1", "Gadget"}));
  const Result r = set.Validate(json::parse(R"({"status": {}})"), {"example.net", "v1", "Gizmo"},
                                WriteKind::kMergePatch);
  ASSERT_EQ(r.violations.size(), 1u);
  EXPECT_NE(r.violations[0].message.find("git symbolic link checked out as text, to "
                                         "../missing/crd.yaml, which does not exist"),
            std::string::npos)
      << r.ToString();
  fs::remove_all(dir);
}

TEST(SchemaFiles, YamlScalarsFollowTheCoreSchema) {
  const json j = YamlToJson(YAML::Load(
      "{a: 1, b: '1', c: true, d: 'true', e: ~, f: 1.5, g: abc, h: -7, i: 0x1f, j: \"\"}"));
  EXPECT_EQ(j["a"], 1);
  EXPECT_EQ(j["b"], "1");
  EXPECT_EQ(j["c"], true);
  EXPECT_EQ(j["d"], "true");
  EXPECT_TRUE(j["e"].is_null());
  EXPECT_EQ(j["f"], 1.5);
  EXPECT_EQ(j["g"], "abc");
  EXPECT_EQ(j["h"], -7);
  EXPECT_EQ(j["i"], 31);
  EXPECT_EQ(j["j"], "");
}

TEST(SchemaGvk, ParsesAndPrints) {
  auto g = GroupVersionKind::Parse("scheduling.k8s.io/v1alpha2/PodGroup");
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->String(), "scheduling.k8s.io/v1alpha2 PodGroup");
  auto core = GroupVersionKind::Parse("v1/Pod");
  ASSERT_TRUE(core.ok());
  EXPECT_EQ(core->ApiVersion(), "v1");
  EXPECT_FALSE(GroupVersionKind::Parse("Pod").ok());
}

// ---- Against the real 1.36 documents and the projects' CRDs ----

const std::string kFixtures = std::string(PHALANX_UPSTREAM_DIR) + "/k8s-api-fixtures/v1.36.0";

// Upstream's own round-trip fixtures validate: the validator agrees with the API's
// authors. Their placeholder strings ("statusValue") only break the enums the API
// server's validation code enforces.
TEST(SchemaUpstream, The136FixturesValidate) {
  PHALANX_UPSTREAM_SCHEMAS(schemas);
  int validated = 0;
  for (const auto& e : fs::directory_iterator(kFixtures)) {
    const std::string name = e.path().filename().string();
    if (e.path().extension() != ".json" || name.find("after_roundtrip") != std::string::npos) {
      continue;
    }
    auto obj = ReadJsonOrYaml(e.path().string());
    ASSERT_TRUE(obj.ok()) << obj.status();
    const GroupVersionKind gvk = GroupVersionKind::FromObject(*obj);
    if (!schemas->Has(gvk)) continue;
    const Result r = schemas->Validate(*obj, gvk);
    for (const auto& v : r.violations) {
      EXPECT_NE(v.message.find("unsupported value \""), std::string::npos)
          << name << ": " << v.ToString();
    }
    ++validated;
  }
  // core/v1, apps, batch, policy, resource v1 / v1alpha3, scheduling v1 / v1alpha2,
  // storage, coordination and events kinds with a fixture.
  EXPECT_GE(validated, 40);
}

TEST(SchemaUpstream, DraftWorkloadFieldNamesFail) {
  PHALANX_UPSTREAM_SCHEMAS(schemas);
  auto pg = ReadJsonOrYaml(kFixtures + "/scheduling.k8s.io.v1alpha2.PodGroup.json");
  ASSERT_TRUE(pg.ok()) << pg.status();
  (*pg)["status"]["conditions"][0]["status"] = "True";
  ASSERT_TRUE(IsValid(*schemas, *pg, GroupVersionKind::FromObject(*pg)));
  json draft = *pg;
  draft["spec"]["schedulingConstraints"] = {{"topologyConstraints", {{{"topologyKey", "zone"}}}}};
  const Result r = schemas->Validate(draft);
  ASSERT_EQ(r.violations.size(), 1u) << r.ToString();
  EXPECT_EQ(r.violations[0].path, "spec.schedulingConstraints.topologyConstraints");
  // The version the drafts named is not served.
  EXPECT_FALSE(schemas->Has({"scheduling.k8s.io", "v1alpha1", "Workload"}));
  EXPECT_TRUE(schemas->Has({"scheduling.k8s.io", "v1alpha2", "Workload"}));
}

TEST(SchemaUpstream, CrdStatusFieldsArePruned) {
  PHALANX_UPSTREAM_SCHEMAS(schemas);
  const GroupVersionKind volcano{"scheduling.volcano.sh", "v1beta1", "PodGroup"};
  EXPECT_TRUE(IsValid(*schemas, json::parse(R"({"status": {"phase": "Running", "running": 2}})"),
                      volcano, WriteKind::kMergePatch));
  const Result r =
      schemas->Validate(json::parse(R"({"status": {"phase": "Scheduled", "scheduled": 2}})"),
                        volcano, WriteKind::kMergePatch);
  EXPECT_EQ(r.violations.size(), 2u) << r.ToString();
  const GroupVersionKind kai{"scheduling.run.ai", "v2alpha2", "PodGroup"};
  EXPECT_TRUE(schemas->Has(kai)) << schemas->SourceOf(kai);
  EXPECT_TRUE(IsValid(*schemas, json::parse(R"({"status": {"schedulingConditions": [
      {"type": "NotReady", "status": "True", "nodePool": "default",
       "reasons": [{"reason": "r", "message": "m"}]}]}})"),
                      kai, WriteKind::kMergePatch));
}

}  // namespace
}  // namespace phalanx::schema
