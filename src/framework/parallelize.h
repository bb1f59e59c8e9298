// Parallelizer: runs a function over an index range on a fixed pool of `parallelism`
// threads (oneTBB task_arena), as upstream's parallelize.Until does with goroutines.
#pragma once

#include <algorithm>
#include <atomic>
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
  // first chunk runs on the calling thread and is timed; the remaining chunks run in the
  // pool only if they are predicted to take at least inline_work_ns() on one thread and
  // fanning out has recently paid off (an average measured speedup of at least 1.1, else
  // it is re-tried every 32nd such call); otherwise they run inline too. Results must not
  // depend on which thread runs a chunk.
  void Until(size_t n, size_t chunk, const std::function<void(size_t, size_t)>& fn);

  // Predicted single-thread work (ns) below which Until does not fan out. Default 10 us:
  // on 2 cores a fork/join costs a few us, and the default plugins' Filter and Score
  // passes at 5,000 nodes (500 scored) take ~15-20 us. 0: fan out whenever it pays.
  int64_t inline_work_ns() const { return inline_work_ns_; }
  void set_inline_work_ns(int64_t ns) { inline_work_ns_ = ns; }

 private:
  static constexpr uint32_t kMinSpeedupX100 = 110;
  static constexpr uint32_t kReprobeEvery = 32;
  int64_t inline_work_ns_ = 10'000;
  // Exponential average (weight 1/4) of the speedup measured on fan-outs, x100; and the
  // eligible calls run inline since the last fan-out.
  std::atomic<uint32_t> speedup_x100_{200};
  std::atomic<uint32_t> skipped_{0};
  int parallelism_;
  struct Arena;
  std::unique_ptr<Arena> arena_;
};

// Calls fn(c, begin, end) for every chunk c of [0, n), chunk c covering
// [c * grain, min(n, (c + 1) * grain)), through `p` (so the scheduler's `parallelism`
// setting holds: Parallelizer::Until over the chunk indices, one chunk per unit of work);
// p == nullptr runs the chunks in order on the calling thread. For callers that write per
// chunk or per index, so that results do not depend on which thread ran a chunk. Plugins
// pass Handle::GetParallelizer().
template <typename Fn>
void ParallelChunks(Parallelizer* p, size_t n, size_t grain, Fn&& fn) {
  const size_t chunks = (n + grain - 1) / grain;
  auto run = [&](size_t first, size_t last) {
    for (size_t c = first; c < last; ++c) fn(c, c * grain, std::min(n, (c + 1) * grain));
  };
  if (p == nullptr || chunks <= 1) {
    run(0, chunks);
    return;
  }
  p->Until(chunks, 1, run);
}

}  // namespace phalanx::framework
