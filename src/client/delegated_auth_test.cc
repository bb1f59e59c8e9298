// Delegated authentication/authorization of the secure endpoint against a fake API server:
// TokenReview and SubjectAccessReview bodies, the anonymous user, always-allowed paths,
// system:masters, 401/403/500 and the review caches.
#include "client/delegated_auth.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace phalanx::client {
namespace {

using json = nlohmann::json;

// A fake API server: token "good" is user "alice" (group "ops"), "admin" is in
// system:masters; alice may get /metrics; everything else is denied.
struct FakeApi {
  std::vector<json> requests;
  int status = 201;
  std::chrono::nanoseconds now{0};
  ReviewPoster Poster() {
    return [this](const std::string& path, const std::string& body, std::string* out) {
      json req = json::parse(body);
      requests.push_back(req);
      if (status != 201) return status;
      json resp = req;
      if (path == "/apis/authentication.k8s.io/v1/tokenreviews") {
        const std::string token = req["spec"]["token"];
        if (token == "good") {
          resp["status"] = {{"authenticated", true},
                            {"user", {{"username", "alice"}, {"uid", "u1"}, {"groups", {"ops"}}}}};
        } else if (token == "admin") {
          resp["status"] = {{"authenticated", true},
                            {"user", {{"username", "root"}, {"groups", {"system:masters"}}}}};
        } else {
          resp["status"] = {{"authenticated", false}, {"error", "invalid bearer token"}};
        }
      } else if (path == "/apis/authorization.k8s.io/v1/subjectaccessreviews") {
        const bool ok = req["spec"]["user"] == "alice" &&
                        req["spec"]["nonResourceAttributes"]["path"] == "/metrics" &&
                        req["spec"]["nonResourceAttributes"]["verb"] == "get";
        resp["status"] = {{"allowed", ok}};
        if (!ok) resp["status"]["reason"] = "no RBAC policy matched";
      } else {
        return 404;
      }
      *out = resp.dump();
      return 201;
    };
  }
  DelegatedAuthOptions Options() {
    DelegatedAuthOptions o;
    o.now = [this] { return now; };
    return o;
  }
};

TEST(DelegatedAuth, AnonymousMetricsIsForbiddenHealthzIsAllowed) {
  FakeApi api;
  DelegatedAuth auth(api.Poster(), api.Options());
  AuthDecision d = auth.Check("", "GET", "/metrics");
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.status, 403);
  EXPECT_EQ(d.message,
            "forbidden: User \"system:anonymous\" cannot get path \"/metrics\": no RBAC policy "
            "matched");
  ASSERT_EQ(api.requests.size(), 1u);
  EXPECT_EQ(api.requests[0]["kind"], "SubjectAccessReview");
  EXPECT_EQ(api.requests[0]["apiVersion"], "authorization.k8s.io/v1");
  EXPECT_EQ(api.requests[0]["spec"]["groups"], json({"system:unauthenticated"}));
  for (const char* path : {"/healthz", "/readyz", "/livez"}) {
    EXPECT_TRUE(auth.Check("", "GET", path).allowed) << path;
  }
  EXPECT_EQ(api.requests.size(), 1u);  // no review for always-allowed paths
}

TEST(DelegatedAuth, TokenOfAllowedUserGetsMetrics) {
  FakeApi api;
  DelegatedAuth auth(api.Poster(), api.Options());
  AuthDecision d = auth.Check("Bearer good", "GET", "/metrics");
  EXPECT_TRUE(d.allowed) << d.message;
  EXPECT_EQ(d.user.name, "alice");
  ASSERT_EQ(api.requests.size(), 2u);
  EXPECT_EQ(api.requests[0]["kind"], "TokenReview");
  EXPECT_EQ(api.requests[0]["spec"]["token"], "good");
  EXPECT_EQ(api.requests[1]["spec"]["uid"], "u1");
  EXPECT_EQ(api.requests[1]["spec"]["groups"], json({"ops"}));
  // Not allowed elsewhere.
  EXPECT_EQ(auth.Check("Bearer good", "GET", "/debug/pprof").status, 403);
  // system:masters needs no access review.
  const size_t before = api.requests.size();
  EXPECT_TRUE(auth.Check("bearer admin", "GET", "/anything").allowed);
  EXPECT_EQ(api.requests.size(), before + 1);  // the TokenReview only
}

TEST(DelegatedAuth, BadTokenIs401AndNotAllowedEvenForHealthz) {
  FakeApi api;
  DelegatedAuth auth(api.Poster(), api.Options());
  AuthDecision d = auth.Check("Bearer wrong", "GET", "/metrics");
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.status, 401);
  EXPECT_EQ(d.message, "Unauthorized: invalid bearer token");
  EXPECT_EQ(auth.Check("Basic dXNlcjpwdw==", "GET", "/metrics").status, 401);
  EXPECT_EQ(auth.Check("Bearer wrong", "GET", "/healthz").status, 401);
}

TEST(DelegatedAuth, ReviewsAreCachedForTheirTtl) {
  FakeApi api;
  DelegatedAuth auth(api.Poster(), api.Options());
  ASSERT_TRUE(auth.Check("Bearer good", "GET", "/metrics").allowed);
  ASSERT_EQ(auth.Check("", "GET", "/metrics").status, 403);
  EXPECT_EQ(auth.reviews(), 3);
  api.now += std::chrono::seconds(9);
  EXPECT_TRUE(auth.Check("Bearer good", "GET", "/metrics").allowed);
  EXPECT_EQ(auth.Check("", "GET", "/metrics").status, 403);
  EXPECT_EQ(auth.reviews(), 3);  // all from the caches
  api.now += std::chrono::seconds(2);
  EXPECT_TRUE(auth.Check("Bearer good", "GET", "/metrics").allowed);
  EXPECT_EQ(auth.reviews(), 5);  // TokenReview and SubjectAccessReview again
}

TEST(DelegatedAuth, ApiErrorsAreNotCached) {
  FakeApi api;
  api.status = 503;
  DelegatedAuth auth(api.Poster(), api.Options());
  AuthDecision d = auth.Check("Bearer good", "GET", "/metrics");
  EXPECT_EQ(d.status, 401);
  EXPECT_EQ(d.message, "Unauthorized: TokenReview failed (HTTP 503)");
  d = auth.Check("", "GET", "/metrics");
  EXPECT_EQ(d.status, 500);
  api.status = 201;
  EXPECT_TRUE(auth.Check("Bearer good", "GET", "/metrics").allowed);
}

}  // namespace
}  // namespace phalanx::client
