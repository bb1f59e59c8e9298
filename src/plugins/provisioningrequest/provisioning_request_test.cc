// ProvisioningRequest (provisioning_request.h): its args, the request state read from
// cluster-autoscaler's conditions, the PodTemplates and the request it writes (checked
// against the v1.36 OpenAPI and cluster-autoscaler's CRD, not through the plugin's own
// code), and the lifecycle on a fake client: created once, followed, ended, retried after
// the backoff, deleted when the gang commits.
#include "plugins/provisioningrequest/provisioning_request.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <memory>
#include <string>
#include <vector>

#include "plugins/testing_fake_handle.h"
#include "schema/schema_testing.h"

namespace phalanx::plugins::provisioningrequest {
namespace {

using framework::Code;
constexpr int64_t kS = api::kNanosPerSecond;

framework::StatusOr<std::unique_ptr<framework::Plugin>> NewWith(const std::string& yaml,
                                                                framework::Handle& h) {
  const YAML::Node args = YAML::Load(yaml);
  return ProvisioningRequest::New(&args, h);
}

api::Unstructured RequestWith(const std::string& status_yaml) {
  api::Unstructured u;
  u.api_version = std::string(kApiVersion);
  u.kind = "ProvisioningRequest";
  u.metadata.namespace_ = "ml";
  u.metadata.name = "llm-phalanx-1";
  YAML::Node doc;
  doc["apiVersion"] = u.api_version;
  doc["kind"] = u.kind;
  doc["metadata"]["name"] = u.metadata.name;
  doc["metadata"]["namespace"] = u.metadata.namespace_;
  if (!status_yaml.empty()) doc["status"] = YAML::Load(status_yaml);
  u.object = std::make_shared<const YAML::Node>(doc);
  return u;
}

api::ResourceList Resources(const std::map<std::string, std::string>& m) {
  api::ResourceList out;
  for (const auto& [k, v] : m) out[k] = *api::Quantity::Parse(v);
  return out;
}

std::shared_ptr<api::Pod> Member(const std::string& name, const std::string& gpus) {
  auto p = std::make_shared<api::Pod>();
  p->metadata.namespace_ = "ml";
  p->metadata.name = name;
  p->metadata.uid = "uid-" + name;
  p->metadata.labels["app"] = "llm";
  api::Container c;
  c.name = "trainer";
  c.image = "pytorch/pytorch:2.3.0";
  c.resources.requests = Resources({{"cpu", "500m"}, {"memory", "4Gi"}, {"nvidia.com/gpu", gpus}});
  c.resources.limits = Resources({{"nvidia.com/gpu", gpus}});
  p->spec.containers.push_back(c);
  p->spec.node_selector["node.kubernetes.io/instance-type"] = "a100x8";
  api::Toleration t;
  t.key = "nvidia.com/gpu";
  t.op = "Exists";
  t.effect = "NoSchedule";
  p->spec.tolerations.push_back(t);
  p->spec.priority = 100;
  return p;
}

// Records the object handlers the plugin registers and the pods it activates.
class FakeObjects final : public framework::ObjectEventSource, public framework::PodActivator {
 public:
  void Watch(const std::string& group, const std::string& kind, Handler handler) override {
    handlers[group + "/" + kind].push_back(std::move(handler));
  }
  void Activate(const std::vector<std::string>& keys) override {
    activated.insert(activated.end(), keys.begin(), keys.end());
  }
  void Deliver(const api::Unstructured& obj, bool deleted = false) {
    for (auto& h : handlers["autoscaling.x-k8s.io/ProvisioningRequest"]) h(nullptr, obj, deleted);
  }
  std::map<std::string, std::vector<Handler>> handlers;
  std::vector<std::string> activated;
};

class NoFeasibility final : public framework::PodGroupFeasibility {
 public:
  framework::Status Place(const std::vector<const api::Pod*>&,
                          framework::PodGroupAssignments*) override {
    ADD_FAILURE() << "the plugin searches no placement";
    return framework::Status::Unschedulable("unexpected");
  }
  void Reset() override {}
};

// A gang ml/llm of `pods` whose placement failed.
struct FailedCycle {
  explicit FailedCycle(const std::vector<api::PodPtr>& pods) {
    framework::PodGroupInfo g;
    g.key = "ml/llm";
    g.display = "pod group ml/llm";
    g.min_count = static_cast<int32_t>(pods.size());
    for (const auto& p : pods) {
      g.pending_pods.push_back(p->Key());
      attempt.pods.push_back(framework::PodInfo::Make(p));
      attempt.pod_group_of.push_back(0);
    }
    group.pod_groups.push_back(g);
    attempt.placement_failed = true;
  }
  framework::Status Run(framework::Plugin& plugin) {
    auto& pf = dynamic_cast<framework::PodGroupPostFilterPlugin&>(plugin);
    framework::CycleState state;
    NoFeasibility f;
    framework::PodGroupPostFilterResult result;
    return pf.PodGroupPostFilter(state, group, attempt, f, &result);
  }
  framework::QueuedPodGroupInfo group;
  framework::PodGroupAttempt attempt;
};

TEST(ProvisioningRequestTest, ArgsHaveDefaultsAndAreValidated) {
  fake::FakeHandle h;
  ASSERT_TRUE(ProvisioningRequest::New(nullptr, h).ok());
  ASSERT_TRUE(NewWith("{provisioningClassName: check-capacity.autoscaling.x-k8s.io, "
                      "maxActiveRequests: 2, maxRequestsPerGang: 1, retryBackoffSeconds: 0, "
                      "minMembers: 4}",
                      h)
                  .ok());
  auto zero = NewWith("{maxActiveRequests: 0}", h);
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.status().Message(),
            "ProvisioningRequestArgs: maxActiveRequests: Invalid value: 0: must be greater than "
            "or equal to 1");
  EXPECT_FALSE(NewWith("{retryBackoffSeconds: -1}", h).ok());
  EXPECT_FALSE(NewWith("{minMembers: many}", h).ok());
  EXPECT_FALSE(NewWith("{provisioningClassName: \"\"}", h).ok());
  auto typo = NewWith("{maxRequestPerGang: 2}", h);
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.status().Message().find("maxRequestPerGang"), std::string::npos)
      << typo.status().Message();
}

