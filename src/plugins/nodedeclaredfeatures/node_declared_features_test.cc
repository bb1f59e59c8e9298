// NodeDeclaredFeatures: the inference on decode (upstream component-helpers
// nodedeclaredfeatures features/*_test.go cases for the registry's scheduling-time features)
// and the plugin (upstream nodedeclaredfeatures_test.go TestPreFilter / TestFilter shapes).
#include "plugins/nodedeclaredfeatures/node_declared_features.h"

#include <gtest/gtest.h>

#include "api/decode.h"
#include "plugins/testing_fake_handle.h"
#include "testing/builders.h"

namespace phalanx::plugins::nodedeclaredfeatures {
namespace {

using phalanx::testing::MakeNodeInfo;
using phalanx::testing::NodeBuilder;
using phalanx::testing::PodBuilder;

std::vector<std::string> Infer(const std::string& spec_yaml) {
  return api::InferNodeFeatures(YAML::Load(spec_yaml));
}

TEST(NodeDeclaredFeaturesInferTest, SchedulingTimeFeatures) {
  using V = std::vector<std::string>;
  EXPECT_EQ(Infer("containers: [{name: c, image: x}]"), V{});
  EXPECT_EQ(Infer("containers: [{name: c, restartPolicyRules: [{action: RestartAllContainers,"
                  " exitCodes: {operator: In, values: [42]}}]}]"),
            V{"RestartAllContainersOnContainerExits"});
  EXPECT_EQ(Infer("initContainers: [{name: i, restartPolicyRules: [{action: Restart}, "
                  "{action: RestartAllContainers}]}]\ncontainers: [{name: c}]"),
            V{"RestartAllContainersOnContainerExits"});
  // Another action is no requirement.
  EXPECT_EQ(Infer("containers: [{name: c, restartPolicyRules: [{action: Restart}]}]"), V{});
  EXPECT_EQ(Infer("hostNetwork: true\nhostUsers: false"), V{"UserNamespacesHostNetworkSupport"});
  EXPECT_EQ(Infer("hostNetwork: true"), V{});
  EXPECT_EQ(Infer("hostNetwork: false\nhostUsers: false"), V{});
  EXPECT_EQ(Infer("hostNetwork: true\nhostUsers: true"), V{});
  // Both, sorted by name.
  EXPECT_EQ(Infer("hostNetwork: true\nhostUsers: false\ncontainers: [{name: c, "
                  "restartPolicyRules: [{action: RestartAllContainers}]}]"),
            (V{"RestartAllContainersOnContainerExits", "UserNamespacesHostNetworkSupport"}));
  // Not a map, malformed fields: nothing inferred, no crash.
  EXPECT_EQ(Infer("[1, 2]"), V{});
  EXPECT_EQ(Infer("containers: {a: b}\nhostNetwork: [x]"), V{});
}

TEST(NodeDeclaredFeaturesInferTest, DecodedIntoPodAndNode) {
  api::Manifests m;
  ASSERT_TRUE(api::DecodeManifests(R"(
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  hostNetwork: true
  hostUsers: false
  containers: [{name: c, image: x}]
---
apiVersion: v1
kind: Node
metadata: {name: n}
status:
  declaredFeatures: [UserNamespacesHostNetworkSupport, GuaranteedQoSPodCPUResize]
)",
                                   "t.yaml", &m)
                  .ok());
  ASSERT_EQ(m.pods.size(), 1u);
  ASSERT_EQ(m.nodes.size(), 1u);
  EXPECT_EQ(m.pods[0].spec.required_node_features,
            std::vector<std::string>{"UserNamespacesHostNetworkSupport"});
  // Sorted on decode.
  EXPECT_EQ(
      m.nodes[0].status.declared_features,
      (std::vector<std::string>{"GuaranteedQoSPodCPUResize", "UserNamespacesHostNetworkSupport"}));
  api::Manifests bad;
  const api::Status s = api::DecodeManifests(
      "apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus: {declaredFeatures: x}\n", "t.yaml",
      &bad);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("status.declaredFeatures"), std::string::npos)
      << s.message();
}

api::Pod PodNeeding(std::vector<std::string> features) {
  api::Pod p = PodBuilder("pod").Obj();
  p.spec.required_node_features = std::move(features);
  return p;
}

