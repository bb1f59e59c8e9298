// The hot path (Filter/Score on success) must not allocate. This test binary replaces the
// global operator new with a counting malloc wrapper and checks every in-tree plugin's
// Filter and Score for zero allocations once PreFilter/PreScore have run.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <new>

#include "plugins/imagelocality/image_locality.h"
#include "plugins/nodeaffinity/node_affinity.h"
#include "plugins/nodename/node_name.h"
#include "plugins/nodeports/node_ports.h"
#include "plugins/noderesources/balanced_allocation.h"
#include "plugins/noderesources/fit.h"
#include "plugins/nodeunschedulable/node_unschedulable.h"
#include "plugins/tainttoleration/taint_toleration.h"
#include "plugins/testing_fake_handle.h"
#include "testing/builders.h"

namespace {
thread_local bool g_counting = false;
thread_local long g_allocs = 0;
}  // namespace

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t n) {
  if (g_counting) ++g_allocs;
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
// The nothrow pair too (std::stable_sort's temporary buffer): otherwise it comes from the
// library's (ASan's) operator new and is freed here with free() (alloc-dealloc-mismatch).
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  if (g_counting) ++g_allocs;
  return std::malloc(n == 0 ? 1 : n);
}
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
#pragma GCC diagnostic pop

namespace phalanx::plugins {
namespace {

using phalanx::testing::MakeNodeInfo;
using phalanx::testing::NodeBuilder;
using phalanx::testing::PodBuilder;

// Runs fn with allocation counting on; returns the number of allocations.
template <typename F>
long CountAllocs(F&& fn) {
  g_allocs = 0;
  g_counting = true;
  fn();
  g_counting = false;
  return g_allocs;
}

std::unique_ptr<framework::Plugin> Make(const framework::PluginFactory& f, fake::FakeHandle& h,
                                        const char* yaml = nullptr) {
  std::optional<YAML::Node> args;
  if (yaml) args = YAML::Load(yaml);
  auto pl = f(args ? &*args : nullptr, h);
  EXPECT_TRUE(pl.ok()) << pl.status().ToString();
  return std::move(pl.value());
}

TEST(HotPathTest, FilterAndScoreDoNotAllocate) {
  // The counter works (a direct operator call cannot be elided).
  EXPECT_EQ(CountAllocs([] { ::operator delete(::operator new(16)); }), 1);

  const api::Node node = NodeBuilder("node1")
                             .Label("zone", "a")
                             .Label("disk", "ssd")
                             .Capacity({{"cpu", "4"},
                                        {"memory", "8Gi"},
                                        {"pods", "110"},
                                        {"example.com/gpu", "2"},
                                        {"ephemeral-storage", "10Gi"}})
                             .Taint("dedicated", "infra", "NoSchedule")
                             .Taint("soft", "x", "PreferNoSchedule")
                             .Unschedulable(true)
                             .Image("registry/app:v1", 300 * 1024 * 1024)
                             .Obj();
  api::Pod existing =
      PodBuilder("existing").Req("cpu", "1").Req("memory", "1Gi").HostPort(81).Obj();
  const auto ni = MakeNodeInfo(node, {existing});
  fake::FakeHandle h;
  h.SetNodes({ni});
  const framework::NodeInfo& info = *h.SnapshotSharedLister().List()[0];
  const std::vector<const framework::NodeInfo*> nodes = h.SnapshotSharedLister().List();

  api::Pod pod = PodBuilder("pod")
                     .Container({{"cpu", "500m"}, {"memory", "1Gi"}, {"example.com/gpu", "1"}},
                                "registry/app:v1")
                     .HostPort(80)
                     .NodeName("node1")
                     .NodeSelector({{"zone", "a"}})
                     .NodeAffinityIn("disk", {"ssd", "nvme"})
                     .PreferredNodeAffinity(5, "zone", {"a"})
                     .Toleration("dedicated", "Equal", "infra", "NoSchedule")
                     .Toleration("node.kubernetes.io/unschedulable", "Exists", "", "NoSchedule")
                     .Obj();
  const auto pi = framework::PodInfo::Make(std::make_shared<api::Pod>(pod));

  struct Entry {
    const char* name;
    framework::PluginFactory factory;
    const char* args;
  };
  const Entry entries[] = {
      {"NodeUnschedulable", &nodeunschedulable::NodeUnschedulable::New, nullptr},
      {"NodeName", &nodename::NodeName::New, nullptr},
      {"TaintToleration", &tainttoleration::TaintToleration::New, nullptr},
      {"NodeAffinity", &nodeaffinity::NodeAffinity::New,
       "{addedAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
       "[{matchExpressions: [{key: zone, operator: Exists}]}]}, "
       "preferredDuringSchedulingIgnoredDuringExecution: [{weight: 3, preference: "
       "{matchExpressions: [{key: disk, operator: In, values: [ssd]}]}}]}}"},
      {"NodePorts", &nodeports::NodePorts::New, nullptr},
      {"NodeResourcesFit LeastAllocated", &noderesources::Fit::New,
       "{scoringStrategy: {type: LeastAllocated, resources: [{name: cpu}, {name: memory}, "
       "{name: example.com/gpu, weight: 3}, {name: ephemeral-storage}]}}"},
      {"NodeResourcesFit MostAllocated", &noderesources::Fit::New,
       "{scoringStrategy: {type: MostAllocated}}"},
      {"NodeResourcesFit RequestedToCapacityRatio", &noderesources::Fit::New,
       "{scoringStrategy: {type: RequestedToCapacityRatio, requestedToCapacityRatio: {shape: "
       "[{utilization: 0, score: 0}, {utilization: 100, score: 10}]}}}"},
      {"NodeResourcesBalancedAllocation", &noderesources::BalancedAllocation::New,
       "{resources: [{name: cpu}, {name: memory}, {name: example.com/gpu}]}"},
      {"ImageLocality", &imagelocality::ImageLocality::New, nullptr},
  };
  for (const auto& e : entries) {
    auto pl = Make(e.factory, h, e.args);
    framework::CycleState state;
    if (auto* pf = dynamic_cast<framework::PreFilterPlugin*>(pl.get())) {
      framework::PreFilterResult r;
      ASSERT_FALSE(pf->PreFilter(state, *pi, &r).IsRejected()) << e.name;
    }
    if (auto* f = dynamic_cast<framework::FilterPlugin*>(pl.get())) {
      framework::Status s;
      const long n = CountAllocs([&] { s = f->Filter(state, *pi, info); });
      EXPECT_TRUE(s.IsSuccess()) << e.name << ": " << s.ToString();
      EXPECT_EQ(n, 0) << e.name << " Filter allocated";
    }
    if (auto* ps = dynamic_cast<framework::PreScorePlugin*>(pl.get())) {
      ASSERT_TRUE(ps->PreScore(state, *pi, nodes).IsSuccess()) << e.name;
    }
    if (auto* sp = dynamic_cast<framework::ScorePlugin*>(pl.get())) {
      framework::Status s;
      int64_t score = -1;
      const long n = CountAllocs([&] { s = sp->Score(state, *pi, info, &score); });
      EXPECT_TRUE(s.IsSuccess()) << e.name << ": " << s.ToString();
      EXPECT_GE(score, 0) << e.name;
      EXPECT_EQ(n, 0) << e.name << " Score allocated";
    }
  }
}

}  // namespace
}  // namespace phalanx::plugins
