// CycleState: per-scheduling-cycle scratch space shared between a plugin's extension
// points (upstream pkg/scheduler/framework/cycle_state.go). Not thread-safe for writes:
// plugins write in PreFilter/PreScore (single thread) and read in Filter/Score (parallel).
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

namespace phalanx::framework {

// Data a plugin stores in CycleState. Clone() is used when preemption or the PodGroup
// cycle evaluates "what if" states.
class StateData {
 public:
  virtual ~StateData() = default;
  virtual std::unique_ptr<StateData> Clone() const = 0;
};

class CycleState {
 public:
  CycleState() = default;
  CycleState(const CycleState&) = delete;
  CycleState& operator=(const CycleState&) = delete;

  // Returns the data stored under `key`, or nullptr. Keys are string literals with static
  // storage (typically "PreFilter" + plugin name) and are compared by content.
  StateData* Read(std::string_view key) const {
    // Keys are string literals, usually the very same object: compare addresses first
    // (inline: plugins read once per node in Filter and Score).
    for (const auto& [k, v] : data_) {
      if (k.data() == key.data() && k.size() == key.size()) return v.get();
    }
    return ReadByContent(key);
  }
  template <typename T>
  T* ReadAs(std::string_view key) const {
    return static_cast<T*>(Read(key));
  }
  // Stores (replacing) `data` under `key`.
  void Write(std::string_view key, std::unique_ptr<StateData> data);
  void Delete(std::string_view key);
  std::unique_ptr<CycleState> Clone() const;

  // Plugins whose PreFilter / PreScore returned Skip; their Filter / Score is not run.
  std::vector<std::string_view> skip_filter_plugins;
  std::vector<std::string_view> skip_score_plugins;
  bool SkipFilter(std::string_view name) const;
  bool SkipScore(std::string_view name) const;
  // The same sets as bits over the profile's Filter plugin list, computed by the framework
  // after PreFilter so that the per-node loop tests a bit instead of comparing names.
  uint64_t skip_filter_mask = 0;
  // This cycle's plugin calls are timed one by one for the framework's
  // ExtensionPointObserver (set by the scheduler for a sample of the cycles; upstream
  // CycleState.SetRecordPluginMetrics).
  bool record_plugin_metrics = false;

 private:
  StateData* ReadByContent(std::string_view key) const;
  std::vector<std::pair<std::string_view, std::unique_ptr<StateData>>> data_;
};

}  // namespace phalanx::framework
