// Leader election on a coordination.k8s.io/v1 Lease (upstream client-go
// tools/leaderelection with the LeaseLock), as kube-scheduler runs it.
//
// Every retry_period the candidate GETs the Lease and, if it is free, expired or its own,
// writes it back (PUT with the read resourceVersion, so that concurrent candidates
// conflict and only one wins; POST when it does not exist yet). Expiry is judged from
// when this candidate last saw the Lease record change (local monotonic time), never from
// the holder's timestamps, so clock skew between replicas does not matter. A leader that
// cannot renew for renew_deadline stops leading. On Release() a leader clears
// holderIdentity so that a standby takes over without waiting for expiry.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "client/rest_client.h"
#include "cluster/client.h"

namespace phalanx::client {

struct LeaderElectionConfig {
  std::string lease_namespace = "kube-system";
  std::string lease_name = "kube-scheduler";
  std::string identity;  // unique per replica: "<hostname>_<random>"
  std::chrono::milliseconds lease_duration{15000};
  std::chrono::milliseconds renew_deadline{10000};
  std::chrono::milliseconds retry_period{2000};
};

// The Lease spec fields leader election reads and writes.
struct LeaseRecord {
  std::string holder_identity;
  int32_t lease_duration_seconds = 0;
  std::string acquire_time;  // MicroTime, as the server returned it
  std::string renew_time;
  int32_t lease_transitions = 0;
  std::string resource_version;
};

class LeaderElector {
 public:
  LeaderElector(RestClient& client, LeaderElectionConfig cfg, const cluster::Clock& clock);

  // Blocks: campaigns until this candidate holds the Lease (returns true) or `stop` is set
  // (returns false). Errors are logged and retried every retry_period.
  bool Acquire(const std::atomic<bool>& stop);
  // Blocks while leading: renews every retry_period. Returns when `stop` is set (true) or
  // when renewing failed for renew_deadline (false: leadership lost).
  bool Renew(const std::atomic<bool>& stop);
  // Gives the Lease up (holderIdentity cleared) if we hold it. Best effort.
  void Release();

  bool IsLeader() const { return leader_.load(); }
  const LeaderElectionConfig& config() const { return cfg_; }
  // The last error, for logs: OK when the last attempt succeeded (or none was made); else
  // the failed request's status (RestClient::ToStatus), DataLoss for a malformed Lease,
  // Aborted when the Lease changed concurrently (409), FailedPrecondition while another
  // holder's lease is valid ("lease ns/name is held by other-id").
  api::Status last_error() const;
  // Wakes Acquire/Renew early (call after setting their stop flag).
  void Wake();

 private:
  // One attempt; true when we hold the Lease afterwards.
  bool TryAcquireOrRenew();
  bool Get(LeaseRecord* rec, bool* exists);
  bool Write(const LeaseRecord& rec, bool create);
  std::string Body(const LeaseRecord& rec) const;
  bool WaitFor(const std::atomic<bool>& stop, std::chrono::milliseconds d);

  RestClient& client_;
  LeaderElectionConfig cfg_;
  const cluster::Clock& clock_;
  std::atomic<bool> leader_{false};
  // The last record observed and when (steady clock), for expiry (the campaigning thread
  // only).
  LeaseRecord observed_;
  std::chrono::steady_clock::time_point observed_at_{};
  mutable absl::Mutex mu_;
  absl::CondVar cv_;  // Wake() signals it
  api::Status last_error_ ABSL_GUARDED_BY(mu_);
};

}  // namespace phalanx::client
