// Delegated authentication and authorization of requests to the scheduler's secure
// endpoint, as kube-scheduler's secure serving does (k8s.io/apiserver
// pkg/server/options/authentication.go DelegatingAuthenticationOptions and
// authorization.go DelegatingAuthorizationOptions, as configured by
// cmd/kube-scheduler/app/options/options.go):
//
//   1. Authentication: "Authorization: Bearer <token>" is sent to the API server as a
//      TokenReview (authentication.k8s.io/v1); not authenticated -> 401. A request without
//      a token is anonymous (user "system:anonymous", group "system:unauthenticated").
//   2. Authorization: a path of --authorization-always-allow-paths (default /healthz,
//      /readyz, /livez; an entry ending in '*' is a prefix) is allowed for anyone; a user in
//      group "system:masters" is allowed; otherwise a SubjectAccessReview
//      (authorization.k8s.io/v1) with nonResourceAttributes {path, verb} decides: denied
//      -> 403.
//   Results are cached as upstream's webhooks do: token reviews 10 s, allowed and denied
//   access reviews 10 s each (--authentication-token-webhook-cache-ttl,
//   --authorization-webhook-cache-{authorized,unauthorized}-ttl). API errors are not
//   cached: a TokenReview error gives 401, a SubjectAccessReview error 500.
//
//   client::DelegatedAuth auth(reviewer, client::DelegatedAuthOptions{});
//   client::AuthDecision d = auth.Check(request_authorization_header, "GET", "/metrics");
//   if (!d.allowed) reply d.status (401 / 403 / 500) with d.message
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace phalanx::client {

class RestClient;

// One API call of the reviews: POST `path` with a JSON `body`; returns the HTTP status
// (0 for a transport error) and sets *response to the body.
using ReviewPoster =
    std::function<int(const std::string& path, const std::string& body, std::string* response)>;
// The poster over a RestClient (its credentials, TLS and rate limiter); `api` must outlive it.
ReviewPoster RestReviewPoster(RestClient& api);

struct DelegatedAuthOptions {
  // --authorization-always-allow-paths (upstream's default for kube-scheduler).
  std::vector<std::string> always_allow_paths = {"/healthz", "/readyz", "/livez"};
  // Groups allowed everything without a review (upstream: system:masters).
  std::vector<std::string> always_allow_groups = {"system:masters"};
  std::chrono::nanoseconds token_ttl = std::chrono::seconds(10);
  std::chrono::nanoseconds allowed_ttl = std::chrono::seconds(10);
  std::chrono::nanoseconds denied_ttl = std::chrono::seconds(10);
  // Monotonic time for the caches (tests inject one); null: std::chrono::steady_clock.
  std::function<std::chrono::nanoseconds()> now;
};

struct UserInfo {
  std::string name;
  std::string uid;
  std::vector<std::string> groups;
  std::map<std::string, std::vector<std::string>> extra;
};

struct AuthDecision {
  bool allowed = false;
  int status = 200;  // when not allowed: 401, 403 or 500
  std::string
      message;  // why not, e.g. `forbidden: User "system:anonymous" cannot get path "/metrics"`
  UserInfo user;
};

class DelegatedAuth {
 public:
  DelegatedAuth(ReviewPoster post, DelegatedAuthOptions opts);

  // Decides one request: `authorization` is the Authorization header's value ("" when
  // absent), `method` the HTTP method (GET -> verb "get"), `path` without the query.
  // Thread-safe.
  AuthDecision Check(const std::string& authorization, const std::string& method,
                     const std::string& path) ABSL_LOCKS_EXCLUDED(mu_);

  // API calls made so far (TokenReviews + SubjectAccessReviews), to see the caches work.
  int64_t reviews() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct TokenEntry {
    bool authenticated = false;
    UserInfo user;
    std::string error;
    std::chrono::nanoseconds expires{0};
  };
  struct AccessEntry {
    bool allowed = false;
    std::string reason;
    std::chrono::nanoseconds expires{0};
  };
  std::chrono::nanoseconds Now() const;
  // TokenReview; false with *status 401 (and the message) when not authenticated.
  bool Authenticate(const std::string& token, UserInfo* user, std::string* message)
      ABSL_LOCKS_EXCLUDED(mu_);
  // SubjectAccessReview; *status 403 or 500 when not allowed.
  bool Authorize(const UserInfo& user, const std::string& verb, const std::string& path,
                 int* status, std::string* message) ABSL_LOCKS_EXCLUDED(mu_);
  bool AlwaysAllowedPath(const std::string& path) const;

  ReviewPoster post_;
  DelegatedAuthOptions opts_;
  mutable absl::Mutex mu_;
  std::map<std::string, TokenEntry> tokens_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, AccessEntry> access_ ABSL_GUARDED_BY(mu_);
  int64_t reviews_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace phalanx::client
