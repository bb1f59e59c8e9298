#include "plugins/interpodaffinity/terms.h"

#include <algorithm>

#include "plugins/interpodaffinity/namespace_lister.h"

namespace phalanx::plugins::interpodaffinity::internal {

namespace {

const api::PodAffinity* PodAffinityOf(const api::Pod& pod, bool anti) {
  const auto& aff = pod.spec.affinity;
  if (!aff) return nullptr;
  const auto& pa = anti ? aff->pod_anti_affinity : aff->pod_affinity;
  return pa ? &*pa : nullptr;
}

bool IsEmptySelector(const api::LabelSelector& s) {
  return s.match_labels.empty() && s.match_expressions.empty();
}

// GetAffinityTerms: OK, or the first invalid selector's ValidateLabelSelector status.
api::Status TermError(const api::PodAffinityTerm& t) {
  if (t.label_selector) {
    if (api::Status s = api::ValidateLabelSelector(*t.label_selector); !s.ok()) return s;
  }
  if (t.namespace_selector) {
    if (api::Status s = api::ValidateLabelSelector(*t.namespace_selector); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace

const std::vector<api::PodAffinityTerm>* RequiredAffinityTerms(const api::Pod& pod) {
  const api::PodAffinity* a = PodAffinityOf(pod, false);
  return a && !a->required.empty() ? &a->required : nullptr;
}
const std::vector<api::PodAffinityTerm>* RequiredAntiAffinityTerms(const api::Pod& pod) {
  const api::PodAffinity* a = PodAffinityOf(pod, true);
  return a && !a->required.empty() ? &a->required : nullptr;
}
const std::vector<api::WeightedPodAffinityTerm>* PreferredAffinityTerms(const api::Pod& pod) {
  const api::PodAffinity* a = PodAffinityOf(pod, false);
  return a && !a->preferred.empty() ? &a->preferred : nullptr;
}
const std::vector<api::WeightedPodAffinityTerm>* PreferredAntiAffinityTerms(const api::Pod& pod) {
  const api::PodAffinity* a = PodAffinityOf(pod, true);
  return a && !a->preferred.empty() ? &a->preferred : nullptr;
}

framework::Status ParseErrors(const api::Pod& pod) {
  std::vector<std::string> errs;
  auto check = [&](const char* what, const auto* terms, auto&& get) {
    if (terms == nullptr) return;
    for (const auto& t : *terms) {
      const api::Status e = TermError(get(t));
      if (!e.ok()) {
        errs.push_back(std::string(what) + ": " + std::string(e.message()));
        return;
      }
    }
  };
  auto plain = [](const api::PodAffinityTerm& t) -> const api::PodAffinityTerm& { return t; };
  auto weighted = [](const api::WeightedPodAffinityTerm& t) -> const api::PodAffinityTerm& {
    return t.pod_affinity_term;
  };
  check("requiredAffinityTerms", RequiredAffinityTerms(pod), plain);
  check("requiredAntiAffinityTerms", RequiredAntiAffinityTerms(pod), plain);
  check("preferredAffinityTerms", PreferredAffinityTerms(pod), weighted);
  check("preferredAntiAffinityTerms", PreferredAntiAffinityTerms(pod), weighted);
  if (errs.empty()) return framework::Status::Success();
  if (errs.size() == 1) return framework::Status::Error(errs[0]);
  std::string out = "[";
  for (size_t i = 0; i < errs.size(); ++i) {
    if (i > 0) out += ", ";
    out += errs[i];
  }
  return framework::Status::Error(out + "]");
}

bool SelectorMatches(const api::PodAffinityTerm& term, const api::Labels& owner_labels,
                     const api::Labels& labels) {
  if (!term.label_selector) return false;  // LabelSelectorAsSelector(nil) == Nothing
  if (!api::LabelSelectorMatches(*term.label_selector, labels)) return false;
  for (const std::string& k : term.match_label_keys) {
    auto o = owner_labels.find(k);
    if (o == owner_labels.end()) continue;
    auto l = labels.find(k);
    if (l == labels.end() || l->second != o->second) return false;
  }
  for (const std::string& k : term.mismatch_label_keys) {
    auto o = owner_labels.find(k);
    if (o == owner_labels.end()) continue;
    auto l = labels.find(k);
    if (l != labels.end() && l->second == o->second) return false;
  }
  return true;
}

bool TermMatches(const api::PodAffinityTerm& term, const api::Pod& owner, const api::Pod& pod,
                 const api::Labels& ns_labels) {
  const std::string& ns = pod.metadata.namespace_;
  bool ns_ok;
  if (term.namespaces.empty() && !term.namespace_selector) {
    ns_ok = ns == owner.metadata.namespace_;
  } else {
    ns_ok =
        std::find(term.namespaces.begin(), term.namespaces.end(), ns) != term.namespaces.end() ||
        (term.namespace_selector && api::LabelSelectorMatches(*term.namespace_selector, ns_labels));
  }
  return ns_ok && SelectorMatches(term, owner.metadata.labels, pod.metadata.labels);
}

bool BoundTerm::Matches(const api::Pod& owner, const api::Pod& pod) const {
  if (!all_namespaces &&
      !std::binary_search(namespaces.begin(), namespaces.end(), pod.metadata.namespace_)) {
    return false;
  }
  return SelectorMatches(*term, owner.metadata.labels, pod.metadata.labels);
}

BoundTerm BindTerm(const api::PodAffinityTerm& term, const api::Pod& owner, int32_t weight,
                   const NamespaceLister* lister) {
  BoundTerm b;
  b.term = &term;
  b.weight = weight;
  if (term.namespaces.empty() && !term.namespace_selector) {
    b.namespaces.push_back(owner.metadata.namespace_);
  } else {
    b.namespaces = term.namespaces;
  }
  if (term.namespace_selector) {
    if (IsEmptySelector(*term.namespace_selector)) {
      b.all_namespaces = true;  // labels.Everything(): kept as a selector upstream
    } else if (lister != nullptr) {
      const api::LabelSelector& sel = *term.namespace_selector;
      lister->ForEach([&](const std::string& name, const api::Labels& labels) {
        if (api::LabelSelectorMatches(sel, labels)) b.namespaces.push_back(name);
      });
    }
  }
  std::sort(b.namespaces.begin(), b.namespaces.end());
  b.namespaces.erase(std::unique(b.namespaces.begin(), b.namespaces.end()), b.namespaces.end());
  return b;
}

bool MatchesAll(const std::vector<BoundTerm>& terms, const api::Pod& owner, const api::Pod& pod) {
  if (terms.empty()) return false;
  for (const BoundTerm& t : terms) {
    if (!t.Matches(owner, pod)) return false;
  }
  return true;
}

TopologyCounts::Key& TopologyCounts::KeyFor(std::string_view key) {
  for (Key& k : keys_) {
    if (k.key == key) return k;
  }
  keys_.push_back(Key{std::string(key), {}});
  return keys_.back();
}

void TopologyCounts::Add(std::string_view key, std::string_view value, int64_t delta) {
  if (delta == 0) return;
  ValueCounts& values = KeyFor(key).values;
  auto it = values.find(value);
  if (it == values.end()) {
    values.emplace(std::string(value), delta);
    ++size_;
    return;
  }
  it->second += delta;
  if (it->second == 0) {
    values.erase(it);
    --size_;
  }
}

void TopologyCounts::Accumulate(std::string_view key, std::string_view value, int64_t delta) {
  ValueCounts& values = KeyFor(key).values;
  auto it = values.find(value);
  if (it == values.end()) {
    values.emplace(std::string(value), delta);
    ++size_;
    return;
  }
  it->second += delta;
}

int64_t TopologyCounts::Get(std::string_view key, std::string_view value) const {
  for (const Key& k : keys_) {
    if (k.key != key) continue;
    auto it = k.values.find(value);
    return it == k.values.end() ? 0 : it->second;
  }
  return 0;
}

}  // namespace phalanx::plugins::interpodaffinity::internal
