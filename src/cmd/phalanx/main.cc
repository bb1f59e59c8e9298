// The phalanx binary: the scheduler's command line (src/app) plus `bench` and simulate's
// trace replay (src/cmd: src/perf, src/replay).
#include "app/app.h"
#include "cmd/trace_replay.h"

int main(int argc, char** argv) {
  return phalanx::app::Run(argc, argv, {}, phalanx::cmd::Extensions());
}
