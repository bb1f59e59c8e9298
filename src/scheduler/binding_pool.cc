#include "scheduler/binding_pool.h"

#include <utility>

namespace phalanx::scheduler {

BindingPool::BindingPool(int workers) {
  for (int i = 0; i < workers; ++i) threads_.emplace_back([this] { Work(); });
}

BindingPool::~BindingPool() {
  {
    absl::MutexLock l(&mu_);
    stop_ = true;
  }
  for (auto& t : threads_) t.join();
}

void BindingPool::Work() {
  for (;;) {
    std::function<void()> fn;
    {
      absl::MutexLock l(&mu_);
      mu_.Await(absl::Condition(this, &BindingPool::HasWorkOrStop));
      if (tasks_.empty()) return;
      fn = std::move(tasks_.front());
      tasks_.pop_front();
    }
    fn();
    absl::MutexLock l(&mu_);
    --in_flight_;
  }
}

void BindingPool::Submit(std::function<void()> fn) {
  absl::MutexLock l(&mu_);
  ++in_flight_;
  tasks_.push_back(std::move(fn));
}

void BindingPool::WaitIdle() {
  absl::MutexLock l(&mu_);
  mu_.Await(absl::Condition(this, &BindingPool::Idle));
}

bool BindingBatch::Hold(std::function<void()>& fn) {
  absl::MutexLock l(&mu_);
  if (!open_) return false;
  held_.push_back(std::move(fn));
  return true;
}

std::vector<std::function<void()>> BindingBatch::Release() {
  absl::MutexLock l(&mu_);
  open_ = false;
  return std::exchange(held_, {});
}

}  // namespace phalanx::scheduler
