// What `phalanx bench` (bench.cc) and the workload runner (perf_runner.cc) share: the
// scheduler options of an in-process run.
#pragma once

#include <optional>
#include <string>

#include "api/status.h"
#include "framework/registry.h"
#include "scheduler/scheduler.h"

namespace phalanx::perf {

// --config at `config_path` (upstream defaults when empty) with --parallelism (> 0
// overrides), `registry` (in-tree plugins when unset) and `seed`; clock, client and binding
// workers are the caller's. Errors as config::LoadConfiguration (file, field).
api::Status BenchSchedulerOptions(const std::string& config_path, int parallelism,
                                  const std::optional<framework::Registry>& registry, uint64_t seed,
                                  scheduler::SchedulerOptions* so);

}  // namespace phalanx::perf
