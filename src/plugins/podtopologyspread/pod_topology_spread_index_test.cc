// Differential property test: PodTopologySpread reading per-domain counts from the
// snapshot's PodAffinityIndex (classes of alike pods, per-topology-domain pod counts and node
// counts maintained by Cache::UpdateSnapshot and the snapshot's view edits) against the same
// plugin walking every pod of every node (upstream's algorithm, SetUseIndex(false)), on random
// clusters changed step by step: PreFilter status, TpValueToMatchNum and critical paths,
// Filter per node (also after PreFilterExtensions AddPod / RemovePod), PreScore status,
// TopologyValueToPodCounts, Score and NormalizeScore per node must be identical.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "backend/cache/cache.h"
#include "backend/cache/snapshot.h"
#include "framework/pod_affinity_index.h"
#include "plugins/podtopologyspread/pod_topology_spread.h"
#include "plugins/testing_fake_handle.h"

namespace phalanx::plugins::podtopologyspread {
namespace {

using Rng = std::mt19937_64;

size_t Pick(Rng& rng, size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); }
bool Coin(Rng& rng, double p) { return std::bernoulli_distribution(p)(rng); }

const std::vector<std::string> kNamespaces = {"ns1", "ns2"};
const std::vector<std::string> kKeys = {"kubernetes.io/hostname", "zone", "region"};

api::NodePtr RandomNode(Rng& rng, const std::string& name) {
  auto n = std::make_shared<api::Node>();
  n->metadata.name = name;
  n->metadata.labels["kubernetes.io/hostname"] = name;
  if (Coin(rng, 0.85)) n->metadata.labels["zone"] = "z" + std::to_string(Pick(rng, 4));
  if (Coin(rng, 0.7)) n->metadata.labels["region"] = "r" + std::to_string(Pick(rng, 2));
  if (Coin(rng, 0.3)) n->metadata.labels["disk"] = "ssd";
  if (Coin(rng, 0.2)) n->spec.taints.push_back({"dedicated", "x", "NoSchedule"});
  return n;
}

std::optional<api::LabelSelector> RandomSelector(Rng& rng) {
  if (Coin(rng, 0.1)) return std::nullopt;  // nil: counts nothing
  api::LabelSelector s;
  switch (Pick(rng, 5)) {
    case 0:
      s.match_labels["app"] = std::string(1, static_cast<char>('a' + Pick(rng, 3)));
      break;
    case 1:
      s.match_expressions.push_back({"app", "In", {"a", "b"}});
      break;
    case 2:
      s.match_expressions.push_back({"tier", "Exists", {}});
      break;
    case 3:
      s.match_expressions.push_back({"app", "NotIn", {"c"}});
      break;
    default:
      break;  // empty selector: counts nothing either (countPodsMatchSelector)
  }
  return s;
}

api::TopologySpreadConstraint RandomConstraint(Rng& rng, const std::string& key) {
  api::TopologySpreadConstraint c;
  c.max_skew = static_cast<int32_t>(1 + Pick(rng, 3));
  c.topology_key = key;
  c.when_unsatisfiable = Coin(rng, 0.5) ? "DoNotSchedule" : "ScheduleAnyway";
  c.label_selector = RandomSelector(rng);
  if (Coin(rng, 0.2)) c.min_domains = static_cast<int32_t>(1 + Pick(rng, 5));
  if (Coin(rng, 0.3)) c.node_affinity_policy = Coin(rng, 0.5) ? "Honor" : "Ignore";
  if (Coin(rng, 0.15)) c.node_taints_policy = Coin(rng, 0.5) ? "Honor" : "Ignore";
  if (Coin(rng, 0.15)) c.match_label_keys.push_back("tier");
  return c;
}

// A template: pods made from one share labels (so classes have many members).
api::Pod RandomTemplate(Rng& rng) {
  api::Pod p;
  if (Coin(rng, 0.8))
    p.metadata.labels["app"] = std::string(1, static_cast<char>('a' + Pick(rng, 3)));
  if (Coin(rng, 0.5)) p.metadata.labels["tier"] = Coin(rng, 0.5) ? "x" : "y";
  return p;
}

std::string Describe(const framework::Status& s) {
  return std::to_string(static_cast<int>(s.code())) + " " + s.ToString();
}

struct Result {
  std::string prefilter;
  std::optional<PreFilterStateView> state;
  std::vector<std::string> filter, filter_after_add, filter_after_remove;
  std::string prescore;
  std::optional<PreScoreStateView> score_state;
  std::vector<int64_t> scores, normalized;
};

bool SameScoreState(const std::optional<PreScoreStateView>& a,
                    const std::optional<PreScoreStateView>& b) {
  if (a.has_value() != b.has_value()) return false;
  if (!a) return true;
  return a->topology_value_to_pod_counts == b->topology_value_to_pod_counts &&
         a->topology_normalizing_weight == b->topology_normalizing_weight &&
         a->require_all_topologies == b->require_all_topologies;
}

bool SameState(const std::optional<PreFilterStateView>& a,
               const std::optional<PreFilterStateView>& b) {
  if (a.has_value() != b.has_value()) return false;
  if (!a) return true;
  return a->tp_value_to_match_num == b->tp_value_to_match_num &&
         a->critical_paths == b->critical_paths;
}

class Harness {
 public:
  explicit Harness(uint64_t seed) : rng_(seed) {
    handle_.SetLister(&snap_);
    indexed_ = std::make_unique<PodTopologySpread>(PodTopologySpreadArgs{}, handle_);
    walking_ = std::make_unique<PodTopologySpread>(PodTopologySpreadArgs{}, handle_);
    walking_->SetUseIndex(false);
    for (size_t i = 0; i < 5; ++i) templates_.push_back(RandomTemplate(rng_));
    const size_t nodes = 4 + Pick(rng_, 12);
    for (size_t i = 0; i < nodes; ++i) AddNode();
    for (size_t i = Pick(rng_, 30); i > 0; --i) AddPod(/*assume=*/false);
  }

