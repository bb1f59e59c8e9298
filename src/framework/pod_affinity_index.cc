#include "framework/pod_affinity_index.h"

#include <algorithm>
#include <utility>

namespace phalanx::framework {

namespace {

// Length-prefixed pieces, so that no two different inputs give the same key.
void Put(std::string* out, std::string_view s) {
  const uint32_t n = static_cast<uint32_t>(s.size());
  out->append(reinterpret_cast<const char*>(&n), sizeof(n));
  out->append(s);
}
void PutCount(std::string* out, size_t n) { Put(out, std::to_string(n)); }

void PutStrings(std::string* out, const std::vector<std::string>& v) {
  PutCount(out, v.size());
  for (const auto& s : v) Put(out, s);
}

void PutSelector(std::string* out, const std::optional<api::LabelSelector>& sel) {
  if (!sel) {
    Put(out, "-");
    return;
  }
  Put(out, "+");
  PutCount(out, sel->match_labels.size());
  for (const auto& [k, v] : sel->match_labels) {
    Put(out, k);
    Put(out, v);
  }
  PutCount(out, sel->match_expressions.size());
  for (const auto& r : sel->match_expressions) {
    Put(out, r.key);
    Put(out, r.op);
    PutStrings(out, r.values);
  }
}

void PutTerm(std::string* out, const api::PodAffinityTerm& t) {
  PutSelector(out, t.label_selector);
  PutStrings(out, t.namespaces);
  PutSelector(out, t.namespace_selector);
  Put(out, t.topology_key);
  PutStrings(out, t.match_label_keys);
  PutStrings(out, t.mismatch_label_keys);
}

void PutPodAffinity(std::string* out, const std::optional<api::PodAffinity>& pa) {
  if (!pa) {
    Put(out, "-");
    return;
  }
  Put(out, "+");
  PutCount(out, pa->required.size());
  for (const auto& t : pa->required) PutTerm(out, t);
  PutCount(out, pa->preferred.size());
  for (const auto& wt : pa->preferred) {
    PutCount(out, static_cast<size_t>(static_cast<uint32_t>(wt.weight)));
    PutTerm(out, wt.pod_affinity_term);
  }
}

template <typename T>
void SwapRemove(std::vector<T*>& list, size_t pos, size_t T::*member) {
  T* last = list.back();
  list[pos] = last;
  last->*member = pos;
  list.pop_back();
}

}  // namespace

std::string PodAffinityIndex::ClassKey(const api::Pod& pod) {
  std::string key;
  Put(&key, pod.metadata.namespace_);
  PutCount(&key, pod.metadata.labels.size());
  for (const auto& [k, v] : pod.metadata.labels) {
    Put(&key, k);
    Put(&key, v);
  }
  if (pod.spec.affinity) {
    PutPodAffinity(&key, pod.spec.affinity->pod_affinity);
    PutPodAffinity(&key, pod.spec.affinity->pod_anti_affinity);
  } else {
    Put(&key, "-");
    Put(&key, "-");
  }
  Put(&key, pod.metadata.deletion_timestamp ? "T" : "-");
  return key;
}

void PodAffinityIndex::Enable(const std::vector<const NodeInfo*>& nodes) {
  if (enabled_) return;
  enabled_ = true;
  for (const NodeInfo* ni : nodes) AddNodePods(*ni);
}

void PodAffinityIndex::Disable() {
  enabled_ = false;
  keys_.clear();
  node_domains_.clear();
  pods_.clear();
  all_.clear();
  with_affinity_.clear();
  with_anti_.clear();
  classes_.clear();
}

size_t PodAffinityIndex::Track(std::string_view key, const std::vector<const NodeInfo*>& nodes) {
  for (size_t i = 0; i < keys_.size(); ++i) {
    if (keys_[i] == key) return i;
  }
  const size_t slot = keys_.size();
  keys_.emplace_back(key);
  node_domains_.emplace_back();
  for (Class* c : all_) c->domains.push_back(std::make_shared<DomainCounts>());
  for (const NodeInfo* ni : nodes) {
    const api::Node* node = ni->node();
    if (node == nullptr) continue;
    auto lit = node->metadata.labels.find(keys_[slot]);
    if (lit == node->metadata.labels.end()) continue;
    ++node_domains_[slot][lit->second];
    for (const PodInfoPtr& p : ni->pods()) {
      auto it = pods_.find(p.get());
      if (it == pods_.end()) continue;
      ++(*it->second.cls->domains[slot])[lit->second];
    }
  }
  return slot;
}

PodAffinityIndex::DomainCounts& PodAffinityIndex::Mutable(Class& c, size_t slot) {
  std::shared_ptr<DomainCounts>& d = c.domains[slot];
  if (d.use_count() > 1) d = std::make_shared<DomainCounts>(*d);  // a cycle still reads it
  return *d;
}

void PodAffinityIndex::Count(Class& c, const api::Node& node, int64_t delta) {
  c.members += delta;
  for (size_t i = 0; i < keys_.size(); ++i) {
    auto lit = node.metadata.labels.find(keys_[i]);
    if (lit == node.metadata.labels.end()) continue;
    DomainCounts& d = Mutable(c, i);
    auto it = d.find(std::string_view(lit->second));
    if (it == d.end()) {
      d.emplace(lit->second, delta);
    } else if ((it->second += delta) == 0) {
      d.erase(it);
    }
  }
}

void PodAffinityIndex::CountNode(const api::Node& node, int64_t delta) {
  for (size_t i = 0; i < keys_.size(); ++i) {
    auto lit = node.metadata.labels.find(keys_[i]);
    if (lit == node.metadata.labels.end()) continue;
    DomainCounts& d = node_domains_[i];
    auto it = d.find(std::string_view(lit->second));
    if (it == d.end()) {
      d.emplace(lit->second, delta);
    } else if ((it->second += delta) == 0) {
      d.erase(it);
    }
  }
}

void PodAffinityIndex::AddPod(const PodInfoPtr& pod, const api::Node& node) {
  if (!enabled_) return;
  auto [pit, inserted] = pods_.try_emplace(pod.get(), Indexed{pod, nullptr});
  if (!inserted) return;  // already counted (on its node)
  std::string key = ClassKey(pod->Pod());
  auto cit = classes_.find(key);
  if (cit == classes_.end()) {
    auto c = std::make_unique<Class>();
    c->representative = pod;
    for (size_t i = 0; i < keys_.size(); ++i) {
      c->domains.push_back(std::make_shared<DomainCounts>());
    }
    c->has_affinity = pod->has_affinity;
    c->has_required_anti_affinity = pod->has_required_anti_affinity;
    c->pos_all = all_.size();
    all_.push_back(c.get());
    if (c->has_affinity) {
      c->pos_affinity = with_affinity_.size();
      with_affinity_.push_back(c.get());
    }
    if (c->has_required_anti_affinity) {
      c->pos_anti = with_anti_.size();
      with_anti_.push_back(c.get());
    }
    cit = classes_.emplace(std::move(key), std::move(c)).first;
  }
  pit->second.cls = cit->second.get();
  Count(*cit->second, node, 1);
}

void PodAffinityIndex::Unlist(Class* c) {
  SwapRemove(all_, c->pos_all, &Class::pos_all);
  if (c->has_affinity) SwapRemove(with_affinity_, c->pos_affinity, &Class::pos_affinity);
  if (c->has_required_anti_affinity) SwapRemove(with_anti_, c->pos_anti, &Class::pos_anti);
}

bool PodAffinityIndex::RemovePod(const PodInfo& pod, const api::Node& node) {
  if (!enabled_) return false;
  auto it = pods_.find(&pod);
  if (it == pods_.end()) return false;
  Class* c = it->second.cls;
  Count(*c, node, -1);
  if (c->members == 0) {
    Unlist(c);
    classes_.erase(ClassKey(c->representative->Pod()));
  }
  pods_.erase(it);  // last: it may hold the class's representative's only other owner
  return true;
}

void PodAffinityIndex::RemoveNodePods(const NodeInfo& ni) {
  if (!enabled_ || ni.node() == nullptr) return;
  CountNode(*ni.node(), -1);
  for (const PodInfoPtr& p : ni.pods()) RemovePod(*p, *ni.node());
}

void PodAffinityIndex::AddNodePods(const NodeInfo& ni) {
  if (!enabled_ || ni.node() == nullptr) return;
  CountNode(*ni.node(), 1);
  for (const PodInfoPtr& p : ni.pods()) AddPod(p, *ni.node());
}

void PodAffinityIndex::SyncPods(std::vector<const PodInfo*> before, const NodeInfo& ni) {
  if (!enabled_ || ni.node() == nullptr) return;
  std::vector<const PodInfo*> now;
  now.reserve(ni.pods().size());
  for (const PodInfoPtr& p : ni.pods()) now.push_back(p.get());
  std::sort(before.begin(), before.end());
  std::sort(now.begin(), now.end());
  std::vector<const PodInfo*> gone;
  std::set_difference(before.begin(), before.end(), now.begin(), now.end(),
                      std::back_inserter(gone));
  for (const PodInfo* p : gone) RemovePod(*p, *ni.node());
  if (gone.size() + now.size() == before.size()) return;  // nothing new
  for (const PodInfoPtr& p : ni.pods()) {
    if (!std::binary_search(before.begin(), before.end(), p.get())) AddPod(p, *ni.node());
  }
}

}  // namespace phalanx::framework
