// Interruptible sleeps of the client's background loops (reflector backoff, leader
// election retries) on an absl::CondVar.
#pragma once

#include <atomic>
#include <chrono>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace phalanx::client {

// Waits on `cv` until `stop` is seen set (whoever sets it signals `cv`) or `d` has passed
// on the steady clock, as std::condition_variable::wait_for(lock, d, [&] { return
// stop.load(); }) does. Returns true when `d` passed, false when stopping.
inline bool SleepUnlessStopped(absl::CondVar& cv, absl::Mutex& mu, const std::atomic<bool>& stop,
                               std::chrono::milliseconds d) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
  const auto deadline = std::chrono::steady_clock::now() + d;
  while (!stop.load()) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return true;
    cv.WaitWithTimeout(&mu, absl::FromChrono(deadline - now));
  }
  return false;
}

}  // namespace phalanx::client
