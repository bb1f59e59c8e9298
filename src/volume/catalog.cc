#include "volume/catalog.h"

#include <algorithm>

#include "api/labels.h"

namespace phalanx::volume {

namespace {

bool BoundToClaim(const PersistentVolume& pv, const PersistentVolumeClaim& c) {
  if (!pv.claim_ref) return false;
  if (pv.claim_ref->name != c.name || pv.claim_ref->namespace_ != c.namespace_) return false;
  return pv.claim_ref->uid.empty() || pv.claim_ref->uid == c.uid;
}

// True when resourceVersion `a` is older than `b`, both integers (etcd revisions, and the
// in-process store's counter). A write made from inside another object's event handler (the
// simulator's controllers) reaches later handlers before the event that caused it, so a
// handler can see an object's versions out of order; the older one is ignored.
bool OlderVersion(const std::string& a, const std::string& b) {
  if (a.empty() || b.empty() || a.size() > 18 || b.size() > 18) return false;
  if (a.find_first_not_of("0123456789") != std::string::npos ||
      b.find_first_not_of("0123456789") != std::string::npos) {
    return false;
  }
  return std::stoll(a) < std::stoll(b);
}

std::string ObjKey(const api::Unstructured& obj) {
  const std::string ns = obj.metadata.namespace_.empty() ? "default" : obj.metadata.namespace_;
  return ns + "/" + obj.metadata.name;
}

}  // namespace

std::string View::ClassOf(const PersistentVolumeClaim& c) const {
  return c.storage_class ? *c.storage_class : default_class;
}

const StorageClass* View::Class(const std::string& name) const {
  auto it = classes.find(name);
  return it == classes.end() ? nullptr : &it->second;
}

PVPtr View::PV(const std::string& name) const {
  auto it = pvs.find(name);
  return it == pvs.end() ? nullptr : it->second;
}

PVCPtr View::PVC(const std::string& key) const {
  auto it = pvcs.find(key);
  return it == pvcs.end() ? nullptr : it->second;
}

api::Status Catalog::OnObjectAdd(const api::UnstructuredPtr& obj) {
  const Kind kind = KindOf(*obj);
  if (kind == Kind::kNone) return absl::OkStatus();
  std::string error;
  absl::MutexLock l(&mu_);
  switch (kind) {
    case Kind::kPV: {
      auto old = pvs_.find(obj->metadata.name);
      if (old != pvs_.end() && OlderVersion(obj->metadata.resource_version,
                                            old->second->object->metadata.resource_version)) {
        return absl::OkStatus();
      }
      auto pv = std::make_shared<const PersistentVolume>(DecodePersistentVolume(obj));
      error = pv->error;
      // The cluster now says who holds the PV: an assumption for it is superseded.
      if (pv->claim_ref) assumed_pv_.erase(pv->name);
      pvs_[pv->name] = std::move(pv);
      break;
    }
    case Kind::kPVC: {
      auto old = pvcs_.find(ObjKey(*obj));
      if (old != pvcs_.end() && OlderVersion(obj->metadata.resource_version,
                                             old->second->object->metadata.resource_version)) {
        return absl::OkStatus();
      }
      auto c = std::make_shared<const PersistentVolumeClaim>(DecodePersistentVolumeClaim(obj));
      error = c->error;
      if (!c->volume_name.empty()) assumed_provision_.erase(c->Key());
      pvcs_[c->Key()] = std::move(c);
      break;
    }
    case Kind::kStorageClass: {
      StorageClass sc = DecodeStorageClass(*obj);
      error = sc.error;
      classes_[sc.name] = std::move(sc);
      break;
    }
    case Kind::kCSINode: {
      CSINode n = DecodeCSINode(*obj);
      error = n.error;
      csi_nodes_[n.name] = std::move(n);
      break;
    }
    case Kind::kCSIDriver: {
      CSIDriver d = DecodeCSIDriver(*obj);
      error = d.error;
      csi_drivers_[d.name] = std::move(d);
      break;
    }
    case Kind::kCSIStorageCapacity: {
      CSIStorageCapacity c = DecodeCSIStorageCapacity(*obj);
      error = c.error;
      capacities_[ObjKey(*obj)] = std::move(c);
      break;
    }
    case Kind::kNone:
      break;
  }
  if (kind == Kind::kCSINode) csi_nodes_view_.reset();
  view_.reset();
  return error.empty() ? absl::OkStatus() : absl::InvalidArgumentError(error);
}

void Catalog::OnObjectDelete(const api::Unstructured& obj) {
  const Kind kind = KindOf(obj);
  if (kind == Kind::kNone) return;
  absl::MutexLock l(&mu_);
  switch (kind) {
    case Kind::kPV:
      pvs_.erase(obj.metadata.name);
      break;
    case Kind::kPVC:
      pvcs_.erase(ObjKey(obj));
      break;
    case Kind::kStorageClass:
      classes_.erase(obj.metadata.name);
      break;
    case Kind::kCSINode:
      csi_nodes_.erase(obj.metadata.name);
      csi_nodes_view_.reset();
      break;
    case Kind::kCSIDriver:
      csi_drivers_.erase(obj.metadata.name);
      break;
    case Kind::kCSIStorageCapacity:
      capacities_.erase(ObjKey(obj));
      break;
    case Kind::kNone:
      break;
  }
  view_.reset();
}

void Catalog::Rebuild() {
  auto v = std::make_shared<View>();
  for (const auto& [name, sc] : classes_) {
    if (sc.is_default && sc.error.empty() && v->default_class.empty()) v->default_class = name;
  }
  v->classes = classes_;
  if (!csi_nodes_view_) {
    csi_nodes_view_ = std::make_shared<const std::unordered_map<std::string, CSINode>>(
        csi_nodes_.begin(), csi_nodes_.end());
  }
  v->csi_nodes = csi_nodes_view_;
  v->csi_drivers = csi_drivers_;
  for (const auto& [k, c] : capacities_) v->capacities.push_back(c);
  v->pvcs.reserve(pvcs_.size());
  v->pvcs.insert(pvcs_.begin(), pvcs_.end());
  v->pvs.reserve(pvs_.size());
  for (const auto& [claim, node] : assumed_provision_) {
    auto it = v->pvcs.find(claim);
    if (it == v->pvcs.end()) continue;
    auto c = std::make_shared<PersistentVolumeClaim>(*it->second);
    c->annotations[kAnnSelectedNode] = node;
    it->second = std::move(c);
  }
  for (const auto& [name, pv] : pvs_) {
    PVPtr p = pv;
    auto a = assumed_pv_.find(name);
    if (a != assumed_pv_.end()) {
      auto copy = std::make_shared<PersistentVolume>(*pv);
      const auto slash = a->second.find('/');
      ClaimRef ref{a->second.substr(0, slash), a->second.substr(slash + 1), ""};
      if (PVCPtr c = v->PVC(a->second)) ref.uid = c->uid;
      copy->claim_ref = ref;
      copy->phase = "Bound";
      p = std::move(copy);
    }
    v->pvs[name] = p;
    if (p->error.empty()) v->pvs_by_class[p->storage_class].push_back(p);
  }
  view_ = std::move(v);
}

const CSINode* View::CSINodeOf(const std::string& node_name) const {
  if (!csi_nodes) return nullptr;
  auto it = csi_nodes->find(node_name);
  return it == csi_nodes->end() ? nullptr : &it->second;
}

ViewPtr Catalog::Snapshot() {
  absl::MutexLock l(&mu_);
  if (!view_) Rebuild();
  return view_;
}

api::Status Catalog::Assume(const std::string& pod_uid, const PodVolumes& vols) {
  absl::MutexLock l(&mu_);
  for (const auto& b : vols.static_bindings) {
    auto pv = pvs_.find(b.pv);
    if (pv == pvs_.end())
      return absl::FailedPreconditionError("persistentvolume \"" + b.pv + "\" not found");
    auto a = assumed_pv_.find(b.pv);
    if (a != assumed_pv_.end() && a->second != b.claim) {
      return absl::FailedPreconditionError("persistentvolume \"" + b.pv +
                                           "\" was assumed for claim \"" + a->second + "\"");
    }
    const auto& ref = pv->second->claim_ref;
    if (ref && ref->Key() != b.claim) {
      return absl::FailedPreconditionError("persistentvolume \"" + b.pv +
                                           "\" is bound to claim \"" + ref->Key() + "\"");
    }
  }
  for (const auto& claim : vols.provisions) {
    auto c = pvcs_.find(claim);
    if (c == pvcs_.end())
      return absl::FailedPreconditionError("persistentvolumeclaim \"" + claim + "\" not found");
    if (!c->second->volume_name.empty()) {
      return absl::FailedPreconditionError("persistentvolumeclaim \"" + claim +
                                           "\" was bound meanwhile");
    }
  }
  for (const auto& b : vols.static_bindings) assumed_pv_[b.pv] = b.claim;
  for (const auto& claim : vols.provisions) assumed_provision_[claim] = vols.node;
  by_pod_[pod_uid] = vols;
  view_.reset();
  return absl::OkStatus();
}

void Catalog::Revert(const std::string& pod_uid) {
  absl::MutexLock l(&mu_);
  auto it = by_pod_.find(pod_uid);
  if (it == by_pod_.end()) return;
  for (const auto& b : it->second.static_bindings) {
    auto a = assumed_pv_.find(b.pv);
    if (a != assumed_pv_.end() && a->second == b.claim) assumed_pv_.erase(a);
  }
  for (const auto& c : it->second.provisions) assumed_provision_.erase(c);
  by_pod_.erase(it);
  view_.reset();
}

bool Catalog::CompleteLocked(const PodVolumes& vols, std::string* error) const {
  for (const auto& b : vols.static_bindings) {
    auto c = pvcs_.find(b.claim);
    if (c == pvcs_.end()) {
      *error = "persistentvolumeclaim \"" + b.claim + "\" was deleted";
      return false;
    }
    if (!pvs_.count(b.pv)) {
      *error = "persistentvolume \"" + b.pv + "\" was deleted";
      return false;
    }
    // Done when the PV controller has bound the claim to this PV (upstream checkBindings:
    // the PV's claimRef and a fully bound claim).
    if (c->second->volume_name != b.pv || !c->second->FullyBound()) return false;
  }
  for (const auto& claim : vols.provisions) {
    auto c = pvcs_.find(claim);
    if (c == pvcs_.end()) {
      *error = "persistentvolumeclaim \"" + claim + "\" was deleted";
      return false;
    }
    if (!c->second->FullyBound()) return false;
  }
  return true;
}

bool Catalog::BindingsComplete(const PodVolumes& vols, std::string* error) {
  absl::MutexLock l(&mu_);
  return CompleteLocked(vols, error);
}

bool Catalog::WaitForBindings(const PodVolumes& vols, absl::Duration timeout, std::string* error) {
  absl::MutexLock l(&mu_);
  struct Arg {
    const Catalog* self;
    const PodVolumes* vols;
    std::string* error;
  } arg{this, &vols, error};
  auto done = [](Arg* a) ABSL_NO_THREAD_SAFETY_ANALYSIS {
    return a->self->CompleteLocked(*a->vols, a->error) || !a->error->empty();
  };
  mu_.AwaitWithTimeout(absl::Condition(+done, &arg), timeout);
  return error->empty() && CompleteLocked(vols, error);
}

std::map<std::string, std::string> Catalog::Errors() const {
  absl::MutexLock l(&mu_);
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : pvs_) {
    if (!v->error.empty()) out["PersistentVolume " + k] = v->error;
  }
  for (const auto& [k, v] : pvcs_) {
    if (!v->error.empty()) out["PersistentVolumeClaim " + k] = v->error;
  }
  for (const auto& [k, v] : classes_) {
    if (!v.error.empty()) out["StorageClass " + k] = v.error;
  }
  for (const auto& [k, v] : csi_nodes_) {
    if (!v.error.empty()) out["CSINode " + k] = v.error;
  }
  for (const auto& [k, v] : csi_drivers_) {
    if (!v.error.empty()) out["CSIDriver " + k] = v.error;
  }
  for (const auto& [k, v] : capacities_) {
    if (!v.error.empty()) out["CSIStorageCapacity " + k] = v.error;
  }
  return out;
}

