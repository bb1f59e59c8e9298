// Optional latency hooks for benchmarks (`phalanx bench`) and the live metrics
// (app/live_metrics.h): the framework runtime and the scheduler time one call of each
// extension point and report it to an observer, as upstream records
// scheduler_framework_extension_point_duration_seconds
// (pkg/scheduler/framework/runtime/framework.go; Filter is timed once per scheduling
// cycle over all nodes, as upstream's schedule_one.go does, not per node). An observer
// that asks for it (PluginSamplePercent) also gets each plugin call's duration in a
// sample of the scheduling cycles (upstream pluginMetricsSamplePercent = 10,
// pkg/scheduler/schedule_one.go), and Permit waits.
//
// With no observer installed (the default) a timer is one pointer test: no clock read.
#pragma once

#include <chrono>
#include <cstdint>
#include <string_view>

#include "framework/status.h"

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
    case ExtensionPoint::kPreFilter:
      return "PreFilter";
    case ExtensionPoint::kFilter:
      return "Filter";
    case ExtensionPoint::kPostFilter:
      return "PostFilter";
    case ExtensionPoint::kPreScore:
      return "PreScore";
    case ExtensionPoint::kScore:
      return "Score";
    case ExtensionPoint::kReserve:
      return "Reserve";
    case ExtensionPoint::kUnreserve:
      return "Unreserve";
    case ExtensionPoint::kPermit:
      return "Permit";
    case ExtensionPoint::kPreBind:
      return "PreBind";
    case ExtensionPoint::kBind:
      return "Bind";
    case ExtensionPoint::kPostBind:
      return "PostBind";
    case ExtensionPoint::kCount:
      break;
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
  // The same call with the extension point's resulting status code (Success for the
  // points that return nothing: Unreserve, PostBind). Default: Observe(point, nanos).
  virtual void ObserveStatus(ExtensionPoint point, Code code, int64_t nanos) {
    (void)code;
    Observe(point, nanos);
  }
  // Percent [0, 100] of scheduling cycles whose plugin calls are timed one by one
  // (ObservePlugin). 0 (default): none, and the per-plugin hot path stays one branch.
  virtual int PluginSamplePercent() const { return 0; }
  // One plugin call of a sampled cycle (`plugin` is the plugin's Name()). Called from the
  // Filter and Score workers concurrently: must be thread-safe.
  virtual void ObservePlugin(std::string_view plugin, ExtensionPoint point, Code code,
                             int64_t nanos) {
    (void)plugin, (void)point, (void)code, (void)nanos;
  }
  // A pod finished waiting in Permit with `code` after `nanos` (upstream
  // scheduler_permit_wait_duration_seconds).
  virtual void ObservePermitWait(Code code, int64_t nanos) { (void)code, (void)nanos; }
  // `n` evaluations of `plugin` at PreFilter, Filter, PreScore or Score (upstream
  // scheduler_plugin_evaluation_total: Filter and Score count once per node).
  // One run of the scheduling algorithm (upstream schedulePod: PreFilter to the chosen
  // node; scheduler_scheduling_algorithm_duration_seconds).
  virtual void ObserveAlgorithm(int64_t nanos) { (void)nanos; }
  // Whether the framework should count Filter and Score evaluations per node for
  // CountEvaluations (one relaxed atomic add per plugin call). Default: no.
  virtual bool WantsEvaluations() const { return false; }
  virtual void CountEvaluations(std::string_view plugin, ExtensionPoint point, uint64_t n) {
    (void)plugin, (void)point, (void)n;
  }
};

// Nanoseconds on the steady clock since `t0`.
inline int64_t NanosSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0)
      .count();
}

// RAII timer: reads the steady clock only when `observer` is non-null.
class ExtensionPointTimer {
 public:
  ExtensionPointTimer(ExtensionPointObserver* observer, ExtensionPoint point)
      : observer_(observer), point_(point) {
    if (observer_) start_ = std::chrono::steady_clock::now();
  }
  ~ExtensionPointTimer() {
    if (observer_) observer_->ObserveStatus(point_, code_, NanosSince(start_));
  }
  // The status the timed call ended with (Success unless set).
  void set_code(Code c) { code_ = c; }
  ExtensionPointTimer(const ExtensionPointTimer&) = delete;
  ExtensionPointTimer& operator=(const ExtensionPointTimer&) = delete;

 private:
  ExtensionPointObserver* observer_;
  ExtensionPoint point_;
  Code code_ = Code::kSuccess;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace phalanx::framework