TEST(ProvisioningRequestTest, StateFollowsClusterAutoscalersConditions) {
  EXPECT_EQ(ReadRequestState(RequestWith("")).phase, RequestState::kPending);
  auto accepted = ReadRequestState(
      RequestWith("{conditions: [{type: Accepted, status: 'True', reason: Accepted}]}"));
  EXPECT_EQ(accepted.phase, RequestState::kAccepted);
  EXPECT_EQ(accepted.condition, "Accepted=True (Accepted)");
  auto notyet = ReadRequestState(RequestWith(
      "{conditions: [{type: Accepted, status: 'True'}, {type: Provisioned, status: 'False', "
      "reason: CapacityIsNotFound, message: no room}]}"));
  EXPECT_EQ(notyet.phase, RequestState::kNotProvisioned);
  EXPECT_EQ(notyet.condition, "Provisioned=False (CapacityIsNotFound): no room");
  EXPECT_EQ(
      ReadRequestState(RequestWith("{conditions: [{type: Provisioned, status: 'True'}]}")).phase,
      RequestState::kProvisioned);
  // Failed, BookingExpired and CapacityRevoked end it, whatever Provisioned says.
  for (const char* type : {"Failed", "BookingExpired", "CapacityRevoked"}) {
    auto ended = ReadRequestState(RequestWith(std::string("{conditions: [{type: Provisioned, "
                                                          "status: 'True'}, {type: ") +
                                              type + ", status: 'True', reason: R}]}"));
    EXPECT_EQ(ended.phase, RequestState::kEnded) << type;
    EXPECT_EQ(ended.condition, std::string(type) + "=True (R)");
  }
  // Malformed status: nothing read, no exception.
  EXPECT_EQ(ReadRequestState(RequestWith("{conditions: 3}")).phase, RequestState::kPending);
  EXPECT_EQ(ReadRequestState(RequestWith("[1, 2]")).phase, RequestState::kPending);
}

