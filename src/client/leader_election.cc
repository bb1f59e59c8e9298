#include "client/leader_election.h"

#include <simdjson.h>
#include <spdlog/spdlog.h>

#include "client/objects.h"
#include "client/wait.h"

namespace phalanx::client {

LeaderElector::LeaderElector(RestClient& client, LeaderElectionConfig cfg,
                             const cluster::Clock& clock)
    : client_(client), cfg_(std::move(cfg)), clock_(clock) {}

api::Status LeaderElector::last_error() const {
  absl::MutexLock l(&mu_);
  return last_error_;
}

void LeaderElector::Wake() { cv_.SignalAll(); }

bool LeaderElector::WaitFor(const std::atomic<bool>& stop, std::chrono::milliseconds d) {
  absl::MutexLock l(&mu_);
  return SleepUnlessStopped(cv_, mu_, stop, d);  // Wake() signals cv_
}

bool LeaderElector::Get(LeaseRecord* rec, bool* exists) {
  const std::string path = "/apis/coordination.k8s.io/v1/namespaces/" + cfg_.lease_namespace +
                           "/leases/" + cfg_.lease_name;
  Response r = client_.Do("GET", path);
  if (r.status == 404) {
    *exists = false;
    return true;
  }
  if (!r.ok()) {
    absl::MutexLock l(&mu_);
    last_error_ = client_.ToStatus("GET", path, r);
    return false;
  }
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(r.body).get(doc)) {
    absl::MutexLock l(&mu_);
    last_error_ = absl::DataLossError("GET " + path + ": malformed JSON");
    return false;
  }
  *exists = true;
  LeaseRecord out;
  std::string_view s;
  int64_t n = 0;
  if (!doc["metadata"]["resourceVersion"].get(s)) out.resource_version = std::string(s);
  simdjson::dom::element spec;
  if (!doc["spec"].get(spec)) {
    if (!spec["holderIdentity"].get(s)) out.holder_identity = std::string(s);
    if (!spec["leaseDurationSeconds"].get(n)) out.lease_duration_seconds = static_cast<int32_t>(n);
    if (!spec["acquireTime"].get(s)) out.acquire_time = std::string(s);
    if (!spec["renewTime"].get(s)) out.renew_time = std::string(s);
    if (!spec["leaseTransitions"].get(n)) out.lease_transitions = static_cast<int32_t>(n);
  }
  *rec = std::move(out);
  return true;
}

std::string LeaderElector::Body(const LeaseRecord& rec) const {
  std::string meta = "{\"name\":" + JsonString(cfg_.lease_name) +
                     ",\"namespace\":" + JsonString(cfg_.lease_namespace);
  if (!rec.resource_version.empty()) {
    meta += ",\"resourceVersion\":" + JsonString(rec.resource_version);
  }
  meta += "}";
  std::string spec = "{\"holderIdentity\":" + JsonString(rec.holder_identity) +
                     ",\"leaseDurationSeconds\":" + std::to_string(rec.lease_duration_seconds) +
                     ",\"leaseTransitions\":" + std::to_string(rec.lease_transitions);
  if (!rec.acquire_time.empty()) spec += ",\"acquireTime\":" + JsonString(rec.acquire_time);
  if (!rec.renew_time.empty()) spec += ",\"renewTime\":" + JsonString(rec.renew_time);
  spec += "}";
  return "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\",\"metadata\":" + meta +
         ",\"spec\":" + spec + "}";
}

bool LeaderElector::Write(const LeaseRecord& rec, bool create) {
  const std::string coll =
      "/apis/coordination.k8s.io/v1/namespaces/" + cfg_.lease_namespace + "/leases";
  const std::string path = create ? coll : coll + "/" + cfg_.lease_name;
  const char* method = create ? "POST" : "PUT";
  Response r = client_.Do(method, path, Body(rec));
  if (!r.ok()) {
    absl::MutexLock l(&mu_);
    last_error_ = r.status == 409
                      ? absl::AbortedError("lease " + cfg_.lease_namespace + "/" + cfg_.lease_name +
                                           " changed concurrently (409 Conflict)")
                      : client_.ToStatus(method, path, r);
    return false;
  }
  return true;
}

