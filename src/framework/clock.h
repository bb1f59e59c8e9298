// Clock implementations: the wall clock (live mode) and a virtual clock that only moves
// when told to (simulate, tests).
#pragma once

#include <atomic>
#include <chrono>

#include "framework/handle.h"

namespace phalanx::framework {

class RealClock final : public Clock {
 public:
  api::Timestamp Now() const override {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
};

class VirtualClock final : public Clock {
 public:
  explicit VirtualClock(api::Timestamp start = 0) : now_(start) {}
  api::Timestamp Now() const override { return now_.load(std::memory_order_acquire); }
  // Moves the clock forward to t (never backwards).
  void AdvanceTo(api::Timestamp t) {
    if (t > Now()) now_.store(t, std::memory_order_release);
  }
  void Advance(int64_t ns) { now_.fetch_add(ns, std::memory_order_acq_rel); }

 private:
  std::atomic<api::Timestamp> now_;
};

}  // namespace phalanx::framework
