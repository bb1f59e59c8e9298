// Hostile manifests: 10^5 levels of nesting, 100k labels, oversized strings and
// many documents. Each gives a clear error naming the file (and object and field where
// there is one) or decodes correctly; none overflows the stack or corrupts *out.
#include <gtest/gtest.h>

#include <string>

#include "api/decode.h"
#include "api/labels.h"

namespace phalanx::api {
namespace {

constexpr int kDeep = 100000;

std::string Repeat(const std::string& s, int n) {
  std::string out;
  out.reserve(s.size() * n);
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

bool Decode(const std::string& text, Manifests* m, std::string* err) {
  std::string e;
  const bool ok = OkOrMessage(DecodeManifests(text, "hostile.yaml", m), &e);
  *err = e;
  return ok;
}

// yaml-cpp's parser stops at 2000 levels (DeepRecursion); the decoder reports it as
// malformed YAML at the line and column where it happened.
TEST(DecodeHostileTest, DeeplyNestedYamlFlowIsAClearError) {
  for (const auto& [open, close] : {std::pair{"[", "]"}, std::pair{"{a: ", "}"}}) {
    const std::string text =
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: " + Repeat(open, kDeep) +
        Repeat(close, kDeep) + "\n";
    Manifests m;
    std::string err;
    ASSERT_FALSE(Decode(text, &m, &err));
    EXPECT_EQ(err.rfind("hostile.yaml: malformed YAML at line ", 0), 0u) << err;
    EXPECT_NE(err.find(": nesting deeper than 500 levels"), std::string::npos) << err;
    EXPECT_TRUE(m.pods.empty());
  }
}

TEST(DecodeHostileTest, DeeplyNestedJsonIsAClearError) {
  const std::string text = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":)" +
                           Repeat(R"({"a":)", kDeep) + "1" + Repeat("}", kDeep) + "}";
  Manifests m;
  std::string err;
  ASSERT_FALSE(Decode(text, &m, &err));
  EXPECT_EQ(err.rfind("hostile.yaml: malformed YAML at line 1", 0), 0u) << err;
  EXPECT_NE(err.find(": nesting deeper than 500 levels"), std::string::npos) << err;
  EXPECT_TRUE(m.pods.empty());
}

// Nested Lists recurse in the decoder too; the parser's limit bounds them.
TEST(DecodeHostileTest, DeeplyNestedListsAreAClearError) {
  const std::string text =
      Repeat("{apiVersion: v1, kind: List, items: [", kDeep) + Repeat("]}", kDeep);
  Manifests m;
  std::string err;
  ASSERT_FALSE(Decode(text, &m, &err));
  EXPECT_EQ(err.rfind("hostile.yaml: malformed YAML", 0), 0u) << err;
  // Under the limit (two levels per List: the map and its items) decodes (nothing in it).
  const std::string ok = Repeat("{apiVersion: v1, kind: List, items: [", 200) + Repeat("]}", 200);
  ASSERT_TRUE(Decode(ok, &m, &err)) << err;
}

// Found by fuzz/fuzz_manifest.cc (fuzz/regressions/fuzz_manifest/): yaml-cpp's LoadAll
// never returned on a document starting with ',' and grew memory until killed.
TEST(DecodeHostileTest, StrayCommaIsAnErrorNotAnEndlessLoop) {
  struct Case {
    std::string text;
    std::string want;
  };
  for (const Case& c :
       {Case{",", "hostile.yaml: malformed YAML at line 1, column 1: unexpected ','"},
        Case{"[a],", "hostile.yaml: malformed YAML at line 1, column 4: unexpected ','"},
        Case{"apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\n,\n",
             "hostile.yaml: malformed YAML at line 5, column 1: unexpected ','"}}) {
    Manifests m;
    std::string err;
    ASSERT_FALSE(Decode(c.text, &m, &err)) << c.text;
    EXPECT_EQ(err.rfind(c.want, 0), 0u) << err;
    EXPECT_TRUE(m.namespaces.empty()) << "all-or-nothing";
  }
}

TEST(DecodeHostileTest, HundredThousandLabelsDecodeAndMatch) {
  std::string labels;
  for (int i = 0; i < 100000; ++i) {
    labels += "    example.com/k" + std::to_string(i) + ": v" + std::to_string(i) + "\n";
  }
  const std::string text = "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n  labels:\n" +
                           labels + "status: {capacity: {cpu: '4', pods: '110'}}\n";
  Manifests m;
  std::string err;
  ASSERT_TRUE(Decode(text, &m, &err)) << err;
  ASSERT_EQ(m.nodes.size(), 1u);
  const Labels& l = m.nodes[0].metadata.labels;
  ASSERT_EQ(l.size(), 100000u);
  EXPECT_EQ(l.at("example.com/k99999"), "v99999");

  LabelSelector sel;
  sel.match_labels = l;  // 100k required labels
  sel.match_expressions.push_back({"example.com/k5", "In", {"v5", "x"}});
  ASSERT_TRUE(OkOrMessage(ValidateLabelSelector(sel), &err)) << err;
  EXPECT_TRUE(LabelSelectorMatches(sel, l));
  Labels other = l;
  other["example.com/k77777"] = "changed";
  EXPECT_FALSE(LabelSelectorMatches(sel, other));
}

// 2 MB values (the API server refuses objects over 1.5 MB; yaml-cpp scans about 1 MB/s
// under ASan, so the quantity tests carry the 10 MB cases).
TEST(DecodeHostileTest, OversizedStringsAreFieldErrors) {
  const std::string big(2 << 20, 'a');
  Manifests m;
  std::string err;
  // A 2 MB label value: IsValidLabelValue allows 63 characters.
  ASSERT_FALSE(Decode("apiVersion: v1\nkind: Node\nmetadata: {name: n, labels: {k: " + big + "}}\n",
                      &m, &err));
  EXPECT_EQ(err.rfind("hostile.yaml: Node n: metadata.labels", 0), 0u) << err.substr(0, 200);
  EXPECT_NE(err.find("must be no more than 63 characters"), std::string::npos)
      << err.substr(0, 200);
  // A 2 MB label key: YAML allows implicit keys of 1024 characters, so yaml-cpp rejects it.
  ASSERT_FALSE(Decode("apiVersion: v1\nkind: Node\nmetadata: {name: n, labels: {" + big + ": v}}\n",
                      &m, &err));
  EXPECT_EQ(err.rfind("hostile.yaml: malformed YAML at line 3", 0), 0u) << err.substr(0, 200);
  // A 300-character key (valid YAML): the name part of a qualified name allows 63.
  ASSERT_FALSE(Decode("apiVersion: v1\nkind: Node\nmetadata: {name: n, labels: {" +
                          std::string(300, 'k') + ": v}}\n",
                      &m, &err));
  EXPECT_EQ(err.rfind("hostile.yaml: Node n: metadata.labels.kkk", 0), 0u) << err.substr(0, 200);
  EXPECT_NE(err.find("name part must be no more than 63 characters"), std::string::npos) << err;
  EXPECT_TRUE(m.nodes.empty());
  // A 2 MB name is not validated by the decoder (the API server would refuse it); it is
  // carried whole, without truncation or a crash.
  ASSERT_TRUE(Decode("apiVersion: v1\nkind: Namespace\nmetadata: {name: " + big + "}\n", &m, &err))
      << err.substr(0, 200);
  ASSERT_EQ(m.namespaces.size(), 1u);
  EXPECT_EQ(m.namespaces[0].metadata.name.size(), big.size());
  // A 2 MB annotation value is legal for a scheduler (the API server caps the total at
  // 256 KiB; a manifest is trusted input) and decodes.
  ASSERT_TRUE(Decode(
      "apiVersion: v1\nkind: Node\nmetadata: {name: n, annotations: {k: " + big + "}}\n", &m, &err))
      << err.substr(0, 200);
  ASSERT_EQ(m.nodes.size(), 1u);
  EXPECT_EQ(m.nodes[0].metadata.annotations.at("k").size(), big.size());
}

TEST(DecodeHostileTest, ManyDocumentsAndEmptyInput) {
  Manifests m;
  std::string err;
  ASSERT_TRUE(Decode("", &m, &err)) << err;
  ASSERT_TRUE(Decode(Repeat("---\n", 20000), &m, &err)) << err;
  EXPECT_TRUE(m.pods.empty() && m.nodes.empty());
  ASSERT_TRUE(
      Decode(Repeat("---\napiVersion: v1\nkind: Namespace\nmetadata: {name: n}\n", 5000), &m, &err))
      << err;
  EXPECT_EQ(m.namespaces.size(), 5000u);
  // Binary garbage (NUL and invalid UTF-8) is a YAML error, not a crash.
  const std::string garbage("\x00\xff\xfe{[\x01:\x80", 9);
  Manifests g;
  EXPECT_FALSE(Decode(garbage, &g, &err));
  EXPECT_EQ(err.rfind("hostile.yaml", 0), 0u) << err;
}

}  // namespace
}  // namespace phalanx::api