PVPtr FindMatchingVolume(const View& v, const PersistentVolumeClaim& claim, const api::Node* node,
                         const std::set<std::string>& exclude) {
  auto it = v.pvs_by_class.find(v.ClassOf(claim));
  if (it == v.pvs_by_class.end()) return nullptr;
  PVPtr smallest;
  for (const PVPtr& pv : it->second) {
    if (exclude.count(pv->name)) continue;
    const bool bound_here = BoundToClaim(*pv, claim);
    if (pv->claim_ref && !bound_here) continue;
    if (pv->capacity < claim.request) continue;
    if (pv->volume_mode != claim.volume_mode) continue;
    // pvutil.FindMatchingVolume with vacEnabled: the claim's and the PV's
    // volumeAttributesClassName must be equal ("" for unset), pre-bound PVs included.
    if (pv->volume_attributes_class != claim.volume_attributes_class) continue;
    if (pv->deleting) continue;
    const bool affinity = !node || NodeAffinityAdmits(*pv, *node);
    if (bound_here) return affinity ? pv : nullptr;  // pre-bound: this PV or none
    // An unset phase is Available (objects from manifests carry no status).
    if (!pv->phase.empty() && pv->phase != "Available") continue;
    if (claim.selector && !api::LabelSelectorMatches(*claim.selector, pv->labels)) continue;
    if (!affinity) continue;
    if (!HasAccessModes(pv->access_modes, claim.access_modes)) continue;
    if (!smallest || pv->capacity < smallest->capacity) smallest = pv;
  }
  return smallest;
}

