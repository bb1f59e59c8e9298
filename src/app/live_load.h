// `phalanx load`: load generator and observer for live benchmarks against a real
// kube-apiserver (scripts/live-bench.sh). Three modes, all through client::RestClient
// (keep-alive connections from its handle pool, its QPS/burst token bucket):
//
//   phalanx load create --kubeconfig KC --namespace NS --nodes N --pods P [--workers W]
//       Creates the namespace, N nodes "node-00000".. (scheduler_perf node-default.yaml:
//       4 cpu, 32Gi, 110 pods, Ready) and P pods "pod-00000".. (pod-default.yaml: one
//       pause container requesting and limited to 100m cpu / 500Mi), with W concurrent
//       workers and no client-side rate limit. Prints objects/s.
//   phalanx load bind --kubeconfig KC --namespace NS [--workers W] [--qps Q --burst B]
//       The bind-only client: lists the pending pods of NS and the nodes, and POSTs
//       pods/binding for pod i onto node i mod N (round-robin, no scheduling), W at a time,
//       at QPS Q / burst B. Measures what the API server can absorb in binds.
//   phalanx load watch --kubeconfig KC --namespace NS --expect P [--timeout S]
//       [--ready-file F]
//       Watches the pods of NS and records the wall-clock time at which each pod is first
//       seen with spec.nodeName; touches F once the watch is established; exits when P pods
//       are bound (exit 0) or after S seconds (exit 1). Prints one JSON line:
//       {"bound":N,"expected":P,"first_ms":T0,"last_ms":T1} (Unix milliseconds).
//
// Errors (unreachable server, 401, a failed create) are printed as "phalanx: error: ..."
// with the request, exit code 1.
#pragma once

#include <string>

namespace phalanx::app {

struct LoadOptions {
  std::string mode;  // create | bind | watch
  std::string kubeconfig;
  std::string context;
  std::string namespace_ = "bench";
  int nodes = 5000;
  int pods = 10000;
  int workers = 32;
  double qps = 0;  // bind: client rate limit (<= 0: none)
  int burst = 0;
  int expect = 0;             // watch: bound pods to wait for (0: --pods)
  int timeout_seconds = 900;  // watch
  std::string ready_file;     // watch
};

// Returns the process exit code.
int RunLoad(const LoadOptions& opts);

}  // namespace phalanx::app
