#include "plugins/gangscheduling/gang_scheduling.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <utility>

#include "gang/podgroup_manager.h"
#include "gang/staleness.h"
#include "gang/subgroups.h"
#include "gang/topology.h"
#include "gang/topology_hypernode.h"
#include "plugins/helper/args.h"

namespace phalanx::plugins::gangscheduling {

using framework::Code;
using framework::Status;

namespace {

// "pod group ml/train (PodGroup ml/train (scheduling.x-k8s.io/v1alpha1))" for messages.
std::string Display(const std::string& key, const gang::PodGroupSpec* spec) {
  std::string s = "pod group " + key;
  if (spec && !spec->source.empty()) s += " (" + spec->source + ")";
  return s;
}

// A quorum check (gang/subgroups.h) as the PodGroup cycle takes it (PodGroupInfo
// check_sub_groups, TopologyScope::check): Success, or Unschedulable with its message.
Status QuorumStatus(const api::Status& short_sub_group) {
  return short_sub_group.ok() ? Status::Success()
                              : Status::Unschedulable(std::string(short_sub_group.message()));
}

// A pod that names no subgroup of its gang (KAI subGroups: label
// kai.scheduler/subgroup-name must name a leaf subgroup) is never placed, in any mode:
// UnschedulableAndUnresolvable until the pod or its PodGroup changes (subgroups.h).
Status CheckSubGroupMembership(const gang::PodGroupManager& gangs, const gang::GangRef& ref,
                               const api::Pod& pod) {
  auto sum = gangs.SummaryOf(ref.key);
  if (!sum || !sum->spec || sum->spec->sub_groups.empty()) return Status::Success();
  const api::Status err =
      gang::SubGroupMembershipError(*sum->spec, gang::SubGroupNameOf(ref.dialect, pod));
  if (err.ok()) return Status::Success();
  return Status::UnschedulableAndUnresolvable("pod " + pod.Key() + ": " +
                                              std::string(err.message()));
}

// Nested quorums of one unit (KAI subGroups, Volcano minTaskMember; subgroups.h): waits
// until every subgroup has enough members, drops members already assumed or bound and
// those that name no subgroup (they fail on their own, CheckSubGroupMembership), orders
// the pending members so that each subgroup's missing minimum is placed before any extra
// member, and sets the unit's check_sub_groups. Unschedulable("waiting for members of pod
// group ns/pg (...): subgroup "decode": 1/2 members exist") while a subgroup lacks pods.
// Sets the unit's topology levels from the gang's TopologyConstraint and the KAI Topology
// it names (gang/topology.h), or from a Volcano networkTopology and the HyperNode tiers
// (gang/topology_hypernode.h). UnschedulableAndUnresolvable when the constraint cannot be
// honoured — the Topology does not exist or lacks the level, no HyperNode of an allowed
// tier exists, a HyperNode is invalid — e.g. `pod group ml/train (...): topology "t" not
// found (kai.scheduler/v1alpha1 Topology)`: the members stay pending with that reason
// instead of being placed without the constraint. Adding the Topology or HyperNode
// requeues them (PodGroupChange).
Status PlanTopology(const gang::PodGroupManager& gangs, const gang::GangInfo& info,
                    framework::PodGroupInfo* u) {
  const gang::TopologyConstraint& c = info.spec->topology;
  if (c.empty()) return Status::Success();
  gang::PlacementLevels levels;
  api::Status err;
  if (c.hyper_node_tiers) {
    // Volcano networkTopology: the levels are HyperNode tiers, each domain a HyperNode and
    // its leaf nodes (gang/topology_hypernode.h), resolved on the nodes of the cycle.
    gang::HyperNodeList all = gangs.HyperNodes();
    err = gang::ResolveHyperNodeLevels(c, all, &levels);
    if (err.ok()) {
      std::vector<int32_t> tiers;
      for (const auto& l : levels.levels) tiers.push_back(gang::LevelTier(l));
      u->topology_domains = [all = std::move(all), tiers = std::move(tiers)](
                                size_t level, const std::vector<const api::Node*>& nodes) {
        return gang::HyperNodeDomains(all, tiers.at(level), nodes);
      };
    }
  } else {
    std::shared_ptr<const gang::Topology> topology;
    if (!c.topology.empty()) topology = gangs.TopologyOf(c.topology);
    err = gang::ResolvePlacementLevels(c, topology.get(), &levels);
  }
  if (!err.ok()) {
    return Status::UnschedulableAndUnresolvable(u->display + ": " + std::string(err.message()));
  }
  u->topology_levels = std::move(levels.levels);
  u->topology_required = levels.required;
  u->topology_name = std::move(levels.topology);
  return Status::Success();
}

// True when leaf subgroup `leaf` is `name` or below it.
bool InSubGroup(const gang::PodGroupSpec& spec, const std::string& leaf, const std::string& name) {
  std::string at = leaf;
  for (size_t depth = 0; depth <= spec.sub_groups.size() && !at.empty(); ++depth) {
    if (at == name) return true;
    auto it = std::find_if(spec.sub_groups.begin(), spec.sub_groups.end(),
                           [&](const gang::SubGroup& g) { return g.name == at; });
    if (it == spec.sub_groups.end()) return false;
    at = it->parent;
  }
  return false;
}

// KAI spec.subGroups[].topologyConstraint (gang/topology.h ResolveSubGroupScopes): one
// scope per constrained subgroup with its pending members (after PlanSubGroups ordered
// them) and its own quorum check. UnschedulableAndUnresolvable naming the field when a
// level cannot be resolved, e.g. `pod group ml/serve (...): spec.subGroups[1]
// .topologyConstraint: topology "dc" not found (kai.scheduler/v1alpha1 Topology)`.
Status PlanSubGroupTopology(const gang::PodGroupManager& gangs, const gang::GangInfo& info,
                            framework::PodGroupInfo* u) {
  const gang::PodGroupSpec& spec = *info.spec;
  if (spec.sub_groups.empty()) return Status::Success();
  std::vector<gang::SubGroupScope> scopes;
  const api::Status err = gang::ResolveSubGroupScopes(
      spec, [&gangs](const std::string& name) { return gangs.TopologyOf(name); }, &scopes);
  if (!err.ok()) {
    return Status::UnschedulableAndUnresolvable(u->display + ": " + std::string(err.message()));
  }
  if (scopes.empty()) return Status::Success();
  auto sub_of = std::make_shared<std::map<std::string, std::string>>();
  for (size_t i = 0; i < info.member_pods.size(); ++i) {
    (*sub_of)[info.member_pods[i]] = info.member_sub_groups[i];
  }
  for (auto& s : scopes) {
    framework::PodGroupInfo::TopologyScope t;
    t.name = s.name;
    t.parent = s.parent;
    t.levels = std::move(s.levels.levels);
    t.required = s.levels.required;
    t.topology = std::move(s.levels.topology);
    for (const auto& key : u->pending_pods) {
      auto it = sub_of->find(key);
      if (it != sub_of->end() && InSubGroup(spec, it->second, s.name)) t.pods.push_back(key);
    }
    for (size_t i = 0; i < info.member_pods.size(); ++i) {
      if (info.member_active[i] && InSubGroup(spec, info.member_sub_groups[i], s.name)) {
        t.active_pods.push_back(info.member_pods[i]);
      }
    }
    t.check = [spec = info.spec, active = info.sub_group_active, sub_of,
               name = s.name](const std::vector<std::string>& placed) {
      gang::SubGroupCounts counts = active;
      for (const auto& key : placed) {
        auto it = sub_of->find(key);
        if (it != sub_of->end()) ++counts[it->second];
      }
      return QuorumStatus(gang::ShortSubGroupWithin(*spec, counts, name, "placeable"));
    };
    u->topology_scopes.push_back(std::move(t));
  }
  return Status::Success();
}

Status PlanSubGroups(const gang::GangInfo& info, framework::PodGroupInfo* u) {
  const gang::PodGroupSpec& spec = *info.spec;
  if (spec.sub_groups.empty()) return Status::Success();
  const api::Status missing = gang::ShortSubGroup(spec, info.sub_group_pods, "exist");
  if (!missing.ok()) {
    return Status::Unschedulable("waiting for members of " + u->display + ": " +
                                 std::string(missing.message()));
  }
  auto sub_of = std::make_shared<std::map<std::string, std::string>>();
  std::vector<std::string> first, rest;
  std::map<std::string, int32_t> to_fill;  // per subgroup: members still missing from its quorum
  for (size_t i = 0; i < info.member_pods.size(); ++i) {
    const std::string& name = info.member_sub_groups[i];
    if (info.member_active[i] || !gang::SubGroupMembershipError(spec, name).ok()) continue;
    (*sub_of)[info.member_pods[i]] = name;
    if (!to_fill.count(name)) {
      auto a = info.sub_group_active.find(name);
      to_fill[name] =
          gang::LeafQuorum(spec, name) - (a == info.sub_group_active.end() ? 0 : a->second);
    }
    (to_fill[name]-- > 0 ? first : rest).push_back(info.member_pods[i]);
  }
  u->pending_pods = std::move(first);
  u->pending_pods.insert(u->pending_pods.end(), rest.begin(), rest.end());
  if (!gang::HasSubGroupQuorums(spec)) return Status::Success();
  u->check_sub_groups = [spec = info.spec, active = info.sub_group_active,
                         sub_of](const std::vector<std::string>& placed) {
    gang::SubGroupCounts counts = active;
    for (const auto& key : placed) {
      auto it = sub_of->find(key);
      if (it != sub_of->end()) ++counts[it->second];
    }
    return QuorumStatus(gang::ShortSubGroup(*spec, counts, "placeable"));
  };
  return Status::Success();
}

}  // namespace

framework::StatusOr<std::unique_ptr<framework::Plugin>> GangScheduling::New(
    framework::PluginArgs args, framework::Handle& h) {
  Mode mode = Mode::kTransactional;
  int64_t wait = 300;
  std::optional<int64_t> stale_grace;
  std::optional<bool> pod_grouper;
  // Unknown fields are an error, as upstream's strict decoding (the loop below reads only
  // the known ones).
  helper::FieldErrors errs;
  bool has_content = false;
  if (!helper::CheckArgsMap(
          args, "GangSchedulingArgs",
          {"mode", "permitWaitingTimeSeconds", "staleGangGracePeriodSeconds", "podGrouper"}, &errs,
          &has_content)) {
    return helper::ArgsError(errs, "GangSchedulingArgs");
  }
  if (has_content) {
    try {
      for (const auto& kv : *args) {
        const std::string key = kv.first.as<std::string>();
        if (key == "mode") {
          const std::string m = kv.second.as<std::string>();
          if (m == "Transactional") {
            mode = Mode::kTransactional;
          } else if (m == "Permit") {
            mode = Mode::kPermit;
          } else {
            return Status::Error("GangSchedulingArgs: mode: Unsupported value: \"" + m +
                                 "\": supported values: \"Transactional\", \"Permit\"");
          }
        } else if (key == "podGrouper") {
          bool v = false;
          if (!kv.second.IsScalar() || !YAML::convert<bool>::decode(kv.second, v)) {
            return Status::Error("GangSchedulingArgs: podGrouper: Invalid value: " +
                                 YAML::Dump(kv.second) + ": must be true or false");
          }
          pod_grouper = v;
        } else if (key == "staleGangGracePeriodSeconds") {
          stale_grace = kv.second.as<int64_t>();
        } else if (key == "permitWaitingTimeSeconds") {
          wait = kv.second.as<int64_t>();
          if (wait <= 0) {
            return Status::Error("GangSchedulingArgs: permitWaitingTimeSeconds: Invalid value: " +
                                 std::to_string(wait) + ": must be greater than 0");
          }
        }
      }
    } catch (const YAML::Exception& e) {
      return Status::Error(std::string("GangSchedulingArgs: ") + e.what());
    }
  }
  if (stale_grace) {
    // One tracker per scheduler: with several profiles the last one's value applies.
    if (auto* tracker = h.Service<gang::StaleGangTracker>()) {
      tracker->SetDefaultGrace(*stale_grace < 0 ? -1 : *stale_grace * api::kNanosPerSecond);
    }
  }
  if (pod_grouper) {
    // One gang state per scheduler: with several profiles the last one's value applies.
    if (auto* gangs = h.Service<gang::PodGroupManager>()) gangs->EnablePodGrouper(*pod_grouper);
  }
  return std::unique_ptr<framework::Plugin>(
      new GangScheduling(h, mode, wait * api::kNanosPerSecond));
}

Status GangScheduling::PreEnqueue(const framework::PodInfo& pod) {
  gang::PodGroupManager* gangs = gangs_;
  if (!gangs) return Status::Success();
  auto ref = gangs->RefPtrOf(*pod.pod);
  if (!ref) return Status::Success();
  auto info = gangs->SummaryOf(ref->key);
  if (!info || !info->spec) {
    return Status::UnschedulableAndUnresolvable(
        "waiting for " +
        std::string(ref->via.empty() ? "" : "the gang named by " + ref->via + ", ") + "pod group " +
        ref->key + ", to be created");
  }
  if (!info->spec->invalid.empty()) {
    return Status::UnschedulableAndUnresolvable("invalid pod group " + ref->key + ": " +
                                                info->spec->invalid);
  }
  if (info->counts.pods < info->spec->min_member) {
    return Status::Unschedulable("waiting for minMember pods of " +
                                 Display(ref->key, info->spec.get()) + ": " +
                                 std::to_string(info->counts.pods) + "/" +
                                 std::to_string(info->spec->min_member) + " exist");
  }
  return Status::Success();
}

std::vector<framework::ClusterEventWithHint> GangScheduling::EventsToRegister() const {
  // A new member that completes the quorum activates its gang directly (the scheduler's
  // pod handler, Scheduler::OnPodAdd), so pod adds need no hint here: scanning every
  // gated pod on every add would be quadratic in the gang size.
  return {
      {{framework::EventResource::kPodGroup, framework::kAdd | framework::kUpdate,
        "PodGroupChange"},
       nullptr},
      {{framework::EventResource::kAssignedPod, framework::kDelete, "AssignedPodDelete"}, nullptr},
  };
}

Status GangScheduling::PlanPodGroup(const framework::PodInfo& pod,
                                    framework::QueuedPodGroupInfo* plan) {
  plan->pod_groups.clear();
  gang::PodGroupManager* gangs = gangs_;
  if (!gangs) return Status::Success();
  auto ref = gangs->RefPtrOf(*pod.pod);
  if (!ref) return Status::Success();
  if (Status s = CheckSubGroupMembership(*gangs, *ref, *pod.pod); !s.IsSuccess()) return s;
  if (mode_ != Mode::kTransactional) {
    // Permit mode places members pod by pod: a topology constraint cannot be kept there,
    // and is reported rather than ignored.
    auto summary = gangs->SummaryOf(ref->key);
    const auto subgroup_topology = [](const gang::PodGroupSpec& spec) {
      return std::any_of(spec.sub_groups.begin(), spec.sub_groups.end(),
                         [](const gang::SubGroup& g) { return !g.topology.empty(); });
    };
    if (summary && summary->spec &&
        (!summary->spec->topology.empty() || subgroup_topology(*summary->spec))) {
      return Status::UnschedulableAndUnresolvable(
          "pod group " + ref->key +
          ": topology constraints need GangScheduling mode Transactional (the PodGroup cycle)");
    }
    return Status::Success();
  }
  // A satisfied gang's remaining members schedule alone (Koordinator's "after gang").
  if (gangs->Satisfied(ref->key)) return Status::Success();
  for (const auto& key : gangs->GroupOf(ref->key)) {
    auto info = gangs->PlanningInfo(key);
    if (!info || !info->spec) {
      return Status::UnschedulableAndUnresolvable("gang group of " + ref->key + ": pod group " +
                                                  key + " not found");
    }
    if (!info->spec->invalid.empty()) {
      return Status::UnschedulableAndUnresolvable("invalid pod group " + key + ": " +
                                                  info->spec->invalid);
    }
    if (gangs->Satisfied(key)) continue;
    if (info->counts.pods < info->spec->min_member) {
      return Status::Unschedulable(
          "gang group of " + ref->key + ": waiting for minMember pods of " +
          Display(info->key, info->spec.get()) + ": " + std::to_string(info->counts.pods) + "/" +
          std::to_string(info->spec->min_member) + " exist");
    }
    framework::PodGroupInfo u;
    u.key = key;
    u.display = Display(info->key, info->spec.get());
    u.min_count = info->spec->min_member;
    u.scheduled_count = info->counts.assumed + info->counts.bound;
    u.pending_pods = info->member_pods;
    u.has_min_resources = info->spec->has_min_resources;
    u.min_resources = info->spec->min_resources;
    if (Status s = PlanTopology(*gangs, *info, &u); !s.IsSuccess()) return s;
    if (Status s = PlanSubGroups(*info, &u); !s.IsSuccess()) return s;
    if (Status s = PlanSubGroupTopology(*gangs, *info, &u); !s.IsSuccess()) return s;
    plan->pod_groups.push_back(std::move(u));
  }
  return Status::Success();
}

void GangScheduling::PodGroupCycleDone(const framework::QueuedPodGroupInfo& plan, bool committed,
                                       const std::string& reason) {
  gang::PodGroupManager* gangs = gangs_;
  if (!gangs) return;
  for (const auto& u : plan.pod_groups) gangs->RecordAttempt(u.key, committed ? "" : reason);
}

Status GangScheduling::Reserve(framework::CycleState&, const framework::PodInfo& pod,
                               const std::string&) {
  if (gang::PodGroupManager* gangs = gangs_) gangs->MarkAssumed(*pod.pod, handle_.GetClock().Now());
  return Status::Success();
}

void GangScheduling::Unreserve(framework::CycleState&, const framework::PodInfo& pod,
                               const std::string&) {
  gang::PodGroupManager* gangs = gangs_;
  if (!gangs) return;
  gangs->MarkForgotten(*pod.pod);
  if (mode_ != Mode::kPermit) return;
  auto ref = gangs->RefPtrOf(*pod.pod);
  if (!ref) return;
  auto info = gangs->SummaryOf(ref->key);
  if (!info || !info->spec || info->spec->mode != gang::GangMode::kStrict) return;
  // Strict: one member failing invalidates the attempt; release the waiting ones.
  const std::string uid = pod.pod->metadata.uid;
  handle_.IterateOverWaitingPods([&](framework::WaitingPod& wp) {
    if (wp.GetPod().metadata.uid == uid) return;
    auto r = gangs->RefPtrOf(wp.GetPod());
    if (r && r->key == ref->key) {
      wp.Reject(kName, "gang " + ref->key + ": member " + pod.pod->Key() + " failed (Strict mode)");
    }
  });
}

Status GangScheduling::Permit(framework::CycleState&, const framework::PodInfo& pod,
                              const std::string&, int64_t* timeout_ns) {
  gang::PodGroupManager* gangs = gangs_;
  if (!gangs || mode_ != Mode::kPermit) return Status::Success();
  auto ref = gangs->RefPtrOf(*pod.pod);
  if (!ref) return Status::Success();
  if (gangs->Satisfied(ref->key)) {
    handle_.IterateOverWaitingPods([&](framework::WaitingPod& wp) {
      auto r = gangs->RefPtrOf(wp.GetPod());
      if (r && r->key == ref->key) wp.Allow(kName);
    });
    return Status::Success();
  }
  auto info = gangs->SummaryOf(ref->key);
  *timeout_ns = (info && info->spec && info->spec->schedule_timeout_ns)
                    ? *info->spec->schedule_timeout_ns
                    : permit_wait_ns_;
  return Status(Code::kWait);
}

framework::StatusOr<std::unique_ptr<framework::Plugin>> GangPrioritySort::New(
    framework::PluginArgs, framework::Handle& h) {
  return std::unique_ptr<framework::Plugin>(new GangPrioritySort(h));
}

bool GangPrioritySort::Less(const framework::QueuedPodInfo& a,
                            const framework::QueuedPodInfo& b) const {
  const int32_t pa = a.pod_info->priority, pb = b.pod_info->priority;
  if (pa != pb) return pa > pb;
  gang::PodGroupManager* gangs = gangs_;
  auto key_time = [&](const framework::QueuedPodInfo& q, std::string* key) -> api::Timestamp {
    if (gangs) {
      if (auto ref = gangs->RefPtrOf(q.Pod())) {
        *key = ref->key;
        auto info = gangs->SummaryOf(ref->key);
        if (info && info->spec && info->spec->creation_timestamp != 0) {
          return info->spec->creation_timestamp;
        }
      }
    }
    *key = q.Pod().Key();
    return q.Pod().metadata.creation_timestamp != 0 ? q.Pod().metadata.creation_timestamp
                                                    : q.timestamp;
  };
  std::string ka, kb;
  api::Timestamp ta = key_time(a, &ka), tb = key_time(b, &kb);
  if (ta != tb) return ta < tb;
  if (ka != kb) return ka < kb;
  return a.timestamp < b.timestamp;
}

}  // namespace phalanx::plugins::gangscheduling
