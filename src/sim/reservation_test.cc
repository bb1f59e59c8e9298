// Gang reservations with backfill in the simulator (gang/reservation.h, the
// GangReservation plugin, src/plugins/gangreservation/planner.cc): a gang starved by a stream of
// long jobs starts at its forecast with a reservation while a short job backfills into the
// reserved room and a long one does not; and random clusters / gang mixes never overcommit,
// never keep a reservation for a gang that is gone, and never let a pod outside the gang end
// after the forecast start on a reserved node.
#include "gang/reservation.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "api/decode.h"
#include "config/config.h"
#include "plugins/registry.h"
#include "scheduler/scheduler.h"
#include "sim/scenario.h"
#include "sim/simulation.h"

namespace phalanx::sim {
namespace {

constexpr int64_t kS = api::kNanosPerSecond;

api::Node GpuNode(const std::string& name, int64_t gpus) {
  api::Node n;
  n.metadata.name = name;
  n.metadata.labels["kubernetes.io/hostname"] = name;
  n.status.capacity["cpu"] = api::Quantity::FromValue(64);
  n.status.capacity["memory"] = api::Quantity::FromValue(int64_t{256} << 30);
  n.status.capacity["pods"] = api::Quantity::FromValue(110);
  n.status.capacity[std::string(api::kResourceNvidiaGPU)] = api::Quantity::FromValue(gpus);
  n.status.allocatable = n.status.capacity;
  n.status.conditions.push_back({"Ready", "True"});
  return n;
}

// `members` pods of `gpus` GPUs each, gang "t/<name>" (Koordinator annotations, as the
// Philly replay writes them), arriving at `arrival_s` and running `run_s` seconds with
// the expected-runtime annotation (`annotate`).
// With `sub_a` > 0 the job is instead a KAI PodGroup (added to sc->objects) of two subgroups,
// "a" (the first sub_a members, minMember sub_a) and "b" (the rest, minMember the rest).
void AddJob(Scenario* sc, const std::string& name, int members, int64_t gpus, int64_t arrival_s,
            int64_t run_s, bool annotate = true, int sub_a = 0) {
  if (sub_a > 0) {
    api::Manifests m;
    const std::string y =
        "apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: "
        "{name: " +
        name +
        ", namespace: t}\nspec:\n  subGroups:\n  - {name: a, "
        "minMember: " +
        std::to_string(sub_a) + "}\n  - {name: b, minMember: " + std::to_string(members - sub_a) +
        "}\n";
    ASSERT_TRUE(api::DecodeManifests(y, "kai.yaml", &m).ok());
    for (auto& o : m.objects) sc->objects.push_back(std::move(o));
  }
  for (int k = 0; k < members; ++k) {
    TimedPod tp;
    api::Pod& p = tp.pod;
    p.metadata.namespace_ = "t";
    p.metadata.name = name + "-" + std::to_string(k);
    if (sub_a > 0) {
      p.metadata.annotations["pod-group-name"] = name;
      p.metadata.labels["kai.scheduler/subgroup-name"] = k < sub_a ? "a" : "b";
    } else {
      p.metadata.annotations["gang.scheduling.koordinator.sh/name"] = name;
      p.metadata.annotations["gang.scheduling.koordinator.sh/min-available"] =
          std::to_string(members);
    }
    if (annotate) {
      p.metadata.annotations[std::string(gang::kExpectedRuntimeAnnotation)] = std::to_string(run_s);
    }
    api::Container c;
    c.name = "w";
    c.resources.requests["cpu"] = api::Quantity::FromValue(1);
    c.resources.requests[std::string(api::kResourceNvidiaGPU)] = api::Quantity::FromValue(gpus);
    p.spec.containers.push_back(std::move(c));
    tp.arrival = arrival_s * kS;
    tp.run_duration_ns = run_s * kS;
    sc->pods.push_back(std::move(tp));
  }
}

void Finish(Scenario* sc) {
  sc->namespaces.emplace_back();
  sc->namespaces.back().metadata.name = "t";
  std::stable_sort(sc->pods.begin(), sc->pods.end(),
                   [](const TimedPod& a, const TimedPod& b) { return a.arrival < b.arrival; });
}

// The default configuration, with GangReservation enabled when threshold_s >= 0
// (preemptAfterSeconds = preempt_after_s when > 0).
SimulationOptions Options(int64_t threshold_s, int32_t max_reservations = 1,
                          int64_t preempt_after_s = 0) {
  SimulationOptions o;
  o.config = config::DefaultConfiguration();
  o.registry = plugins::NewInTreeRegistry();
  if (threshold_s >= 0) {
    for (auto& prof : o.config.profiles) {
      prof.plugins.multi_point.enabled.push_back({"GangReservation", 0});
      YAML::Node args;
      args["reservationThresholdSeconds"] = threshold_s;
      args["reservationGraceSeconds"] = 60;
      args["maxReservations"] = max_reservations;
      if (preempt_after_s > 0) args["preemptAfterSeconds"] = preempt_after_s;
      prof.plugin_config.push_back({"GangReservation", std::make_shared<const YAML::Node>(args)});
    }
  }
  return o;
}

// Start (s) of each pod by name; -1 never.
std::map<std::string, double> Starts(const SimulationResult& r) {
  std::map<std::string, double> m;
  for (const auto& o : r.outcomes) m[o.pod] = o.scheduled_s ? *o.scheduled_s : -1;
  return m;
}

// Two nodes of 8 GPUs, busy until 1000 s and 2000 s. Gang "big" (2 x 8 GPUs, 100 s) arrives at
// 10 s; behind it "long" (8 GPUs, 1500 s) at 20 s and "short" (8 GPUs, 500 s) at 25 s.
// Without a reservation, "long" takes node a at 1000 s and "short" takes b at 2000 s, so the
// gang waits until 2500 s. With one (threshold 60 s, made at the gang's failed cycle at
// 1000 s: nodes a and b, forecast start 2000 s), "long" may not use a (it would end at 2500 s),
// "short" backfills a (ends at 1500 s), and the gang starts at its forecast, 2000 s.
Scenario StarvationScenario() {
  Scenario sc;
  sc.nodes = {GpuNode("a", 8), GpuNode("b", 8)};
  AddJob(&sc, "fill-a", 1, 8, 0, 1000);
  AddJob(&sc, "fill-b", 1, 8, 0, 2000);
  AddJob(&sc, "big", 2, 8, 10, 100);
  AddJob(&sc, "long", 1, 8, 20, 1500);
  AddJob(&sc, "short", 1, 8, 25, 500);
  Finish(&sc);
  return sc;
}

TEST(GangReservationSimTest, StarvedGangStartsAtItsForecastShortJobBackfillsLongDoesNot) {
  const Scenario sc = StarvationScenario();
  SimulationResult off, on;
  ASSERT_EQ(RunSimulation(sc, Options(-1), &off), absl::OkStatus());
  ASSERT_EQ(RunSimulation(sc, Options(60), &on), absl::OkStatus());
  EXPECT_TRUE(off.invariant_violations.empty());
  EXPECT_TRUE(on.invariant_violations.empty());
  auto a = Starts(off), b = Starts(on);
  // Without: the gang waits behind both single jobs.
  EXPECT_EQ(a["t/long-0"], 1000);
  EXPECT_EQ(a["t/short-0"], 2000);
  EXPECT_EQ(a["t/big-0"], 2500);
  EXPECT_EQ(off.reservations.made, 0);
  // With: the short job backfills, the long one waits for the gang, the gang starts at 2000.
  EXPECT_EQ(b["t/short-0"], 1000);
  EXPECT_EQ(b["t/big-0"], 2000);
  EXPECT_EQ(b["t/big-1"], 2000);
  EXPECT_EQ(b["t/long-0"], 2100);
  EXPECT_EQ(on.reservations.made, 1);
  EXPECT_EQ(on.reservations.released_bound, 1);
  EXPECT_EQ(on.reservations.expired, 0);
}

TEST(GangReservationSimTest, NoForecastWhileAPodOfUnknownRuntimeBlocksTheGang) {
  Scenario sc;
  sc.nodes = {GpuNode("a", 8), GpuNode("b", 8)};
  AddJob(&sc, "fill-a", 1, 8, 0, 1000, /*annotate=*/false);
  AddJob(&sc, "fill-b", 1, 8, 0, 2000, /*annotate=*/false);
  AddJob(&sc, "big", 2, 8, 10, 100);
  AddJob(&sc, "long", 1, 8, 20, 1500);
  Finish(&sc);
  SimulationResult r;
  ASSERT_EQ(RunSimulation(sc, Options(60), &r), absl::OkStatus());
  // At 1000 s node b holds a pod of unknown runtime: no forecast, nothing held, and "long"
  // takes node a as it would without reservations. At 2000 s (b freed) the forecast is a's
  // end, 2500 s: a reservation, and the gang starts then.
  EXPECT_GE(r.reservations.not_made, 1);
  EXPECT_EQ(Starts(r)["t/long-0"], 1000);
  EXPECT_EQ(r.reservations.made, 1);
  EXPECT_EQ(Starts(r)["t/big-0"], 2500);
}

// Random clusters and mixes of gangs (some of unknown runtime, some never fitting), with
// reservations on: checked with the simulator's hooks against state kept here from the pod
// objects alone (not the scheduler's resource code).
// Random clusters and gang mixes with reservations, checked against GPU accounting kept
// from the pod objects; with `sub_groups`, some multi-member jobs are KAI PodGroups of two
// subgroups, and no subgroup may ever run short of its minimum while its gang runs.
// With `evict`, GangReservation's preemptAfterSeconds is on and every pod restarts when
// evicted (TimedPod::restart_on_eviction): no victim may be a member of a gang of >= 2
// (minMembers), and evictions must happen.
void CheckRandomMixes(uint64_t seed, bool sub_groups, bool evict = false) {
  std::mt19937_64 rng(seed);
  int reservations_seen = 0, split_gangs_run = 0, evictions = 0;
  for (int iter = 0; iter < 25; ++iter) {
    Scenario sc;
    const int nodes = 2 + static_cast<int>(rng() % 5);
    std::map<std::string, int64_t> capacity;
    for (int i = 0; i < nodes; ++i) {
      const int64_t gpus = rng() % 2 ? 8 : 4;
      sc.nodes.push_back(GpuNode("n" + std::to_string(i), gpus));
      capacity["n" + std::to_string(i)] = gpus;
    }
    std::map<std::string, int> min_member;  // gang -> members
    std::map<std::string, int> sub_a_of;    // KAI gang -> minMember of subgroup "a"
    for (int j = 0, jobs = 10 + static_cast<int>(rng() % 30); j < jobs; ++j) {
      const int members = rng() % 3 == 0 ? 1 + static_cast<int>(rng() % (nodes + 1)) : 1;
      const int64_t gpus = 1 + static_cast<int64_t>(rng() % 8);
      const std::string name = "j" + std::to_string(j);
      min_member["t/" + name] = members;
      const int sub_a =
          sub_groups && members >= 2 && rng() % 2 ? 1 + static_cast<int>(rng() % (members - 1)) : 0;
      if (sub_a > 0) sub_a_of["t/" + name] = sub_a;
      AddJob(&sc, name, members, gpus, static_cast<int64_t>(rng() % 3000),
             10 + static_cast<int64_t>(rng() % 2000), /*annotate=*/rng() % 6 != 0, sub_a);
    }
    Finish(&sc);
    for (auto& tp : sc.pods) tp.restart_on_eviction = evict;
    SimulationOptions o =
        Options(/*threshold_s=*/static_cast<int64_t>(rng() % 300),
                /*max_reservations=*/1 + static_cast<int32_t>(rng() % 2),
                /*preempt_after_s=*/evict ? 1 + static_cast<int64_t>(rng() % 600) : 0);
    scheduler::Scheduler* sched = nullptr;
    std::map<std::string, int64_t> used;                        // node -> GPUs of bound pods
    std::map<size_t, std::pair<std::string, int64_t>> on_node;  // pod -> node, GPUs
    std::map<std::string, int> bound_of, alive_of;              // gang -> members bound / existing
    std::vector<std::string> errors;
    auto gang_of = [&](size_t i) {
      const auto& ann = sc.pods[i].pod.metadata.annotations;
      auto it = ann.find("pod-group-name");
      return "t/" + (it != ann.end() ? it->second : ann.at("gang.scheduling.koordinator.sh/name"));
    };
    // KAI gang -> subgroup -> members bound now
    std::map<std::string, std::map<std::string, int>> bound_sub;
    auto sub_of = [&](size_t i) {
      const auto& l = sc.pods[i].pod.metadata.labels;
      auto it = l.find("kai.scheduler/subgroup-name");
      return it == l.end() ? std::string() : it->second;
    };
    auto gpus_of = [&](size_t i) {
      return sc.pods[i]
          .pod.spec.containers[0]
          .resources.requests.at(std::string(api::kResourceNvidiaGPU))
          .Value();
    };
    o.hooks.on_start = [&](scheduler::Scheduler& s) { sched = &s; };
    o.hooks.on_arrival = [&](size_t i, double) { ++alive_of[gang_of(i)]; };
    o.hooks.on_bound = [&](size_t i, const api::Pod&, const std::string& node, double t) {
      used[node] += gpus_of(i);
      on_node[i] = {node, gpus_of(i)};
      ++bound_of[gang_of(i)];
      if (!sub_of(i).empty()) ++bound_sub[gang_of(i)][sub_of(i)];
      if (used[node] > capacity[node]) errors.push_back("overcommit on " + node);
      // Backfill rule: outside the reserving gangs, a pod on a reserved node ends by the
      // forecast start.
      auto view = sched->reservations().View();
      if (!view) return;
      auto it = view->node_to_reservation.find(node);
      if (it == view->node_to_reservation.end()) return;
      const auto& r = view->reservations[it->second];
      if (std::find(r.gangs.begin(), r.gangs.end(), gang_of(i)) != r.gangs.end()) return;
      const double end = t + static_cast<double>(*sc.pods[i].run_duration_ns) / kS;
      const auto& ann = sc.pods[i].pod.metadata.annotations;
      if (!ann.count(std::string(gang::kExpectedRuntimeAnnotation)) ||
          end * kS > static_cast<double>(r.forecast_start) + 1) {
        errors.push_back(sc.pods[i].pod.Key() + " on reserved node " + node + " past the forecast");
      }
    };
    o.hooks.on_deleted = [&](size_t i, double) {
      --alive_of[gang_of(i)];
      auto it = on_node.find(i);
      if (it == on_node.end()) return;
      used[it->second.first] -= it->second.second;
      on_node.erase(it);
      if (!sub_of(i).empty()) --bound_sub[gang_of(i)][sub_of(i)];
    };
    // The scheduler evicted pod i: it gives its GPUs back; restarted, it is pending again.
    o.hooks.on_evicted = [&](size_t i, double t, bool restarts) {
      ++evictions;
      if (min_member[gang_of(i)] >= 2) {
        errors.push_back(sc.pods[i].pod.Key() + " of a " + std::to_string(min_member[gang_of(i)]) +
                         "-member gang evicted at " + std::to_string(t) + " s");
      }
      auto it = on_node.find(i);
      if (it != on_node.end()) {
        used[it->second.first] -= it->second.second;
        on_node.erase(it);
        --bound_of[gang_of(i)];
        if (!sub_of(i).empty()) --bound_sub[gang_of(i)][sub_of(i)];
      }
      if (!restarts) --alive_of[gang_of(i)];
    };
    o.hooks.on_step = [&](double t) {
      // Never a partial subgroup: a KAI gang with members running has each subgroup at its
      // minimum (its members are bound together and end together).
      for (const auto& [gang, subs] : bound_sub) {
        const int a = subs.count("a") ? subs.at("a") : 0, b = subs.count("b") ? subs.at("b") : 0;
        if (a + b == 0) continue;
        const int need_a = sub_a_of[gang], need_b = min_member[gang] - sub_a_of[gang];
        if (a < need_a || b < need_b) {
          errors.push_back(gang + " runs subgroups a " + std::to_string(a) + "/" +
                           std::to_string(need_a) + ", b " + std::to_string(b) + "/" +
                           std::to_string(need_b) + " at " + std::to_string(t) + " s");
        }
      }
      auto view = sched->reservations().View();
      if (!view) return;
      reservations_seen += static_cast<int>(view->reservations.size());
      for (const auto& r : view->reservations) {
        const int need = min_member[r.gang];
        if (alive_of[r.gang] < need || bound_of[r.gang] >= need) {
          errors.push_back("reservation of " + r.gang + " held at " + std::to_string(t) +
                           " s with the gang gone or started");
        }
      }
    };
    SimulationResult res;
    ASSERT_EQ(RunSimulation(sc, o, &res), absl::OkStatus());
    EXPECT_TRUE(res.invariant_violations.empty()) << "iteration " << iter;
    if (evict) {
      // Every evicted pod restarted and ran to its end: all pods that ever started end.
      EXPECT_EQ(res.reservations.evicted_pods, res.restarts) << "iteration " << iter;
      for (const auto& out : res.outcomes) {
        if (out.restarts > 0) {
          EXPECT_TRUE(out.scheduled_s.has_value()) << out.pod;
        }
      }
    }
    EXPECT_TRUE(errors.empty()) << "iteration " << iter << ": " << errors.size()
                                << " errors, first: " << (errors.empty() ? "" : errors[0]);
    for (const auto& [gang, subs] : bound_sub) split_gangs_run += bound_of[gang] > 0 ? 1 : 0;
  }
  // The mixes must exercise what is checked.
  EXPECT_GT(reservations_seen, 0);
  if (sub_groups) {
    EXPECT_GT(split_gangs_run, 5);
  }
  if (evict) {
    EXPECT_GT(evictions, 0);
  }
}

TEST(GangReservationSimTest, RandomMixesNeverOvercommitNorHoldForGoneGangs) {
  CheckRandomMixes(2026, /*sub_groups=*/false);
}

TEST(GangReservationSimTest, RandomMixesWithSubGroupsNeverRunAPartialSubGroup) {
  CheckRandomMixes(2027, /*sub_groups=*/true);
}

TEST(GangReservationSimTest, RandomMixesWithStarvationEvictionKeepEveryInvariant) {
  CheckRandomMixes(2028, /*sub_groups=*/true, /*evict=*/true);
}

// Node a (8 GPUs) runs "old" (4 GPUs, from 0 s) and "new" (4 GPUs, from 5 s), both 3,000 s;
// node b (4 GPUs) runs "pair" (a 2-member gang of 2 GPUs each), 10,000 s; all pinned by
// nodeSelector. Gang "big" (2 x 2 GPUs, 100 s) arrives at 10 s and fits
// only once a frees: its reservation is node a, forecast 3,000 s. With preemptAfterSeconds
// 120 it evicts "new" — the newest, and one victim is enough — which its controller
// restarts: "new" runs its 3,000 s again once "big" is done and ends; "old" and the
// gang "pair" are never touched. Off, nothing is evicted and "big" starts at 3,000 s.
Scenario EvictionScenario() {
  Scenario sc;
  sc.nodes = {GpuNode("a", 8), GpuNode("b", 4)};
  AddJob(&sc, "pair", 2, 2, 0, 10000);
  AddJob(&sc, "old", 1, 4, 0, 3000);
  AddJob(&sc, "new", 1, 4, 5, 3000);
  AddJob(&sc, "big", 2, 2, 10, 100);
  for (auto& tp : sc.pods) {
    tp.restart_on_eviction = true;
    const std::string& n = tp.pod.metadata.name;
    if (n.rfind("pair-", 0) == 0) tp.pod.spec.node_selector["kubernetes.io/hostname"] = "b";
    if (n == "old-0" || n == "new-0") tp.pod.spec.node_selector["kubernetes.io/hostname"] = "a";
  }
  Finish(&sc);
  return sc;
}

TEST(GangReservationSimTest, StarvingGangEvictsTheNewestSmallJobWhichRestartsAndCompletes) {
  const Scenario sc = EvictionScenario();
  SimulationResult off, on;
  ASSERT_EQ(RunSimulation(sc, Options(60), &off), absl::OkStatus());
  ASSERT_EQ(RunSimulation(sc, Options(60, 1, /*preempt_after_s=*/120), &on), absl::OkStatus());
  EXPECT_TRUE(off.invariant_violations.empty());
  EXPECT_TRUE(on.invariant_violations.empty());
  auto a = Starts(off), b = Starts(on);
  // Off: the reservation holds, nobody is evicted, the gang starts when "old" ends.
  EXPECT_EQ(a["t/big-0"], 3000);
  EXPECT_EQ(off.reservations.evictions, 0);
  EXPECT_EQ(off.restarts, 0);
  // On: one eviction of one pod, "new"; the gang starts long before 3,000 s.
  EXPECT_EQ(on.reservations.evictions, 1);
  EXPECT_EQ(on.reservations.evicted_pods, 1);
  EXPECT_EQ(on.restarts, 1);
  EXPECT_EQ(on.preemption_victims, 1);
  ASSERT_GT(b["t/big-0"], 0);
  EXPECT_LT(b["t/big-0"], 3000);
  EXPECT_EQ(b["t/big-0"], b["t/big-1"]);
  std::map<std::string, const PodOutcome*> out;
  for (const auto& o : on.outcomes) out[o.pod] = &o;
  EXPECT_EQ(out["t/new-0"]->restarts, 1);
  EXPECT_TRUE(out["t/new-0"]->preempted);
  EXPECT_EQ(out["t/old-0"]->restarts, 0);
  EXPECT_EQ(out["t/pair-0"]->restarts, 0);
  EXPECT_EQ(out["t/pair-1"]->restarts, 0);
  EXPECT_EQ(b["t/old-0"], 0);
  EXPECT_EQ(b["t/pair-0"], 0);
  // "new" ran from 5 s until the eviction, 4 GPUs: that work is lost.
  // The gang binds after its backoff once the victim is gone: within 30 s of the eviction.
  EXPECT_LE(on.lost_gpu_seconds, 4 * (b["t/big-0"] - 5));
  EXPECT_GE(on.lost_gpu_seconds, 4 * (b["t/big-0"] - 5 - 30));
  // Restarted, it starts again (after the gang's 100 s on a) and runs its full 3,000 s.
  ASSERT_TRUE(out["t/new-0"]->scheduled_s.has_value());
  EXPECT_GE(*out["t/new-0"]->scheduled_s, b["t/big-0"]);
  ASSERT_TRUE(out["t/new-0"]->deleted_s.has_value());
  EXPECT_EQ(*out["t/new-0"]->deleted_s, *out["t/new-0"]->scheduled_s + 3000);
}

}  // namespace
}  // namespace phalanx::sim
