// Table tests of plugins/helper, ported from upstream where a counterpart exists:
//   - normalize_score.go: pkg/scheduler/framework/plugins/helper/normalize_score_test.go
//     (TestDefaultNormalizeScore);
//   - taints.go: k8s.io/api/core/v1/toleration_test.go (TestTolerationToleratesTaint) and
//     k8s.io/component-helpers/scheduling/corev1/helpers_test.go
//     (TestFindMatchingUntoleratedTaint);
//   - validation.go: k8s.io/apimachinery/pkg/util/validation/validation_test.go
//     (TestIsQualifiedName) and component-helpers resource_names_test.go
//     (TestIsExtendedResourceName);
//   - args.go: strict decoding as upstream's (unknown fields, kind, types), cases of our own
//     stating the rule each checks.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "plugins/helper/args.h"
#include "plugins/helper/normalize_score.h"
#include "plugins/helper/taints.h"
#include "plugins/helper/validation.h"

namespace phalanx::plugins::helper {
namespace {

TEST(HelperNormalizeScore, DefaultNormalizeScore) {
  struct Case {
    bool reverse;
    std::vector<int64_t> scores;
    std::vector<int64_t> want;
  };
  // TestDefaultNormalizeScore's cases, in order (upstream names them case_0 ... case_6).
  const std::vector<Case> cases = {
      {false, {1, 2, 3, 4}, {25, 50, 75, 100}},    {true, {1, 2, 3, 4}, {75, 50, 25, 0}},
      {false, {1000, 10, 20, 30}, {100, 1, 2, 3}}, {true, {1000, 10, 20, 30}, {0, 99, 98, 97}},
      {false, {1, 1, 1, 1}, {100, 100, 100, 100}}, {false, {1000, 1, 1, 1}, {100, 0, 0, 0}},
      {true, {0, 1, 1, 1}, {100, 0, 0, 0}},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE("case_" + std::to_string(i));
    std::vector<int64_t> s = cases[i].scores;
    DefaultNormalizeScore(100, cases[i].reverse, s);
    EXPECT_EQ(s, cases[i].want);
  }
  // All zero: stay 0, or all max_priority when reversed (normalize_score.go's maxCount == 0).
  std::vector<int64_t> zeros = {0, 0, 0};
  DefaultNormalizeScore(100, false, zeros);
  EXPECT_EQ(zeros, (std::vector<int64_t>{0, 0, 0}));
  DefaultNormalizeScore(100, true, zeros);
  EXPECT_EQ(zeros, (std::vector<int64_t>{100, 100, 100}));
}

TEST(HelperNormalizeScore, MaxWithFloor) {
  struct Case {
    const char* name;
    std::vector<int64_t> v;
    int64_t floor;
    int64_t want;
  };
  const std::vector<Case> cases = {
      {"empty: the floor", {}, 7, 7},
      {"one element above the floor", {9}, 0, 9},
      {"all below the floor", {-5, -1, -3}, 0, 0},
      // The four running maxima each see one lane: the maximum must win from any lane.
      {"maximum in lane 0", {9, 1, 2, 3, 4}, 0, 9},
      {"maximum in lane 1", {1, 9, 2, 3, 4}, 0, 9},
      {"maximum in lane 2", {1, 2, 9, 3, 4}, 0, 9},
      {"maximum in lane 3", {1, 2, 3, 9, 4}, 0, 9},
      {"maximum in the tail", {1, 2, 3, 4, 5, 6, 7, 8, 99}, 0, 99},
      {"int64 extremes",
       {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()},
       std::numeric_limits<int64_t>::min(),
       std::numeric_limits<int64_t>::max()},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(MaxWithFloor(c.v.data(), c.v.size(), c.floor), c.want);
  }
}

api::Toleration Tol(std::string key, std::string op, std::string value, std::string effect) {
  api::Toleration t;
  t.key = std::move(key);
  t.op = std::move(op);
  t.value = std::move(value);
  t.effect = std::move(effect);
  return t;
}

api::Taint Taint(std::string key, std::string value, std::string effect) {
  return api::Taint{std::move(key), std::move(value), std::move(effect)};
}

// toleration_test.go TestTolerationToleratesTaint. Not ported: the Lt / Gt cases
// (TaintTolerationComparisonOperators, alpha): the manifest and object decoders reject those
// operators with a field error naming them (api/decode.cc "Unsupported value"), so no
// toleration reaching the helper carries them.
TEST(HelperTaints, ToleratesTaint) {
  struct Case {
    const char* description;
    api::Toleration toleration;
    api::Taint taint;
    bool tolerated;
  };
  const std::vector<Case> cases = {
      {"toleration and taint have the same key and effect, and operator is Exists, and taint has "
       "no value, expect tolerated",
       Tol("foo", "Exists", "", "NoSchedule"), Taint("foo", "", "NoSchedule"), true},
      {"toleration and taint have the same key and effect, and operator is Exists, and taint has "
       "some value, expect tolerated",
       Tol("foo", "Exists", "", "NoSchedule"), Taint("foo", "bar", "NoSchedule"), true},
      {"toleration and taint have the same effect, toleration has empty key and operator is "
       "Exists, means match all taints, expect tolerated",
       Tol("", "Exists", "", "NoSchedule"), Taint("foo", "bar", "NoSchedule"), true},
      {"toleration and taint have the same key, effect and value, and operator is Equal, expect "
       "tolerated",
       Tol("foo", "Equal", "bar", "NoSchedule"), Taint("foo", "bar", "NoSchedule"), true},
      {"toleration and taint have the same key and effect, but different values, and operator is "
       "Equal, expect not tolerated",
       Tol("foo", "Equal", "value1", "NoSchedule"), Taint("foo", "value2", "NoSchedule"), false},
      {"toleration and taint have the same key and value, but different effects, and operator is "
       "Equal, expect not tolerated",
       Tol("foo", "Equal", "bar", "NoSchedule"), Taint("foo", "bar", "NoExecute"), false},
      // toleration.go's rules the table above leaves implicit.
      {"empty operator means Equal", Tol("foo", "", "bar", "NoSchedule"),
       Taint("foo", "bar", "NoSchedule"), true},
      {"empty effect matches every effect", Tol("foo", "Exists", "", ""),
       Taint("foo", "", "NoExecute"), true},
      {"different keys are not tolerated", Tol("foo", "Exists", "", "NoSchedule"),
       Taint("other", "", "NoSchedule"), false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.description);
    EXPECT_EQ(ToleratesTaint(c.toleration, c.taint), c.tolerated);
    EXPECT_EQ(ToleratesTaint(c.toleration, c.taint.key, c.taint.value, c.taint.effect),
              c.tolerated);
    EXPECT_EQ(TolerationsTolerateTaint({c.toleration}, c.taint), c.tolerated);
  }
}

// helpers_test.go TestFindMatchingUntoleratedTaint. FindUntoleratedDoNotScheduleTaint is
// FindMatchingUntoleratedTaint with the filter TaintToleration's Filter uses (effect
// NoSchedule or NoExecute): a case's "no taints apply to the filter" taint is a
// PreferNoSchedule one here. The Lt / Gt cases are not ported (see ToleratesTaint).
TEST(HelperTaints, FindUntoleratedDoNotScheduleTaint) {
  struct Case {
    const char* description;
    std::vector<api::Toleration> tolerations;
    std::vector<api::Taint> taints;
    bool tolerated;
    std::string untolerated_key;  // when not tolerated: the taint returned
  };
  const std::vector<Case> cases = {
      {"empty tolerations tolerate empty taints", {}, {}, true},
      {"non-empty tolerations tolerate empty taints",
       {Tol("foo", "Exists", "", "NoSchedule")},
       {},
       true},
      {"tolerations match all taints, expect tolerated",
       {Tol("foo", "Exists", "", "NoSchedule")},
       {Taint("foo", "", "NoSchedule")},
       true},
      {"tolerations don't match taints, but no taints apply to the filter, expect tolerated",
       {Tol("foo", "Exists", "", "NoSchedule")},
       {Taint("bar", "", "PreferNoSchedule")},
       true},
      {"no filterFunc indicated, means all taints apply to the filter, tolerations don't match "
       "taints, expect untolerated",
       {Tol("foo", "Exists", "", "NoSchedule")},
       {Taint("bar", "", "NoSchedule")},
       false,
       "bar"},
      {"tolerations match taints, expect tolerated",
       {Tol("foo", "Exists", "", "NoExecute")},
       {Taint("foo", "", "NoExecute"), Taint("bar", "", "PreferNoSchedule")},
       true},
      // The first untolerated taint in node order is the one reported.
      {"two untolerated taints: the first is returned",
       {},
       {Taint("a", "", "PreferNoSchedule"), Taint("b", "", "NoExecute"),
        Taint("c", "", "NoSchedule")},
       false,
       "b"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.description);
    const api::Taint* t = FindUntoleratedDoNotScheduleTaint(c.taints, c.tolerations);
    EXPECT_EQ(t == nullptr, c.tolerated);
    if (t != nullptr) {
      EXPECT_EQ(t->key, c.untolerated_key);
    }
  }
}

// validation_test.go TestIsQualifiedName.
TEST(HelperValidation, IsQualifiedName) {
  const std::vector<std::string> success = {
      "simple",
      "now-with-dashes",
      "1-starts-with-num",
      "1234",
      "simple/simple",
      "now-with-dashes/simple",
      "now-with-dashes/now-with-dashes",
      "now.with.dots/simple",
      "now-with.dashes-and.dots/simple",
      "1-num.2-num/3-num",
      "1234/5678",
      "1.2.3.4/5678",
      "Uppercase_Is_OK_123",
      "example.com/Uppercase_Is_OK_123",
      "requests.storage-foo",
      std::string(63, 'a'),
      std::string(253, 'a') + "/" + std::string(63, 'b'),
  };
  for (size_t i = 0; i < success.size(); ++i) {
    const auto errs = IsQualifiedName(success[i]);
    EXPECT_TRUE(errs.empty()) << "case[" << i << "]: " << success[i] << ": " << errs.front();
  }
  const std::vector<std::string> failure = {
      "nospecialchars%^=@",   "cantendwithadash-",
      "-cantstartwithadash-", "only/one/slash",
      "Example.com/abc",      "example_com/abc",
      "example.com/",         "/simple",
      std::string(64, 'a'),   std::string(254, 'a') + "/abc",
  };
  for (size_t i = 0; i < failure.size(); ++i) {
    EXPECT_FALSE(IsQualifiedName(failure[i]).empty()) << "case[" << i << "]: " << failure[i];
  }
  // The messages are upstream's.
  EXPECT_EQ(IsQualifiedName("example.com/"),
            (std::vector<std::string>{
                "name part must be non-empty",
                "name part must consist of alphanumeric characters, '-', '_' or '.', and must "
                "start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
                "'123-abc', regex used for validation is "
                "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"}));
  EXPECT_EQ(IsQualifiedName(std::string(64, 'a')).front(),
            "name part must be no more than 63 characters");
}

// resource_names_test.go TestIsExtendedResourceName; IsScalarResourceName adds
// schedutil.IsScalarResourceName's other kinds (hugepages-*, kubernetes.io/*,
// attachable-volumes-*).
TEST(HelperValidation, ResourceNames) {
  struct Case {
    const char* name;
    const char* resource;
    bool extended;
    bool scalar;
  };
  const std::vector<Case> cases = {
      {"explicit native resource name with kubernetes.io is explicitly mentioned",
       "pod.alpha.kubernetes.io/opaque-int-resource-foo", false, true},
      {"explicit native resource name with kubernetes.io is explicitly mentioned as prefix",
       "kubernetes.io/resource-foo", false, true},
      {"implicit native resource name", "foo", false, false},
      {"qualified name outside of kubernetes.io domain (not native)", "a/b", true, true},
      {"empty native resource name", "", false, false},
      {"resource name outside of kubernetes.io domain without requests. prefix", "example.com/foo",
       true, true},
      {"resource name outside of kubernetes.io domain with requests. prefix",
       "requests.nvidia.com/gpu", false, false},
      {"hugepages (TestIsHugePageResourceName)", "hugepages-2Mi", false, true},
      {"attachable volumes (TestIsAttachableVolumeResourceName)", "attachable-volumes-aws-ebs",
       false, true},
      {"memory is native, not scalar", "memory", false, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(IsExtendedResourceName(c.resource), c.extended);
    EXPECT_EQ(IsScalarResourceName(c.resource), c.scalar);
  }
}

// Strict decoding of pluginConfig args, as upstream's (a decoder with
// DisallowUnknownFields; "kind" and "apiVersion" accepted).
TEST(HelperArgs, CheckArgsMap) {
  struct Case {
    const char* name;
    const char* yaml;  // nullptr: no args at all
    bool ok;
    bool has_content;
    std::string error;  // FieldErrors::Aggregate()
  };
  const std::vector<Case> cases = {
      {"no args", nullptr, true, false, ""},
      {"null args", "~", true, false, ""},
      {"empty map", "{}", true, false, ""},
      {"known fields", "{a: 1, b: x}", true, true, ""},
      {"kind and apiVersion are accepted",
       "{kind: TestArgs, apiVersion: kubescheduler.config.k8s.io/v1, a: 1}", true, true, ""},
      {"another kind", "{kind: OtherArgs}", false, false,
       "want args of kind TestArgs, got OtherArgs"},
      {"unknown field", "{a: 1, c: 2}", false, true, "unknown field \"c\""},
      {"two unknown fields", "{c: 1, d: 2}", false, true,
       "[unknown field \"c\", unknown field \"d\"]"},
      {"not a map", "[1, 2]", false, false, "args: Invalid value: must be an object"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    YAML::Node n;
    if (c.yaml != nullptr) n = YAML::Load(c.yaml);
    FieldErrors errs;
    bool has_content = true;
    EXPECT_EQ(
        CheckArgsMap(c.yaml != nullptr ? &n : nullptr, "TestArgs", {"a", "b"}, &errs, &has_content),
        c.ok);
    EXPECT_EQ(has_content, c.has_content);
    EXPECT_EQ(errs.empty() ? "" : errs.Aggregate(), c.error);
  }
}

TEST(HelperArgs, Scalars) {
  const YAML::Node doc = YAML::Load(
      "{int: 42, neg: -7, big: 9223372036854775808, text: abc, float: 1.5, list: [1], map: {a: 1},"
      " half: 0.5, two: '2', minus: -1, inf: .inf, word: many, strs: [a, b], mixed: [a, [b]]}");
  struct IntCase {
    const char* key;
    bool ok;
    int64_t want;
    std::string error;
  };
  const std::vector<IntCase> ints = {
      {"int", true, 42, ""},
      {"neg", true, -7, ""},
      {"missing", true, 0, ""},  // undefined: untouched
      {"big", false, 0, "x: Invalid value: \"9223372036854775808\": must be an integer"},
      {"text", false, 0, "x: Invalid value: \"abc\": must be an integer"},
      {"float", false, 0, "x: Invalid value: \"1.5\": must be an integer"},
      {"list", false, 0, "x: Invalid value: must be an integer"},
  };
  for (const IntCase& c : ints) {
    SCOPED_TRACE(std::string("ReadInt ") + c.key);
    FieldErrors errs;
    int64_t v = 0;
    EXPECT_EQ(ReadInt(doc[c.key], "x", &v, &errs), c.ok);
    EXPECT_EQ(v, c.want);
    EXPECT_EQ(errs.empty() ? "" : errs.Aggregate(), c.error);
  }
  struct NumCase {
    const char* key;
    bool ok;
    double want;
  };
  const std::vector<NumCase> nums = {
      {"half", true, 0.5}, {"two", true, 2},   {"int", true, 42},    {"minus", false, 0},
      {"inf", false, 0},   {"word", false, 0}, {"missing", true, 0}, {"map", false, 0},
  };
  for (const NumCase& c : nums) {
    SCOPED_TRACE(std::string("ReadNonNegativeNumber ") + c.key);
    FieldErrors errs;
    double v = 0;
    EXPECT_EQ(ReadNonNegativeNumber(doc[c.key], "x", &v, &errs), c.ok);
    EXPECT_EQ(v, c.want);
    EXPECT_EQ(errs.empty(), c.ok);
  }
  {
    FieldErrors errs;
    double v = 0;
    ReadNonNegativeNumber(doc["minus"], "x", &v, &errs);
    EXPECT_EQ(errs.Aggregate(), "x: Invalid value: \"-1\": must be a number >= 0");
  }
  {
    FieldErrors errs;
    std::string s;
    EXPECT_TRUE(ReadString(doc["text"], "x", &s, &errs));
    EXPECT_EQ(s, "abc");
    EXPECT_FALSE(ReadString(doc["map"], "x", &s, &errs));
    EXPECT_EQ(errs.Aggregate(), "x: Invalid value: must be a string");
  }
  {
    FieldErrors errs;
    std::vector<std::string> l;
    EXPECT_TRUE(ReadStringList(doc["strs"], "x", &l, &errs));
    EXPECT_EQ(l, (std::vector<std::string>{"a", "b"}));
    l.clear();
    EXPECT_FALSE(ReadStringList(doc["mixed"], "x", &l, &errs));
    EXPECT_EQ(l, (std::vector<std::string>{"a"}));
    EXPECT_EQ(errs.Aggregate(), "x[1]: Invalid value: must be a string");
  }
}

// v1.NodeSelector / []v1.PreferredSchedulingTerm in API field names; unknown fields and
// wrong types are errors with their paths (NodeAffinityArgs.addedAffinity).
TEST(HelperArgs, NodeSelectors) {
  {
    const YAML::Node n = YAML::Load(R"(
nodeSelectorTerms:
- matchExpressions: [{key: zone, operator: In, values: [a, b]}]
  matchFields: [{key: metadata.name, operator: NotIn, values: [n1]}]
- matchExpressions: [{key: gpu, operator: Exists}]
)");
    FieldErrors errs;
    api::NodeSelector sel;
    ASSERT_TRUE(ReadNodeSelector(n, "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution",
                                 &sel, &errs))
        << errs.Aggregate();
    ASSERT_EQ(sel.node_selector_terms.size(), 2u);
    ASSERT_EQ(sel.node_selector_terms[0].match_expressions.size(), 1u);
    EXPECT_EQ(sel.node_selector_terms[0].match_expressions[0].key, "zone");
    EXPECT_EQ(sel.node_selector_terms[0].match_expressions[0].op, "In");
    EXPECT_EQ(sel.node_selector_terms[0].match_expressions[0].values,
              (std::vector<std::string>{"a", "b"}));
    ASSERT_EQ(sel.node_selector_terms[0].match_fields.size(), 1u);
    EXPECT_EQ(sel.node_selector_terms[0].match_fields[0].op, "NotIn");
    EXPECT_EQ(sel.node_selector_terms[1].match_expressions[0].op, "Exists");
    EXPECT_TRUE(sel.node_selector_terms[1].match_expressions[0].values.empty());
  }
  struct Case {
    const char* name;
    const char* yaml;
    std::string error;
  };
  const std::vector<Case> bad = {
      {"unknown field of the selector", "{nodeSelectorTerms: [], extra: 1}",
       "unknown field \"s.extra\""},
      {"terms not a list", "{nodeSelectorTerms: {a: 1}}",
       "s.nodeSelectorTerms: Invalid value: must be a list"},
      {"unknown field of a requirement",
       "{nodeSelectorTerms: [{matchExpressions: [{key: a, operator: In, value: [x]}]}]}",
       "unknown field \"s.nodeSelectorTerms[0].matchExpressions[0].value\""},
      {"requirement not an object", "{nodeSelectorTerms: [{matchFields: [x]}]}",
       "s.nodeSelectorTerms[0].matchFields[0]: Invalid value: must be an object"},
  };
  for (const Case& c : bad) {
    SCOPED_TRACE(c.name);
    FieldErrors errs;
    api::NodeSelector sel;
    EXPECT_FALSE(ReadNodeSelector(YAML::Load(c.yaml), "s", &sel, &errs));
    EXPECT_EQ(errs.Aggregate(), c.error);
  }
  {
    const YAML::Node n = YAML::Load(
        "[{weight: 5, preference: {matchExpressions: [{key: a, operator: In, values: [x]}]}},"
        " {weight: w, preference: {}}]");
    FieldErrors errs;
    std::vector<api::PreferredSchedulingTerm> terms;
    EXPECT_FALSE(ReadPreferredSchedulingTerms(n, "p", &terms, &errs));
    ASSERT_EQ(terms.size(), 2u);
    EXPECT_EQ(terms[0].weight, 5);
    EXPECT_EQ(terms[0].preference.match_expressions[0].key, "a");
    EXPECT_EQ(errs.Aggregate(), "p[1].weight: Invalid value: \"w\": must be an integer");
  }
}

TEST(HelperValidation, ArgsError) {
  FieldErrors errs;
  errs.Invalid("scoringStrategy.type", "X", "must be one of LeastAllocated, MostAllocated");
  const framework::Status s = ArgsError(errs, "NodeResourcesFitArgs");
  EXPECT_EQ(s.code(), framework::Code::kError);
  EXPECT_EQ(s.Message(),
            "NodeResourcesFitArgs: scoringStrategy.type: Invalid value: \"X\": must be one of "
            "LeastAllocated, MostAllocated");
}

}  // namespace
}  // namespace phalanx::plugins::helper
