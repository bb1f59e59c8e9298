#include "client/delegated_auth.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "client/rest_client.h"

namespace phalanx::client {

namespace {

constexpr size_t kMaxCacheEntries = 4096;  // beyond it, expired entries go (then all)

using json = nlohmann::json;

// Drops expired entries of `m` (and everything if it is still full).
template <typename M>
void Prune(M* m, std::chrono::nanoseconds now) {
  if (m->size() < kMaxCacheEntries) return;
  for (auto it = m->begin(); it != m->end();) {
    it = it->second.expires <= now ? m->erase(it) : std::next(it);
  }
  if (m->size() >= kMaxCacheEntries) m->clear();
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string AccessKey(const UserInfo& u, const std::string& verb, const std::string& path) {
  json k = {u.name, u.uid, u.groups, u.extra, verb, path};
  return k.dump();
}

}  // namespace

ReviewPoster RestReviewPoster(RestClient& api) {
  return [&api](const std::string& path, const std::string& body, std::string* response) {
    Response r = api.Do("POST", path, body);
    *response = r.body;
    return r.curl_code != 0 ? 0 : static_cast<int>(r.status);
  };
}

DelegatedAuth::DelegatedAuth(ReviewPoster post, DelegatedAuthOptions opts)
    : post_(std::move(post)), opts_(std::move(opts)) {}

std::chrono::nanoseconds DelegatedAuth::Now() const {
  if (opts_.now) return opts_.now();
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::steady_clock::now().time_since_epoch());
}

int64_t DelegatedAuth::reviews() const {
  absl::MutexLock l(&mu_);
  return reviews_;
}

bool DelegatedAuth::AlwaysAllowedPath(const std::string& path) const {
  for (const auto& p : opts_.always_allow_paths) {
    if (!p.empty() && p.back() == '*') {
      if (path.compare(0, p.size() - 1, p, 0, p.size() - 1) == 0) return true;
    } else if (path == p) {
      return true;
    }
  }
  return false;
}

AuthDecision DelegatedAuth::Check(const std::string& authorization, const std::string& method,
                                  const std::string& path) {
  AuthDecision d;
  // Authentication (upstream bearertoken authenticator + anonymous).
  std::string token;
  if (!authorization.empty()) {
    const std::string prefix = "bearer ";
    if (authorization.size() <= prefix.size() ||
        Lower(authorization.substr(0, prefix.size())) != prefix) {
      d.status = 401;
      d.message = "Unauthorized: only bearer tokens are accepted";
      return d;
    }
    token = authorization.substr(prefix.size());
    while (!token.empty() && token.front() == ' ') token.erase(token.begin());
    while (!token.empty() && (token.back() == ' ' || token.back() == '\t')) token.pop_back();
    if (token.empty()) {
      d.status = 401;
      d.message = "Unauthorized: empty bearer token";
      return d;
    }
  }
  if (token.empty()) {
    d.user.name = "system:anonymous";
    d.user.groups = {"system:unauthenticated"};
  } else if (!Authenticate(token, &d.user, &d.message)) {
    d.status = 401;
    return d;
  }
  // Authorization (upstream union: always-allow paths, privileged groups, then the
  // SubjectAccessReview webhook).
  if (AlwaysAllowedPath(path)) {
    d.allowed = true;
    return d;
  }
  for (const auto& g : d.user.groups) {
    if (std::find(opts_.always_allow_groups.begin(), opts_.always_allow_groups.end(), g) !=
        opts_.always_allow_groups.end()) {
      d.allowed = true;
      return d;
    }
  }
  d.allowed = Authorize(d.user, Lower(method), path, &d.status, &d.message);
  if (d.allowed) d.status = 200;
  return d;
}

bool DelegatedAuth::Authenticate(const std::string& token, UserInfo* user, std::string* message) {
  const auto now = Now();
  {
    absl::MutexLock l(&mu_);
    auto it = tokens_.find(token);
    if (it != tokens_.end() && it->second.expires > now) {
      *user = it->second.user;
      *message = it->second.error;
      return it->second.authenticated;
    }
  }
  json req = {{"apiVersion", "authentication.k8s.io/v1"},
              {"kind", "TokenReview"},
              {"spec", {{"token", token}}}};
  std::string body;
  const int status = post_("/apis/authentication.k8s.io/v1/tokenreviews", req.dump(), &body);
  {
    absl::MutexLock l(&mu_);
    ++reviews_;
  }
  if (status < 200 || status >= 300) {
    // Not cached: the next request asks again.
    *message = "Unauthorized: TokenReview failed (HTTP " + std::to_string(status) + ")";
    return false;
  }
  TokenEntry e;
  json resp = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (resp.is_discarded() || !resp.is_object()) {
    *message = "Unauthorized: TokenReview response is not JSON";
    return false;
  }
  const json st = resp.value("status", json::object());
  e.authenticated = st.is_object() && st.value("authenticated", false);
  if (e.authenticated) {
    const json u = st.value("user", json::object());
    if (u.is_object()) {
      e.user.name = u.value("username", "");
      e.user.uid = u.value("uid", "");
      if (u.contains("groups") && u["groups"].is_array()) {
        for (const auto& g : u["groups"]) {
          if (g.is_string()) e.user.groups.push_back(g.get<std::string>());
        }
      }
      if (u.contains("extra") && u["extra"].is_object()) {
        for (const auto& [k, v] : u["extra"].items()) {
          if (!v.is_array()) continue;
          for (const auto& x : v) {
            if (x.is_string()) e.user.extra[k].push_back(x.get<std::string>());
          }
        }
      }
    }
  } else {
    const std::string why = st.is_object() ? st.value("error", "") : "";
    e.error = "Unauthorized" + (why.empty() ? std::string() : ": " + why);
  }
  e.expires = now + opts_.token_ttl;
  *user = e.user;
  *message = e.error;
  absl::MutexLock l(&mu_);
  Prune(&tokens_, now);
  tokens_[token] = e;
  return e.authenticated;
}

bool DelegatedAuth::Authorize(const UserInfo& user, const std::string& verb,
                              const std::string& path, int* status, std::string* message) {
  const auto now = Now();
  const std::string key = AccessKey(user, verb, path);
  const std::string forbidden =
      "forbidden: User \"" + user.name + "\" cannot " + verb + " path \"" + path + "\"";
  {
    absl::MutexLock l(&mu_);
    auto it = access_.find(key);
    if (it != access_.end() && it->second.expires > now) {
      *status = it->second.allowed ? 200 : 403;
      *message = it->second.allowed ? "" : forbidden + it->second.reason;
      return it->second.allowed;
    }
  }
  json spec = {{"nonResourceAttributes", {{"path", path}, {"verb", verb}}},
               {"user", user.name},
               {"groups", user.groups}};
  if (!user.uid.empty()) spec["uid"] = user.uid;
  if (!user.extra.empty()) spec["extra"] = user.extra;
  json req = {
      {"apiVersion", "authorization.k8s.io/v1"}, {"kind", "SubjectAccessReview"}, {"spec", spec}};
  std::string body;
  const int code = post_("/apis/authorization.k8s.io/v1/subjectaccessreviews", req.dump(), &body);
  {
    absl::MutexLock l(&mu_);
    ++reviews_;
  }
  json resp = code >= 200 && code < 300 ? json::parse(body, nullptr, false) : json();
  if (!resp.is_object()) {
    *status = 500;
    *message =
        "Internal Server Error: SubjectAccessReview failed (HTTP " + std::to_string(code) + ")";
    return false;
  }
  const json st = resp.value("status", json::object());
  AccessEntry e;
  e.allowed = st.is_object() && st.value("allowed", false) && !st.value("denied", false);
  const std::string reason = st.is_object() ? st.value("reason", "") : "";
  if (!reason.empty()) e.reason = ": " + reason;
  e.expires = now + (e.allowed ? opts_.allowed_ttl : opts_.denied_ttl);
  *status = e.allowed ? 200 : 403;
  *message = e.allowed ? "" : forbidden + e.reason;
  absl::MutexLock l(&mu_);
  Prune(&access_, now);
  access_[key] = e;
  return e.allowed;
}

}  // namespace phalanx::client
