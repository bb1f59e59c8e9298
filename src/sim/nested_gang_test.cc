// Nested gang quorums end to end through the simulator: KAI PodGroup subGroups
// and Volcano minTaskMember commit only when every subgroup's own minimum fits, and a
// property test over random clusters recomputes, from the pods' labels and the PodGroup
// specs alone (not the gang model), that no subgroup is ever bound below its minimum and no
// node is overcommitted.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "config/config.h"
#include "plugins/registry.h"
#include "sim/scenario.h"
#include "sim/simulation.h"

namespace phalanx::sim {
namespace {

SimulationResult Simulate(const std::string& name, const std::string& manifests) {
  const std::filesystem::path path = std::filesystem::path(::testing::TempDir()) / (name + ".yaml");
  std::ofstream(path) << manifests;
  Scenario sc;
  EXPECT_EQ(LoadManifestScenario(path.string(), &sc), absl::OkStatus());
  SimulationOptions o;
  o.seed = 1;
  o.config = config::DefaultConfiguration();
  o.registry = plugins::NewInTreeRegistry();
  SimulationResult r;
  EXPECT_EQ(RunSimulation(sc, o, &r), absl::OkStatus());
  return r;
}

// A node; `arrival_s` > 0 makes it join the cluster later in the run.
std::string Node(const std::string& name, int cpu, int gpus, int arrival_s = 0) {
  std::string s = "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: " + name + "\n";
  if (arrival_s > 0) {
    s += "  annotations: {simulation.phalanx.dev/arrival-seconds: \"" + std::to_string(arrival_s) +
         "\"}\n";
  }
  s += "status:\n  capacity: {cpu: \"" + std::to_string(cpu) + "\", memory: 64Gi, pods: \"110\"";
  if (gpus > 0) s += ", nvidia.com/gpu: \"" + std::to_string(gpus) + "\"";
  return s + "}\n";
}

// A pod of namespace ml; `meta` is extra metadata (labels / annotations lines).
std::string Pod(const std::string& name, const std::string& meta, int milli_cpu, int gpus) {
  std::string s =
      "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\n  namespace: ml\n" + meta +
      "spec:\n  containers:\n  - name: app\n" +
      "    image: busybox\n    resources: {requests: {cpu: " + std::to_string(milli_cpu) + "m";
  if (gpus > 0) s += ", nvidia.com/gpu: \"" + std::to_string(gpus) + "\"";
  return s + "}}\n";
}

std::string KaiPod(const std::string& name, const std::string& group, const std::string& sub,
                   int milli_cpu, int gpus) {
  return Pod(name,
             "  labels: {kai.scheduler/subgroup-name: " + sub +
                 "}\n  annotations: {pod-group-name: " + group + "}\n",
             milli_cpu, gpus);
}

std::string VolcanoPod(const std::string& name, const std::string& group, const std::string& task,
                       int milli_cpu, int gpus) {
  return Pod(name,
             "  annotations: {scheduling.k8s.io/group-name: " + group +
                 ", volcano.sh/task-spec: " + task + "}\n",
             milli_cpu, gpus);
}

const PodOutcome* Find(const SimulationResult& r, const std::string& key) {
  for (const auto& o : r.outcomes) {
    if (o.pod == key) return &o;
  }
  return nullptr;
}

// Prefill (4 pods, min 2) fits the CPU node; decode (2 pods, min 2) needs a GPU that no
// node has until `gpu-node` joins (gpu_node_joins): then everything is bound, else nothing,
// and every prefill pod's reason names decode.
void ExpectPrefillDecode(const SimulationResult& r, bool gpu_node_joins,
                         const std::vector<std::string>& prefill,
                         const std::vector<std::string>& decode) {
  EXPECT_TRUE(r.invariant_violations.empty());
  int bound = 0;
  for (const auto& k : prefill) {
    const PodOutcome* o = Find(r, k);
    ASSERT_NE(o, nullptr) << k;
    bound += o->scheduled_s.has_value();
    if (!gpu_node_joins) {
      EXPECT_FALSE(o->scheduled_s.has_value()) << k << " bound to " << o->node;
      EXPECT_NE(o->reason.find("subgroup \"decode\": 0/2 members placeable"), std::string::npos)
          << k << ": " << o->reason;
    }
  }
  for (const auto& k : decode) {
    const PodOutcome* o = Find(r, k);
    ASSERT_NE(o, nullptr) << k;
    EXPECT_EQ(o->scheduled_s.has_value(), gpu_node_joins) << k << ": " << o->reason;
    if (gpu_node_joins) {
      EXPECT_EQ(o->node, "gpu-node") << k;
    }
  }
  if (gpu_node_joins) {
    EXPECT_EQ(bound, static_cast<int>(prefill.size()));
  }
}

constexpr char kKaiServe[] = R"(---
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: serve, namespace: ml}
spec:
  subGroups:
  - {name: prefill, minMember: 2}
  - {name: decode, minMember: 2}
)";

