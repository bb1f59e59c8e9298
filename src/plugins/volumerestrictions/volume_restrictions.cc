#include "plugins/volumerestrictions/volume_restrictions.h"

#include <algorithm>
#include <set>

#include "framework/handle.h"

namespace phalanx::plugins::volumerestrictions {

namespace {

using framework::Status;
using Type = api::VolumeSource::Type;

constexpr const char* kStateKey = "PreFilterVolumeRestrictions";

// upstream preFilterState.
struct StateData final : framework::StateData {
  std::set<std::string> rwop_claims;  // names of the pod's ReadWriteOncePod claims
  int conflicting_refs = 0;           // references to them by placed pods
  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<StateData>(*this);
  }
  int RefsOf(const api::Pod& p) const {
    int n = 0;
    for (const auto& v : p.spec.volumes) {
      if (!v.persistent_volume_claim.empty() && rwop_claims.count(v.persistent_volume_claim)) ++n;
    }
    return n;
  }
};

bool NeedsCheck(const api::Volume& v) {
  const Type t = v.source.type;
  return t == Type::kGCEPersistentDisk || t == Type::kAWSElasticBlockStore || t == Type::kRBD ||
         t == Type::kISCSI;
}

bool HaveOverlap(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  for (const auto& x : a) {
    if (std::find(b.begin(), b.end(), x) != b.end()) return true;
  }
  return false;
}

bool SatisfiesVolumeConflicts(const api::Pod& pod, const framework::NodeInfo& ni) {
  for (const auto& v : pod.spec.volumes) {
    if (!NeedsCheck(v)) continue;
    for (const auto& ev : ni.pods()) {
      if (IsVolumeConflict(v, *ev->pod)) return false;
    }
  }
  return true;
}

bool NeedsBatchCare(const api::Pod& pod) {
  for (const auto& v : pod.spec.volumes) {
    if (NeedsCheck(v) || !v.persistent_volume_claim.empty()) return true;
  }
  return false;
}

}  // namespace

bool IsVolumeConflict(const api::Volume& v, const api::Pod& existing) {
  const api::VolumeSource& a = v.source;
  for (const auto& ev : existing.spec.volumes) {
    const api::VolumeSource& b = ev.source;
    if (a.type != b.type) continue;
    switch (a.type) {
      case Type::kGCEPersistentDisk:
        if (a.id == b.id && !(a.read_only && b.read_only)) return true;
        break;
      case Type::kAWSElasticBlockStore:
        if (a.id == b.id) return true;
        break;
      case Type::kISCSI:
        if (a.id == b.id && !(a.read_only && b.read_only)) return true;
        break;
      case Type::kRBD:
        if (HaveOverlap(a.monitors, b.monitors) && a.pool == b.pool && a.id == b.id &&
            !(a.read_only && b.read_only)) {
          return true;
        }
        break;
      default:
        break;
    }
  }
  return false;
}

framework::StatusOr<std::unique_ptr<framework::Plugin>> VolumeRestrictions::New(
    framework::PluginArgs, framework::Handle& h) {
  return std::unique_ptr<framework::Plugin>(
      new VolumeRestrictions(h.Service<volume::Catalog>(), &h));
}

Status VolumeRestrictions::PreFilter(framework::CycleState& state, const framework::PodInfo& pod,
                                     framework::PreFilterResult*) {
  const api::Pod& p = pod.Pod();
  bool needs_check = false;
  bool has_claims = false;
  for (const auto& v : p.spec.volumes) {
    needs_check = needs_check || NeedsCheck(v);
    has_claims = has_claims || !v.persistent_volume_claim.empty();
  }
  if (!needs_check && !has_claims) return Status(framework::Code::kSkip);
  auto d = std::make_unique<StateData>();
  if (has_claims) {
    volume::ViewPtr view = catalog_ ? catalog_->Snapshot() : std::make_shared<volume::View>();
    for (const auto& v : p.spec.volumes) {
      if (v.persistent_volume_claim.empty()) continue;
      volume::PVCPtr c = view->PVC(p.metadata.namespace_ + "/" + v.persistent_volume_claim);
      if (!c) {
        return Status(framework::Code::kUnschedulableAndUnresolvable,
                      "persistentvolumeclaim \"" + v.persistent_volume_claim + "\" not found");
      }
      if (!c->error.empty())
        return Status(framework::Code::kUnschedulableAndUnresolvable, c->error);
      const auto& m = c->access_modes;
      if (std::find(m.begin(), m.end(), "ReadWriteOncePod") != m.end()) {
        d->rwop_claims.insert(c->name);
      }
    }
  }
  if (!d->rwop_claims.empty()) {
    // upstream IsPVCUsedByPods: a claim counts once when any placed pod mounts it.
    std::set<std::string> used;
    for (const framework::NodeInfo* ni : handle_->SnapshotSharedLister().List()) {
      for (const auto& other : ni->pods()) {
        if (other->pod->metadata.namespace_ != p.metadata.namespace_) continue;
        for (const auto& v : other->pod->spec.volumes) {
          if (d->rwop_claims.count(v.persistent_volume_claim))
            used.insert(v.persistent_volume_claim);
        }
      }
    }
    d->conflicting_refs = static_cast<int>(used.size());
  }
  if (!needs_check && d->conflicting_refs == 0) return Status(framework::Code::kSkip);
  state.Write(kStateKey, std::move(d));
  return Status::Success();
}