  // One random change of the cluster, then the snapshot update.
  void Step() {
    switch (Pick(rng_, 9)) {
      case 0:
        AddNode();
        break;
      case 1:
        RelabelNode();
        break;
      case 2:
        RemoveNode();
        break;
      case 3:
        AddPod(/*assume=*/true);
        break;
      case 4:
        RemovePod();
        break;
      case 5:
        ViewEdit();
        return;  // the view edit is the change; the next Step restores it
      case 6:
        TerminatePod();
        break;
      default:
        AddPod(/*assume=*/false);
        break;
    }
    cache_.UpdateSnapshot(&snap_);
  }

  void Compare(const std::string& where) {
    for (int i = 0; i < 3; ++i) {
      framework::PodInfoPtr pod = framework::PodInfo::Make(Incoming());
      framework::PodInfoPtr other = framework::PodInfo::Make(MakePod(""));
      const framework::NodeInfo* at_node = snap_.List()[Pick(rng_, snap_.List().size())];
      const api::PodPtr existing = pods_.empty() ? nullptr : pods_[Pick(rng_, pods_.size())];
      // PreScore over a random subset of nodes (the feasible ones of a cycle).
      std::vector<const framework::NodeInfo*> feasible;
      for (const auto* ni : snap_.List()) {
        if (Coin(rng_, 0.7)) feasible.push_back(ni);
      }
      Result a = Run(*indexed_, *pod, other, at_node, existing, feasible);
      Result b = Run(*walking_, *pod, other, at_node, existing, feasible);
      const std::string at = where + " incoming " + std::to_string(i);
      ASSERT_EQ(a.prefilter, b.prefilter) << at;
      ASSERT_TRUE(SameState(a.state, b.state)) << at;
      ASSERT_EQ(a.filter, b.filter) << at;
      ASSERT_EQ(a.filter_after_add, b.filter_after_add) << at;
      ASSERT_EQ(a.filter_after_remove, b.filter_after_remove) << at;
      ASSERT_EQ(a.prescore, b.prescore) << at;
      ASSERT_TRUE(SameScoreState(a.score_state, b.score_state)) << at;
      ASSERT_EQ(a.scores, b.scores) << at;
      ASSERT_EQ(a.normalized, b.normalized) << at;
      if (a.state) {
        ++prefiltered;
        for (const auto& m : a.state->tp_value_to_match_num) {
          for (const auto& [v, n] : m) nonzero_counts += n != 0;
        }
      }
      if (a.score_state) {
        ++prescored;
        for (const auto& m : a.score_state->topology_value_to_pod_counts) {
          for (const auto& [v, n] : m) nonzero_counts += n != 0;
        }
      }
      for (const auto& f : a.filter) rejected += f.rfind("0 ", 0) != 0;
    }
  }