TEST(ProvisioningRequestTest, TemplateCarriesWhatTheAutoscalerSimulatesAndNamesTheRest) {
  auto p = Member("llm-0", "8");
  p->spec.affinity.emplace();
  p->spec.affinity->pod_anti_affinity.emplace();
  p->spec.topology_spread_constraints.emplace_back();
  std::vector<std::string> missing;
  const api::Unstructured t = PodTemplateFor(*p, "ppt-x-0", &missing);
  EXPECT_EQ(missing, (std::vector<std::string>{"podAntiAffinity", "topologySpreadConstraints"}));
  const YAML::Node spec = (*t.object)["template"]["spec"];
  EXPECT_EQ(spec["containers"][0]["resources"]["requests"]["nvidia.com/gpu"].as<std::string>(),
            "8");
  EXPECT_EQ(spec["containers"][0]["resources"]["requests"]["cpu"].as<std::string>(), "500m");
  EXPECT_EQ(spec["nodeSelector"]["node.kubernetes.io/instance-type"].as<std::string>(), "a100x8");
  EXPECT_EQ(spec["tolerations"][0]["operator"].as<std::string>(), "Exists");
  EXPECT_EQ(spec["priority"].as<int>(), 100);
  EXPECT_FALSE(spec["affinity"]);  // pod anti-affinity is left out
}

TEST(ProvisioningRequestTest, WrittenObjectsAreValidV136AndCrdObjects) {
  PHALANX_UPSTREAM_SCHEMAS(schemas);
  fake::FakeHandle h;
  auto plugin = NewWith("{}", h);
  ASSERT_TRUE(plugin.ok());
  FailedCycle cycle({Member("llm-0", "8"), Member("llm-1", "8"), Member("llm-2", "4")});
  ASSERT_EQ(cycle.Run(**plugin).code(), Code::kUnschedulable);
  auto& posts = h.fake_client().posts;
  ASSERT_EQ(posts.size(), 3u);  // two templates (two shapes), then the request
  for (const auto& obj : posts) {
    const nlohmann::json body = schema::YamlToJson(*obj.object);
    EXPECT_TRUE(schema::IsValid(*schemas, body, schema::GroupVersionKind::FromObject(body)))
        << obj.kind;
  }
  // Read back as data: the request's podSets count the members of each template.
  const YAML::Node sets = (*posts[2].object)["spec"]["podSets"];
  ASSERT_EQ(sets.size(), 2u);
  EXPECT_EQ(sets[0]["count"].as<int>(), 2);
  EXPECT_EQ(sets[0]["podTemplateRef"]["name"].as<std::string>(), posts[0].metadata.name);
  EXPECT_EQ(sets[1]["count"].as<int>(), 1);
  EXPECT_EQ(sets[1]["podTemplateRef"]["name"].as<std::string>(), posts[1].metadata.name);
}

