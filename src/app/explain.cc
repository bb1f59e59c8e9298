// `phalanx explain NAMESPACE/POD | --gang NAMESPACE/NAME SCENARIO [--at S] [--config F]
// [--add-nodes NxNODE] [--max-add-nodes N]`: why a pod or gang is pending in a simulation
// of SCENARIO (the manifests `phalanx simulate` takes), when it would start, and the
// smallest change that lets it bind (src/sim/explain.h).
#include "sim/explain.h"

#include <cstdio>

#include "app/app.h"
#include "app/cluster_import.h"
#include "sim/whatif.h"

namespace phalanx::app {

namespace {

class ExplainCommand : public Command {
 public:
  CLI::App* Declare(CLI::App& app) override {
    auto* c = app.add_subcommand(
        "explain",
        "Why a pod or gang is pending in a simulation, its forecast start, and the smallest fix");
    c->add_option("pod", pod_, "The pod, NAMESPACE/NAME (or --gang)");
    c->add_option("--gang", gang_,
                  "The gang, NAMESPACE/NAME (its PodGroup / Workload / gang name)");
    c->add_option("--scenario", scenario_, "Manifest file or directory, as for phalanx simulate");
    c->add_flag("--from-cluster", from_cluster_,
                "Diagnose on the live cluster's state instead of --scenario (as simulate "
                "--from-cluster: bound pods in place, pending ones queued)");
    c->add_option("--kubeconfig", kubeconfig_, "With --from-cluster: kubeconfig file");
    c->add_option("--context", context_, "With --from-cluster: kubeconfig context");
    c->add_option("--config", config_path_, "KubeSchedulerConfiguration file");
    c->add_option("--seed", seed_, "Seed for tie-breaking, as for phalanx simulate");
    c->add_option("--at", at_s_, "Diagnose at this virtual second (default: the end of the run)")
        ->check(CLI::NonNegativeNumber);
    c->add_option("--add-nodes", add_nodes_,
                  "What-if: COUNTxNODE more copies of an existing node (e.g. 2xgpu-1), repeatable");
    c->add_option("--cordon-nodes", cordon_nodes_,
                  "What-if: mark these nodes unschedulable, e.g. gpu-1,gpu-2");
    c->add_option("--remove-nodes", remove_nodes_,
                  "What-if: leave these nodes out, e.g. gpu-1,gpu-2");
    c->add_option(
         "--max-add-nodes", max_add_nodes_,
         "Fix search: try adding up to this many nodes of each existing shape (0: no search)")
        ->check(CLI::Range(0, 64));
    c->add_option("--json", json_path_, "Also write the explanation as JSON to this file");
    return c;
  }

  int Run(framework::Registry registry) override {
    sim::SimulationOptions so;
    so.seed = seed_;
    if (auto s = LoadConfigOrDefault(config_path_, &so.config); !s.ok())
      return Fail(std::string(s.message()));
    so.config_source = config_path_;
    so.registry = std::move(registry);
    sim::Scenario sc;
    if (from_cluster_ == !scenario_.empty())
      return Fail("explain needs exactly one of --scenario and --from-cluster");
    if (auto s = from_cluster_ ? LoadClusterScenario(kubeconfig_, context_, &sc)
                               : sim::LoadManifestScenario(scenario_, &sc);
        !s.ok()) {
      return Fail(std::string(s.message()));
    }
    if (auto s = sim::ApplyNodeEdits({add_nodes_, cordon_nodes_, remove_nodes_}, &sc); !s.ok()) {
      return Fail(std::string(s.message()));
    }
    sim::ExplainRequest req;
    req.pod = pod_;
    req.gang = gang_;
    req.at_s = at_s_;
    req.max_add_nodes = max_add_nodes_;
    sim::Explanation e;
    if (auto s = sim::Explain(sc, so, req, &e); !s.ok()) return Fail(std::string(s.message()));
    std::printf("%s", sim::FormatExplanation(e).c_str());
    if (!json_path_.empty()) {
      if (auto s = WriteTextFile(json_path_, sim::ExplanationJson(e) + "\n"); !s.ok()) {
        return Fail(std::string(s.message()));
      }
    }
    return 0;
  }

 private:
  std::string pod_, gang_, scenario_, config_path_, json_path_, kubeconfig_, context_;
  bool from_cluster_ = false;
  uint64_t seed_ = 1;
  std::optional<double> at_s_;
  std::vector<std::string> add_nodes_;
  std::string cordon_nodes_, remove_nodes_;
  int max_add_nodes_ = 8;
};

}  // namespace

std::unique_ptr<Command> NewExplainCommand() { return std::make_unique<ExplainCommand>(); }

}  // namespace phalanx::app
