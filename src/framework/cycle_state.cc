#include "framework/cycle_state.h"

#include <algorithm>

namespace phalanx::framework {

StateData* CycleState::ReadByContent(std::string_view key) const {
  for (const auto& [k, v] : data_) {
    if (k == key) return v.get();
  }
  return nullptr;
}

void CycleState::Write(std::string_view key, std::unique_ptr<StateData> data) {
  for (auto& [k, v] : data_) {
    if (k == key) {
      v = std::move(data);
      return;
    }
  }
  data_.emplace_back(key, std::move(data));
}

void CycleState::Delete(std::string_view key) {
  std::erase_if(data_, [&](const auto& kv) { return kv.first == key; });
}

std::unique_ptr<CycleState> CycleState::Clone() const {
  auto c = std::make_unique<CycleState>();
  c->data_.reserve(data_.size());
  for (const auto& [k, v] : data_) c->data_.emplace_back(k, v ? v->Clone() : nullptr);
  c->skip_filter_plugins = skip_filter_plugins;
  c->skip_score_plugins = skip_score_plugins;
  c->skip_filter_mask = skip_filter_mask;
  c->record_plugin_metrics = record_plugin_metrics;
  return c;
}

bool CycleState::SkipFilter(std::string_view name) const {
  return std::find(skip_filter_plugins.begin(), skip_filter_plugins.end(), name) !=
         skip_filter_plugins.end();
}
bool CycleState::SkipScore(std::string_view name) const {
  return std::find(skip_score_plugins.begin(), skip_score_plugins.end(), name) !=
         skip_score_plugins.end();
}

}  // namespace phalanx::framework
