// phalanx: a Kubernetes pod scheduler. The command line lives in app/app.h so that
// schedulers with out-of-tree plugins can reuse it (see examples/out-of-tree-plugin).
#include "app/app.h"

int main(int argc, char** argv) { return phalanx::app::Run(argc, argv); }
