// The control for unguarded.cc: the same class with the access under the lock, which
// scripts/thread-safety.sh must accept (so a failure of unguarded.cc is the analysis, not
// the flags or the headers).
#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace {

class Counter {
 public:
  void Add(int n) {
    absl::MutexLock l(&mu_);
    value_ += n;
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
