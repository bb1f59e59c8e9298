// Tests of framework/types: PodInfo, NodeInfo bookkeeping, ClusterEvent::Match and the
// update-action extractors (upstream framework/types_test.go, events_test.go).
#include "framework/types.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/pod_resources.h"
#include "framework/status.h"

namespace phalanx::framework {
namespace {

api::Quantity Q(const std::string& text) {
  api::Quantity q;
  std::string err;
  EXPECT_TRUE(api::MoveOrMessage(api::Quantity::Parse(text), &q, &err)) << text << ": " << err;
  return q;
}

api::ResourceList List(const std::map<std::string, std::string>& m) {
  api::ResourceList l;
  for (const auto& [k, v] : m) l[k] = Q(v);
  return l;
}

api::Pod MakePod(const std::string& name, const std::map<std::string, std::string>& req = {}) {
  api::Pod p;
  p.metadata.name = name;
  p.metadata.namespace_ = "ns";
  p.metadata.uid = "uid-" + name;
  api::Container c;
  c.name = "c";
  c.resources.requests = List(req);
  p.spec.containers.push_back(c);
  return p;
}

void AddHostPort(api::Pod& p, int32_t port, std::string protocol = "", std::string ip = "") {
  api::ContainerPort cp;
  cp.container_port = port;
  cp.host_port = port;
  cp.protocol = std::move(protocol);
  cp.host_ip = std::move(ip);
  p.spec.containers[0].ports.push_back(cp);
}

api::PodAffinityTerm Term() {
  api::PodAffinityTerm t;
  t.label_selector = api::LabelSelector{{{"app", "x"}}, {}};
  t.topology_key = "kubernetes.io/hostname";
  return t;
}

PodInfoPtr Info(api::Pod p) { return PodInfo::Make(std::make_shared<api::Pod>(std::move(p))); }

std::vector<std::string> Names(const std::vector<PodInfoPtr>& v) {
  std::vector<std::string> out;
  for (const auto& p : v) out.push_back(p->pod->metadata.name);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> Ports(const NodeInfo& ni) {
  std::vector<std::string> out;
  for (const auto& hp : ni.used_ports()) {
    out.push_back(hp.ip + "/" + hp.protocol + "/" + std::to_string(hp.port));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// ---------------------------------------------------------------------------------------
// PodInfo

TEST(PodInfoTest, Make) {
  api::Pod p = MakePod("p", {{"cpu", "500m"}, {"memory", "1Gi"}});
  p.spec.priority = 7;
  AddHostPort(p, 80);  // defaults: 0.0.0.0 / TCP
  AddHostPort(p, 53, "UDP", "10.0.0.1");
  api::ContainerPort no_host;
  no_host.container_port = 8080;  // no hostPort: not a host port
  p.spec.containers[0].ports.push_back(no_host);
  api::Container sidecar;
  sidecar.restart_policy = "Always";
  sidecar.ports.push_back({"", 9090, 9090, "TCP", ""});
  api::Container init;  // a regular init container's ports don't count
  init.ports.push_back({"", 7070, 7070, "TCP", ""});
  p.spec.init_containers = {sidecar, init};
  PodInfoPtr pi = Info(p);
  EXPECT_EQ(pi->priority, 7);
  EXPECT_EQ(pi->requests.milli_cpu, 500);
  EXPECT_EQ(pi->requests.memory, 1024LL * 1024 * 1024);
  std::vector<HostPort> want = {
      {"0.0.0.0", "TCP", 9090}, {"0.0.0.0", "TCP", 80}, {"10.0.0.1", "UDP", 53}};
  EXPECT_EQ(pi->host_ports, want);
  EXPECT_FALSE(pi->has_affinity);
  EXPECT_FALSE(pi->has_required_anti_affinity);
  EXPECT_EQ(Info(MakePod("q"))->priority, 0) << "unset priority is 0";

  // WithPod (the scheduler's assumed copy: spec.nodeName set) derives what Make derives.
  auto assumed = std::make_shared<api::Pod>(p);
  assumed->spec.node_name = "node-1";
  PodInfoPtr with = PodInfo::WithPod(*pi, assumed);
  PodInfoPtr made = PodInfo::Make(assumed);
  EXPECT_EQ(with->pod, assumed);
  EXPECT_EQ(with->requests, made->requests);
  EXPECT_EQ(with->non_zero_requests, made->non_zero_requests);
  EXPECT_EQ(with->scoring_non_zero_requests, made->scoring_non_zero_requests);
  EXPECT_EQ(with->host_ports, made->host_ports);
  EXPECT_EQ(with->priority, made->priority);
  EXPECT_EQ(with->has_affinity, made->has_affinity);
  EXPECT_EQ(with->has_required_anti_affinity, made->has_required_anti_affinity);
}

TEST(PodInfoTest, AffinityFlags) {
  struct Case {
    std::string name;
    std::function<void(api::Affinity&)> set;
    bool has_affinity, has_required_anti;
  };
  const std::vector<Case> cases = {
      {"node affinity only", [](api::Affinity& a) { a.node_affinity.emplace(); }, false, false},
      {"empty pod affinity", [](api::Affinity& a) { a.pod_affinity.emplace(); }, false, false},
      {"required pod affinity",
       [](api::Affinity& a) { a.pod_affinity.emplace().required.push_back(Term()); }, true, false},
      {"preferred pod anti-affinity",
       [](api::Affinity& a) {
         a.pod_anti_affinity.emplace().preferred.push_back({10, Term()});
       },
       true, false},
      {"required pod anti-affinity",
       [](api::Affinity& a) { a.pod_anti_affinity.emplace().required.push_back(Term()); }, true,
       true},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    api::Pod p = MakePod("p");
    p.spec.affinity.emplace();
    tc.set(*p.spec.affinity);
    PodInfoPtr pi = Info(p);
    EXPECT_EQ(pi->has_affinity, tc.has_affinity);
    EXPECT_EQ(pi->has_required_anti_affinity, tc.has_required_anti);
  }
}

// ---------------------------------------------------------------------------------------
// NodeInfo

TEST(NodeInfoTest, SetNodeAllocatableAndImages) {
  api::Node n;
  n.metadata.name = "n1";
  n.status.allocatable =
      List({{"cpu", "4"}, {"memory", "8Gi"}, {"pods", "110"}, {"example.com/gpu", "2"}});
  n.status.images.push_back({{"img:a", "img@sha256:1"}, 100});
  n.status.images.push_back({{"img:b"}, 200});
  NodeInfo ni(std::make_shared<api::Node>(n));
  EXPECT_EQ(ni.name(), "n1");
  EXPECT_EQ(ni.allocatable().milli_cpu, 4000);
  EXPECT_EQ(ni.allocatable().memory, 8LL * 1024 * 1024 * 1024);
  EXPECT_EQ(ni.allocatable().allowed_pod_number, 110);
  EXPECT_EQ(ni.allocatable().Scalar(api::InternScalarResource("example.com/gpu")), 2);
  ASSERT_EQ(ni.image_states().size(), 3u);
  EXPECT_EQ(ni.image_states().at("img:a").size, 100);
  EXPECT_EQ(ni.image_states().at("img@sha256:1").size, 100);
  EXPECT_EQ(ni.image_states().at("img:b").size, 200);
  // A new Node object replaces the images.
  n.status.images = {{{"img:c"}, 1}};
  ni.SetNode(std::make_shared<api::Node>(n));
  EXPECT_EQ(ni.image_states().size(), 1u);
  ni.RemoveNode();
  EXPECT_EQ(ni.node(), nullptr);
  EXPECT_EQ(ni.name(), "");
}

TEST(NodeInfoTest, AddAndRemovePods) {
  api::Pod a = MakePod("a", {{"cpu", "100m"}, {"memory", "500"}, {"example.com/foo", "3"}});
  AddHostPort(a, 80, "TCP", "127.0.0.1");
  api::Pod b = MakePod("b");  // no requests: counts the non-zero defaults
  AddHostPort(b, 8080);
  api::Pod c = MakePod("c", {{"cpu", "200m"}, {"memory", "1Ki"}});
  c.spec.affinity.emplace().pod_affinity.emplace().required.push_back(Term());
  api::Pod d = MakePod("d", {{"cpu", "1"}, {"ephemeral-storage", "1Gi"}});
  d.spec.affinity.emplace().pod_anti_affinity.emplace().required.push_back(Term());
  AddHostPort(d, 80, "TCP", "127.0.0.1");  // same port as a: a multiset

  NodeInfo ni;
  for (const auto& p : {a, b, c, d}) ni.AddPod(Info(p));
  const auto foo = api::InternScalarResource("example.com/foo");
  EXPECT_EQ(Names(ni.pods()), (std::vector<std::string>{"a", "b", "c", "d"}));
  EXPECT_EQ(Names(ni.pods_with_affinity()), (std::vector<std::string>{"c", "d"}));
  EXPECT_EQ(Names(ni.pods_with_required_anti_affinity()), (std::vector<std::string>{"d"}));
  EXPECT_EQ(ni.requested().milli_cpu, 100 + 200 + 1000);
  EXPECT_EQ(ni.requested().memory, 500 + 1024);
  EXPECT_EQ(ni.requested().ephemeral_storage, 1024LL * 1024 * 1024);
  EXPECT_EQ(ni.requested().Scalar(foo), 3);
  EXPECT_EQ(ni.non_zero_requested().milli_cpu, 100 + api::kDefaultMilliCPURequest + 200 + 1000);
  EXPECT_EQ(ni.non_zero_requested().memory,
            500 + api::kDefaultMemoryRequest + 1024 + api::kDefaultMemoryRequest);
  EXPECT_EQ(Ports(ni),
            (std::vector<std::string>{"0.0.0.0/TCP/8080", "127.0.0.1/TCP/80", "127.0.0.1/TCP/80"}));

  struct Step {
    std::string remove;
    bool found;
    std::vector<std::string> pods, with_affinity, with_anti;
    int64_t cpu, nz_memory, foo;
    std::vector<std::string> ports;
  };
  const std::vector<Step> steps = {
      {"d",
       true,
       {"a", "b", "c"},
       {"c"},
       {},
       300,
       500 + api::kDefaultMemoryRequest + 1024,
       3,
       {"0.0.0.0/TCP/8080", "127.0.0.1/TCP/80"}},
      {"d",
       false,
       {"a", "b", "c"},
       {"c"},
       {},
       300,
       500 + api::kDefaultMemoryRequest + 1024,
       3,
       {"0.0.0.0/TCP/8080", "127.0.0.1/TCP/80"}},
      {"a",
       true,
       {"b", "c"},
       {"c"},
       {},
       200,
       api::kDefaultMemoryRequest + 1024,
       0,
       {"0.0.0.0/TCP/8080"}},
      {"c", true, {"b"}, {}, {}, 0, api::kDefaultMemoryRequest, 0, {"0.0.0.0/TCP/8080"}},
      {"b", true, {}, {}, {}, 0, 0, 0, {}},
  };
  for (const auto& st : steps) {
    SCOPED_TRACE("remove " + st.remove);
    // Removal is by namespace/name: any object with the pod's key will do.
    api::Pod key_only;
    key_only.metadata.name = st.remove;
    key_only.metadata.namespace_ = "ns";
    EXPECT_EQ(ni.RemovePod(key_only), st.found);
    EXPECT_EQ(Names(ni.pods()), st.pods);
    EXPECT_EQ(Names(ni.pods_with_affinity()), st.with_affinity);
    EXPECT_EQ(Names(ni.pods_with_required_anti_affinity()), st.with_anti);
    EXPECT_EQ(ni.requested().milli_cpu, st.cpu);
    EXPECT_EQ(ni.non_zero_requested().memory, st.nz_memory);
    EXPECT_EQ(ni.requested().Scalar(foo), st.foo);
    EXPECT_EQ(Ports(ni), st.ports);
  }
  EXPECT_EQ(ni.requested().ephemeral_storage, 0);
  EXPECT_EQ(ni.non_zero_requested().milli_cpu, 0);

  // A pod in another namespace with the same name is another pod.
  ni.AddPod(Info(MakePod("x")));
  api::Pod other_ns = MakePod("x");
  other_ns.metadata.namespace_ = "other";
  EXPECT_FALSE(ni.RemovePod(other_ns));
  EXPECT_EQ(ni.pods().size(), 1u);
}

// ---------------------------------------------------------------------------------------
// ClusterEvent::Match

TEST(ClusterEventTest, Match) {
  auto E = [](EventResource r, uint32_t a) { return ClusterEvent{r, a, ""}; };
  struct Case {
    std::string name;
    ClusterEvent registered, incoming;
    bool want;
  };
  const std::vector<Case> cases = {
      {"same resource and action", E(EventResource::kNode, kAdd), E(EventResource::kNode, kAdd),
       true},
      {"same resource, other action", E(EventResource::kNode, kAdd),
       E(EventResource::kNode, kUpdateNodeLabel), false},
      {"action bits intersect", E(EventResource::kNode, kAdd | kUpdateNodeLabel),
       E(EventResource::kNode, kUpdateNodeLabel | kUpdateNodeTaint), true},
      {"Update covers every update flag", E(EventResource::kNode, kUpdate),
       E(EventResource::kNode, kUpdateNodeAllocatable), true},
      {"Update does not cover Add", E(EventResource::kNode, kUpdate), E(EventResource::kNode, kAdd),
       false},
      {"other resource", E(EventResource::kNode, kAll),
       E(EventResource::kPersistentVolumeClaim, kAdd), false},
      {"Pod covers assigned pods", E(EventResource::kPod, kDelete),
       E(EventResource::kAssignedPod, kDelete), true},
      {"Pod covers unscheduled pods", E(EventResource::kPod, kUpdatePodSchedulingGatesEliminated),
       E(EventResource::kUnscheduledPod, kUpdatePodSchedulingGatesEliminated), true},
      {"AssignedPod does not cover unscheduled pods", E(EventResource::kAssignedPod, kAll),
       E(EventResource::kUnscheduledPod, kAdd), false},
      {"AssignedPod does not cover Pod", E(EventResource::kAssignedPod, kAll),
       E(EventResource::kPod, kAdd), false},
      {"wildcard registration covers any resource", E(EventResource::kWildCard, kAll),
       E(EventResource::kPodGroup, kUpdateOther), true},
      {"wildcard registration still needs a common action", E(EventResource::kWildCard, kAdd),
       E(EventResource::kNode, kDelete), false},
      {"a specific registration does not match a wildcard event", E(EventResource::kNode, kAll),
       E(EventResource::kWildCard, kAll), false},
  };
  for (const auto& tc : cases) {
    EXPECT_EQ(tc.registered.Match(tc.incoming), tc.want) << tc.name;
  }
}

// ---------------------------------------------------------------------------------------
// NodeUpdateActions (upstream nodeSchedulingPropertiesChange)

TEST(NodeUpdateActionsTest, Table) {
  api::Node base;
  base.metadata.name = "n";
  base.metadata.labels = {{"zone", "a"}};
  base.metadata.annotations = {{"note", "1"}};
  base.status.allocatable = List({{"cpu", "4"}, {"memory", "8Gi"}});
  base.status.capacity = base.status.allocatable;
  base.status.conditions = {{"Ready", "True"}};
  base.spec.taints = {{"k", "v", "NoSchedule"}};
  struct Case {
    std::string name;
    std::function<void(api::Node&)> change;
    uint32_t want;
  };
  const std::vector<Case> cases = {
      {"no change", [](api::Node&) {}, 0},
      {"capacity and images only",
       [](api::Node& n) {
         n.status.capacity = List({{"cpu", "8"}});
         n.status.images.push_back({{"img"}, 1});
       },
       0},
      {"allocatable", [](api::Node& n) { n.status.allocatable["cpu"] = Q("3"); },
       kUpdateNodeAllocatable},
      {"allocatable, same value other spelling",
       [](api::Node& n) { n.status.allocatable["cpu"] = Q("4000m"); }, 0},
      {"label added", [](api::Node& n) { n.metadata.labels["gpu"] = "true"; }, kUpdateNodeLabel},
      {"label value", [](api::Node& n) { n.metadata.labels["zone"] = "b"; }, kUpdateNodeLabel},
      {"taint removed", [](api::Node& n) { n.spec.taints.clear(); }, kUpdateNodeTaint},
      {"taint effect", [](api::Node& n) { n.spec.taints[0].effect = "NoExecute"; },
       kUpdateNodeTaint},
      {"spec.unschedulable", [](api::Node& n) { n.spec.unschedulable = true; }, kUpdateNodeTaint},
      {"condition status", [](api::Node& n) { n.status.conditions[0].status = "False"; },
       kUpdateNodeCondition},
      {"annotation", [](api::Node& n) { n.metadata.annotations["note"] = "2"; },
       kUpdateNodeAnnotation},
      {"several at once",
       [](api::Node& n) {
         n.metadata.labels["zone"] = "b";
         n.status.allocatable["memory"] = Q("4Gi");
       },
       kUpdateNodeLabel | kUpdateNodeAllocatable},
  };
  for (const auto& tc : cases) {
    api::Node n = base;
    tc.change(n);
    EXPECT_EQ(NodeUpdateActions(base, n), tc.want) << tc.name;
  }
}

// ---------------------------------------------------------------------------------------
// PodUpdateActions (upstream PodSchedulingPropertiesChange + isPodUpdated)

TEST(PodUpdateActionsTest, Table) {
  api::Pod base = MakePod("p", {{"cpu", "1"}, {"memory", "1Gi"}});
  base.metadata.labels = {{"app", "x"}};
  base.spec.tolerations = {{"k", "Equal", "v", "NoSchedule", std::nullopt}};
  struct Case {
    std::string name;
    std::function<void(api::Pod&)> change;
    uint32_t want;
    bool gated = false;  // start from a pod with a scheduling gate
  };
  const std::vector<Case> cases = {
      {"status only",
       [](api::Pod& p) {
         p.status.conditions.push_back({"PodScheduled", "False", "Unschedulable", "msg"});
         p.status.nominated_node_name = "n1";
       },
       0},
      {"label", [](api::Pod& p) { p.metadata.labels["app"] = "y"; }, kUpdatePodLabel},
      {"cpu scaled down",
       [](api::Pod& p) { p.spec.containers[0].resources.requests["cpu"] = Q("500m"); },
       kUpdatePodScaleDown},
      {"cpu scaled up",
       [](api::Pod& p) { p.spec.containers[0].resources.requests["cpu"] = Q("2"); }, 0},
      // upstream extractPodScaleDown: any request that decreases (or disappears) frees room.
      {"cpu down, memory up",
       [](api::Pod& p) {
         p.spec.containers[0].resources.requests["cpu"] = Q("500m");
         p.spec.containers[0].resources.requests["memory"] = Q("2Gi");
       },
       kUpdatePodScaleDown},
      {"request removed",
       [](api::Pod& p) { p.spec.containers[0].resources.requests.erase("memory"); },
       kUpdatePodScaleDown},
      {"scalar request added",
       [](api::Pod& p) { p.spec.containers[0].resources.requests["example.com/gpu"] = Q("1"); }, 0},
      {"toleration added",
       [](api::Pod& p) {
         p.spec.tolerations.push_back({"k2", "Exists", "", "", std::nullopt});
       },
       kUpdatePodTolerations},
      {"toleration value", [](api::Pod& p) { p.spec.tolerations[0].value = "w"; },
       kUpdatePodTolerations},
      {"annotation only", [](api::Pod& p) { p.metadata.annotations["a"] = "b"; }, kUpdateOther},
      {"node selector only", [](api::Pod& p) { p.spec.node_selector["zone"] = "a"; }, kUpdateOther},
      {"label and annotation: only the label",
       [](api::Pod& p) {
         p.metadata.labels["app"] = "y";
         p.metadata.annotations["a"] = "b";
       },
       kUpdatePodLabel},
      {"gates eliminated", [](api::Pod& p) { p.spec.scheduling_gates.clear(); },
       kUpdatePodSchedulingGatesEliminated, true},
      {"gate removed, another remains", [](api::Pod& p) { p.spec.scheduling_gates.pop_back(); }, 0,
       true},
  };
  for (const auto& tc : cases) {
    api::Pod old_pod = base;
    if (tc.gated) old_pod.spec.scheduling_gates = {{"g1"}, {"g2"}};
    api::Pod new_pod = old_pod;
    tc.change(new_pod);
    EXPECT_EQ(PodUpdateActions(old_pod, new_pod), tc.want) << tc.name;
    // The PodInfo overload (precomputed requests) answers the same.
    EXPECT_EQ(PodUpdateActions(*Info(old_pod), *Info(new_pod)), tc.want) << tc.name << " (PodInfo)";
  }
  // A scalar resource scaled down.
  api::Pod with_gpu = base;
  with_gpu.spec.containers[0].resources.requests["example.com/gpu"] = Q("2");
  api::Pod less_gpu = with_gpu;
  less_gpu.spec.containers[0].resources.requests["example.com/gpu"] = Q("1");
  EXPECT_EQ(PodUpdateActions(with_gpu, less_gpu), kUpdatePodScaleDown);
  api::Pod no_gpu = with_gpu;
  no_gpu.spec.containers[0].resources.requests.erase("example.com/gpu");
  EXPECT_EQ(PodUpdateActions(with_gpu, no_gpu), kUpdatePodScaleDown);
}

// Copies share reasons and plugin until one of them changes (copy-on-write): a change of
// a copy never shows in the original, whichever is changed.
TEST(StatusTest, CopiesAreIndependent) {
  Status a(Code::kUnschedulable, "Insufficient cpu");
  a.WithPlugin("NodeResourcesFit");
  Status b = a;
  b.AppendReason("Insufficient memory");
  EXPECT_EQ(a.Message(), "Insufficient cpu");
  EXPECT_EQ(b.Message(), "Insufficient cpu, Insufficient memory");
  Status c = a;
  c.WithPlugin("NodeResourcesFit");  // same name: no change
  c.WithPlugin("Other");
  EXPECT_EQ(a.plugin(), "NodeResourcesFit");
  EXPECT_EQ(c.plugin(), "Other");
  EXPECT_EQ(c.Message(), "Insufficient cpu");
  a.AppendReason("Too many pods");  // the original changed after copies were taken
  EXPECT_EQ(c.Message(), "Insufficient cpu");
  EXPECT_EQ(a.reasons().size(), 2u);
  Status ok;
  EXPECT_TRUE(ok.reasons().empty());
  EXPECT_TRUE(ok.plugin().empty());
  EXPECT_EQ(Status(Code::kUnschedulable, std::vector<std::string>{}).Message(), "");
}

}  // namespace
}  // namespace phalanx::framework
