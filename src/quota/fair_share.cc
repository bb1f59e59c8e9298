#include "quota/fair_share.h"

#include <algorithm>
#include <climits>
#include <functional>
#include <limits>
#include <set>
#include <vector>

namespace phalanx::quota {

namespace {

constexpr double kEps = 1e-9;

double Get(const ResourceList& l, const std::string& r) {
  auto it = l.find(r);
  return it == l.end() ? 0.0 : static_cast<double>(it->second);
}

struct Child {
  std::string name;
  double cap = 0;    // min(limit, demand)
  double share = 0;  // result
  double weight = 1;
  int32_t priority = 0;
  double usage = 0;  // normalized historical usage (time-based fair share)
};

// Over-quota weights of the `active` children for one round: the over-quota weight, or with
// time-based fair share KAI's calcShareWeights: nW = w / Σ_active w,
// max(0, nW + k·(nW - usage)).
std::vector<double> RoundWeights(const std::vector<Child>& kids, const std::vector<size_t>& active,
                                 const double* k_value) {
  std::vector<double> out;
  double total = 0;
  for (size_t i : active) total += kids[i].weight;
  for (size_t i : active) {
    if (!k_value || total <= 0) {
      out.push_back(kids[i].weight);
      continue;
    }
    const double nw = kids[i].weight / total;
    out.push_back(std::max(0.0, nw + *k_value * (nw - kids[i].usage)));
  }
  return out;
}

// Steps 2 and 3 of the header comment for one resource among siblings.
void Divide(double x, std::vector<Child>& kids, const QueueTree& tree, const std::string& r,
            const double* k_value) {
  double sum_g = 0;
  std::vector<double> g(kids.size());
  for (size_t i = 0; i < kids.size(); ++i) {
    const QueueSpec& spec = tree.queues.at(kids[i].name);
    const double quota = static_cast<double>(spec.GuaranteeOf(r));
    g[i] = std::min(quota, kids[i].cap);
    // lendingLimit: the part of the quota it may not lend stays its share even when idle.
    auto lend = spec.lending_limit.find(r);
    if (lend != spec.lending_limit.end()) {
      g[i] = std::max(g[i], std::max(0.0, quota - static_cast<double>(lend->second)));
    }
    sum_g += g[i];
  }
  const double scale = sum_g > x && sum_g > 0 ? x / sum_g : 1.0;
  for (size_t i = 0; i < kids.size(); ++i) kids[i].share = g[i] * scale;
  double left = std::max(0.0, x - sum_g * scale);
  // Over quota: priority groups, highest first; weighted water filling inside a group.
  std::set<int32_t, std::greater<int32_t>> prios;
  for (const auto& k : kids) prios.insert(k.priority);
  for (int32_t p : prios) {
    std::vector<size_t> active;
    for (size_t i = 0; i < kids.size(); ++i) {
      if (kids[i].priority == p && kids[i].weight > 0 && kids[i].cap - kids[i].share > kEps) {
        active.push_back(i);
      }
    }
    while (left > kEps && !active.empty()) {
      const std::vector<double> wt = RoundWeights(kids, active, k_value);
      double w = 0;
      for (double v : wt) w += v;
      if (w <= 0) break;
      std::vector<size_t> still;
      std::vector<double> still_wt;
      double used = 0;
      bool saturated = false;
      for (size_t j = 0; j < active.size(); ++j) {
        const size_t i = active[j];
        double give = left * wt[j] / w;
        double room = kids[i].cap - kids[i].share;
        if (give >= room - kEps) {
          kids[i].share += room;
          used += room;
          saturated = true;
        } else {
          still.push_back(i);
          still_wt.push_back(wt[j]);
        }
      }
      if (!saturated) {
        for (size_t j = 0; j < still.size(); ++j) kids[still[j]].share += left * still_wt[j] / w;
        left = 0;
        break;
      }
      left -= used;
      active = std::move(still);
    }
  }
}

}  // namespace

std::map<std::string, Share> ComputeFairShare(const QueueTree& tree, const ResourceList& capacity,
                                              const std::map<std::string, ResourceList>& demand,
                                              const NormalizedUsage* usage, double k_value) {
  std::map<std::string, Share> out;
  // Subtree demand per queue and resource (capped by each queue's limit).
  std::map<std::string, std::map<std::string, double>> sub;
  std::function<void(const std::string&)> sum = [&](const std::string& q) {
    auto& d = sub[q];
    auto own = demand.find(q);
    for (const auto& [r, c] : capacity) {
      (void)c;
      d[r] = own == demand.end() ? 0.0 : Get(own->second, r);
    }
    auto ch = tree.children.find(q);
    if (ch != tree.children.end()) {
      for (const auto& c : ch->second) {
        sum(c);
        for (const auto& [r, cap] : capacity) {
          (void)cap;
          d[r] += sub[c][r];
        }
      }
    }
    const QueueSpec& spec = tree.queues.at(q);
    for (auto& [r, v] : d) v = std::min(v, static_cast<double>(spec.LimitOf(r)));
  };
  auto roots = tree.children.find("");
  if (roots == tree.children.end()) return out;
  for (const auto& q : roots->second) sum(q);

  std::function<void(const std::vector<std::string>&, const std::string&, double)> divide =
      [&](const std::vector<std::string>& names, const std::string& r, double x) {
        std::vector<Child> kids;
        for (const auto& n : names) {
          const QueueSpec& s = tree.queues.at(n);
          Child c;
          c.name = n;
          c.cap = sub[n][r];
          c.weight = s.WeightOf(r);
          c.priority = s.priority;
          if (usage) {
            auto u = usage->find(n);
            if (u != usage->end()) {
              auto ur = u->second.find(r);
              if (ur != u->second.end()) c.usage = ur->second;
            }
          }
          kids.push_back(c);
        }
        Divide(x, kids, tree, r, usage ? &k_value : nullptr);
        for (const auto& c : kids) {
          out[c.name][r] = c.share;
          auto ch = tree.children.find(c.name);
          if (ch != tree.children.end()) divide(ch->second, r, c.share);
        }
      };
  for (const auto& [r, cap] : capacity) divide(roots->second, r, static_cast<double>(cap));
  return out;
}

double DominantShare(const ResourceList& allocated, const Share& deserved) {
  double best = 0;
  for (const auto& [r, a] : allocated) {
    if (a <= 0) continue;
    auto it = deserved.find(r);
    double d = it == deserved.end() ? 0.0 : it->second;
    if (d <= kEps) {
      // Holding a resource the cluster does not track (no capacity) does not count.
      if (it == deserved.end()) continue;
      return std::numeric_limits<double>::infinity();
    }
    best = std::max(best, static_cast<double>(a) / d);
  }
  return best;
}

}  // namespace phalanx::quota
