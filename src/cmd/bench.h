// `phalanx bench`: in-process scheduling throughput (src/perf), as a subcommand of the
// phalanx command line (app::Extensions).
//   phalanx bench WORKLOAD.yaml [--workload CASE[/WORKLOAD]] [--label L] [--config F] [--json F]
//   phalanx bench [--nodes 5000 --init-pods 1000 --pods 10000 ...]   (SchedulingBasic shape)
#pragma once

#include <memory>

#include "app/command.h"

namespace phalanx::cmd {

std::unique_ptr<app::Command> NewBenchCommand();

}  // namespace phalanx::cmd
