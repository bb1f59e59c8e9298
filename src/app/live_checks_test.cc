// LiveProfileError (live_checks.h): what `phalanx run` refuses before scheduling.
#include "app/live_checks.h"

#include <gtest/gtest.h>

#include "config/config.h"
#include "framework/clock.h"
#include "plugins/registry.h"
#include "store/store.h"

namespace phalanx::app {
namespace {

// The error for a configuration text ("" = none), with the in-tree plugins.
std::string ErrorFor(const std::string& yaml) {
  auto cfg = config::DecodeConfiguration(yaml, "sched.yaml");
  EXPECT_TRUE(cfg.ok()) << cfg.status().message();
  if (!cfg.ok()) return "(config)";
  framework::VirtualClock clock(0);
  store::Store store(clock);
  scheduler::SchedulerOptions o;
  o.config = *cfg;
  o.registry = plugins::NewInTreeRegistry();
  o.clock = &clock;
  o.client = &store;
  auto s = scheduler::Scheduler::New(std::move(o));
  EXPECT_TRUE(s.ok()) << s.status().Message();
  if (!s.ok()) return "(scheduler)";
  const api::Status st = LiveProfileError(*s.value(), *cfg);
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

}  // namespace
}  // namespace phalanx::app
