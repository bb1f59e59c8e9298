// A 100,000-pod gang in the simulator: the gang cannot fit, so nothing is held,
// every member gets the one gang-level reason, the run ends (no retry loop) and memory stays
// bounded (peak resident size well below what 100k copies of the cluster state would take).
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "config/config.h"
#include "plugins/registry.h"
#include "sim/scenario.h"
#include "sim/simulation.h"

namespace phalanx::sim {
namespace {

constexpr int kGang = 100000;

long PeakRssMiB() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss / 1024;  // ru_maxrss is in KiB on Linux
}

TEST(GangHostileTest, HundredThousandPodGangThatCannotFit) {
  char tmpl[] = "/tmp/phalanx-gang-hostile.XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  const std::string path = dir + "/gang.yaml";
  {
    std::ofstream out(path);
    for (int n = 0; n < 8; ++n) {  // 8 x 110 pods: room for 880 of the 100,000
      out << "apiVersion: v1\nkind: Node\nmetadata: {name: node-" << n
          << "}\nstatus: {capacity: {cpu: '64', memory: 256Gi, pods: '110'}}\n---\n";
    }
    out << "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\n"
           "metadata: {name: huge, namespace: default}\nspec: {minMember: "
        << kGang << "}\n---\n"
        << "apiVersion: batch/v1\nkind: Job\nmetadata: {name: huge, namespace: default}\n"
           "spec:\n  parallelism: "
        << kGang << "\n  completions: " << kGang
        << "\n  template:\n    metadata:\n      labels: {scheduling.x-k8s.io/pod-group: huge}\n"
           "    spec:\n      containers:\n      - name: w\n"
           "        resources: {requests: {cpu: 10m, memory: 16Mi}}\n";
  }
  Scenario sc;
  ASSERT_EQ(LoadManifestScenario(path, &sc), absl::OkStatus());
  std::filesystem::remove_all(dir);
  ASSERT_EQ(sc.pods.size(), static_cast<size_t>(kGang));

  SimulationOptions o;
  o.seed = 1;
  o.config = config::DefaultConfiguration();
  o.registry = plugins::NewInTreeRegistry();
  SimulationResult r;
  const long rss_before = PeakRssMiB();
  ASSERT_EQ(RunSimulation(sc, o, &r), absl::OkStatus());
  const long rss_growth = PeakRssMiB() - rss_before;

  EXPECT_TRUE(r.invariant_violations.empty()) << r.invariant_violations.front();
  EXPECT_EQ(r.pods, static_cast<size_t>(kGang));
  EXPECT_EQ(r.scheduled, 0u) << "a gang that cannot fit holds nothing";
  EXPECT_EQ(r.pending_at_end, static_cast<size_t>(kGang));
  ASSERT_EQ(r.pending_reasons.size(), 1u) << "one gang-level reason for every member";
  EXPECT_NE(r.pending_reasons.begin()->first.find("default/huge"), std::string::npos)
      << r.pending_reasons.begin()->first;
  EXPECT_EQ(r.pending_reasons.begin()->second, static_cast<size_t>(kGang));
  // Bounded: the scenario itself is ~100k pods of ~2 KiB; a per-member copy of the
  // snapshot (8 nodes) or of the gang would be orders of magnitude more. Generous for ASan.
  EXPECT_LT(rss_growth, 3072) << "peak RSS grew by " << rss_growth << " MiB";
  std::printf("100k-pod gang: %lld attempts, %.1f s wall, peak RSS +%ld MiB\n",
              static_cast<long long>(r.attempts), r.wall_seconds, rss_growth);
}

}  // namespace
}  // namespace phalanx::sim