TEST(ProvisioningRequestTest, OneRequestPerGangFollowedEndedRetriedAndDeletedOnCommit) {
  fake::FakeHandle h;
  FakeObjects objects;
  h.services().Provide<framework::ObjectEventSource>(&objects);
  h.services().Provide<framework::PodActivator>(&objects);
  auto plugin = NewWith("{maxRequestsPerGang: 2, retryBackoffSeconds: 60}", h);
  ASSERT_TRUE(plugin.ok());
  FailedCycle cycle({Member("llm-0", "8"), Member("llm-1", "8")});
  auto& client = h.fake_client();

  auto first = cycle.Run(**plugin);
  EXPECT_EQ(first.code(), Code::kUnschedulable);
  EXPECT_EQ(first.Message(),
            "scale-up: ProvisioningRequest ml/llm-phalanx-1 created for 2 pods "
            "(best-effort-atomic-scale-up.autoscaling.x-k8s.io)");
  ASSERT_EQ(client.posts.size(), 2u);
  EXPECT_EQ(client.posts[0].kind, "PodTemplate");
  EXPECT_EQ(client.posts[1].metadata.name, "llm-phalanx-1");
  ASSERT_EQ(client.annotation_patches.size(), 2u);
  EXPECT_EQ(client.annotation_patches[0].second.at(std::string(kConsumeAnnotation)),
            "llm-phalanx-1");

  // No second request while the first is in flight; its state is the reason.
  EXPECT_EQ(cycle.Run(**plugin).Message(),
            "scale-up: ProvisioningRequest ml/llm-phalanx-1: waiting for the autoscaler to "
            "accept it");
  objects.Deliver(
      RequestWith("{conditions: [{type: Accepted, status: 'True'}, {type: "
                  "Provisioned, status: 'False', reason: CapacityIsNotFound, "
                  "message: group a100x8 is at max}]}"));
  EXPECT_EQ(objects.activated, (std::vector<std::string>{"ml/llm-0", "ml/llm-1"}));
  EXPECT_EQ(cycle.Run(**plugin).Message(),
            "scale-up: ProvisioningRequest ml/llm-phalanx-1: Provisioned=False "
            "(CapacityIsNotFound): group a100x8 is at max");
  EXPECT_EQ(client.posts.size(), 2u);

  // Failed ends it: deleted with its template, the next one waits for the backoff.
  objects.Deliver(RequestWith("{conditions: [{type: Failed, status: 'True', reason: Expired}]}"));
  h.fake_clock().now = 1000 * kS;
  auto ended = cycle.Run(**plugin);
  EXPECT_EQ(ended.Message(),
            "scale-up: next ProvisioningRequest not before 60s (retryBackoffSeconds) "
            "(ProvisioningRequest ml/llm-phalanx-1 ended: Failed=True (Expired) (before: "
            "Provisioned=False (CapacityIsNotFound): group a100x8 is at max))");
  EXPECT_EQ(client.object_deletes,
            (std::vector<std::string>{"ProvisioningRequest ml/llm-phalanx-1",
                                      "PodTemplate ml/" + client.posts[0].metadata.name}));
  h.fake_clock().now = 1060 * kS;
  EXPECT_NE(cycle.Run(**plugin).Message().find("ProvisioningRequest ml/llm-phalanx-2 created"),
            std::string::npos);
  ASSERT_EQ(client.posts.size(), 4u);

  // The gang commits: its request is no longer needed.
  client.object_deletes.clear();
  dynamic_cast<framework::PodGroupCycleListener&>(**plugin).PodGroupCycleDone(cycle.group, true,
                                                                              "");
  EXPECT_EQ(client.object_deletes,
            (std::vector<std::string>{"ProvisioningRequest ml/llm-phalanx-2",
                                      "PodTemplate ml/" + client.posts[2].metadata.name}));
}

TEST(ProvisioningRequestTest, UnservedKindIsTheReasonAndLeavesNoTemplate) {
  fake::FakeHandle h;
  auto plugin = NewWith("{}", h);
  ASSERT_TRUE(plugin.ok());
  FailedCycle cycle({Member("llm-0", "8"), Member("llm-1", "8")});
  // The template is created, the request is not (no CRD): the template is deleted again.
  h.fake_client().post_check = [](const api::Unstructured& obj) -> api::Status {
    if (obj.kind == "ProvisioningRequest") {
      return absl::NotFoundError("the server could not find the requested resource");
    }
    return absl::OkStatus();
  };
  auto s = cycle.Run(**plugin);
  EXPECT_EQ(s.code(), Code::kUnschedulable);
  EXPECT_EQ(s.Message(),
            "scale-up: cannot create ProvisioningRequest ml/llm-phalanx-1: the API server does "
            "not serve autoscaling.x-k8s.io/v1 provisioningrequests (is cluster-autoscaler's CRD "
            "installed?): the server could not find the requested resource");
  EXPECT_TRUE(h.fake_client().annotation_patches.empty());
  EXPECT_EQ(h.fake_client().object_deletes,
            (std::vector<std::string>{"PodTemplate ml/" + h.fake_client().posts[0].metadata.name}));
}

TEST(ProvisioningRequestTest, SkipsWhenNewNodesWouldNotHelp) {
  fake::FakeHandle h;
  auto plugin = NewWith("{minMembers: 3}", h);
  ASSERT_TRUE(plugin.ok());
  FailedCycle small({Member("llm-0", "8"), Member("llm-1", "8")});
  EXPECT_EQ(small.Run(**plugin).code(), Code::kSkip);  // fewer than minMembers
  FailedCycle admission({Member("a", "1"), Member("b", "1"), Member("c", "1")});
  admission.attempt.placement_failed = false;  // minResources or a queue refused it
  EXPECT_EQ(admission.Run(**plugin).code(), Code::kSkip);
  EXPECT_TRUE(h.fake_client().posts.empty());
}

}  // namespace
}  // namespace phalanx::plugins::provisioningrequest
