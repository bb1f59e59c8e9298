// Differential property test: InterPodAffinity with the snapshot's
// PodAffinityIndex (classes of alike pods, per-topology-domain counts maintained by
// Cache::UpdateSnapshot and the snapshot's view edits) against the same plugin walking every
// pod (upstream's algorithm, SetUseIndex(false)), on random clusters changed step by step:
// PreFilter status and counts, Filter per node, PreScore status, Score and NormalizeScore per
// node must be identical.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "backend/cache/cache.h"
#include "backend/cache/snapshot.h"
#include "framework/pod_affinity_index.h"
#include "plugins/interpodaffinity/interpod_affinity.h"
#include "plugins/testing_fake_handle.h"

namespace phalanx::plugins::interpodaffinity {
namespace {

using Rng = std::mt19937_64;

size_t Pick(Rng& rng, size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); }
bool Coin(Rng& rng, double p) { return std::bernoulli_distribution(p)(rng); }

const std::vector<std::string> kNamespaces = {"ns1", "ns2", "ns3"};
const std::vector<std::string> kKeys = {"kubernetes.io/hostname", "zone", "region", "rack"};

api::NodePtr RandomNode(Rng& rng, const std::string& name) {
  auto n = std::make_shared<api::Node>();
  n->metadata.name = name;
  n->metadata.labels["kubernetes.io/hostname"] = name;
  if (Coin(rng, 0.85)) n->metadata.labels["zone"] = "z" + std::to_string(Pick(rng, 3));
  if (Coin(rng, 0.7)) n->metadata.labels["region"] = "r" + std::to_string(Pick(rng, 2));
  return n;
}

api::LabelSelector RandomSelector(Rng& rng) {
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
      break;  // empty selector: matches every pod
  }
  return s;
}

api::PodAffinityTerm RandomTerm(Rng& rng) {
  api::PodAffinityTerm t;
  if (Coin(rng, 0.95)) t.label_selector = RandomSelector(rng);  // nil: matches nothing
  if (Coin(rng, 0.4)) {
    for (const auto& ns : kNamespaces) {
      if (Coin(rng, 0.5)) t.namespaces.push_back(ns);
    }
  }
  if (Coin(rng, 0.15)) {
    api::LabelSelector ns_sel;
    if (Coin(rng, 0.5)) ns_sel.match_labels["team"] = "t1";
    t.namespace_selector = ns_sel;
  }
  t.topology_key = kKeys[Pick(rng, kKeys.size())];
  if (Coin(rng, 0.15)) t.match_label_keys.push_back("tier");
  if (Coin(rng, 0.1)) t.mismatch_label_keys.push_back("app");
  return t;
}

std::optional<api::PodAffinity> RandomPodAffinity(Rng& rng) {
  if (Coin(rng, 0.5)) return std::nullopt;
  api::PodAffinity pa;
  for (size_t i = Pick(rng, 3); i > 0; --i) {
    if (Coin(rng, 0.5)) pa.required.push_back(RandomTerm(rng));
  }
  for (size_t i = Pick(rng, 3); i > 0; --i) {
    // Small weights often: an affinity and an anti-affinity term of one key then cancel,
    // and the zero-sum entries still count (upstream's scoreMap).
    const size_t w = Coin(rng, 0.6) ? 1 + Pick(rng, 2) : 1 + Pick(rng, 100);
    pa.preferred.push_back({static_cast<int32_t>(w), RandomTerm(rng)});
  }
  return pa;
}

// A template: pods made from one share labels and affinity (so classes have many members).
api::Pod RandomTemplate(Rng& rng) {
  api::Pod p;
  if (Coin(rng, 0.8))
    p.metadata.labels["app"] = std::string(1, static_cast<char>('a' + Pick(rng, 3)));
  if (Coin(rng, 0.5)) p.metadata.labels["tier"] = Coin(rng, 0.5) ? "x" : "y";
  if (Coin(rng, 0.7)) {
    api::Affinity a;
    a.pod_affinity = RandomPodAffinity(rng);
    a.pod_anti_affinity = RandomPodAffinity(rng);
    p.spec.affinity = a;
  }
  return p;
}

struct Result {
  std::string prefilter;
  std::optional<PreFilterCounts> counts;
  std::vector<std::string> filter;
  std::string prescore;
  std::vector<int64_t> scores, normalized;
};

std::string Describe(const framework::Status& s) {
  return std::to_string(static_cast<int>(s.code())) + " " + s.ToString();
}

Result Run(InterPodAffinity& pl, const framework::NodeInfoLister& lister,
           const framework::PodInfo& pod) {
  Result r;
  framework::CycleState st;
  framework::Status pf = pl.PreFilter(st, pod, nullptr);
  r.prefilter = Describe(pf);
  r.counts = GetPreFilterCounts(st);
  if (pf.IsSuccess()) {
    for (const auto* ni : lister.List()) r.filter.push_back(Describe(pl.Filter(st, pod, *ni)));
  }
  framework::CycleState ss;
  framework::Status ps = pl.PreScore(ss, pod, lister.List());
  r.prescore = Describe(ps);
  if (ps.IsSuccess()) {
    for (const auto* ni : lister.List()) {
      int64_t v = 0;
      EXPECT_TRUE(pl.Score(ss, pod, *ni, &v).IsSuccess());
      r.scores.push_back(v);
    }
    r.normalized = r.scores;
    EXPECT_TRUE(pl.NormalizeScore(ss, pod, lister.List(), r.normalized).IsSuccess());
  }
  return r;
}

