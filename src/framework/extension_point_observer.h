// Optional latency hooks for benchmarks (`phalanx bench`): the framework runtime and the
// scheduler time one call of each extension point and report it to an observer, as
// upstream records scheduler_framework_extension_point_duration_seconds
// (pkg/scheduler/framework/runtime/framework.go; Filter is timed once per scheduling
// cycle over all nodes, as upstream's generic_scheduler.go does, not per node).
//
// With no observer installed (the default) a timer is one pointer test: no clock read.
#pragma once

#include <chrono>
#include <cstdint>

namespace phalanx::framework {

enum class ExtensionPoint : uint8_t {
  kPreFilter,
  kFilter,
  kPostFilter,
  kPreScore,
  kScore,  // Score + NormalizeScore + weights (upstream's "Score" extension point)
  kReserve,
  kUnreserve,
  kPermit,
  kPreBind,
  kBind,
  kPostBind,
  kCount
};

// Upstream's extension point label ("PreFilter", "Filter", ...).
inline const char* ExtensionPointName(ExtensionPoint p) {
  switch (p) {
    case ExtensionPoint::kPreFilter: return "PreFilter";
    case ExtensionPoint::kFilter: return "Filter";
    case ExtensionPoint::kPostFilter: return "PostFilter";
    case ExtensionPoint::kPreScore: return "PreScore";
    case ExtensionPoint::kScore: return "Score";
    case ExtensionPoint::kReserve: return "Reserve";
    case ExtensionPoint::kUnreserve: return "Unreserve";
    case ExtensionPoint::kPermit: return "Permit";
    case ExtensionPoint::kPreBind: return "PreBind";
    case ExtensionPoint::kBind: return "Bind";
    case ExtensionPoint::kPostBind: return "PostBind";
    case ExtensionPoint::kCount: break;
  }
  return "?";
}

// Receives one duration (nanoseconds, steady clock) per extension-point call. Called on
// the thread running the call (the scheduling thread, or a binding worker), so an
// implementation used with binding workers must be thread-safe.
class ExtensionPointObserver {
 public:
  virtual ~ExtensionPointObserver() = default;
  virtual void Observe(ExtensionPoint point, int64_t nanos) = 0;
};

// RAII timer: reads the steady clock only when `observer` is non-null.
class ExtensionPointTimer {
 public:
  ExtensionPointTimer(ExtensionPointObserver* observer, ExtensionPoint point)
      : observer_(observer), point_(point) {
    if (observer_) start_ = std::chrono::steady_clock::now();
  }
  ~ExtensionPointTimer() {
    if (observer_) {
      observer_->Observe(point_, std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::steady_clock::now() - start_)
                                     .count());
    }
  }
  ExtensionPointTimer(const ExtensionPointTimer&) = delete;
  ExtensionPointTimer& operator=(const ExtensionPointTimer&) = delete;

 private:
  ExtensionPointObserver* observer_;
  ExtensionPoint point_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace phalanx::framework
