// Where the API server is and how to authenticate to it (upstream client-go rest.Config,
// clientcmd and rest.InClusterConfig, reduced to what a scheduler needs).
//
// Supported kubeconfig fields (clusters[].cluster, users[].user):
//   server, certificate-authority, certificate-authority-data, insecure-skip-tls-verify,
//   tls-server-name, client-certificate(-data), client-key(-data), token, tokenFile.
// Relative file paths are resolved against the kubeconfig's directory, as kubectl does.
// Exec and auth-provider plugins are not supported (an error names them).
#pragma once

#include <string>

#include "api/status.h"

namespace phalanx::client {

struct RestConfig {
  std::string server;  // "https://host:port" (no trailing slash)
  // TLS: CA as a file or as PEM bytes (decoded from certificate-authority-data). Neither:
  // the system trust store. Verification is on unless insecure is set.
  std::string ca_file;
  std::string ca_pem;
  bool insecure = false;
  std::string tls_server_name;
  // Client certificate auth (files or PEM bytes).
  std::string client_cert_file, client_cert_pem;
  std::string client_key_file, client_key_pem;
  // Bearer token auth: the token itself, or a file re-read on every 401 (service account
  // tokens rotate).
  std::string token;
  std::string token_file;
  // Client-side rate limit (clientConnection.qps / burst). qps <= 0: unlimited.
  double qps = 50;
  int burst = 100;
  std::string user_agent = "phalanx/0.1.0";
  // Where this came from, for error messages: "kubeconfig /path (context c)" or
  // "in-cluster config".
  std::string source;
  std::string source_file;  // the kubeconfig path ("" for in-cluster)
};

// Loads `path` and picks `context` (empty: current-context) into *out, whose qps, burst
// and user_agent are kept. Errors name the file and the missing or bad field: NotFound
// "kubeconfig kc.yaml: context \"x\" not found (contexts: a, b)" (also a missing
// cluster, user or referenced file), InvalidArgument for malformed content, Unimplemented
// for exec / auth-provider plugins, the errno's code when the file cannot be read.
api::Status LoadKubeconfig(const std::string& path, const std::string& context, RestConfig* out);

// In-cluster config: KUBERNETES_SERVICE_HOST/PORT, the service account token and CA
// under `sa_dir` (default /var/run/secrets/kubernetes.io/serviceaccount). Errors say
// which variable or file is missing (FailedPrecondition). qps, burst and user_agent of
// *out are kept.
api::Status InClusterConfig(
    RestConfig* out, const std::string& sa_dir = "/var/run/secrets/kubernetes.io/serviceaccount");

// The kubeconfig resolution of kube-scheduler: `flag_path` (--kubeconfig), else
// `config_path` (clientConnection.kubeconfig), else $KUBECONFIG, else in-cluster when
// KUBERNETES_SERVICE_HOST is set, else ~/.kube/config. `context` applies to kubeconfigs.
// Errors as LoadKubeconfig / InClusterConfig; FailedPrecondition "no API server
// configured: ..." when nothing applies.
api::Status ResolveRestConfig(const std::string& flag_path, const std::string& config_path,
                              const std::string& context, RestConfig* out);

// Standard base64 decoding (padding optional, whitespace ignored). False on bad input.
[[nodiscard]] bool Base64Decode(const std::string& in, std::string* out);

}  // namespace phalanx::client