bool SameCounts(const std::optional<PreFilterCounts>& a, const std::optional<PreFilterCounts>& b) {
  if (a.has_value() != b.has_value()) return false;
  if (!a) return true;
  return a->existing_anti_affinity == b->existing_anti_affinity && a->affinity == b->affinity &&
         a->anti_affinity == b->anti_affinity;
}

class Harness {
 public:
  explicit Harness(uint64_t seed) : rng_(seed) {
    auto ns = std::make_shared<MapNamespaceLister>();
    for (size_t i = 0; i < kNamespaces.size(); ++i) {
      api::Namespace n;
      n.metadata.name = kNamespaces[i];
      if (i != 1) n.metadata.labels["team"] = "t1";
      ns->Upsert(n);
    }
    handle_.SetLister(&snap_);
    InterPodAffinityArgs args;
    args.hard_pod_affinity_weight = static_cast<int32_t>(Pick(rng_, 3));
    indexed_ = std::make_unique<InterPodAffinity>(args, handle_);
    walking_ = std::make_unique<InterPodAffinity>(args, handle_);
    walking_->SetUseIndex(false);
    indexed_->SetNamespaceLister(ns);
    walking_->SetNamespaceLister(ns);
    for (size_t i = 0; i < 6; ++i) templates_.push_back(RandomTemplate(rng_));
    const size_t nodes = 4 + Pick(rng_, 10);
    for (size_t i = 0; i < nodes; ++i) AddNode();
    for (size_t i = Pick(rng_, 25); i > 0; --i) AddPod(/*assume=*/false);
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
      default:
        AddPod(/*assume=*/false);
        break;
    }
    cache_.UpdateSnapshot(&snap_);
  }

  void Compare(const std::string& where) {
    for (int i = 0; i < 3; ++i) {
      framework::PodInfoPtr pod = framework::PodInfo::Make(MakePod(""));
      Result a = Run(*indexed_, snap_, *pod);
      Result b = Run(*walking_, snap_, *pod);
      const std::string at = where + " incoming " + std::to_string(i);
      ASSERT_EQ(a.prefilter, b.prefilter) << at;
      ASSERT_TRUE(SameCounts(a.counts, b.counts)) << at;
      ASSERT_EQ(a.filter, b.filter) << at;
      ASSERT_EQ(a.prescore, b.prescore) << at;
      ASSERT_EQ(a.scores, b.scores) << at;
      ASSERT_EQ(a.normalized, b.normalized) << at;
      if (a.counts) ++prefilter_ran;
      if (!a.scores.empty()) ++scored;
      for (int64_t v : a.scores) nonzero_scores += v != 0;
    }
  }

  void Start() { cache_.UpdateSnapshot(&snap_); }
  const cache::Snapshot& snapshot() const { return snap_; }
  int prefilter_ran = 0, scored = 0, nonzero_scores = 0;

 private:
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
    // The node's pods go first, as the informers deliver them.
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
  std::unique_ptr<InterPodAffinity> indexed_, walking_;
  std::vector<api::Pod> templates_;
  std::vector<std::string> nodes_;
  std::vector<api::PodPtr> pods_;
  int next_node_ = 0, next_pod_ = 0;
};

TEST(InterPodAffinityIndexTest, SameResultsAsWalkingEveryPodOnRandomClusters) {
  int prefilter_ran = 0, scored = 0, nonzero = 0;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    Harness h(seed);
    h.Start();
    for (int step = 0; step < 40; ++step) {
      h.Step();
      h.Compare("seed " + std::to_string(seed) + " step " + std::to_string(step));
      if (::testing::Test::HasFatalFailure()) return;
    }
    prefilter_ran += h.prefilter_ran;
    scored += h.scored;
    nonzero += h.nonzero_scores;
  }
  // The random states exercise both paths (not only Skip).
  EXPECT_GT(prefilter_ran, 1000);
  EXPECT_GT(scored, 1000);
  EXPECT_GT(nonzero, 1000);
}

// The index kept up to date step by step holds the same classes and counts as one built
// from scratch on the final snapshot.
TEST(InterPodAffinityIndexTest, MaintainedIndexEqualsARebuiltOne) {
  for (uint64_t seed = 100; seed < 120; ++seed) {
    Harness h(seed);
    h.Start();
    framework::PodAffinityIndex* live = h.snapshot().AffinityIndex();
    for (const auto& k : kKeys) live->Track(k, h.snapshot().List());
    for (int step = 0; step < 40; ++step) h.Step();
    framework::PodAffinityIndex fresh;
    fresh.Enable(h.snapshot().List());
    auto dump = [&](framework::PodAffinityIndex& idx) {
      std::map<std::string, std::map<std::string, std::map<std::string, int64_t>>> out;
      for (const auto& k : kKeys) {
        const size_t slot = idx.Track(k, h.snapshot().List());
        for (const auto* c : idx.Classes()) {
          auto& m = out[framework::PodAffinityIndex::ClassKey(c->representative->Pod()) + "#" +
                        std::to_string(c->members)][k];
          for (const auto& [v, n] : c->counts(slot)) m[v] = n;
        }
      }
      return out;
    };
    EXPECT_EQ(live->NumPods(), fresh.NumPods()) << "seed " << seed;
    EXPECT_EQ(dump(*live), dump(fresh)) << "seed " << seed;
  }
}

}  // namespace
}  // namespace phalanx::plugins::interpodaffinity
