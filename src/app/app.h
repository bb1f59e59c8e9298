// The phalanx command line as a library (upstream cmd/kube-scheduler/app).
//
// The `phalanx` binary is `return phalanx::app::Run(argc, argv);`. A scheduler with
// out-of-tree plugins is built the way upstream's
// `app.NewSchedulerCommand(app.WithPlugin(name, factory))` is: link Phalanx::phalanx_app
// and pass the plugins to Run, e.g.
//
//   int main(int argc, char** argv) {
//     return phalanx::app::Run(argc, argv, {phalanx::app::WithPlugin("NodeNumber", New)});
//   }
//
// The plugins are merged into plugins::NewInTreeRegistry() for every subcommand that
// schedules (simulate, run, bench); a KubeSchedulerConfiguration then enables them by name.
//
// Subcommands, one file each: simulate.cc (manifest scenarios; trace replay through
// TraceReplay), explain.cc (explain), run_live.cc (run), live_load.cc (load), version.cc.
// phalanx_app links only the scheduler and the simulation engine (src/sim); the `phalanx` binary
// adds `bench` (src/perf) and simulate's trace replay and experiments (src/replay) through
// Extensions, from src/cmd (phalanx_cmd): `app::Run(argc, argv, {}, cmd::Extensions())`.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "app/command.h"
#include "app/simulate.h"
#include "framework/registry.h"
#include "framework/status.h"

namespace phalanx::app {

// A change to the plugin registry applied before any subcommand runs (upstream
// app.Option). Build one with WithPlugin.
struct Option {
  // Adds to (or checks) the registry; a non-success status aborts the command.
  std::function<framework::Status(framework::Registry&)> apply;
};

// An Option that registers `factory` under `name`. Run fails with exit code 1 and
// "phalanx: error: out-of-tree plugin <name>: a plugin named <name> already exists" when
// `name` is already taken by an in-tree plugin or an earlier option; an empty name or an
// empty factory is an error too.
Option WithPlugin(std::string name, framework::PluginFactory factory);

// plugins::NewInTreeRegistry() with `options` applied in order; the first failing option's
// status otherwise.
framework::StatusOr<framework::Registry> NewRegistry(const std::vector<Option>& options);

// What a binary adds to the scheduler's own subcommands (simulate of manifests, run, load,
// version): more subcommands (bench) and simulate's trace modes.
struct Extensions {
  std::vector<CommandFactory> commands;
  TraceReplay trace_replay;
};

// Parses the command line and runs the subcommand (simulate, run, load, version and those
// of `extensions`) with the in-tree plugins plus `options`. Returns the process exit code:
// 0 on success, 1 on errors (messages go to stderr as "phalanx: error: ..."), 3 when
// simulate found invariant violations, CLI11's code on usage errors.
int Run(int argc, char** argv, std::vector<Option> options = {}, Extensions extensions = {});

// The built-in subcommands (one file each).
std::unique_ptr<Command> NewSimulateCommand(TraceReplay trace_replay);
std::unique_ptr<Command> NewRunCommand();       // run_live.cc
std::unique_ptr<Command> NewLoadCommand();      // live_load.cc
std::unique_ptr<Command> NewVersionCommand();   // version.cc
std::unique_ptr<Command> NewSnapshotCommand();  // snapshot.cc
std::unique_ptr<Command> NewExplainCommand();   // explain.cc

}  // namespace phalanx::app
