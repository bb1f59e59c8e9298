#include "framework/parallelize.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/info.h>
#include <tbb/task_arena.h>

#include <algorithm>

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
  arena_->arena.execute([&] {
    tbb::parallel_for(tbb::blocked_range<size_t>(0, n, chunk),
                      [&](const tbb::blocked_range<size_t>& r) { fn(r.begin(), r.end()); },
                      tbb::simple_partitioner());
  });
}

}  // namespace phalanx::framework
