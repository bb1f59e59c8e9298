// LiveProfileError (live_checks.h): what `phalanx run` refuses before scheduling.
#include "app/live_checks.h"

#include <gtest/gtest.h>

#include "config/config.h"
#include "framework/clock.h"
#include "plugins/registry.h"
#include "store/store.h"

namespace phalanx::app {
namespace {

// A scheduler built from a configuration text with the in-tree plugins (on an in-memory
// store); `sched` is null when the text or the profile does not build.
struct Built {
  explicit Built(const std::string& yaml) : store(clock) {
    auto c = config::DecodeConfiguration(yaml, "sched.yaml");
    EXPECT_TRUE(c.ok()) << c.status().message();
    if (!c.ok()) return;
    cfg = *c;
    scheduler::SchedulerOptions o;
    o.config = cfg;
    o.registry = plugins::NewInTreeRegistry();
    o.clock = &clock;
    o.client = &store;
    auto s = scheduler::Scheduler::New(std::move(o));
    EXPECT_TRUE(s.ok()) << s.status().Message();
    if (s.ok()) sched = std::move(s).value();
  }
  framework::VirtualClock clock{0};
  store::Store store;
  config::KubeSchedulerConfiguration cfg;
  std::unique_ptr<scheduler::Scheduler> sched;
};

// The error for a configuration text ("" = none).
std::string ErrorFor(const std::string& yaml) {
  Built b(yaml);
  if (!b.sched) return "(scheduler)";
  const api::Status st = LiveProfileError(*b.sched, b.cfg);
  if (st.ok()) return "";
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition);
  return std::string(st.message());
}

TEST(LiveChecksTest, GpuShareNeedsPreBindInLiveMode) {
  const std::string head =
      "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
      "profiles:\n- schedulerName: gpu\n  plugins:\n";
  EXPECT_EQ(ErrorFor(head + "    multiPoint: {enabled: [{name: GpuShare}]}\n"), "");
  EXPECT_EQ(ErrorFor(head + "    preFilter: {enabled: [{name: GpuShare}]}\n"
                            "    filter: {enabled: [{name: GpuShare}]}\n"
                            "    reserve: {enabled: [{name: GpuShare}]}\n"
                            "    preBind: {enabled: [{name: GpuShare}]}\n"),
            "");
  EXPECT_EQ(ErrorFor(head + "    preFilter: {enabled: [{name: GpuShare}]}\n"
                            "    filter: {enabled: [{name: GpuShare}]}\n"
                            "    reserve: {enabled: [{name: GpuShare}]}\n"),
            "profile gpu: GpuShare is enabled at reserve but not at preBind; in phalanx run the "
            "chosen GPU devices must be written to the pod (enable GpuShare at preBind, or in "
            "multiPoint)");
  EXPECT_EQ(
      ErrorFor("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"),
      "");
}

// The warnings for a configuration text and the informers' resources.
std::vector<std::string> WarningsFor(const std::string& yaml,
                                     const std::vector<std::string>& watched) {
  Built b(yaml);
  if (!b.sched) return {"(scheduler)"};
  return LiveProfileWarnings(*b.sched, b.cfg, watched);
}

TEST(LiveChecksTest, ProvisioningRequestWithoutItsCrdIsAWarning) {
  const std::string with =
      "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
      "profiles:\n- schedulerName: ml\n  plugins:\n"
      "    multiPoint: {enabled: [{name: ProvisioningRequest}]}\n";
  const std::vector<std::string> core = {"pods/v1", "nodes/v1"};
  const auto w = WarningsFor(with, core);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0],
            "profile ml: ProvisioningRequest is enabled but the API server does not serve "
            "autoscaling.x-k8s.io/v1 provisioningrequests (cluster-autoscaler's CRD is not "
            "installed): gangs get no ProvisioningRequest; restart phalanx after installing the "
            "CRD");
  EXPECT_TRUE(
      WarningsFor(with, {"pods/v1", "provisioningrequests.autoscaling.x-k8s.io/v1"}).empty());
  // Without the plugin, an unserved kind is nobody's concern.
  EXPECT_TRUE(
      WarningsFor("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n",
                  core)
          .empty());
}

}  // namespace
}  // namespace phalanx::app
