// scheduler_perf's storage objects (see perf_objects.h).
#include "perf/perf_objects.h"

#include <fstream>
#include <sstream>

#include "api/decode.h"
#include "volume/objects.h"

namespace phalanx::perf {

namespace {

std::shared_ptr<const YAML::Node> Share(YAML::Node n) {
  return std::make_shared<const YAML::Node>(std::move(n));
}

// One template file: a single document of `kind` (apiVersion v1 or absent).
api::Status LoadOne(const std::string& path, const std::string& kind, YAML::Node* doc,
                    api::ObjectMeta* meta) {
  try {
    std::vector<YAML::Node> docs = YAML::LoadAllFromFile(path);
    size_t n = 0;
    for (const auto& d : docs) n += d.IsNull() ? 0 : 1;
    if (n != 1 || !docs[0].IsMap()) {
      return absl::InvalidArgumentError(path + ": expected one " + kind + " object, found " +
                                        std::to_string(n) + " documents");
    }
    *doc = docs[0];
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(path + ": invalid YAML: " + e.what());
  }
  const YAML::Node k = (*doc)["kind"];
  if (!k.IsScalar() || k.Scalar() != kind) {
    return absl::InvalidArgumentError(path + ": kind: expected " + kind + ", got " +
                                      (k.IsScalar() ? "\"" + k.Scalar() + "\"" : "none"));
  }
  const YAML::Node v = (*doc)["apiVersion"];
  if (v.IsDefined() && !v.IsNull() && (!v.IsScalar() || v.Scalar() != "v1")) {
    return absl::InvalidArgumentError(path + ": apiVersion: expected v1 for " + kind);
  }
  // The metadata as the decoder reads it (a placeholder name: templates have none).
  YAML::Node probe = YAML::Clone(*doc);
  probe["apiVersion"] = "v1";
  probe["metadata"]["name"] = "template";
  probe["metadata"].remove("generateName");
  api::Manifests m;
  if (auto s = api::DecodeManifestNode(probe, path, &m); !s.ok()) return s;
  for (const auto& u : m.objects) {
    if (u.kind == kind) {
      *meta = u.metadata;
      meta->name.clear();
      meta->namespace_.clear();
      meta->uid.clear();
      meta->resource_version.clear();
      return absl::OkStatus();
    }
  }
  return absl::InvalidArgumentError(path + ": " + kind + " not decoded");
}

api::Unstructured Object(const char* kind, const api::ObjectMeta& meta, const std::string& ns,
                         const std::string& name, YAML::Node doc) {
  api::Unstructured u;
  u.api_version = "v1";
  u.kind = kind;
  u.metadata = meta;
  u.metadata.name = name;
  u.metadata.namespace_ = ns;
  doc["apiVersion"] = "v1";
  doc["metadata"]["name"] = name;
  doc["metadata"].remove("generateName");
  if (!ns.empty()) doc["metadata"]["namespace"] = ns;
  u.object = Share(std::move(doc));
  return u;
}

// `doc` with status.phase = `phase` (a fresh tree).
api::Unstructured WithPhase(const api::Unstructured& u, const char* phase) {
  return volume::WithField(u, {"status", "phase"}, phase);
}

}  // namespace

api::Unstructured MakeCSINode(const std::string& node_name, const NodeStrategy& strategy) {
  std::string migrated;
  for (const auto& p : strategy.migrated_plugins) migrated += (migrated.empty() ? "" : ",") + p;
  YAML::Node doc;
  doc["apiVersion"] = "storage.k8s.io/v1";
  doc["kind"] = "CSINode";
  doc["metadata"]["name"] = node_name;
  doc["metadata"]["annotations"][kAnnMigratedPlugins] = migrated;
  YAML::Node drivers(YAML::NodeType::Sequence);
  for (const auto& [driver, count] : strategy.csi_node_allocatable) {
    YAML::Node d;
    d["name"] = driver;
    d["nodeID"] = node_name;
    if (count) d["allocatable"]["count"] = *count;
    drivers.push_back(d);
  }
  doc["spec"]["drivers"] = drivers;
  api::Unstructured u;
  u.api_version = "storage.k8s.io/v1";
  u.kind = "CSINode";
  u.metadata.name = node_name;
  u.metadata.annotations[kAnnMigratedPlugins] = migrated;
  u.object = Share(std::move(doc));
  return u;
}

api::Status LoadVolumeTemplates(const std::string& pv_path, const std::string& pvc_path,
                                VolumeTemplates* out) {
  *out = VolumeTemplates{};
  out->pv_path = pv_path;
  out->pvc_path = pvc_path;
  if (auto s = LoadOne(pv_path, "PersistentVolume", &out->pv, &out->pv_meta); !s.ok()) return s;
  if (auto s = LoadOne(pvc_path, "PersistentVolumeClaim", &out->pvc, &out->pvc_meta); !s.ok()) {
    return s;
  }
  // The objects made from them must be valid storage objects.
  PodVolumeObjects probe = MakePodVolumeObjects(*out, "namespace", 0);
  auto pv = volume::DecodePersistentVolume(std::make_shared<const api::Unstructured>(probe.pv));
  if (!pv.error.empty()) return absl::InvalidArgumentError(pv_path + ": " + pv.error);
  auto pvc =
      volume::DecodePersistentVolumeClaim(std::make_shared<const api::Unstructured>(probe.pvc));
  if (!pvc.error.empty()) return absl::InvalidArgumentError(pvc_path + ": " + pvc.error);
  return absl::OkStatus();
}

PodVolumeObjects MakePodVolumeObjects(const VolumeTemplates& t, const std::string& ns, int64_t i) {
  PodVolumeObjects o;
  const std::string volume_id = "vol-" + std::to_string(i);
  o.claim_name = "pvc-" + std::to_string(i);
  // PVs are cluster-wide: upstream prepends the namespace to make the name unique.
  YAML::Node pv = YAML::Clone(t.pv);
  YAML::Node spec = pv["spec"];
  if (spec["csi"].IsMap()) {
    spec["csi"]["volumeHandle"] = volume_id;
  } else if (spec["awsElasticBlockStore"].IsMap()) {
    spec["awsElasticBlockStore"]["volumeID"] = volume_id;
  }
  YAML::Node ref;
  ref["apiVersion"] = "v1";
  ref["kind"] = "PersistentVolumeClaim";
  ref["namespace"] = ns;
  ref["name"] = o.claim_name;
  spec["claimRef"] = ref;
  pv.remove("status");
  o.pv_created =
      WithPhase(Object("PersistentVolume", t.pv_meta, "", ns + "-" + volume_id, pv), "Pending");
  o.pv = WithPhase(o.pv_created, "Bound");
  YAML::Node pvc = YAML::Clone(t.pvc);
  pvc.remove("status");
  o.pvc_created =
      WithPhase(Object("PersistentVolumeClaim", t.pvc_meta, ns, o.claim_name, pvc), "Pending");
  o.pvc = WithPhase(o.pvc_created, "Bound");
  return o;
}

bool FakePVControllerSync(const api::Unstructured& pv, const api::Unstructured& claim,
                          api::Unstructured* updated) {
  if (!pv.object) return false;
  const YAML::Node& doc = *pv.object;
  if (!doc["spec"].IsDefined() || !doc["spec"]["claimRef"].IsDefined() ||
      !doc["spec"]["claimRef"].IsMap()) {
    return false;
  }
  if (claim.object) {
    const YAML::Node& c = *claim.object;
    if (c["spec"].IsDefined() && c["spec"]["volumeName"].IsDefined() &&
        c["spec"]["volumeName"].IsScalar() && !c["spec"]["volumeName"].Scalar().empty()) {
      return false;
    }
  }
  *updated = volume::WithField(claim, {"spec", "volumeName"}, pv.metadata.name);
  *updated = volume::WithAnnotation(*updated, volume::kAnnBindCompleted, "yes");
  return true;
}

}  // namespace phalanx::perf
