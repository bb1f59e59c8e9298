// A small HTTP/1.1 server for /healthz, /readyz and /metrics (GET and HEAD only, one
// connection at a time, `Connection: close`). Plain HTTP: bind it to loopback or put it
// behind a proxy; it serves no secrets.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <thread>

#include "api/status.h"

namespace phalanx::metrics {

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

// path (without the query) -> response; unknown paths should return 404.
using HttpHandler = std::function<HttpResponse(const std::string& method, const std::string& path)>;

class HttpServer {
 public:
  ~HttpServer();
  // Binds `address` ("127.0.0.1:10259", "0.0.0.0:10259", "[::1]:10259", ":10259" = all
  // interfaces; port 0 picks a free one) and serves on a background thread. Errors:
  // InvalidArgument for a bad address ("bind address \":10x\": bad port \"10x\""); the
  // errno's code (absl::ErrnoToStatusCode) when no address binds, e.g. "bind address
  // 127.0.0.1:10259: Address already in use".
  api::Status Start(const std::string& address, HttpHandler handler);
  void Stop();
  int port() const { return port_; }

 private:
  void Loop();
  void Serve(int fd);

  int listen_fd_ = -1;
  int port_ = 0;
  HttpHandler handler_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace phalanx::metrics
