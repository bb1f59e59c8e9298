// `phalanx snapshot`: the live cluster's scheduling state as manifests, for
// `phalanx simulate FILE` later and for bug reports. See app/cluster_import.h.
#include <cstdio>
#include <fstream>

#include "app/app.h"
#include "app/cluster_import.h"

namespace phalanx::app {
namespace {

class SnapshotCommand : public Command {
 public:
  CLI::App* Declare(CLI::App& app) override {
    auto* c = app.add_subcommand(
        "snapshot",
        "Write the live cluster's scheduling state (nodes, pods, namespaces, priority classes, "
        "PDBs, gang, queue and other scheduling objects; never Secrets) as manifests");
    c->add_option("-o,--output", output_, "Output file (default: stdout)");
    c->add_option("--kubeconfig", kubeconfig_, "kubeconfig file (default: as `phalanx run`)");
    c->add_option("--context", context_, "kubeconfig context");
    return c;
  }
  bool Schedules() const override { return false; }

  int Run(framework::Registry) override {
    ClusterSnapshot snap;
    if (auto s = SnapshotClusterFromKubeconfig(kubeconfig_, context_, &snap); !s.ok()) {
      return Fail(std::string(s.message()));
    }
    for (const auto& w : snap.skipped) std::fprintf(stderr, "snapshot: skipped %s\n", w.c_str());
    if (output_.empty() || output_ == "-") {
      std::fwrite(snap.yaml.data(), 1, snap.yaml.size(), stdout);
    } else {
      std::ofstream out(output_);
      out << snap.yaml;
      if (!out) return Fail(output_ + ": cannot write");
    }
    std::string counts;
    for (const auto& c : snap.counts) counts += (counts.empty() ? "" : ", ") + c;
    std::fprintf(stderr, "snapshot: %zu objects (%s)\n", snap.objects, counts.c_str());
    return 0;
  }

 private:
  std::string output_, kubeconfig_, context_;
};

}  // namespace

std::unique_ptr<Command> NewSnapshotCommand() { return std::make_unique<SnapshotCommand>(); }

}  // namespace phalanx::app
