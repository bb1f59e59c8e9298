// Client-side token-bucket rate limiter (upstream client-go flowcontrol
// NewTokenBucketRateLimiter): `qps` tokens per second refill a bucket of `burst` tokens;
// every request takes one and waits while the bucket is empty. Thread-safe.
#pragma once

#include <chrono>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace phalanx::client {

class TokenBucket {
 public:
  using Clock = std::chrono::steady_clock;
  // qps <= 0: unlimited. burst < 1 is treated as 1.
  TokenBucket(double qps, int burst);

  // Blocks until a token is available, then takes it. Returns the time waited.
  std::chrono::nanoseconds Wait();
  // Takes a token at time `now` if one is available (no blocking); for tests and callers
  // that would rather drop than wait.
  bool TryAccept(Clock::time_point now = Clock::now());
  // Reserves a token at `now` and returns how long the caller must wait before using it
  // (0 when one was available).
  std::chrono::nanoseconds Reserve(Clock::time_point now);

  double qps() const { return qps_; }
  int burst() const { return burst_; }

 private:
  void Refill(Clock::time_point now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const double qps_;
  const int burst_;
  absl::Mutex mu_;
  double tokens_ ABSL_GUARDED_BY(mu_);
  Clock::time_point last_ ABSL_GUARDED_BY(mu_);
};

}  // namespace phalanx::client
