// my-scheduler: phalanx plus the NodeNumber plugin, built against an installed Phalanx.
// Same command line as phalanx (simulate, bench, version); a KubeSchedulerConfiguration
// enables NodeNumber by name, see scheduler-config.yaml.
#include "app/app.h"
#include "node_number.h"

int main(int argc, char** argv) {
  return phalanx::app::Run(argc, argv,
                           {phalanx::app::WithPlugin("NodeNumber", nodenumber::NodeNumber::New)});
}
