// Parallelizer: runs a function over an index range on a fixed pool of `parallelism`
// threads (oneTBB task_arena), as upstream's parallelize.Until does with goroutines.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>

namespace phalanx::framework {

class Parallelizer {
 public:
  // parallelism >= 1; 1 runs everything on the calling thread.
  explicit Parallelizer(int parallelism);
  ~Parallelizer();
  int parallelism() const { return parallelism_; }
  // Calls fn(begin, end) for consecutive chunks covering [0, n), at most `chunk` indices
  // each, concurrently; returns when all chunks are done. fn must be thread-safe.
  void Until(size_t n, size_t chunk, const std::function<void(size_t, size_t)>& fn);

 private:
  int parallelism_;
  struct Arena;
  std::unique_ptr<Arena> arena_;
};

}  // namespace phalanx::framework