Provision CheckProvision(const View& v, const PersistentVolumeClaim& claim, const api::Node& node) {
  const StorageClass* sc = v.Class(v.ClassOf(claim));
  if (!sc || sc->provisioner.empty() || sc->provisioner == kNoProvisioner) {
    return Provision::kNoProvision;
  }
  if (!sc->allowed_topologies.empty()) {
    bool any = false;
    for (const auto& term : sc->allowed_topologies) {
      any = any || api::NodeSelectorTermMatches(term, node.metadata.labels, node.metadata.name);
    }
    if (!any) return Provision::kNoProvision;
  }
  // Capacity: only for CSI drivers that publish it (upstream hasEnoughCapacity).
  auto d = v.csi_drivers.find(sc->provisioner);
  if (d == v.csi_drivers.end() || !d->second.storage_capacity) return Provision::kOk;
  return MatchingCapacity(v, *sc, claim, node) ? Provision::kOk : Provision::kNoCapacity;
}

const CSIStorageCapacity* MatchingCapacity(const View& v, const StorageClass& sc,
                                           const PersistentVolumeClaim& claim,
                                           const api::Node& node) {
  for (const auto& cap : v.capacities) {
    if (!cap.error.empty() || cap.storage_class != sc.name || !cap.node_topology) continue;
    const std::optional<int64_t>& size =
        cap.maximum_volume_size ? cap.maximum_volume_size : cap.capacity;
    if (!size || *size < claim.request) continue;
    if (api::LabelSelectorMatches(*cap.node_topology, node.metadata.labels)) return &cap;
  }
  return nullptr;
}

}  // namespace phalanx::volume
