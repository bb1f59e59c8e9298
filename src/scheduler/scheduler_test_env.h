// The fixture shared by the scheduler's end-to-end tests (src/scheduler/*_test.cc): a
// Scheduler built from the in-tree registry on the in-process Store, with a virtual clock
// that starts at 1,000 s. Test-only header (uses GoogleTest assertions).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>

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
};

struct SchedulerTestEnv {
  explicit SchedulerTestEnv(SchedulerTestOptions opts = SchedulerTestOptions())
      : clock(1000 * api::kNanosPerSecond), store(clock) {
    SchedulerOptions o;
    o.config = std::move(opts.config);
    o.registry = plugins::NewInTreeRegistry();
    EXPECT_TRUE(o.registry.Merge(opts.extra).IsSuccess());
    o.clock = &clock;
    o.client = &store;
    o.seed = opts.seed;
    o.binding_workers = opts.binding_workers;
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

  framework::VirtualClock clock;
  store::Store store;
  std::unique_ptr<Scheduler> sched;
};

}  // namespace phalanx::scheduler