api::Node NodeDeclaring(std::vector<std::string> features) {
  api::Node n = NodeBuilder("n").Obj();
  n.status.declared_features = std::move(features);
  return n;
}

TEST(NodeDeclaredFeaturesTest, PreFilterAndFilter) {
  fake::FakeHandle h;
  auto pl = NodeDeclaredFeatures::New(nullptr, h);
  ASSERT_TRUE(pl.ok());
  auto* pre = dynamic_cast<framework::PreFilterPlugin*>(pl.value().get());
  auto* filter = dynamic_cast<framework::FilterPlugin*>(pl.value().get());
  ASSERT_NE(pre, nullptr);
  ASSERT_NE(filter, nullptr);
  struct Case {
    const char* name;
    std::vector<std::string> required, declared;
    bool skip;
    framework::Code want;
  };
  const Case cases[] = {
      {"no requirements: PreFilter skips", {}, {}, true, framework::Code::kSuccess},
      {"requirement declared",
       {"FeatureA"},
       {"FeatureA", "FeatureB"},
       false,
       framework::Code::kSuccess},
      {"requirement not declared",
       {"FeatureA"},
       {"FeatureB"},
       false,
       framework::Code::kUnschedulableAndUnresolvable},
      {"node declares nothing",
       {"FeatureA"},
       {},
       false,
       framework::Code::kUnschedulableAndUnresolvable},
      {"one of two missing",
       {"FeatureA", "FeatureC"},
       {"FeatureA", "FeatureB"},
       false,
       framework::Code::kUnschedulableAndUnresolvable},
      {"all of two declared",
       {"FeatureA", "FeatureC"},
       {"FeatureA", "FeatureB", "FeatureC"},
       false,
       framework::Code::kSuccess},
  };
  for (const auto& c : cases) {
    framework::CycleState state;
    auto pi = framework::PodInfo::Make(std::make_shared<api::Pod>(PodNeeding(c.required)));
    framework::PreFilterResult r;
    const framework::Status ps = pre->PreFilter(state, *pi, &r);
    EXPECT_EQ(ps.IsSkip(), c.skip) << c.name;
    auto ni = MakeNodeInfo(NodeDeclaring(c.declared));
    const framework::Status s = filter->Filter(state, *pi, ni);
    EXPECT_EQ(s.code(), c.want) << c.name;
    if (c.want != framework::Code::kSuccess) {
      EXPECT_EQ(s.reasons(),
                std::vector<std::string>{std::string(kErrReasonUnsatisfiedRequirements)})
          << c.name;
    }
  }
}

TEST(NodeDeclaredFeaturesTest, QueueingHints) {
  NodeDeclaredFeatures p;
  auto events = p.EventsToRegister();
  ASSERT_EQ(events.size(), 2u);
  const api::Pod pod = PodNeeding({"FeatureA"});
  api::Node before = NodeDeclaring({"FeatureB"}), after = NodeDeclaring({"FeatureA", "FeatureB"});
  framework::EventObjects changed{nullptr, nullptr, &before, &after};
  EXPECT_EQ(events[0].hint(pod, changed), framework::QueueingHint::kQueue);
  framework::EventObjects same{nullptr, nullptr, &before, &before};
  EXPECT_EQ(events[0].hint(pod, same), framework::QueueingHint::kQueueSkip);
  framework::EventObjects added{nullptr, nullptr, nullptr, &after};
  EXPECT_EQ(events[0].hint(pod, added), framework::QueueingHint::kQueue);
  // The pod's own update queues it only when its requirements changed.
  api::Pod old_pod = pod, new_pod = pod;
  new_pod.spec.required_node_features.clear();
  framework::EventObjects pod_changed{&old_pod, &new_pod, nullptr, nullptr};
  EXPECT_EQ(events[1].hint(pod, pod_changed), framework::QueueingHint::kQueue);
  framework::EventObjects pod_same{&old_pod, &old_pod, nullptr, nullptr};
  EXPECT_EQ(events[1].hint(pod, pod_same), framework::QueueingHint::kQueueSkip);
}

}  // namespace
}  // namespace phalanx::plugins::nodedeclaredfeatures