std::string KaiScenario(bool gpu_node_joins) {
  std::string m = Node("cpu-node", 16, 0) + kKaiServe;
  if (gpu_node_joins) m += Node("gpu-node", 8, 2, /*arrival_s=*/30);
  for (int i = 0; i < 4; ++i)
    m += KaiPod("prefill-" + std::to_string(i), "serve", "prefill", 1000, 0);
  for (int i = 0; i < 2; ++i)
    m += KaiPod("decode-" + std::to_string(i), "serve", "decode", 1000, 1);
  return m;
}

const std::vector<std::string> kPrefill = {"ml/prefill-0", "ml/prefill-1", "ml/prefill-2",
                                           "ml/prefill-3"};
const std::vector<std::string> kDecode = {"ml/decode-0", "ml/decode-1"};

// Four prefill pods reach the summed minMember (4) on their own; decode needs a
// GPU no node has. Nothing may be bound, and the reason names decode.
TEST(NestedGangSimTest, KaiDecodeShortBindsNothing) {
  SimulationResult r = Simulate("kai-short", KaiScenario(/*gpu_node_joins=*/false));
  ExpectPrefillDecode(r, false, kPrefill, kDecode);
}

// The same, and a GPU node joins at 30 s: both subgroups are bound.
TEST(NestedGangSimTest, KaiGpuNodeJoinsBindsBothSubGroups) {
  SimulationResult r = Simulate("kai-joins", KaiScenario(/*gpu_node_joins=*/true));
  ExpectPrefillDecode(r, true, kPrefill, kDecode);
  for (const auto& k : kDecode) EXPECT_GE(*Find(r, k)->scheduled_s, 30.0) << k;
}

constexpr char kVolcanoServe[] = R"(---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: serve, namespace: ml}
spec:
  minMember: 4
  minTaskMember: {prefill: 2, decode: 2}
)";

std::string VolcanoScenario(bool gpu_node_joins) {
  std::string m = Node("cpu-node", 16, 0) + kVolcanoServe;
  if (gpu_node_joins) m += Node("gpu-node", 8, 2, /*arrival_s=*/30);
  for (int i = 0; i < 4; ++i) {
    m += VolcanoPod("prefill-" + std::to_string(i), "serve", "prefill", 1000, 0);
  }
  for (int i = 0; i < 2; ++i)
    m += VolcanoPod("decode-" + std::to_string(i), "serve", "decode", 1000, 1);
  return m;
}

TEST(NestedGangSimTest, VolcanoDecodeShortBindsNothing) {
  SimulationResult r = Simulate("volcano-short", VolcanoScenario(false));
  ExpectPrefillDecode(r, false, kPrefill, kDecode);
}

TEST(NestedGangSimTest, VolcanoGpuNodeJoinsBindsBothTasks) {
  SimulationResult r = Simulate("volcano-joins", VolcanoScenario(true));
  ExpectPrefillDecode(r, true, kPrefill, kDecode);
}

// A KAI pod whose subgroup label names no subgroup stays pending with a reason naming the
// label value; the gang's real members are unaffected.
TEST(NestedGangSimTest, KaiPodNamingNoSubGroupIsPendingWithReason) {
  std::string m = Node("cpu-node", 16, 0) + kKaiServe;
  for (int i = 0; i < 2; ++i)
    m += KaiPod("prefill-" + std::to_string(i), "serve", "prefill", 500, 0);
  for (int i = 0; i < 2; ++i) m += KaiPod("decode-" + std::to_string(i), "serve", "decode", 500, 0);
  m += KaiPod("stray", "serve", "decdoe", 500, 0);
  SimulationResult r = Simulate("kai-stray", m);
  const PodOutcome* stray = Find(r, "ml/stray");
  ASSERT_NE(stray, nullptr);
  EXPECT_FALSE(stray->scheduled_s.has_value());
  EXPECT_NE(stray->reason.find("label kai.scheduler/subgroup-name \"decdoe\" names no subgroup "
                               "of pod group ml/serve (leaf subgroups: prefill, decode)"),
            std::string::npos)
      << stray->reason;
  for (const auto& k : {"ml/prefill-0", "ml/prefill-1", "ml/decode-0", "ml/decode-1"}) {
    EXPECT_TRUE(Find(r, k)->scheduled_s.has_value()) << k << ": " << Find(r, k)->reason;
  }
}

