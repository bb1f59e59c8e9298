// my-scheduler: phalanx plus the NodeNumber plugin, built against an installed Phalanx.
// phalanx's scheduler subcommands (simulate of manifest scenarios, run, load, version;
// bench and trace replay are phalanx_cmd's, see README.md); a KubeSchedulerConfiguration
// enables NodeNumber by name, see scheduler-config.yaml.
#include "app/app.h"
#include "node_number.h"

int main(int argc, char** argv) {
  return phalanx::app::Run(argc, argv,
                           {phalanx::app::WithPlugin("NodeNumber", nodenumber::NodeNumber::New)});
}
