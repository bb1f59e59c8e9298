// Parallelizer: runs a function over an index range on a fixed pool of `parallelism`
// threads (oneTBB task_arena), as upstream's parallelize.Until does with goroutines.
#pragma once

#include <cstddef>
#include <cstdint>
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
  // Adaptive (a performance choice; upstream always fans out to its 16 goroutines): the
  // first chunks run on the calling thread and are timed, and the remaining chunks run in
  // the pool only if they are predicted to take at least inline_work_ns() on one thread;
  // otherwise they run inline too. Results must not depend on which thread runs a chunk.
  void Until(size_t n, size_t chunk, const std::function<void(size_t, size_t)>& fn);

  // Predicted single-thread work (ns) below which Until does not fan out. Default 50 us,
  // measured on 2 cores: fork/join around ~15-20 us Filter/Score passes (5,000 nodes, 500
  // scored) cost more wall time than it saved. 0 always fans out after the probe.
  int64_t inline_work_ns() const { return inline_work_ns_; }
  void set_inline_work_ns(int64_t ns) { inline_work_ns_ = ns; }

 private:
  int64_t inline_work_ns_ = 50'000;
  int parallelism_;
  struct Arena;
  std::unique_ptr<Arena> arena_;
};

}  // namespace phalanx::framework