// Timed node arrivals: a Node with the arrival annotation joins later; a bad value is an
// error naming the file, the node and the annotation.
TEST(NestedGangSimTest, NodeArrivalAnnotation) {
  const std::filesystem::path path =
      std::filesystem::path(::testing::TempDir()) / "node-arrival.yaml";
  std::ofstream(path) << Node("now", 4, 0) + Node("later", 4, 0, 30);
  Scenario sc;
  ASSERT_EQ(LoadManifestScenario(path.string(), &sc), absl::OkStatus());
  ASSERT_EQ(sc.nodes.size(), 1u);
  ASSERT_EQ(sc.later_nodes.size(), 1u);
  EXPECT_EQ(sc.later_nodes[0].node.metadata.name, "later");
  EXPECT_EQ(sc.later_nodes[0].arrival, 30 * api::kNanosPerSecond);
  const std::filesystem::path bad = std::filesystem::path(::testing::TempDir()) / "bad.yaml";
  std::ofstream(bad) << "apiVersion: v1\nkind: Node\nmetadata:\n  name: n\n  annotations: "
                        "{simulation.phalanx.dev/arrival-seconds: soon}\n";
  Scenario sc2;
  EXPECT_EQ(LoadManifestScenario(bad.string(), &sc2).message(),
            bad.string() +
                ": Node n: metadata.annotations[simulation.phalanx.dev/arrival-seconds]"
                ": Invalid value: \"soon\": must be a non-negative number of seconds");
}

// ---- property test ----------------------------------------------------------------------

struct GenSubGroup {
  std::string name;
  int min = 0;
  int pods = 0;
  int milli_cpu = 0;
  int gpus = 0;
};
struct GenGang {
  std::string name;
  bool volcano = false;
  int min_member = 0;  // Volcano minMember / KAI explicit minMember (0: unset)
  std::vector<GenSubGroup> subs;
};
struct GenNode {
  std::string name;
  int cpu = 0;
  int gpus = 0;
  int arrival_s = 0;
};
struct GenPod {
  std::string key;
  std::string gang;  // "" for a plain pod
  std::string sub;
  int milli_cpu = 0;
  int gpus = 0;
};

struct World {
  std::vector<GenNode> nodes;
  std::vector<GenGang> gangs;
  std::vector<GenPod> pods;
  std::string manifests;
};

