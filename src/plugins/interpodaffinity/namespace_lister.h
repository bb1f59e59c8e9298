// Namespace labels for InterPodAffinity's namespaceSelector (upstream uses the shared
// informer's NamespaceLister). framework::Handle has no namespace informer, so the lister
// is installed on the plugin by whoever owns the namespaces (the scheduler wiring, a
// simulation, a test) with InterPodAffinity::SetNamespaceLister. Without one, every
// namespace has an empty label set: an incoming pod's non-empty namespaceSelector then
// selects no namespace, `namespaceSelector: {}` still selects all of them, and existing
// pods' namespaceSelectors are matched against empty labels.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "api/labels.h"
#include "api/types.h"
#include "framework/handle.h"

namespace phalanx::plugins::interpodaffinity {

class NamespaceLister {
 public:
  virtual ~NamespaceLister() = default;
  // Copies the labels of namespace `name` into *out; false (and *out untouched) if unknown.
  virtual bool GetLabels(std::string_view name, api::Labels* out) const = 0;
  // Calls fn(name, labels) for every namespace. fn must not call back into the lister.
  virtual void ForEach(
      const std::function<void(const std::string& name, const api::Labels& labels)>& fn) const = 0;
};

// A thread-safe in-memory lister fed from namespace events (Upsert/Delete).
class MapNamespaceLister final : public NamespaceLister {
 public:
  void Upsert(const api::Namespace& ns) {
    absl::MutexLock l(&mu_);
    labels_[ns.metadata.name] = ns.metadata.labels;
  }
  void Delete(const std::string& name) {
    absl::MutexLock l(&mu_);
    labels_.erase(name);
  }
  bool GetLabels(std::string_view name, api::Labels* out) const override {
    absl::ReaderMutexLock l(&mu_);
    auto it = labels_.find(name);
    if (it == labels_.end()) return false;
    *out = it->second;
    return true;
  }
  void ForEach(
      const std::function<void(const std::string&, const api::Labels&)>& fn) const override {
    absl::ReaderMutexLock l(&mu_);
    for (const auto& [name, labels] : labels_) fn(name, labels);
  }

 private:
  mutable absl::Mutex mu_;  // readers share it
  std::map<std::string, api::Labels, std::less<>> labels_ ABSL_GUARDED_BY(mu_);
};

// Namespaces from the scheduler's informer, through the framework Handle. The handle
// must outlive the lister (the plugin that owns it lives in the handle's framework).
class HandleNamespaceLister final : public NamespaceLister {
 public:
  explicit HandleNamespaceLister(const framework::Handle& h) : h_(h) {}
  bool GetLabels(std::string_view name, api::Labels* out) const override {
    return h_.NamespaceLabels(name, out);
  }
  void ForEach(const std::function<void(const std::string& name, const api::Labels& labels)>& fn)
      const override {
    h_.ForEachNamespace(fn);
  }

 private:
  const framework::Handle& h_;
};

}  // namespace phalanx::plugins::interpodaffinity
