// Sweeps of trace-replay experiments across machines:
//   phalanx report merge SHARD.json... --json OUT.json [--report OUT.html]
//       combines the --json documents of `phalanx simulate ... --shard i/N` runs into the
//       document (and HTML report) of the whole experiment (replay::MergeShardReports);
//   phalanx sweep --shards N --image IMAGE [--results-claim C] [--data-claim D]
//                 [--name NAME] [--namespace NS] -- SIMULATE-ARGS...
//       prints a Kubernetes Indexed Job that runs the N shards on a cluster
//       (replay::SweepJobManifest).
#pragma once

#include <memory>

#include "app/command.h"

namespace phalanx::cmd {

std::unique_ptr<app::Command> NewReportCommand();
std::unique_ptr<app::Command> NewSweepCommand();

}  // namespace phalanx::cmd