World Generate(uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  World w;
  const int nodes = pick(1, 5);
  for (int i = 0; i < nodes; ++i) {
    GenNode n{"node-" + std::to_string(i), pick(2, 8), pick(0, 2) == 0 ? pick(1, 4) : 0,
              pick(0, 3) == 0 ? pick(5, 60) : 0};
    w.manifests += Node(n.name, n.cpu, n.gpus, n.arrival_s);
    w.nodes.push_back(n);
  }
  const int gangs = pick(1, 4);
  for (int g = 0; g < gangs; ++g) {
    GenGang gang{"gang-" + std::to_string(g), pick(0, 1) == 1, 0, {}};
    const int subs = pick(1, 3);
    int sum = 0, pods = 0;
    for (int s = 0; s < subs; ++s) {
      GenSubGroup sg{"sub-" + std::to_string(s), pick(1, 3), 0, pick(2, 16) * 250, 0};
      sg.pods = sg.min + pick(0, 2);
      if (pick(0, 2) == 0) sg.gpus = pick(1, 2);
      sum += sg.min;
      pods += sg.pods;
      gang.subs.push_back(sg);
    }
    // Volcano: minMember at least the tasks' sum, so that Volcano checks every task, and at
    // most the pods that exist (a gang that never reaches its quorum stays gated, reasonless).
    gang.min_member = gang.volcano ? pick(sum, pods) : (pick(0, 1) == 1 ? sum : 0);
    std::string obj;
    if (gang.volcano) {
      obj = "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: " +
            gang.name + ", namespace: ml}\nspec:\n  minMember: " + std::to_string(gang.min_member) +
            "\n  minTaskMember:\n";
      for (const auto& sg : gang.subs)
        obj += "    " + sg.name + ": " + std::to_string(sg.min) + "\n";
    } else {
      obj = "---\napiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {name: " +
            gang.name + ", namespace: ml}\nspec:\n";
      if (gang.min_member > 0) obj += "  minMember: " + std::to_string(gang.min_member) + "\n";
      obj += "  subGroups:\n";
      for (const auto& sg : gang.subs) {
        obj += "  - {name: " + sg.name + ", minMember: " + std::to_string(sg.min) + "}\n";
      }
    }
    w.manifests += obj;
    for (const auto& sg : gang.subs) {
      for (int i = 0; i < sg.pods; ++i) {
        GenPod p{"ml/" + gang.name + "-" + sg.name + "-" + std::to_string(i), gang.name, sg.name,
                 sg.milli_cpu, sg.gpus};
        const std::string name = p.key.substr(3);
        w.manifests += gang.volcano ? VolcanoPod(name, gang.name, sg.name, sg.milli_cpu, sg.gpus)
                                    : KaiPod(name, gang.name, sg.name, sg.milli_cpu, sg.gpus);
        w.pods.push_back(p);
      }
    }
    w.gangs.push_back(gang);
  }
  for (int i = pick(0, 3); i > 0; --i) {  // plain pods competing for the same nodes
    GenPod p{"ml/plain-" + std::to_string(i), "", "", pick(2, 12) * 250, 0};
    w.manifests += Pod(p.key.substr(3), "", p.milli_cpu, 0);
    w.pods.push_back(p);
  }
  return w;
}

// The oracle: from the generated objects and the final bindings only.
void CheckWorld(uint32_t seed, const World& w, const SimulationResult& r) {
  std::map<std::string, std::string> node_of;
  for (const auto& o : r.outcomes) {
    if (o.scheduled_s) node_of[o.pod] = o.node;
  }
  std::map<std::string, std::map<std::string, int>> bound;  // gang -> sub -> bound pods
  std::map<std::string, int> bound_total;
  std::map<std::string, std::pair<int, int>> used;  // node -> (milli cpu, gpus)
  for (const auto& p : w.pods) {
    auto it = node_of.find(p.key);
    if (it == node_of.end()) continue;
    used[it->second].first += p.milli_cpu;
    used[it->second].second += p.gpus;
    if (!p.gang.empty()) {
      ++bound[p.gang][p.sub];
      ++bound_total[p.gang];
    }
  }
  for (const auto& g : w.gangs) {
    if (bound_total[g.name] == 0) continue;
    int sum = 0;
    for (const auto& sg : g.subs) {
      sum += sg.min;
      EXPECT_GE(bound[g.name][sg.name], sg.min)
          << "seed " << seed << ": gang " << g.name << " bound " << bound_total[g.name]
          << " pods but subgroup " << sg.name << " only " << bound[g.name][sg.name] << "/"
          << sg.min;
    }
    EXPECT_GE(bound_total[g.name], std::max(g.min_member, sum)) << "seed " << seed << " " << g.name;
  }
  for (const auto& n : w.nodes) {
    EXPECT_LE(used[n.name].first, n.cpu * 1000) << "seed " << seed << ": " << n.name << " cpu";
    EXPECT_LE(used[n.name].second, n.gpus) << "seed " << seed << ": " << n.name << " gpus";
  }
  EXPECT_TRUE(r.invariant_violations.empty())
      << "seed " << seed << ": "
      << (r.invariant_violations.empty() ? "" : r.invariant_violations[0]);
}

TEST(NestedGangSimTest, PropertyNeverPartialSubGroupNeverOvercommit) {
  int gangs_bound = 0, gangs_pending = 0;
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    World w = Generate(seed);
    SimulationResult r = Simulate("prop-" + std::to_string(seed), w.manifests);
    CheckWorld(seed, w, r);
    for (const auto& g : w.gangs) {
      bool any = false;
      for (const auto& o : r.outcomes) {
        any = any || (o.scheduled_s && o.pod.rfind("ml/" + g.name + "-", 0) == 0);
      }
      (any ? gangs_bound : gangs_pending)++;
    }
  }
  // The generator must exercise both outcomes, or the property says little.
  EXPECT_GT(gangs_bound, 5);
  EXPECT_GT(gangs_pending, 5);
}

}  // namespace
}  // namespace phalanx::sim
