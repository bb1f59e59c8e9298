// HTTP(S) access to the kube-apiserver over libcurl: bearer-token or client-certificate
// auth, TLS verification (on unless the kubeconfig turns it off), connection reuse (a
// pool of curl handles, each keeping its connection alive), the client-side token-bucket
// rate limit, and errors that name the server and the HTTP status.
//
// Thread-safe: any number of threads may call Do() and Stream() at once; each call takes
// a handle from the pool (or makes one) and returns it afterwards.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "api/status.h"
#include "client/rate_limiter.h"
#include "client/rest_config.h"

namespace phalanx::client {

struct Response {
  long status = 0;         // HTTP status; 0 when no response arrived
  std::string body;        // response body (for Stream: only when status != 200)
  int curl_code = 0;       // CURLcode; 0 when the transfer completed
  std::string curl_error;  // libcurl's message when curl_code != 0
  bool cancelled = false;  // Stream stopped by its cancel flag or its callback

  bool ok() const { return curl_code == 0 && status >= 200 && status < 300; }
  // True for failures of the transport (no HTTP status), e.g. connection refused.
  bool transport_error() const { return curl_code != 0 && !cancelled; }
  // True for TLS handshake / verification failures.
  bool tls_error() const;
};

// The `message` (and `reason`) of a metav1.Status body; "" when the body is not one.
std::string StatusMessage(std::string_view body, std::string* reason = nullptr);

// The canonical code of a response, mirroring how client-go's apierrors classify them:
//   2xx OK                          400, 422 InvalidArgument
//   401 Unauthenticated             403 PermissionDenied
//   404 NotFound                    409 AlreadyExists (reason AlreadyExists), else Aborted
//                                       (Conflict: a write lost a race, retry on a fresh read)
//   410 OutOfRange (Gone/Expired: the resourceVersion left the server's window; relist)
//   429 ResourceExhausted           5xx Unavailable
//   other 4xx FailedPrecondition    no response: Cancelled (cancelled) or Unavailable
// `reason` is the metav1.Status reason of the body ("" when none).
absl::StatusCode ResponseCode(const Response& r, std::string_view reason);

class RestClient {
 public:
  explicit RestClient(RestConfig cfg);
  ~RestClient();
  RestClient(const RestClient&) = delete;
  RestClient& operator=(const RestClient&) = delete;

  // One request. `path` starts with '/' (e.g. "/api/v1/pods?limit=500"); `content_type`
  // applies when `body` is non-empty. Waits for the rate limiter first. On 401 with a
  // tokenFile the token is re-read and the request retried once. On 429 or 5xx with a
  // Retry-After of N > 0 seconds it waits min(N, 10) s and retries, up to 10 times and 20 s
  // in all (client-go rest.Request checkWait / maxRetries), except for coordination.k8s.io
  // Leases (LeaderElector retries those itself); then the last response is returned.
  Response Do(std::string_view method, const std::string& path, const std::string& body = "",
              std::string_view content_type = "application/json");

  // A streaming GET (watch): calls `on_line` for each newline-terminated line of a 200
  // response, on the calling thread, as bytes arrive. Returns when the server ends the
  // response, on a transport error, when `on_line` returns false, or within about a
  // second after `*cancel` becomes true (Response::cancelled set in the last two cases).
  // `timeout_seconds` bounds the whole transfer (0: none).
  Response Stream(const std::string& path, const std::function<bool(std::string_view)>& on_line,
                  const std::atomic<bool>* cancel, long timeout_seconds);

  // A one-line error for a failed response, naming the server, the request and the cause:
  //   "Unauthorized: check the token in <kubeconfig> (GET https://...: HTTP 401)"
  //   "TLS verification failed for https://...: <curl error> (certificate-authority <file>)"
  //   "TLS handshake with https://... failed: <curl error> (...)"
  //   "cannot connect to https://...: <curl error>"
  //   "Forbidden: <apiserver message> (POST https://...)"
  //   "<METHOD> https://...: HTTP <code> <reason>: <apiserver message>"
  std::string Describe(std::string_view method, const std::string& path, const Response& r) const;
  // The outcome of a response: OK for 2xx, else ResponseCode(r) with Describe()'s message.
  api::Status ToStatus(std::string_view method, const std::string& path, const Response& r) const;

  const RestConfig& config() const { return cfg_; }
  const std::string& server() const { return cfg_.server; }
  // Requests sent (for tests and metrics).
  int64_t requests() const { return requests_.load(); }

 private:
  void* Acquire();        // CURL*
  void Release(void* h);  // back to the pool
  void Configure(void* h);
  std::string Token() const;
  void ReloadToken();

  RestConfig cfg_;
  TokenBucket limiter_;
  absl::Mutex pool_mu_;
  std::vector<void*> pool_ ABSL_GUARDED_BY(pool_mu_);  // idle CURL handles
  mutable absl::Mutex token_mu_;
  std::string token_ ABSL_GUARDED_BY(token_mu_);
  std::atomic<int64_t> requests_{0};
};

// Percent-encodes a query parameter value.
std::string UrlEncode(std::string_view s);

}  // namespace phalanx::client
