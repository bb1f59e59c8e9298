#include "framework/parallelize.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/info.h>
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

void Parallelizer::Until(size_t n, size_t chunk,
                         const std::function<void(size_t, size_t)>& fn) {
  if (n == 0) return;
  if (chunk == 0) chunk = 1;
  if (!arena_ || n <= chunk) {
    for (size_t b = 0; b < n; b += chunk) fn(b, std::min(n, b + chunk));
    return;
  }
  // Adaptive: the leading chunks run inline and are timed; the rest goes to the arena only
  // if it is predicted to take at least inline_work_ns_ on this thread. A fork/join costs
  // microseconds (worker wake-up, spinning, the join), which is most of a small Filter or
  // Score pass. Which thread runs a chunk never changes a result (callers write per index).
  const size_t probe_chunks = std::clamp<size_t>(n / chunk / 8, 1, 4);
  const size_t probe = std::min(n, probe_chunks * chunk);
  const auto t0 = std::chrono::steady_clock::now();
  for (size_t b = 0; b < probe; b += chunk) fn(b, std::min(probe, b + chunk));
  if (probe == n) return;
  const int64_t probe_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0)
          .count();
  const double predicted_ns =
      static_cast<double>(probe_ns) * static_cast<double>(n - probe) / static_cast<double>(probe);
  if (predicted_ns < static_cast<double>(inline_work_ns_)) {
    for (size_t b = probe; b < n; b += chunk) fn(b, std::min(n, b + chunk));
    return;
  }
  arena_->arena.execute([&] {
    tbb::parallel_for(tbb::blocked_range<size_t>(probe, n, chunk),
                      [&](const tbb::blocked_range<size_t>& r) { fn(r.begin(), r.end()); },
                      tbb::simple_partitioner());
  });
}

}  // namespace phalanx::framework
