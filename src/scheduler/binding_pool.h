// Where binding cycles run (upstream: one goroutine per binding cycle, schedule_one.go
// bindingCycle). Binding cycles block on API calls (live mode) and on nothing else, so
// they get plain threads rather than the CPU-bound oneTBB arena used for Filter/Score.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace phalanx::scheduler {

// A fixed pool of `workers` threads running submitted functions in FIFO order (not
// copyable or movable: its threads run on `this`).
class BindingPool {
 public:
  // workers > 0.
  explicit BindingPool(int workers);
  // Runs every function already submitted, then joins the threads.
  ~BindingPool();

  // Queues `fn` for a worker; counts it as in flight until it returns.
  void Submit(std::function<void()> fn) ABSL_LOCKS_EXCLUDED(mu_);
  // Blocks until no submitted function is queued or running.
  void WaitIdle() ABSL_LOCKS_EXCLUDED(mu_);
  // Submitted functions queued or running now.
  int InFlight() const ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock l(&mu_);
    return in_flight_;
  }

 private:
  void Work() ABSL_LOCKS_EXCLUDED(mu_);
  bool HasWorkOrStop() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_ || !tasks_.empty(); }
  bool Idle() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return in_flight_ == 0; }

  mutable absl::Mutex mu_;
  std::deque<std::function<void()>> tasks_ ABSL_GUARDED_BY(mu_);
  int in_flight_ ABSL_GUARDED_BY(mu_) = 0;  // queued + running
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

// The bindings of one PodGroup commit, held back until every member of the gang is
// assumed, reserved and permitted and the cycle has written the gang's status; then they
// go to the pool together (so no member is bound while others are still being assumed,
// and the binding that completes last writes the fuller status). Shared by the commit and
// the Permit continuations it creates: a continuation that runs after Release submits
// directly.
class BindingBatch {
 public:
  // True if `fn` was held (the batch is still open); false: the caller submits it.
  bool Hold(std::function<void()>& fn) ABSL_LOCKS_EXCLUDED(mu_);
  // Closes the batch and returns what it held, in submission order.
  std::vector<std::function<void()>> Release() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  absl::Mutex mu_;
  bool open_ ABSL_GUARDED_BY(mu_) = true;
  std::vector<std::function<void()>> held_ ABSL_GUARDED_BY(mu_);
};

}  // namespace phalanx::scheduler
