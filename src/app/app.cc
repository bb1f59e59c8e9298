// The phalanx command line (see app.h): the plugin options and the dispatcher. Each
// subcommand declares its own flags in its own file:
//   phalanx simulate SCENARIO [--config sched.yaml] [--seed N] [--results out.jsonl]   simulate.cc
//   phalanx simulate --trace openb|openb-paper|philly ... [--policies ...] [--report ...] (src/cmd)
//   phalanx explain NS/POD | --gang NS/NAME --scenario DIR [--at S] ...                 explain.cc
//   phalanx bench [WORKLOAD.yaml] ...                                                    (src/cmd)
//   phalanx run --config sched.yaml [--kubeconfig F] ... run_live.cc phalanx load create|bind|watch
//   --kubeconfig F [...]                                  live_load.cc phalanx version version.cc
#include "app/app.h"

#include <pthread.h>

#include <csignal>
#include <string_view>
#include <utility>

#include "absl/synchronization/mutex.h"
#include "plugins/registry.h"

namespace phalanx::app {

Option WithPlugin(std::string name, framework::PluginFactory factory) {
  Option o;
  o.apply = [name = std::move(name),
             factory = std::move(factory)](framework::Registry& r) -> framework::Status {
    if (name.empty()) return framework::Status::Error("out-of-tree plugin with an empty name");
    if (!factory) {
      return framework::Status::Error("out-of-tree plugin " + name + ": no factory");
    }
    framework::Status s = r.Register(name, factory);
    if (!s.IsSuccess()) {
      return framework::Status::Error("out-of-tree plugin " + name + ": " + s.Message());
    }
    return s;
  };
  return o;
}

framework::StatusOr<framework::Registry> NewRegistry(const std::vector<Option>& options) {
  framework::Registry r = plugins::NewInTreeRegistry();
  for (const auto& o : options) {
    if (!o.apply) continue;
    framework::Status s = o.apply(r);
    if (!s.IsSuccess()) return s;
  }
  return r;
}

int Run(int argc, char** argv, std::vector<Option> options, Extensions extensions) {
  // Debian's Abseil builds keep absl::Mutex's deadlock detector on: it records every lock
  // acquisition in a global graph (GraphCycles::GetId, per-thread lookups), ~3 % of the
  // instructions of a `phalanx bench` gang run. Lock order is checked at compile time
  // instead (ABSL_GUARDED_BY / ABSL_EXCLUSIVE_LOCKS_REQUIRED, scripts/thread-safety.sh).
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  // `phalanx run` handles SIGTERM / SIGINT on its own thread (run_live.cc); block them from
  // the first instruction so that a SIGTERM arriving while the config and kubeconfig are
  // still being read is not fatal but waits for that thread and shuts down cleanly (exit 0).
  if (argc > 1 && std::string_view(argv[1]) == "run") {
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    pthread_sigmask(SIG_BLOCK, &sigs, nullptr);
  }
  CLI::App app{"Phalanx: a Kubernetes scheduler with all-or-nothing gang scheduling"};
  app.require_subcommand(1);
  std::vector<std::unique_ptr<Command>> commands;
  commands.push_back(NewSimulateCommand(std::move(extensions.trace_replay)));
  commands.push_back(NewExplainCommand());
  for (const auto& make : extensions.commands) commands.push_back(make());
  commands.push_back(NewVersionCommand());
  commands.push_back(NewRunCommand());
  commands.push_back(NewLoadCommand());
  commands.push_back(NewSnapshotCommand());
  std::vector<CLI::App*> subs;
  for (auto& c : commands) subs.push_back(c->Declare(app));

  CLI11_PARSE(app, argc, argv);

  for (size_t i = 0; i < commands.size(); ++i) {
    if (!subs[i]->parsed()) continue;
    if (!commands[i]->Schedules()) return commands[i]->Run(framework::Registry());
    // Every other subcommand schedules: in-tree plus out-of-tree plugins.
    auto registry = NewRegistry(options);
    if (!registry.ok()) return Fail(registry.status().Message());
    return commands[i]->Run(std::move(registry).value());
  }
  return Fail("no subcommand");
}

}  // namespace phalanx::app
