// simulate's trace modes for the phalanx command line (app::TraceReplay): --trace openb
// single runs and the experiments of src/replay (policies x seeds, results document, HTML
// report), and the Extensions that make the `phalanx` binary (bench + trace replay).
#pragma once

#include "app/app.h"

namespace phalanx::cmd {

app::TraceReplay NewTraceReplay();

// Everything the `phalanx` binary adds to app::Run: NewBenchCommand and NewTraceReplay.
app::Extensions Extensions();

}  // namespace phalanx::cmd
