#include "plugins/nodevolumelimits/csi.h"

#include <array>

#include "framework/handle.h"
#include "plugins/nodevolumelimits/translation.h"

namespace phalanx::plugins::nodevolumelimits {

namespace {

using framework::Status;
using Type = api::VolumeSource::Type;

constexpr const char* kStateKey = "PreFilterNodeVolumeLimits";
constexpr const char* kAttachablePrefix = "attachable-volumes-";

struct StateData final : framework::StateData {
  volume::ViewPtr view;
  // The incoming pod's volumes, computed once in PreFilter for nodes without ([0]) and with
  // ([1]) a CSINode (all AttachableVolumes reads of the node), and their status.
  std::array<std::map<std::string, std::string>, 2> new_volumes;
  std::array<Status, 2> new_status;
  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<StateData>(*this);
  }
};

bool IsInTree(const api::Volume& v) { return !InTreePluginName(v.source.type).empty(); }

bool HasCountedVolumes(const api::Pod& pod) {
  for (const auto& v : pod.spec.volumes) {
    if (!v.persistent_volume_claim.empty() || v.ephemeral_claim_template || IsInTree(v))
      return true;
  }
  return false;
}

// A counted volume: its unique name and the limit key it counts against.
struct Counted {
  std::string unique;
  std::string key;
};

// An in-tree source: counted under the migrated CSI driver when migration is on for the
// node, else under v1.20's in-tree allocatable key by volume id. nullopt: not counted.
std::optional<Counted> InTreeVolume(const api::VolumeSource& src, const api::Labels* pv_labels,
                                    bool has_csi_node) {
  const std::string plugin = InTreePluginName(src.type);
  if (!IsCSIMigrationOn(has_csi_node, plugin)) {
    return Counted{plugin + "/" + src.id, InTreeAttachLimitKey(plugin)};
  }
  std::string err;
  std::optional<std::string> handle = TranslatedVolumeHandle(src, pv_labels, &err);
  if (!handle) return std::nullopt;
  const std::string driver = *CSIDriverForInTree(plugin);
  return Counted{driver + "/" + *handle, CSIAttachLimitKey(driver)};
}

// upstream getCSIDriverInfoFromSC: an unbound claim (or one bound to a missing PV) counts
// under its class's provisioner with a handle unique to the claim.
std::optional<Counted> FromClass(const volume::View& view, const volume::PersistentVolumeClaim& c,
                                 bool has_csi_node) {
  const std::string cls = view.ClassOf(c);
  if (cls.empty()) return std::nullopt;
  const volume::StorageClass* sc = view.Class(cls);
  if (!sc || !sc->error.empty()) return std::nullopt;
  const std::string handle = "claim:" + c.Key();
  const std::string& provisioner = sc->provisioner;
  if (IsMigratableInTreePlugin(provisioner)) {
    if (IsCSIMigrationOn(has_csi_node, provisioner)) {
      const std::string driver = *CSIDriverForInTree(provisioner);
      return Counted{driver + "/" + handle, CSIAttachLimitKey(driver)};
    }
    const std::string key = InTreeAttachLimitKey(provisioner);
    if (key.empty()) return std::nullopt;
    return Counted{provisioner + "/" + handle, key};  // v1.20 matchProvisioner
  }
  return Counted{provisioner + "/" + handle, CSIAttachLimitKey(provisioner)};
}

// upstream getCSIDriverInfo for a claim.
std::optional<Counted> FromClaim(const volume::View& view, const volume::PersistentVolumeClaim& c,
                                 bool has_csi_node) {
  if (c.volume_name.empty()) return FromClass(view, c, has_csi_node);
  volume::PVPtr pv = view.PV(c.volume_name);
  if (!pv) return FromClass(view, c, has_csi_node);
  if (pv->source.type == Type::kCSI) {
    if (pv->source.driver.empty() || pv->source.id.empty()) return std::nullopt;
    return Counted{pv->source.driver + "/" + pv->source.id, CSIAttachLimitKey(pv->source.driver)};
  }
  if (InTreePluginName(pv->source.type).empty()) return std::nullopt;
  return InTreeVolume(pv->source, &pv->labels, has_csi_node);
}

bool ControlledBy(const volume::PersistentVolumeClaim& c, const api::Pod& pod) {
  for (const auto& o : c.owner_references) {
    if (o.controller && o.uid == pod.metadata.uid) return true;
  }
  return false;
}

// Node allocatable attachable-volumes-* overridden by the CSINode's driver counts
// (upstream getVolumeLimits).
std::map<std::string, int64_t> VolumeLimits(const api::Node& node, const volume::CSINode* csi) {
  std::map<std::string, int64_t> limits;
  for (const auto& [name, q] : node.status.allocatable) {
    if (name.rfind(kAttachablePrefix, 0) == 0) limits[name] = q.Value();
  }
  if (csi) {
    for (const auto& d : csi->drivers) {
      if (d.allocatable_count) limits[CSIAttachLimitKey(d.name)] = *d.allocatable_count;
    }
  }
  return limits;
}

}  // namespace

framework::StatusOr<std::unique_ptr<framework::Plugin>> CSILimits::New(framework::PluginArgs,
                                                                       framework::Handle& h) {
  return std::unique_ptr<framework::Plugin>(new CSILimits(h.Service<volume::Catalog>()));
}

