#include "gang/subgroups.h"

#include <algorithm>

namespace phalanx::gang {

namespace {

const std::string* Find(const std::map<std::string, std::string>& m, const char* key) {
  auto it = m.find(key);
  return it == m.end() || it->second.empty() ? nullptr : &it->second;
}

bool HasChildren(const PodGroupSpec& spec, const std::string& name) {
  return std::any_of(spec.sub_groups.begin(), spec.sub_groups.end(),
                     [&](const SubGroup& g) { return g.parent == name; });
}

int32_t LeafNeed(const PodGroupSpec& spec, const SubGroup& g) {
  return spec.dialect == Dialect::kKAI ? std::max<int32_t>(g.min_member, 1) : g.min_member;
}

std::string Quote(const std::string& s) { return "\"" + s + "\""; }

struct Eval {
  bool met = true;
  int64_t members = 0;  // members at or below the node
  std::string short_reason;
};

// Evaluates the subgroup `name` ("" = the gang itself) against `members`; depth bounds the
// recursion (parent cycles are rejected by the parser already).
Eval EvalNode(const PodGroupSpec& spec, const SubGroup* node, const SubGroupCounts& members,
              const std::string& what, size_t depth) {
  const std::string name = node ? node->name : "";
  Eval out;
  std::vector<const SubGroup*> children;
  if (depth <= spec.sub_groups.size()) {
    for (const auto& g : spec.sub_groups) {
      if (g.parent == name) children.push_back(&g);
    }
  }
  if (node && children.empty()) {  // a leaf: its pods
    auto it = members.find(name);
    out.members = it == members.end() ? 0 : it->second;
    const int32_t need = LeafNeed(spec, *node);
    out.met = out.members >= need;
    if (!out.met) {
      out.short_reason = "subgroup " + Quote(name) + ": " + std::to_string(out.members) + "/" +
                         std::to_string(need) + " members " + what;
    }
    return out;
  }
  int32_t met_children = 0;
  std::string first_short;
  for (const SubGroup* c : children) {
    Eval e = EvalNode(spec, c, members, what, depth + 1);
    out.members += e.members;
    if (e.met) {
      ++met_children;
    } else if (first_short.empty()) {
      first_short = e.short_reason;
    }
  }
  const std::optional<int32_t>& min_sub = node ? node->min_sub_group : spec.min_sub_group;
  const int32_t required = min_sub
                               ? std::min<int32_t>(*min_sub, static_cast<int32_t>(children.size()))
                               : static_cast<int32_t>(children.size());
  const std::string who = node ? "subgroup " + Quote(name) : "pod group";
  if (met_children < required) {
    out.met = false;
    // With every child required, the short child is the news; with minSubGroup, the count.
    out.short_reason = !min_sub ? first_short
                                : who + ": " + std::to_string(met_children) + "/" +
                                      std::to_string(required) + " child subgroups " + what + " (" +
                                      first_short + ")";
  } else if (node && out.members < node->min_member) {
    out.met = false;
    out.short_reason = who + ": " + std::to_string(out.members) + "/" +
                       std::to_string(node->min_member) + " members " + what;
  }
  return out;
}

// OK when the quorum is met; else FailedPrecondition with the short subgroup's reason.
api::Status ShortStatus(const Eval& e) {
  return e.met || e.short_reason.empty() ? absl::OkStatus()
                                         : absl::FailedPreconditionError(e.short_reason);
}

}  // namespace

std::string SubGroupNameOf(Dialect dialect, const api::Pod& pod) {
  const std::string* v = nullptr;
  if (dialect == Dialect::kKAI) {
    v = Find(pod.metadata.labels, kKaiSubGroupLabel);
  } else if (dialect == Dialect::kVolcano) {
    v = Find(pod.metadata.annotations, kVolcanoTaskSpecKey);
    if (!v) v = Find(pod.metadata.labels, kVolcanoTaskSpecKey);
  }
  return v ? *v : std::string();
}

bool HasSubGroupQuorums(const PodGroupSpec& spec) {
  if (spec.sub_groups.empty()) return false;
  if (spec.dialect == Dialect::kKAI) return true;
  if (spec.dialect != Dialect::kVolcano) return false;
  int64_t sum = 0;
  for (const auto& g : spec.sub_groups) sum += g.min_member;
  return spec.min_member >= sum;
}

api::Status SubGroupMembershipError(const PodGroupSpec& spec, const std::string& name) {
  if (spec.dialect != Dialect::kKAI || spec.sub_groups.empty()) return absl::OkStatus();
  std::string leaves;
  bool found = false;
  for (const auto& g : spec.sub_groups) {
    if (HasChildren(spec, g.name)) continue;
    if (g.name == name) found = true;
    leaves += (leaves.empty() ? "" : ", ") + g.name;
  }
  if (found) return absl::OkStatus();
  const std::string gang = "pod group " + spec.key;
  if (name.empty()) {
    return absl::InvalidArgumentError(std::string("label ") + kKaiSubGroupLabel +
                                      " is not set, but " + gang +
                                      " has subgroups (leaf subgroups: " + leaves + ")");
  }
  if (std::any_of(spec.sub_groups.begin(), spec.sub_groups.end(),
                  [&](const SubGroup& g) { return g.name == name; })) {
    return absl::InvalidArgumentError(
        std::string("label ") + kKaiSubGroupLabel + " " + Quote(name) + " names subgroup " +
        Quote(name) + " of " + gang + ", which has child subgroups (leaf subgroups: " + leaves +
        ")");
  }
  return absl::InvalidArgumentError(std::string("label ") + kKaiSubGroupLabel + " " + Quote(name) +
                                    " names no subgroup of " + gang +
                                    " (leaf subgroups: " + leaves + ")");
}

api::Status ShortSubGroup(const PodGroupSpec& spec, const SubGroupCounts& members,
                          const std::string& what) {
  if (!HasSubGroupQuorums(spec)) return absl::OkStatus();
  Eval e = EvalNode(spec, nullptr, members, what, 0);
  return ShortStatus(e);
}

api::Status ShortSubGroupWithin(const PodGroupSpec& spec, const SubGroupCounts& members,
                                const std::string& name, const std::string& what) {
  if (!HasSubGroupQuorums(spec)) return absl::OkStatus();
  for (const auto& g : spec.sub_groups) {
    if (g.name != name) continue;
    Eval e = EvalNode(spec, &g, members, what, 0);
    return ShortStatus(e);
  }
  return absl::OkStatus();
}

int32_t LeafQuorum(const PodGroupSpec& spec, const std::string& name) {
  if (name.empty() || !HasSubGroupQuorums(spec)) return 0;
  for (const auto& g : spec.sub_groups) {
    if (g.name == name) return HasChildren(spec, name) ? 0 : LeafNeed(spec, g);
  }
  return 0;
}

}  // namespace phalanx::gang
