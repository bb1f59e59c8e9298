// A small HTTP/1.1 server for /healthz, /readyz, /livez and /metrics (GET and HEAD only,
// one connection at a time, `Connection: close`), over plain HTTP or over TLS (HTTPS, the
// way kube-scheduler serves its --secure-port; OpenSSL). Authentication and authorization
// are the handler's business (see client/delegated_auth.h); the server passes it the
// request headers.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "api/status.h"

namespace phalanx::metrics {

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

struct HttpRequest {
  std::string method;  // "GET" or "HEAD" (others get 405 before the handler)
  std::string path;    // without the query
  std::map<std::string, std::string> headers;  // names lower-cased; last value wins
};

// path (without the query) -> response; unknown paths should return 404.
using HttpHandler = std::function<HttpResponse(const std::string& method, const std::string& path)>;
using RequestHandler = std::function<HttpResponse(const HttpRequest& request)>;

// A serving certificate and its private key, PEM.
struct TlsConfig {
  std::string cert_pem;  // the certificate, then its chain
  std::string key_pem;
};

// A self-signed serving certificate (ECDSA P-256, valid one year from now) for "localhost",
// 127.0.0.1 and `host` (a DNS name or an IP literal; "" = none), as kube-scheduler makes one
// when given no --tls-cert-file (k8s.io/client-go/util/cert
// GenerateSelfSignedCertKeyWithFixtures; in memory here, not written to a --cert-dir).
// Errors: Internal with OpenSSL's message.
api::Status GenerateSelfSignedCert(const std::string& host, TlsConfig* out);

class HttpServer {
 public:
  HttpServer();
  ~HttpServer();
  // Binds `address` ("127.0.0.1:10259", "0.0.0.0:10259", "[::1]:10259", ":10259" = all
  // interfaces; port 0 picks a free one) and serves on a background thread; with `tls`,
  // over TLS 1.2+ with that certificate. Errors: InvalidArgument for a bad address
  // ("bind address \":10x\": bad port \"10x\"") or a certificate / key OpenSSL rejects
  // ("TLS serving certificate: ..."); the errno's code (absl::ErrnoToStatusCode) when no
  // address binds, e.g. "bind address 127.0.0.1:10259: Address already in use".
  api::Status Start(const std::string& address, RequestHandler handler, const TlsConfig* tls);
  // Plain HTTP with a handler that needs no headers.
  api::Status Start(const std::string& address, HttpHandler handler);
  void Stop();
  int port() const { return port_; }

 private:
  struct Tls;
  void Loop();
  void Serve(int fd);

  int listen_fd_ = -1;
  int port_ = 0;
  RequestHandler handler_;
  std::unique_ptr<Tls> tls_;  // null: plain HTTP
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace phalanx::metrics