Status VolumeRestrictions::AddPod(framework::CycleState& state, const framework::PodInfo&,
                                  const framework::PodInfoPtr& pod_to_add,
                                  const framework::NodeInfo&) {
  auto* d = state.ReadAs<StateData>(kStateKey);
  if (!d) return Status::Error("cannot read \"" + std::string(kStateKey) + "\" from cycleState");
  d->conflicting_refs += d->RefsOf(*pod_to_add->pod);
  return Status::Success();
}

Status VolumeRestrictions::RemovePod(framework::CycleState& state, const framework::PodInfo&,
                                     const framework::PodInfoPtr& pod_to_remove,
                                     const framework::NodeInfo&) {
  auto* d = state.ReadAs<StateData>(kStateKey);
  if (!d) return Status::Error("cannot read \"" + std::string(kStateKey) + "\" from cycleState");
  d->conflicting_refs -= d->RefsOf(*pod_to_remove->pod);
  return Status::Success();
}

Status VolumeRestrictions::Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                                  const framework::NodeInfo& ni) {
  if (!SatisfiesVolumeConflicts(pod.Pod(), ni)) {
    return Status(framework::Code::kUnschedulable, kReasonDiskConflict);
  }
  const auto* d = state.ReadAs<StateData>(kStateKey);
  if (!d) return Status::Error("cannot read \"" + std::string(kStateKey) + "\" from cycleState");
  if (d->conflicting_refs > 0) {
    return Status(framework::Code::kUnschedulable, kReasonReadWriteOncePodConflict);
  }
  return Status::Success();
}

std::vector<framework::ClusterEventWithHint> VolumeRestrictions::EventsToRegister() const {
  using framework::EventResource;
  std::vector<framework::ClusterEventWithHint> events(3);
  events[0].event = {EventResource::kPod, framework::kDelete, "PodDelete"};
  // upstream isSchedulableAfterPodDeleted.
  events[0].hint = [](const api::Pod& pod, const framework::EventObjects& objs) {
    const api::Pod* deleted = objs.old_pod;
    if (deleted == nullptr) return framework::QueueingHint::kQueue;
    if (deleted->metadata.namespace_ != pod.metadata.namespace_) {
      return framework::QueueingHint::kQueueSkip;
    }
    for (const auto& v : pod.spec.volumes) {
      if (NeedsCheck(v) && IsVolumeConflict(v, *deleted)) return framework::QueueingHint::kQueue;
    }
    std::set<std::string> claims;
    for (const auto& v : deleted->spec.volumes) {
      if (!v.persistent_volume_claim.empty()) claims.insert(v.persistent_volume_claim);
    }
    for (const auto& v : pod.spec.volumes) {
      if (claims.count(v.persistent_volume_claim)) return framework::QueueingHint::kQueue;
    }
    return framework::QueueingHint::kQueueSkip;
  };
  events[1].event = {EventResource::kNode,
                     framework::kAdd | framework::kUpdateNodeTaint | framework::kUpdateNodeLabel,
                     "NodeAdd"};
  events[2].event = {EventResource::kPersistentVolumeClaim, framework::kAdd, "PVCAdd"};
  return events;
}

bool VolumeRestrictions::SameSignature(const framework::PodInfo& canonical,
                                       const framework::PodInfo& pod) const {
  return !NeedsBatchCare(*canonical.pod) && !NeedsBatchCare(*pod.pod);
}

}  // namespace phalanx::plugins::volumerestrictions
