// The endpoints of `phalanx run`: /healthz, /livez, /readyz and /metrics, served the way
// kube-scheduler serves them (cmd/kube-scheduler/app/options/options.go,
// k8s.io/apiserver/pkg/server/options/serving.go): over HTTPS on --bind-address
// (an IP) : --secure-port (default 0.0.0.0:10259) with delegated authentication and
// authorization (client/delegated_auth.h) through the scheduler's own API connection,
// /healthz /readyz /livez always allowed; with --tls-cert-file / --tls-private-key-file or
// else a self-signed certificate made at start. Phalanx's earlier plain-HTTP form stays:
// --bind-address host:port serves the same paths over plain HTTP, without
// authentication, and then HTTPS only if --secure-port is given too.
//
//   --bind-address       --secure-port   serves
//   0.0.0.0 (default)    10259 (default) HTTPS 0.0.0.0:10259
//   IP                   N               HTTPS IP:N (N = 0: nothing)
//   host:port            (not given)     plain HTTP host:port
//   host:port            N               plain HTTP host:port and HTTPS 0.0.0.0:N
//   ""                   (not given)     nothing
//   ""                   N               HTTPS 0.0.0.0:N
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "api/status.h"
#include "client/delegated_auth.h"
#include "metrics/http_server.h"

namespace phalanx::client {
class RestClient;
}

namespace phalanx::app {

struct ServingOptions {
  std::string bind_address = "0.0.0.0";  // an IP (HTTPS), host:port (plain HTTP) or ""
  int secure_port = 10259;               // 0: no HTTPS
  bool secure_port_set = false;          // --secure-port was given
  std::string tls_cert_file;             // PEM; with tls_private_key_file, or neither
  std::string tls_private_key_file;
  std::vector<std::string> always_allow_paths = {"/healthz", "/readyz", "/livez"};
};

// Where each server listens ("" = not served), from the options; InvalidArgument for a
// bad combination (a port out of range, one TLS file without the other).
struct ServingPlan {
  std::string plain_address;
  std::string secure_address;
};
api::StatusOr<ServingPlan> PlanServing(const ServingOptions& o);

class Serving {
 public:
  // `content` answers a request that passed authentication and authorization (404 for an
  // unknown path). `api` makes the TokenReviews and SubjectAccessReviews (must outlive
  // this object; null: every request that needs a review is refused with 500).
  // Errors name the flag: "--tls-cert-file: ...", "--secure-port: bind address ...".
  api::Status Start(const ServingOptions& o, client::RestClient* api,
                    std::function<metrics::HttpResponse(const std::string& path)> content);
  void Stop();
  int plain_port() const { return plain_.port(); }
  int secure_port() const { return secure_.port(); }
  const ServingPlan& plan() const { return plan_; }

 private:
  ServingPlan plan_;
  std::unique_ptr<client::DelegatedAuth> auth_;
  metrics::HttpServer plain_, secure_;
};

}  // namespace phalanx::app