Status CSILimits::AttachableVolumes(const volume::View& view, const api::Pod& pod,
                                    bool has_csi_node, bool new_pod,
                                    std::map<std::string, std::string>* out) const {
  for (const auto& v : pod.spec.volumes) {
    std::string claim = v.persistent_volume_claim;
    const bool ephemeral = v.ephemeral_claim_template != nullptr;
    if (ephemeral) claim = pod.metadata.name + "-" + v.name;
    if (claim.empty()) {
      if (!IsInTree(v)) continue;
      // An inline volume counts only when migrated (checkAttachableInlineVolume); the
      // v1.20 in-tree count applies on nodes without migration.
      if (IsCSIMigrationOn(has_csi_node, InTreePluginName(v.source.type))) {
        std::string err;
        if (!TranslatedVolumeHandle(v.source, nullptr, &err)) {
          return Status::Error("converting volume(" + v.name + ") from inline to csi: " + err);
        }
      }
      if (auto c = InTreeVolume(v.source, nullptr, has_csi_node)) (*out)[c->unique] = c->key;
      continue;
    }
    volume::PVCPtr c = view.PVC(pod.metadata.namespace_ + "/" + claim);
    if (!c || !c->error.empty()) {
      if (!new_pod) continue;  // not counted: no guarantee it belongs to this driver
      if (c) return Status(framework::Code::kUnschedulableAndUnresolvable, c->error);
      return Status(framework::Code::kUnschedulableAndUnresolvable,
                    "looking up PVC " + pod.metadata.namespace_ + "/" + claim +
                        ": persistentvolumeclaim \"" + claim + "\" not found");
    }
    if (ephemeral && !ControlledBy(*c, pod)) {
      return Status::Error("PVC " + c->Key() + " was not created for pod " + pod.Key() +
                           " (pod is not owner)");
    }
    if (auto counted = FromClaim(view, *c, has_csi_node)) (*out)[counted->unique] = counted->key;
  }
  return Status::Success();
}

Status CSILimits::PreFilter(framework::CycleState& state, const framework::PodInfo& pod,
                            framework::PreFilterResult*) {
  if (!HasCountedVolumes(pod.Pod())) return Status(framework::Code::kSkip);
  auto d = std::make_unique<StateData>();
  d->view = catalog_ ? catalog_->Snapshot() : std::make_shared<volume::View>();
  for (int with_csi = 0; with_csi < 2; ++with_csi) {
    d->new_status[with_csi] =
        AttachableVolumes(*d->view, pod.Pod(), with_csi == 1, true, &d->new_volumes[with_csi]);
  }
  state.Write(kStateKey, std::move(d));
  return Status::Success();
}

Status CSILimits::Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                         const framework::NodeInfo& ni) {
  if (pod.Pod().spec.volumes.empty()) return Status::Success();
  const api::Node* node = ni.node();
  if (!node) return Status::Error("node not found");
  const auto* d = state.ReadAs<StateData>(kStateKey);
  volume::ViewPtr view =
      d ? d->view : (catalog_ ? catalog_->Snapshot() : std::make_shared<volume::View>());
  const volume::CSINode* csi_node = nullptr;
  if (const volume::CSINode* c = view->CSINodeOf(node->metadata.name)) {
    if (!c->error.empty()) return Status(framework::Code::kUnschedulableAndUnresolvable, c->error);
    csi_node = c;
  }
  std::map<std::string, std::string> new_volumes;
  if (d != nullptr) {
    const int with_csi = csi_node != nullptr ? 1 : 0;
    if (!d->new_status[with_csi].IsSuccess()) return d->new_status[with_csi];
    new_volumes = d->new_volumes[with_csi];
  } else if (Status s =
                 AttachableVolumes(*view, pod.Pod(), csi_node != nullptr, true, &new_volumes);
             !s.IsSuccess()) {
    return s;
  }
  if (new_volumes.empty()) return Status::Success();
  const std::map<std::string, int64_t> limits = VolumeLimits(*node, csi_node);
  if (limits.empty()) return Status::Success();
  std::map<std::string, std::string> attached;
  for (const auto& existing : ni.pods()) {
    if (Status s = AttachableVolumes(*view, *existing->pod, csi_node != nullptr, false, &attached);
        !s.IsSuccess()) {
      return s;
    }
  }
  std::map<std::string, int64_t> attached_count, new_count;
  for (const auto& [unique, key] : attached) {
    new_volumes.erase(unique);  // a volume used by several pods counts once
    ++attached_count[key];
  }
  for (const auto& [unique, key] : new_volumes) ++new_count[key];
  for (const auto& [key, count] : new_count) {
    auto it = limits.find(key);
    if (it != limits.end() && attached_count[key] + count > it->second) {
      return Status(framework::Code::kUnschedulable, kReasonMaxVolumeCountExceeded);
    }
  }
  return Status::Success();
}

std::vector<framework::ClusterEventWithHint> CSILimits::EventsToRegister() const {
  using framework::EventResource;
  std::vector<framework::ClusterEventWithHint> events(3);
  events[0].event = {EventResource::kPersistentVolumeClaim, framework::kAdd, "CSINodeOrPVCAdd"};
  events[1].event = {EventResource::kPod, framework::kDelete, "PodDelete"};
  events[1].hint = [](const api::Pod&, const framework::EventObjects& objs) {
    const api::Pod* deleted = objs.old_pod;
    if (deleted == nullptr) return framework::QueueingHint::kQueue;
    if (deleted->spec.node_name.empty()) return framework::QueueingHint::kQueueSkip;
    return HasCountedVolumes(*deleted) ? framework::QueueingHint::kQueue
                                       : framework::QueueingHint::kQueueSkip;
  };
  events[2].event = {EventResource::kNode, framework::kAdd | framework::kUpdateNodeAllocatable,
                     "NodeAddOrAllocatable"};
  return events;
}

bool CSILimits::SameSignature(const framework::PodInfo& canonical,
                              const framework::PodInfo& pod) const {
  return !HasCountedVolumes(*canonical.pod) && !HasCountedVolumes(*pod.pod);
}

}  // namespace phalanx::plugins::nodevolumelimits
