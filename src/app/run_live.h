// `phalanx run`: the scheduler against a real kube-apiserver (upstream
// cmd/kube-scheduler/app.Run).
//
//   phalanx run --config sched.yaml [--kubeconfig F] [--context C]
//               [--bind-address 0.0.0.0] [--secure-port 10259]
//               [--tls-cert-file F --tls-private-key-file F] [--binding-workers 16]
//
// Steps: load the KubeSchedulerConfiguration; resolve the API server (--kubeconfig, then
// clientConnection.kubeconfig, $KUBECONFIG, in-cluster, ~/.kube/config) with
// clientConnection.qps/burst; discover the served gang kinds; serve /healthz, /livez,
// /readyz and /metrics (HTTPS with delegated auth, or plain HTTP: app/serving.h); start the
// informers and wait for their caches; campaign for the Lease
// leaderElection.resourceNamespace/resourceName (unless leaderElect is false); schedule
// while leading. SIGTERM/SIGINT: stop popping pods, finish in-flight binding cycles, send
// queued status patches and events (up to 5 s), release the Lease, exit 0. Losing the
// Lease exits 1 (as upstream, so that the pod restarts as a standby).
#pragma once

#include <string>

#include "app/serving.h"
#include "framework/registry.h"

namespace phalanx::app {

struct LiveOptions {
  std::string config_path;  // "" = upstream defaults
  std::string kubeconfig;   // --kubeconfig
  std::string context;      // --context
  // --bind-address, --secure-port, --tls-cert-file, --tls-private-key-file,
  // --authorization-always-allow-paths (app/serving.h).
  ServingOptions serving;
  int binding_workers = 16;
  int sync_timeout_seconds = 120;  // informer caches must sync within this time
  std::string identity;            // leader election identity; "" = <hostname>_<random>
  std::string log_level = "info";  // trace, debug, info, warn, error
};

// Returns the process exit code: 0 after a clean shutdown, 1 on errors (printed to stderr
// as "phalanx: error: ...", e.g. an unreachable server, a TLS failure or a 401).
int RunLive(const LiveOptions& opts, framework::Registry registry);

}  // namespace phalanx::app
