// The scratch source of test/thread_safety/check.sh. Built with -DPHALANX_TSA_UNGUARDED,
// Add() writes an ABSL_GUARDED_BY member without holding its mutex, which
// scripts/thread-safety.sh must reject; built without it (the control), the write is under
// the lock and must be accepted, so that a failure is the analysis, not the flags.
#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace {

class Counter {
 public:
  void Add(int n) {
#ifndef PHALANX_TSA_UNGUARDED
    absl::MutexLock l(&mu_);
#endif
    value_ += n;  // with PHALANX_TSA_UNGUARDED: the deliberate bug, mu_ is not held
  }
  int Get() {
    absl::MutexLock l(&mu_);
    return value_;
  }

 private:
  absl::Mutex mu_;
  int value_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace

int UseCounter() {
  Counter c;
  c.Add(1);
  return c.Get();
}
