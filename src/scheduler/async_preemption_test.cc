// Asynchronous preemption (framework/preemption_executor.h; upstream KEP-4832): with a
// binding pool, victims are deleted off the scheduling thread, the preemptor waits at
// DefaultPreemption's PreEnqueue until they are gone, and a failed API call is reported and
// spares the remaining victims. The client below blocks or fails DeletePod on command, so
// the order of events is fixed by the test, not by timing.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "scheduler/scheduler_test_env.h"
#include "testing/builders.h"

namespace phalanx::scheduler {
namespace {

using testing::NodeBuilder;
using testing::PodBuilder;

constexpr int64_t kSec = api::kNanosPerSecond;

// The store, with DeletePod held until Release() (when `hold`), or failing (when `fail`).
class GatedClient final : public framework::ClusterClient {
 public:
  GatedClient(store::Store& store, bool hold, bool fail)
      : store_(store), hold_(hold), fail_(fail) {}
  api::Status Bind(const api::Pod& pod, const std::string& node) override {
    return store_.Bind(pod, node);
  }
  api::Status DeletePod(const api::Pod& pod) override {
    {
      absl::MutexLock l(&mu_);
      deletes_.push_back(pod.Key());
    }
    if (hold_) released_.WaitForNotification();
    if (fail_) return absl::UnavailableError("etcdserver: request timed out");
    return store_.DeletePod(pod);
  }
  api::Status UpdatePodStatus(const api::Pod& pod, const api::PodCondition* c,
                              const std::string* nominated) override {
    return store_.UpdatePodStatus(pod, c, nominated);
  }
  void RecordEvent(const api::Pod& pod, std::string_view type, std::string_view reason,
                   std::string_view message) override {
    store_.RecordEvent(pod, type, reason, message);
  }
  void Release() {
    if (!released_.HasBeenNotified()) released_.Notify();
  }
  std::vector<std::string> Deletes() {
    absl::MutexLock l(&mu_);
    return deletes_;
  }

 private:
  store::Store& store_;
  const bool hold_, fail_;
  absl::Notification released_;
  absl::Mutex mu_;
  std::vector<std::string> deletes_ ABSL_GUARDED_BY(mu_);
};

struct AsyncEnv {
  AsyncEnv(bool hold, bool fail) {
    SchedulerTestOptions o;
    o.binding_workers = 1;
    o.client = [this, hold, fail](store::Store& s) {
      client = std::make_unique<GatedClient>(s, hold, fail);
      return client.get();
    };
    env = std::make_unique<SchedulerTestEnv>(std::move(o));
  }
  ~AsyncEnv() {
    client->Release();  // never leave a pool worker blocked
    env.reset();
  }
  // Two 1-cpu victims of priority 10 on a 2-cpu node, bound.
  void FillNode() {
    ASSERT_TRUE(
        env->store
            .CreateNode(
                NodeBuilder("n1").Capacity({{"cpu", "2"}, {"memory", "4Gi"}, {"pods", "10"}}).Obj())
            .ok());
    for (const char* name : {"low-a", "low-b"}) {
      ASSERT_TRUE(env->store.CreatePod(PodBuilder(name).Priority(10).Req("cpu", "1").Obj()).ok());
      env->clock.Advance(1'000'000);
    }
    env->RunUntilIdle();
    env->sched->WaitForBindings();
    ASSERT_EQ(env->NodeOf("low-a"), "n1");
    ASSERT_EQ(env->NodeOf("low-b"), "n1");
  }
  std::unique_ptr<GatedClient> client;  // outlives env (declared first)
  std::unique_ptr<SchedulerTestEnv> env;
};

TEST(AsyncPreemptionTest, VictimsAreDeletedOffTheSchedulingThreadAndThePreemptorWaitsForThem) {
  AsyncEnv a(/*hold=*/true, /*fail=*/false);
  a.FillNode();
  SchedulerTestEnv& env = *a.env;
  ASSERT_TRUE(env.store.CreatePod(PodBuilder("high").Priority(1000).Req("cpu", "2").Obj()).ok());
  const std::string uid = env.store.GetPod("default", "high")->metadata.uid;
  // The scheduling cycle returns while the first DeletePod is still held on the pool.
  env.RunUntilIdle();
  EXPECT_EQ(env.NominatedOf("high"), "n1");
  EXPECT_EQ(env.NodeOf("low-a"), "n1");
  EXPECT_EQ(env.NodeOf("low-b"), "n1");
  EXPECT_TRUE(env.sched->preemption().IsPodRunningPreemption(uid));
  // Anything that moves the preemptor now meets the PreEnqueue gate.
  env.sched->scheduling_queue().Activate({"default/high"});
  auto q = env.sched->scheduling_queue().Get("default/high");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->gating_plugin, "DefaultPreemption");
  EXPECT_EQ(q->last_failure_message, "waiting for the preemption for this pod to be finished");
  EXPECT_EQ(env.sched->scheduling_queue().Counts().gated, 1u);
  EXPECT_FALSE(env.sched->ScheduleOne(false));  // nothing in activeQ

