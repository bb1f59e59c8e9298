#include "client/rate_limiter.h"

#include <algorithm>
#include <thread>

namespace phalanx::client {

TokenBucket::TokenBucket(double qps, int burst)
    : qps_(qps), burst_(std::max(1, burst)), tokens_(std::max(1, burst)), last_(Clock::now()) {}

void TokenBucket::Refill(Clock::time_point now) {
  if (now <= last_) return;
  const double elapsed = std::chrono::duration<double>(now - last_).count();
  tokens_ = std::min<double>(burst_, tokens_ + elapsed * qps_);
  last_ = now;
}

bool TokenBucket::TryAccept(Clock::time_point now) {
  if (qps_ <= 0) return true;
  absl::MutexLock l(&mu_);
  Refill(now);
  if (tokens_ < 1.0) return false;
  tokens_ -= 1.0;
  return true;
}

std::chrono::nanoseconds TokenBucket::Reserve(Clock::time_point now) {
  if (qps_ <= 0) return std::chrono::nanoseconds(0);
  absl::MutexLock l(&mu_);
  Refill(now);
  // Tokens may go negative: later callers queue behind earlier reservations.
  tokens_ -= 1.0;
  if (tokens_ >= 0) return std::chrono::nanoseconds(0);
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::duration<double>(-tokens_ / qps_));
}

std::chrono::nanoseconds TokenBucket::Wait() {
  auto d = Reserve(Clock::now());
  if (d.count() > 0) std::this_thread::sleep_for(d);
  return d;
}

}  // namespace phalanx::client
