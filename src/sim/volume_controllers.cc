#include "sim/volume_controllers.h"

#include <yaml-cpp/yaml.h>

#include "volume/catalog.h"

namespace phalanx::sim {

namespace {

std::string ClaimObjKey(const std::string& ns, const std::string& name) {
  return "PersistentVolumeClaim./" + ns + "/" + name;
}
std::string PVObjKey(const std::string& name) { return "PersistentVolume.//" + name; }

// n[key] when n is a map that has it, else an undefined node (a missing key of a const
// yaml-cpp node is an invalid node whose type queries throw).
YAML::Node Field(const YAML::Node& n, const char* key) {
  if (!n.IsDefined() || !n.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
  const YAML::Node v = n[key];
  return v.IsDefined() ? v : YAML::Node(YAML::NodeType::Undefined);
}

// A catalog of every storage object in the store (for class lookups and PV matching).
volume::ViewPtr StorageView(const store::Store& store) {
  volume::Catalog c;
  // An invalid object is kept with its error (Catalog::Errors); the lookups skip it.
  for (const auto& o : store.ListObjects()) c.OnObjectAdd(o).IgnoreError();
  return c.Snapshot();
}

}  // namespace

void VolumeControllers::Attach() {
  store_.AddObjectHandlers(
      {[this](const api::UnstructuredPtr& o) { OnObject(*o); },
       [this](const api::UnstructuredPtr&, const api::UnstructuredPtr& o) { OnObject(*o); },
       nullptr});
  store_.AddPodHandlers({[this](const api::PodPtr& p) { OnPod(*p); }, nullptr, nullptr});
}

void VolumeControllers::OnPod(const api::Pod& pod) {
  for (const auto& v : pod.spec.volumes) {
    if (!v.ephemeral_claim_template) continue;
    const std::string name = pod.metadata.name + "-" + v.name;
    if (store_.GetObject(ClaimObjKey(pod.metadata.namespace_, name))) continue;
    const YAML::Node& tpl = *v.ephemeral_claim_template;
    api::Unstructured u;
    u.api_version = "v1";
    u.kind = "PersistentVolumeClaim";
    u.metadata.name = name;
    u.metadata.namespace_ = pod.metadata.namespace_;
    u.metadata.owner_references.push_back(
        {"v1", "Pod", pod.metadata.name, pod.metadata.uid, /*controller=*/true});
    YAML::Node doc;
    doc["apiVersion"] = "v1";
    doc["kind"] = "PersistentVolumeClaim";
    doc["metadata"]["name"] = name;
    doc["metadata"]["namespace"] = pod.metadata.namespace_;
    const YAML::Node meta = Field(tpl, "metadata");
    for (const char* field : {"labels", "annotations"}) {
      if (!Field(meta, field).IsMap()) continue;
      doc["metadata"][field] = YAML::Clone(meta[field]);
      for (const auto& kv : meta[field]) {
        auto& m = std::string(field) == "labels" ? u.metadata.labels : u.metadata.annotations;
        m[kv.first.Scalar()] = kv.second.IsScalar() ? kv.second.Scalar() : "";
      }
    }
    YAML::Node owner;
    owner["apiVersion"] = "v1";
    owner["kind"] = "Pod";
    owner["name"] = pod.metadata.name;
    owner["uid"] = pod.metadata.uid;
    owner["controller"] = true;
    doc["metadata"]["ownerReferences"].push_back(owner);
    if (Field(tpl, "spec").IsDefined()) doc["spec"] = YAML::Clone(Field(tpl, "spec"));
    u.object = std::make_shared<const YAML::Node>(doc);
    (void)store_.CreateObject(std::move(u));  // AlreadyExists: a concurrent creation
  }
}

void VolumeControllers::OnObject(const api::Unstructured& obj) {
  const volume::Kind kind = volume::KindOf(obj);
  if (kind == volume::Kind::kPV) {
    auto self = std::make_shared<const api::Unstructured>(obj);
    volume::PersistentVolume pv = volume::DecodePersistentVolume(self);
    if (pv.error.empty() && pv.claim_ref) BindClaim(obj, pv.claim_ref->Key());
    return;
  }
  if (kind != volume::Kind::kPVC) return;
  auto self = std::make_shared<const api::Unstructured>(obj);
  volume::PersistentVolumeClaim c = volume::DecodePersistentVolumeClaim(self);
  if (!c.error.empty() || c.deleting || c.FullyBound()) return;
  if (!c.volume_name.empty()) {
    CompletePreBound(c);
    return;
  }
  auto sel = c.annotations.find(volume::kAnnSelectedNode);
  if (sel != c.annotations.end()) {
    Provision(obj, sel->second);
  } else {
    BindImmediate(obj);
  }
}

void VolumeControllers::BindClaim(const api::Unstructured& pv_obj, const std::string& claim_key) {
  const auto slash = claim_key.find('/');
  api::UnstructuredPtr claim =
      store_.GetObject(ClaimObjKey(claim_key.substr(0, slash), claim_key.substr(slash + 1)));
  if (!claim) return;
  volume::PersistentVolumeClaim c = volume::DecodePersistentVolumeClaim(claim);
  if (!c.error.empty()) return;
  if (c.volume_name.empty() || (c.volume_name == pv_obj.metadata.name && !c.FullyBound())) {
    api::Unstructured u = volume::WithField(*claim, {"spec", "volumeName"}, pv_obj.metadata.name);
    u = volume::WithAnnotation(u, volume::kAnnBindCompleted, "yes");
    u = volume::WithField(u, {"status", "phase"}, "Bound");
    (void)store_.UpdateObject(std::move(u));
  }
  api::UnstructuredPtr pv = store_.GetObject(pv_obj.Key());  // (manifests may give it a namespace)
  if (!pv) return;
  const YAML::Node phase = Field(Field(*pv->object, "status"), "phase");
  if (!phase.IsScalar() || phase.Scalar() != "Bound") {
    (void)store_.UpdateObject(volume::WithField(*pv, {"status", "phase"}, "Bound"));
  }
}

void VolumeControllers::CompletePreBound(const volume::PersistentVolumeClaim& c) {
  api::UnstructuredPtr pv_obj = store_.GetObject(PVObjKey(c.volume_name));
  if (!pv_obj) return;  // a PV that does not exist: the claim stays Pending
  volume::PersistentVolume pv = volume::DecodePersistentVolume(pv_obj);
  if (!pv.error.empty()) return;
  if (!pv.claim_ref) {
    // checkVolumeSatisfyClaim: class, capacity, access modes, volume mode.
    volume::ViewPtr v = StorageView(store_);
    if (pv.storage_class != v->ClassOf(c) || pv.capacity < c.request ||
        !volume::HasAccessModes(pv.access_modes, c.access_modes) ||
        pv.volume_mode != c.volume_mode) {
      return;
    }
    // The PV's update comes back through OnObject, which completes the claim.
    (void)store_.UpdateObject(volume::WithClaimRef(*pv_obj, c));
    return;
  }
  if (pv.claim_ref->Key() == c.Key() && (pv.claim_ref->uid.empty() || pv.claim_ref->uid == c.uid)) {
    BindClaim(*pv_obj, c.Key());
  }
  // Held by another claim: the claim stays Pending (the user asked for a taken PV).
}

void VolumeControllers::Provision(const api::Unstructured& claim_obj, const std::string& node) {
  auto self = std::make_shared<const api::Unstructured>(claim_obj);
  volume::PersistentVolumeClaim c = volume::DecodePersistentVolumeClaim(self);
  volume::ViewPtr v = StorageView(store_);
  const std::string cls = v->ClassOf(c);
  const volume::StorageClass* sc = v->Class(cls);
  if (!sc || sc->provisioner.empty() || sc->provisioner == volume::kNoProvisioner) return;
  const std::string name = "pvc-" + c.uid;
  if (store_.GetObject(PVObjKey(name))) return;
  std::string hostname = node;
  if (api::NodePtr n = store_.GetNode(node)) {
    auto it = n->metadata.labels.find("kubernetes.io/hostname");
    if (it != n->metadata.labels.end()) hostname = it->second;
  }
  YAML::Node doc;
  doc["apiVersion"] = "v1";
  doc["kind"] = "PersistentVolume";
  doc["metadata"]["name"] = name;
  doc["metadata"]["annotations"]["pv.kubernetes.io/provisioned-by"] = sc->provisioner;
  doc["spec"]["storageClassName"] = cls;
  doc["spec"]["capacity"]["storage"] = std::to_string(c.request);
  for (const auto& m : c.access_modes) doc["spec"]["accessModes"].push_back(m);
  doc["spec"]["volumeMode"] = c.volume_mode;
  YAML::Node req;
  req["key"] = "kubernetes.io/hostname";
  req["operator"] = "In";
  req["values"].push_back(hostname);
  YAML::Node term;
  term["matchExpressions"].push_back(req);
  doc["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"].push_back(term);
  doc["spec"]["claimRef"]["apiVersion"] = "v1";
  doc["spec"]["claimRef"]["kind"] = "PersistentVolumeClaim";
  doc["spec"]["claimRef"]["namespace"] = c.namespace_;
  doc["spec"]["claimRef"]["name"] = c.name;
  doc["spec"]["claimRef"]["uid"] = c.uid;
  doc["status"]["phase"] = "Bound";
  api::Unstructured u;
  u.api_version = "v1";
  u.kind = "PersistentVolume";
  u.metadata.name = name;
  u.metadata.annotations["pv.kubernetes.io/provisioned-by"] = sc->provisioner;
  u.object = std::make_shared<const YAML::Node>(doc);
  (void)store_.CreateObject(std::move(u));  // its add event binds the claim (OnObject)
}

void VolumeControllers::BindImmediate(const api::Unstructured& claim_obj) {
  auto self = std::make_shared<const api::Unstructured>(claim_obj);
  volume::PersistentVolumeClaim c = volume::DecodePersistentVolumeClaim(self);
  volume::ViewPtr v = StorageView(store_);
  const std::string cls = v->ClassOf(c);
  const volume::StorageClass* sc = v->Class(cls);
  if (!cls.empty() && (!sc || sc->WaitForFirstConsumer())) return;  // the scheduler's job
  volume::PVPtr pv = volume::FindMatchingVolume(*v, c, nullptr, {});
  if (!pv) return;
  if (pv->claim_ref) {  // pre-bound to this claim
    BindClaim(*pv->object, c.Key());
    return;
  }
  (void)store_.UpdateObject(volume::WithClaimRef(*pv->object, c));
}

}  // namespace phalanx::sim