bool LeaderElector::TryAcquireOrRenew() {
  const std::string now = FormatTime(clock_.Now(), /*micro=*/true);
  const int32_t duration_s = static_cast<int32_t>(
      std::chrono::duration_cast<std::chrono::seconds>(cfg_.lease_duration).count());
  LeaseRecord cur;
  bool exists = false;
  if (!Get(&cur, &exists)) return false;
  LeaseRecord next;
  next.holder_identity = cfg_.identity;
  next.lease_duration_seconds = std::max(1, duration_s);
  next.acquire_time = now;
  next.renew_time = now;
  if (!exists) {
    if (!Write(next, /*create=*/true)) return false;
    observed_ = next;
    observed_at_ = std::chrono::steady_clock::now();
    return true;
  }
  // Remember when the record last changed, by our own clock.
  if (cur.holder_identity != observed_.holder_identity || cur.renew_time != observed_.renew_time ||
      cur.resource_version != observed_.resource_version) {
    observed_ = cur;
    observed_at_ = std::chrono::steady_clock::now();
  }
  const bool ours = cur.holder_identity == cfg_.identity;
  const auto held_for = std::chrono::seconds(
      cur.lease_duration_seconds > 0 ? cur.lease_duration_seconds : duration_s);
  if (!cur.holder_identity.empty() && !ours &&
      std::chrono::steady_clock::now() < observed_at_ + held_for) {
    absl::MutexLock l(&mu_);
    last_error_ =
        absl::FailedPreconditionError("lease " + cfg_.lease_namespace + "/" + cfg_.lease_name +
                                      " is held by " + cur.holder_identity);
    return false;
  }
  next.resource_version = cur.resource_version;
  if (ours) {
    next.acquire_time = cur.acquire_time;
    next.lease_transitions = cur.lease_transitions;
  } else {
    next.lease_transitions = cur.lease_transitions + 1;
  }
  if (!Write(next, /*create=*/false)) return false;
  observed_ = next;
  observed_at_ = std::chrono::steady_clock::now();
  {
    absl::MutexLock l(&mu_);
    last_error_ = absl::OkStatus();
  }
  return true;
}

bool LeaderElector::Acquire(const std::atomic<bool>& stop) {
  std::string last_logged;
  while (!stop.load()) {
    if (TryAcquireOrRenew()) {
      leader_ = true;
      spdlog::info("leader election: {} acquired lease {}/{}", cfg_.identity, cfg_.lease_namespace,
                   cfg_.lease_name);
      return true;
    }
    const std::string e(last_error().message());
    if (e != last_logged) {
      spdlog::info("leader election: waiting: {}", e);
      last_logged = e;
    }
    if (!WaitFor(stop, cfg_.retry_period)) break;
  }
  return false;
}

bool LeaderElector::Renew(const std::atomic<bool>& stop) {
  auto last_renew = std::chrono::steady_clock::now();
  while (!stop.load()) {
    if (!WaitFor(stop, cfg_.retry_period)) return true;
    // Retry within the renew deadline (upstream retries every retryPeriod until then).
    if (TryAcquireOrRenew()) {
      last_renew = std::chrono::steady_clock::now();
      continue;
    }
    if (stop.load()) return true;
    if (!observed_.holder_identity.empty() && observed_.holder_identity != cfg_.identity) {
      leader_ = false;
      spdlog::error("leader election: lost lease {}/{} to {}", cfg_.lease_namespace,
                    cfg_.lease_name, observed_.holder_identity);
      return false;
    }
    spdlog::warn("leader election: renew failed: {}", std::string(last_error().message()));
    if (std::chrono::steady_clock::now() - last_renew > cfg_.renew_deadline) {
      leader_ = false;
      spdlog::error("leader election: lost lease {}/{}: could not renew within {} ms",
                    cfg_.lease_namespace, cfg_.lease_name, cfg_.renew_deadline.count());
      return false;
    }
  }
  return true;
}

void LeaderElector::Release() {
  if (!leader_.load()) return;
  LeaseRecord cur;
  bool exists = false;
  if (!Get(&cur, &exists) || !exists || cur.holder_identity != cfg_.identity) return;
  LeaseRecord next = cur;
  next.holder_identity.clear();
  next.lease_duration_seconds = 1;
  next.renew_time = FormatTime(clock_.Now(), true);
  if (Write(next, false)) {
    spdlog::info("leader election: released lease {}/{}", cfg_.lease_namespace, cfg_.lease_name);
  }
  leader_ = false;
}

}  // namespace phalanx::client
