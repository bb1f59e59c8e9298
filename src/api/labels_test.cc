// Label and node selector validation/matching (labels.Requirement semantics,
// metav1 ValidateLabelSelector, core ValidateNodeSelectorTerm, nodeaffinity matching).
#include "api/labels.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "api/labels_internal.h"

namespace phalanx::api {
namespace {

LabelSelectorRequirement LReq(std::string key, std::string op, std::vector<std::string> values) {
  return LabelSelectorRequirement{std::move(key), std::move(op), std::move(values)};
}
NodeSelectorRequirement NReq(std::string key, std::string op, std::vector<std::string> values) {
  return NodeSelectorRequirement{std::move(key), std::move(op), std::move(values)};
}

const Labels kLabels = {{"app", "web"}, {"tier", "frontend"}, {"gpu-count", "4"}, {"zone", "a"}};

TEST(LabelSelectorTest, Matching) {
  struct Case {
    std::string name;
    LabelSelector sel;
    bool want;
  };
  const std::vector<Case> cases = {
      {"empty selector matches everything", {}, true},
      {"matchLabels equal", {{{"app", "web"}}, {}}, true},
      {"matchLabels different value", {{{"app", "db"}}, {}}, false},
      {"matchLabels missing key", {{{"missing", "x"}}, {}}, false},
      {"In match", {{}, {LReq("tier", "In", {"backend", "frontend"})}}, true},
      {"In no match", {{}, {LReq("tier", "In", {"backend"})}}, false},
      {"In absent key", {{}, {LReq("nokey", "In", {"x"})}}, false},
      {"NotIn match", {{}, {LReq("tier", "NotIn", {"backend"})}}, true},
      {"NotIn no match", {{}, {LReq("tier", "NotIn", {"frontend"})}}, false},
      {"NotIn absent key matches", {{}, {LReq("nokey", "NotIn", {"x"})}}, true},
      {"Exists", {{}, {LReq("app", "Exists", {})}}, true},
      {"Exists absent", {{}, {LReq("nokey", "Exists", {})}}, false},
      {"DoesNotExist absent key matches", {{}, {LReq("nokey", "DoesNotExist", {})}}, true},
      {"DoesNotExist present", {{}, {LReq("app", "DoesNotExist", {})}}, false},
      {"requirements are ANDed",
       {{{"app", "web"}}, {LReq("tier", "In", {"frontend"}), LReq("zone", "NotIn", {"a"})}},
       false},
      {"Gt never matches in a label selector", {{}, {LReq("gpu-count", "Gt", {"1"})}}, false},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(LabelSelectorMatches(c.sel, kLabels), c.want) << c.name;
  }
}

TEST(LabelSelectorTest, Validation) {
  struct Case {
    std::string name;
    LabelSelector sel;
    std::string error;  // "" = valid
  };
  const std::vector<Case> cases = {
      {"empty", {}, ""},
      {"all operators",
       {{{"app", "web"}},
        {LReq("a", "In", {"x"}), LReq("b", "NotIn", {"y", "z"}), LReq("c", "Exists", {}),
         LReq("example.com/d", "DoesNotExist", {})}},
       ""},
      {"Gt rejected",
       {{}, {LReq("a", "In", {"x"}), LReq("n", "Gt", {"1"})}},
       "matchExpressions[1].operator: Unsupported value: \"Gt\": supported values: "
       "\"DoesNotExist\", \"Exists\", \"In\", \"NotIn\""},
      {"Lt rejected",
       {{}, {LReq("n", "Lt", {"1"})}},
       "matchExpressions[0].operator: Unsupported value: \"Lt\": supported values: "
       "\"DoesNotExist\", \"Exists\", \"In\", \"NotIn\""},
      {"lowercase operator rejected",
       {{}, {LReq("n", "in", {"1"})}},
       "matchExpressions[0].operator: Unsupported value: \"in\""},
      {"In needs values",
       {{}, {LReq("a", "In", {})}},
       "matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or "
       "'NotIn'"},
      {"NotIn needs values",
       {{}, {LReq("a", "NotIn", {})}},
       "matchExpressions[0].values: Required"},
      {"Exists takes no values",
       {{}, {LReq("a", "Exists", {"x"})}},
       "matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' "
       "or 'DoesNotExist'"},
      {"DoesNotExist takes no values",
       {{}, {LReq("a", "DoesNotExist", {"x"})}},
       "matchExpressions[0].values: Forbidden"},
      {"bad key",
       {{}, {LReq("-a", "Exists", {})}},
       "matchExpressions[0].key: Invalid value: \"-a\""},
      {"bad value",
       {{}, {LReq("a", "In", {"ok", "not ok"})}},
       "matchExpressions[0].values[1]: Invalid value: \"not ok\""},
      {"bad matchLabels key",
       {{{"a/b/c", "x"}}, {}},
       "matchLabels.a/b/c: Invalid value: \"a/b/c\""},
      {"bad matchLabels value", {{{"a", "-x"}}, {}}, "matchLabels.a: Invalid value: \"-x\""},
  };
  for (const Case& c : cases) {
    std::string err;
    const bool ok = OkOrMessage(ValidateLabelSelector(c.sel), &err);
    if (c.error.empty()) {
      EXPECT_TRUE(ok) << c.name << ": " << err;
    } else {
      EXPECT_FALSE(ok) << c.name;
      EXPECT_EQ(err.rfind(c.error, 0), 0u) << c.name << ": got " << err;
    }
  }
}

TEST(NodeSelectorTest, RequirementMatching) {
  struct Case {
    NodeSelectorRequirement req;
    bool want;
  };
  const std::vector<Case> cases = {
      {NReq("zone", "In", {"a", "b"}), true},
      {NReq("zone", "In", {"c"}), false},
      {NReq("zone", "NotIn", {"c"}), true},
      {NReq("nokey", "NotIn", {"c"}), true},
      {NReq("zone", "Exists", {}), true},
      {NReq("nokey", "DoesNotExist", {}), true},
      {NReq("zone", "DoesNotExist", {}), false},
      {NReq("gpu-count", "Gt", {"3"}), true},
      {NReq("gpu-count", "Gt", {"4"}), false},
      {NReq("gpu-count", "Lt", {"5"}), true},
      {NReq("gpu-count", "Lt", {"4"}), false},
      {NReq("gpu-count", "Gt", {"-1"}), true},
      {NReq("nokey", "Gt", {"1"}), false},
      {NReq("zone", "Gt", {"1"}), false},       // label value "a" is not an integer
      {NReq("gpu-count", "Gt", {"x"}), false},  // invalid bound
      {NReq("gpu-count", "Gt", {}), false},     // invalid: needs one value
      {NReq("zone", "In", {}), false},          // invalid: In needs values
      {NReq("nokey", "NotIn", {}), false},      // invalid: NotIn needs values
      {NReq("zone", "Bogus", {"a"}), false},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(NodeSelectorRequirementMatches(c.req, kLabels), c.want)
        << c.req.key << " " << c.req.op;
  }
}

TEST(NodeSelectorTest, TermAndSelectorMatching) {
  NodeSelectorTerm zone_a{{NReq("zone", "In", {"a"})}, {}};
  NodeSelectorTerm zone_b{{NReq("zone", "In", {"b"})}, {}};
  NodeSelectorTerm name_n1{{}, {NReq("metadata.name", "In", {"n1"})}};
  NodeSelectorTerm not_n1{{}, {NReq("metadata.name", "NotIn", {"n1"})}};
  NodeSelectorTerm both{{NReq("zone", "In", {"a"})}, {NReq("metadata.name", "In", {"n2"})}};
  NodeSelectorTerm empty;
  NodeSelectorTerm bad_field{{}, {NReq("metadata.uid", "In", {"n1"})}};

  EXPECT_TRUE(NodeSelectorTermMatches(zone_a, kLabels, "n1"));
  EXPECT_FALSE(NodeSelectorTermMatches(zone_b, kLabels, "n1"));
  EXPECT_TRUE(NodeSelectorTermMatches(name_n1, kLabels, "n1"));
  EXPECT_FALSE(NodeSelectorTermMatches(name_n1, kLabels, "n2"));
  EXPECT_FALSE(NodeSelectorTermMatches(not_n1, kLabels, "n1"));
  EXPECT_TRUE(NodeSelectorTermMatches(not_n1, kLabels, "n2"));
  EXPECT_FALSE(NodeSelectorTermMatches(both, kLabels, "n1")) << "fields and expressions are ANDed";
  EXPECT_TRUE(NodeSelectorTermMatches(both, kLabels, "n2"));
  EXPECT_FALSE(NodeSelectorTermMatches(empty, kLabels, "n1")) << "an empty term matches nothing";
  EXPECT_FALSE(NodeSelectorTermMatches(empty, {}, ""));
  EXPECT_FALSE(NodeSelectorTermMatches(bad_field, kLabels, "n1"));

  EXPECT_FALSE(NodeSelectorMatches(NodeSelector{}, kLabels, "n1")) << "no terms matches nothing";
  EXPECT_FALSE(NodeSelectorMatches(NodeSelector{{empty}}, kLabels, "n1"));
  EXPECT_TRUE(NodeSelectorMatches(NodeSelector{{empty, zone_a}}, kLabels, "n1"))
      << "terms are ORed";
  EXPECT_TRUE(NodeSelectorMatches(NodeSelector{{zone_b, name_n1}}, kLabels, "n1"));
  EXPECT_FALSE(NodeSelectorMatches(NodeSelector{{zone_b, name_n1}}, kLabels, "n3"));
}

TEST(NodeSelectorTest, TermValidation) {
  struct Case {
    std::string name;
    NodeSelectorTerm term;
    std::string error;  // prefix; "" = valid
  };
  const std::vector<Case> cases = {
      {"empty term is valid", {}, ""},
      {"all operators",
       {{NReq("a", "In", {"x"}), NReq("b", "NotIn", {"y"}), NReq("c", "Exists", {}),
         NReq("d", "DoesNotExist", {}), NReq("e", "Gt", {"10"}), NReq("f", "Lt", {"3"})},
        {NReq("metadata.name", "In", {"n1"}), NReq("metadata.name", "NotIn", {"n2"})}},
       ""},
      {"Gt needs one value",
       {{NReq("e", "Gt", {"1", "2"})}, {}},
       "matchExpressions[0].values: Required value: must be specified single value when "
       "`operator` is 'Lt' or 'Gt'"},
      {"Lt needs a value", {{NReq("e", "Lt", {})}, {}}, "matchExpressions[0].values: Required"},
      {"Gt needs an integer",
       {{NReq("e", "Gt", {"1.5"})}, {}},
       "matchExpressions[0].values[0]: Invalid value: \"1.5\": for 'Gt', 'Lt' operators, the "
       "value must be an integer"},
      // Values are label values for every operator (upstream), so a negative bound is invalid.
      {"Lt with a negative bound",
       {{NReq("e", "Lt", {"-3"})}, {}},
       "matchExpressions[0].values[0]: Invalid value: \"-3\""},
      {"In value must be a label value",
       {{NReq("a", "In", {"x y"})}, {}},
       "matchExpressions[0].values[0]: Invalid value: \"x y\""},
      {"field value must be a node name",
       {{}, {NReq("metadata.name", "In", {"Bad_Name"})}},
       "matchFields[0].values[0]: Invalid value: \"Bad_Name\""},
      {"unknown operator",
       {{NReq("a", "In", {"x"}), NReq("e", "Equals", {"1"})}, {}},
       "matchExpressions[1].operator: Invalid value: \"Equals\": not a valid selector operator"},
      {"In needs values", {{NReq("a", "In", {})}, {}}, "matchExpressions[0].values: Required"},
      {"Exists takes no values",
       {{NReq("a", "Exists", {"x"})}, {}},
       "matchExpressions[0].values: Forbidden"},
      {"bad key", {{NReq("a b", "Exists", {})}, {}}, "matchExpressions[0].key: Invalid value"},
      {"field key must be metadata.name",
       {{}, {NReq("metadata.uid", "In", {"x"})}},
       "matchFields[0].key: Invalid value: \"metadata.uid\": not a valid field selector key"},
      {"field op must be In/NotIn",
       {{}, {NReq("metadata.name", "Exists", {})}},
       "matchFields[0].operator: Invalid value: \"Exists\""},
      {"field needs exactly one value",
       {{}, {NReq("metadata.name", "In", {"a", "b"})}},
       "matchFields[0].values: Required value: must be only one value"},
  };
  for (const Case& c : cases) {
    std::string err;
    const bool ok = OkOrMessage(ValidateNodeSelectorTerm(c.term), &err);
    if (c.error.empty()) {
      EXPECT_TRUE(ok) << c.name << ": " << err;
    } else {
      EXPECT_FALSE(ok) << c.name;
      EXPECT_EQ(err.rfind(c.error, 0), 0u) << c.name << ": got " << err;
    }
  }
}

TEST(NameValidationTest, QualifiedNamesAndLabelValues) {
  for (const char* ok : {"a", "app", "A.b-c_d", "example.com/app", "kubernetes.io/hostname",
                         "topology.kubernetes.io/zone", "a1"}) {
    EXPECT_TRUE(internal::QualifiedNameError(ok).ok()) << ok;
  }
  for (const char* bad : {"", "-a", "a-", "a b", "/a", "Example.com/a", "a/b/c", "a/",
                          "1234567890123456789012345678901234567890123456789012345678901234"}) {
    EXPECT_EQ(internal::QualifiedNameError(bad).code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_TRUE(internal::LabelValueError("").ok());
  EXPECT_TRUE(internal::LabelValueError("v1.2_3-x").ok());
  EXPECT_EQ(internal::LabelValueError("-x").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(internal::LabelValueError(std::string(64, 'a')).message(),
            "must be no more than 63 characters");

  int64_t v = 0;
  EXPECT_TRUE(internal::ParseInt64("-9223372036854775808", &v));
  EXPECT_EQ(v, INT64_MIN);
  EXPECT_TRUE(internal::ParseInt64("+12", &v));
  EXPECT_EQ(v, 12);
  EXPECT_FALSE(internal::ParseInt64("9223372036854775808", &v));
  EXPECT_FALSE(internal::ParseInt64("", &v));
  EXPECT_FALSE(internal::ParseInt64("-", &v));
  EXPECT_FALSE(internal::ParseInt64("1e3", &v));
}

}  // namespace
}  // namespace phalanx::api