  void Start() { cache_.UpdateSnapshot(&snap_); }
  int prefiltered = 0, prescored = 0, nonzero_counts = 0, rejected = 0, terminated = 0;

 private:
  Result Run(PodTopologySpread& pl, const framework::PodInfo& pod,
             const framework::PodInfoPtr& other, const framework::NodeInfo* at_node,
             const api::PodPtr& existing, const std::vector<const framework::NodeInfo*>& feasible) {
    Result r;
    framework::CycleState st;
    framework::Status pf = pl.PreFilter(st, pod, nullptr);
    r.prefilter = Describe(pf);
    r.state = GetPreFilterState(st);
    if (pf.IsSuccess()) {
      for (const auto* ni : snap_.List()) r.filter.push_back(Describe(pl.Filter(st, pod, *ni)));
      // PreFilterExtensions on a clone, as preemption and nominated pods use them.
      auto added = st.Clone();
      EXPECT_TRUE(pl.AddPod(*added, pod, other, *at_node).IsSuccess());
      for (const auto* ni : snap_.List()) {
        r.filter_after_add.push_back(Describe(pl.Filter(*added, pod, *ni)));
      }
      if (existing != nullptr) {
        if (const framework::NodeInfo* on = snap_.Get(existing->spec.node_name)) {
          auto removed = st.Clone();
          EXPECT_TRUE(
              pl.RemovePod(*removed, pod, framework::PodInfo::Make(existing), *on).IsSuccess());
          for (const auto* ni : snap_.List()) {
            r.filter_after_remove.push_back(Describe(pl.Filter(*removed, pod, *ni)));
          }
        }
      }
    }
    framework::CycleState ss;
    framework::Status ps = pl.PreScore(ss, pod, feasible);
    r.prescore = Describe(ps);
    r.score_state = GetPreScoreState(ss);
    if (ps.IsSuccess()) {
      for (const auto* ni : feasible) {
        int64_t v = 0;
        EXPECT_TRUE(pl.Score(ss, pod, *ni, &v).IsSuccess());
        r.scores.push_back(v);
      }
      r.normalized = r.scores;
      EXPECT_TRUE(pl.NormalizeScore(ss, pod, feasible, r.normalized).IsSuccess());
    }
    return r;
  }

