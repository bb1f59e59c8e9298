// Must NOT compile under scripts/thread-safety.sh: Add() writes an ABSL_GUARDED_BY member
// without holding its mutex (test/thread_safety/CMakeLists.txt expects the diagnostic).
#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace {

class Counter {
 public:
  void Add(int n) { value_ += n; }  // the deliberate bug: mu_ is not held
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
