// The fixture shared by the scheduler's end-to-end tests (src/scheduler/*_test.cc): a
// Scheduler built from the in-tree registry on the in-process Store, with a virtual clock
// that starts at 1,000 s. Test-only header (uses GoogleTest assertions).
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "api/decode.h"
#include "config/config.h"
#include "framework/clock.h"
#include "plugins/registry.h"
#include "scheduler/scheduler.h"
#include "store/store.h"

namespace phalanx::scheduler {

struct SchedulerTestOptions {
  config::KubeSchedulerConfiguration config = config::DefaultConfiguration();
  uint64_t seed = 1;
  framework::Registry extra;  // out-of-tree plugins merged into the in-tree registry
  int binding_workers = 0;    // > 0: a binding pool (wait with sched->WaitForBindings())
  // The scheduler's ClusterClient, given the env's store (e.g. a wrapper that injects
  // failures); nullptr: the store itself. The client must outlive the env's scheduler.
  std::function<framework::ClusterClient*(store::Store&)> client;
  bool replay_podgroup_rejections = true;  // SchedulerOptions::replay_podgroup_rejections
  std::vector<std::shared_ptr<framework::Extender>> extenders;  // SchedulerOptions::extenders
  bool opportunistic_batching = true;  // SchedulerOptions::opportunistic_batching
};

struct SchedulerTestEnv {
  explicit SchedulerTestEnv(SchedulerTestOptions opts = SchedulerTestOptions())
      : clock(1000 * api::kNanosPerSecond), store(clock) {
    SchedulerOptions o;
    o.config = std::move(opts.config);
    o.registry = plugins::NewInTreeRegistry();
    EXPECT_TRUE(o.registry.Merge(opts.extra).IsSuccess());
    o.clock = &clock;
    o.client = opts.client ? opts.client(store) : &store;
    o.seed = opts.seed;
    o.binding_workers = opts.binding_workers;
    o.replay_podgroup_rejections = opts.replay_podgroup_rejections;
    o.extenders = std::move(opts.extenders);
    o.opportunistic_batching = opts.opportunistic_batching;
    auto s = Scheduler::New(std::move(o));
    EXPECT_TRUE(s.ok()) << s.status().Message();
    sched = std::move(s).value();
    sched->AddEventHandlers(store);
  }

  // Creates every object of a manifest text (nodes, other objects, then pods 1 ms apart,
  // a deterministic arrival order).
  void Apply(const std::string& yaml) {
    api::Manifests m;
    std::string err;
    ASSERT_TRUE(api::OkOrMessage(api::DecodeManifests(yaml, "test.yaml", &m), &err)) << err;
    for (auto& n : m.nodes) ASSERT_TRUE(store.CreateNode(n).ok());
    for (auto& o : m.objects) ASSERT_TRUE(store.CreateObject(o).ok()) << o.Key();
    for (auto& p : m.pods) {
      ASSERT_TRUE(store.CreatePod(p).ok()) << p.Key();
      clock.Advance(1'000'000);
    }
  }

  // Periodic work, then scheduling cycles until activeQ is empty.
  void RunUntilIdle() {
    sched->Tick();
    while (sched->ScheduleOne(false)) {
    }
  }

  // Runs every wake-up (backoff expiry, Permit timeouts, ...) within the next `ns`.
  void AdvanceAndRun(int64_t ns) {
    api::Timestamp end = clock.Now() + ns;
    for (;;) {
      api::Timestamp w = sched->NextWakeTime();
      if (w > end) break;
      clock.AdvanceTo(w);
      RunUntilIdle();
    }
    clock.AdvanceTo(end);
    RunUntilIdle();
  }

  // The pod's spec.nodeName ("" while pending, "<deleted>" once gone).
  std::string NodeOf(const std::string& name, const std::string& ns = "default") {
    auto p = store.GetPod(ns, name);
    return p ? p->spec.node_name : "<deleted>";
  }
  // The pod's status.nominatedNodeName ("<deleted>" once gone).
  std::string NominatedOf(const std::string& name) {
    auto p = store.GetPod("default", name);
    return p ? p->status.nominated_node_name : "<deleted>";
  }
  // "reason: message" of the events recorded for the object `key`, in order.
  std::vector<std::string> EventsOf(const std::string& key) {
    std::vector<std::string> out;
    for (const auto& e : store.Events()) {
      if (e.pod_key == key) out.push_back(e.reason + ": " + e.message);
    }
    return out;
  }

  framework::VirtualClock clock;
  store::Store store;
  std::unique_ptr<Scheduler> sched;
};

}  // namespace phalanx::scheduler