  // The incoming pod: constraints mostly of one key (the index's case), sometimes two keys,
  // a nodeSelector or required node affinity now and then (the walking fallback).
  api::PodPtr Incoming() {
    auto p = std::make_shared<api::Pod>(*MakePod(""));
    const std::string key = kKeys[Pick(rng_, kKeys.size())];
    const size_t n = 1 + Pick(rng_, 2);
    for (size_t i = 0; i < n; ++i) {
      const std::string k = Coin(rng_, 0.8) ? key : kKeys[Pick(rng_, kKeys.size())];
      p->spec.topology_spread_constraints.push_back(RandomConstraint(rng_, k));
    }
    if (Coin(rng_, 0.15)) p->spec.node_selector["disk"] = "ssd";
    if (Coin(rng_, 0.2))
      p->spec.tolerations.push_back({"dedicated", "Equal", "x", "NoSchedule", std::nullopt});
    return p;
  }
  api::PodPtr MakePod(const std::string& node) {
    auto p = std::make_shared<api::Pod>(templates_[Pick(rng_, templates_.size())]);
    p->metadata.namespace_ = kNamespaces[Pick(rng_, kNamespaces.size())];
    p->metadata.name = "p" + std::to_string(next_pod_++);
    p->metadata.uid = "uid-" + p->metadata.name;
    p->spec.node_name = node;
    return p;
  }
  void AddNode() {
    const std::string name = "n" + std::to_string(next_node_++);
    nodes_.push_back(name);
    cache_.AddNode(RandomNode(rng_, name));
  }
  void RelabelNode() {
    if (nodes_.empty()) return;
    cache_.UpdateNode(RandomNode(rng_, nodes_[Pick(rng_, nodes_.size())]));
  }
  void RemoveNode() {
    if (nodes_.size() <= 2) return;
    const size_t i = Pick(rng_, nodes_.size());
    api::Node n;
    n.metadata.name = nodes_[i];
    for (size_t j = 0; j < pods_.size();) {
      if (pods_[j]->spec.node_name == nodes_[i]) {
        ASSERT_TRUE(cache_.RemovePod(*pods_[j]).IsSuccess());
        pods_.erase(pods_.begin() + static_cast<long>(j));
      } else {
        ++j;
      }
    }
    cache_.RemoveNode(n);
    nodes_.erase(nodes_.begin() + static_cast<long>(i));
  }
  void AddPod(bool assume) {
    if (nodes_.empty()) return;
    api::PodPtr p = MakePod(nodes_[Pick(rng_, nodes_.size())]);
    auto info = framework::PodInfo::Make(p);
    ASSERT_TRUE((assume ? cache_.AssumePod(info) : cache_.AddPod(info)).IsSuccess());
    pods_.push_back(p);
  }
  void RemovePod() {
    if (pods_.empty()) return;
    const size_t i = Pick(rng_, pods_.size());
    ASSERT_TRUE(cache_.RemovePod(*pods_[i]).IsSuccess());
    pods_.erase(pods_.begin() + static_cast<long>(i));
  }
  // A pod gets its deletionTimestamp (an update event): it stops counting.
  void TerminatePod() {
    if (pods_.empty()) return;
    const size_t i = Pick(rng_, pods_.size());
    if (pods_[i]->metadata.deletion_timestamp) return;
    auto updated = std::make_shared<api::Pod>(*pods_[i]);
    updated->metadata.deletion_timestamp = 1'000'000'000;
    // An assumed pod cannot be updated (upstream cache.UpdatePod); those stay as they are.
    if (!cache_.UpdatePod(*pods_[i], framework::PodInfo::Make(updated)).IsSuccess()) return;
    pods_[i] = updated;
    ++terminated;
  }
  // The PodGroup cycle's edits of the snapshot only (restored by the next UpdateSnapshot).
  void ViewEdit() {
    if (Coin(rng_, 0.5) && !pods_.empty()) {
      snap_.RemovePodFromView(*pods_[Pick(rng_, pods_.size())]);
    } else if (!nodes_.empty()) {
      snap_.AddPodToView(framework::PodInfo::Make(MakePod(nodes_[Pick(rng_, nodes_.size())])));
    }
  }

  Rng rng_;
  fake::FakeHandle handle_;
  cache::Cache cache_;
  cache::Snapshot snap_;
  std::unique_ptr<PodTopologySpread> indexed_, walking_;
  std::vector<api::Pod> templates_;
  std::vector<std::string> nodes_;
  std::vector<api::PodPtr> pods_;
  int next_node_ = 0, next_pod_ = 0;
};

TEST(PodTopologySpreadIndexTest, SameResultsAsWalkingEveryPodOnRandomClusters) {
  int prefiltered = 0, prescored = 0, nonzero = 0, rejected = 0, terminated = 0;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    Harness h(seed);
    h.Start();
    for (int step = 0; step < 40; ++step) {
      h.Step();
      h.Compare("seed " + std::to_string(seed) + " step " + std::to_string(step));
      if (::testing::Test::HasFatalFailure()) return;
    }
    prefiltered += h.prefiltered;
    prescored += h.prescored;
    nonzero += h.nonzero_counts;
    rejected += h.rejected;
    terminated += h.terminated;
  }
  // The random states exercise both plugins' paths with real counts and rejections.
  EXPECT_GT(prefiltered, 1000);
  EXPECT_GT(prescored, 1000);
  EXPECT_GT(nonzero, 1000);
  EXPECT_GT(rejected, 100);
  EXPECT_GT(terminated, 20);
}

}  // namespace
}  // namespace phalanx::plugins::podtopologyspread
