#include "framework/parallelize.h"

#include <tbb/blocked_range.h>
#include <tbb/info.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace phalanx::framework {

struct Parallelizer::Arena {
  explicit Arena(int n) : arena(n) {}
  tbb::task_arena arena;
};

Parallelizer::Parallelizer(int parallelism) : parallelism_(parallelism < 1 ? 1 : parallelism) {
  // Goroutine-style parallelism above the core count only adds contention here.
  parallelism_ = std::min(parallelism_, tbb::info::default_concurrency());
  if (parallelism_ > 1) arena_ = std::make_unique<Arena>(parallelism_);
}

Parallelizer::~Parallelizer() = default;

void Parallelizer::Until(size_t n, size_t chunk, const std::function<void(size_t, size_t)>& fn) {
  if (n == 0) return;
  if (chunk == 0) chunk = 1;
  if (!arena_ || n <= chunk) {
    for (size_t b = 0; b < n; b += chunk) fn(b, std::min(n, b + chunk));
    return;
  }
  // Adaptive: the first chunk runs inline and is timed; the rest goes to the arena only
  // if it is predicted to take at least inline_work_ns_ on this thread and fanning out has
  // recently paid (measured speedup, re-tried every kReprobeEvery eligible calls). A
  // fork/join costs microseconds (worker wake-up, spinning, the join), which is most of a
  // small Filter or Score pass, and nothing is gained when the other cores are busy.
  // Which thread runs a chunk never changes a result (callers write per index).
  const size_t probe = chunk;  // n > chunk here
  const auto t0 = std::chrono::steady_clock::now();
  fn(0, probe);
  const auto t1 = std::chrono::steady_clock::now();
  const double probe_ns =
      static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count());
  const double predicted_ns =
      probe_ns * static_cast<double>(n - probe) / static_cast<double>(probe);
  bool fan_out = predicted_ns >= static_cast<double>(inline_work_ns_);
  if (fan_out && speedup_x100_.load(std::memory_order_relaxed) < kMinSpeedupX100) {
    fan_out = skipped_.fetch_add(1, std::memory_order_relaxed) + 1 >= kReprobeEvery;
  }
  if (!fan_out) {
    for (size_t b = probe; b < n; b += chunk) fn(b, std::min(n, b + chunk));
    return;
  }
  skipped_.store(0, std::memory_order_relaxed);
  arena_->arena.execute([&] {
    tbb::parallel_for(
        tbb::blocked_range<size_t>(probe, n, chunk),
        [&](const tbb::blocked_range<size_t>& r) { fn(r.begin(), r.end()); },
        tbb::simple_partitioner());
  });
  const double par_ns = static_cast<double>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t1)
          .count());
  const double achieved = std::min(1000.0, 100.0 * predicted_ns / std::max(par_ns, 1.0));
  const uint32_t old = speedup_x100_.load(std::memory_order_relaxed);
  speedup_x100_.store(static_cast<uint32_t>((3.0 * old + achieved) / 4.0),
                      std::memory_order_relaxed);
}

}  // namespace phalanx::framework