  a.client->Release();
  env.sched->WaitForBindings();  // the preemption work is done
  EXPECT_FALSE(env.sched->preemption().IsPodRunningPreemption(uid));
  EXPECT_EQ(env.NodeOf("low-a"), "<deleted>");
  EXPECT_EQ(env.NodeOf("low-b"), "<deleted>");
  EXPECT_EQ(env.sched->scheduling_queue().Counts().gated, 0u);  // released at the end of the work
  std::vector<std::string> ev = env.EventsOf("default/low-a");
  ASSERT_FALSE(ev.empty());
  EXPECT_EQ(ev.back(), "Preempted: Preempted by pod " + uid + " on node n1");
  env.AdvanceAndRun(30 * kSec);
  env.sched->WaitForBindings();
  EXPECT_EQ(env.NodeOf("high"), "n1");
}

TEST(AsyncPreemptionTest, FailedDeleteIsReportedSparesTheOtherVictimAndActivatesThePreemptor) {
  // Held too, so that the failure (which activates the preemptor) comes after the
  // scheduling thread is idle: no second attempt races with the checks below.
  AsyncEnv a(/*hold=*/true, /*fail=*/true);
  a.FillNode();
  SchedulerTestEnv& env = *a.env;
  ASSERT_TRUE(env.store.CreatePod(PodBuilder("high").Priority(1000).Req("cpu", "2").Obj()).ok());
  const std::string uid = env.store.GetPod("default", "high")->metadata.uid;
  env.RunUntilIdle();
  a.client->Release();
  env.sched->WaitForBindings();
  // One delete was tried and failed; the other victim was spared, and neither got a
  // "Preempted" event.
  ASSERT_EQ(a.client->Deletes().size(), 1u);
  EXPECT_EQ(env.NodeOf("low-a"), "n1");
  EXPECT_EQ(env.NodeOf("low-b"), "n1");
  for (const char* v : {"default/low-a", "default/low-b"}) {
    for (const auto& e : env.EventsOf(v)) EXPECT_EQ(e.find("Preempted:"), std::string::npos) << e;
  }
  // Reported on the preemptor, which is not held back.
  bool reported = false;
  for (const auto& e : env.EventsOf("default/high")) {
    if (e.rfind("FailedPreemption: Preemption failed, remaining victims spared: preempt " +
                    a.client->Deletes()[0] + ": etcdserver: request timed out",
                0) == 0) {
      reported = true;
    }
  }
  EXPECT_TRUE(reported);
  EXPECT_FALSE(env.sched->preemption().IsPodRunningPreemption(uid));
  auto q = env.sched->scheduling_queue().Get("default/high");
  ASSERT_NE(q, nullptr);
  EXPECT_TRUE(q->gating_plugin.empty());
}

// What the executor reports, in order: "attempt Plugin Result", "victims Plugin N/PDB",
// "done Plugin ok|error".
class RecordingObserver final : public framework::PreemptionObserver {
 public:
  void PreemptionAttempt(std::string_view plugin, std::string_view result) override {
    absl::MutexLock l(&mu_);
    log_.push_back("attempt " + std::string(plugin) + " " + std::string(result));
  }
  void PreemptionVictims(std::string_view plugin, size_t victims, int64_t pdb) override {
    absl::MutexLock l(&mu_);
    log_.push_back("victims " + std::string(plugin) + " " + std::to_string(victims) + "/" +
                   std::to_string(pdb));
  }
  void PreemptionWorkDone(std::string_view plugin, bool ok, double) override {
    absl::MutexLock l(&mu_);
    log_.push_back("done " + std::string(plugin) + (ok ? " ok" : " error"));
  }
  std::vector<std::string> Log() {
    absl::MutexLock l(&mu_);
    return log_;
  }

 private:
  absl::Mutex mu_;
  std::vector<std::string> log_ ABSL_GUARDED_BY(mu_);
};

TEST(AsyncPreemptionTest, ObserverCountsAttemptsVictimsAndWork) {
  for (bool fail : {false, true}) {
    AsyncEnv a(/*hold=*/true, fail);
    RecordingObserver obs;
    a.env->sched->preemption().SetObserver(&obs);
    a.FillNode();
    SchedulerTestEnv& env = *a.env;
    ASSERT_TRUE(env.store.CreatePod(PodBuilder("high").Priority(1000).Req("cpu", "2").Obj()).ok());
    env.RunUntilIdle();
    a.client->Release();
    env.sched->WaitForBindings();
    // The work is held until the scheduling thread is idle, so the order is fixed.
    const std::vector<std::string> want = {
        "victims DefaultPreemption 2/0", "attempt DefaultPreemption Success",
        fail ? "done DefaultPreemption error" : "done DefaultPreemption ok"};
    std::vector<std::string> got = obs.Log();
    EXPECT_EQ(got, want) << "fail=" << fail;
    a.env->sched->preemption().SetObserver(nullptr);
  }
}

}  // namespace
}  // namespace phalanx::scheduler
