#include "sim/dra_claims.h"

#include <yaml-cpp/yaml.h>

#include <functional>
#include <memory>
#include <optional>
#include <utility>

#include "dra/model.h"

namespace phalanx::sim {

namespace {

std::string Key(const std::string& kind, const std::string& ns, const std::string& name) {
  return kind + "." + dra::kGroup + "/" + ns + "/" + name;
}

// Five characters of names.SimpleNameGenerator's alphabet (k8s.io/apiserver
// pkg/storage/names/generate.go: "bcdfghjklmnpqrstvwxz2456789"), from a hash of `seed`.
std::string Suffix(const std::string& seed) {
  static constexpr char kAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : seed) h = (h ^ c) * 1099511628211ull;
  std::string out;
  for (int i = 0; i < 5; ++i) {
    out.push_back(kAlphabet[h % 27]);
    h /= 27;
  }
  return out;
}

}  // namespace

// A claim from template ns/`tmpl_name` for owner `owner` (named after it, as the
// controller's generateName "<owner>-<entry>-"), created in the store unless it exists.
// Returns the claim's name. Errors: the template is missing or invalid.
api::StatusOr<std::string> DraClaimController::ClaimFromTemplate(const std::string& ns,
                                                                 const std::string& what,
                                                                 const std::string& entry,
                                                                 const std::string& tmpl_name,
                                                                 const api::OwnerReference& owner) {
  api::UnstructuredPtr tobj = store_.GetObject(Key("ResourceClaimTemplate", ns, tmpl_name));
  if (!tobj) {
    return absl::NotFoundError(what + ": spec.resourceClaims \"" + entry +
                               "\": resource claim template \"" + tmpl_name + "\" not found");
  }
  auto tmpl = dra::ParseResourceClaimTemplate(*tobj);
  if (!tmpl.ok()) return tmpl.status();
  api::Unstructured claim;
  claim.api_version = "resource.k8s.io/v1";
  claim.kind = "ResourceClaim";
  claim.metadata.namespace_ = ns;
  claim.metadata.name = dra::GeneratedClaimName(owner.name, entry, Suffix(owner.uid + "/" + entry));
  claim.metadata.labels = tmpl->claim_metadata.labels;
  claim.metadata.annotations = tmpl->claim_metadata.annotations;
  claim.metadata.annotations[dra::kPodClaimNameAnnotation] = entry;
  claim.metadata.owner_references.push_back(owner);
  YAML::Node doc;
  doc["apiVersion"] = claim.api_version;
  doc["kind"] = claim.kind;
  doc["metadata"]["name"] = claim.metadata.name;
  doc["metadata"]["namespace"] = ns;
  doc["metadata"]["annotations"][dra::kPodClaimNameAnnotation] = entry;
  const YAML::Node tspec = (*tobj->object)["spec"]["spec"];
  doc["spec"] = tspec.IsDefined() ? YAML::Clone(tspec) : YAML::Node(YAML::NodeType::Map);
  claim.object = std::make_shared<const YAML::Node>(doc);
  std::string name = claim.metadata.name;
  if (auto s = store_.CreateObject(std::move(claim)); !s.ok() && !absl::IsAlreadyExists(s)) {
    return s;
  }
  return name;
}

// KEP-5729 "Create": the PodGroup's claim for entry `entry` (generated once, owned by the
// PodGroup, recorded in its status.resourceClaimStatuses). Returns the claim's name.
api::StatusOr<std::string> DraClaimController::PodGroupClaim(
    const api::UnstructuredPtr& pg_obj, const dra::PodGroupClaims& pg,
    const dra::PodGroupResourceClaim& entry) {
  if (auto it = pg.statuses.find(entry.name); it != pg.statuses.end()) return it->second;
  const std::string& ns = pg.metadata.namespace_;
  auto name = ClaimFromTemplate(ns, "PodGroup " + ns + "/" + pg.metadata.name, entry.name,
                                entry.resource_claim_template_name,
                                api::OwnerReference{pg_obj->api_version, "PodGroup",
                                                    pg.metadata.name, pg.metadata.uid, true});
  if (!name.ok()) return name;
  api::Unstructured updated = *pg_obj;
  YAML::Node doc = YAML::Clone(*pg_obj->object);
  YAML::Node st;
  st["name"] = entry.name;
  st["resourceClaimName"] = *name;
  doc["status"]["resourceClaimStatuses"].push_back(st);
  updated.object = std::make_shared<const YAML::Node>(doc);
  if (auto s = store_.UpdateObject(std::move(updated)); !s.ok()) return s;
  return name;
}

api::Status DraClaimController::OnPodCreated(const std::string& ns, const std::string& name) {
  api::PodPtr pod = store_.GetPod(ns, name);
  if (!pod) return absl::NotFoundError("pod " + ns + "/" + name + " not found");
  std::vector<api::PodResourceClaimStatus> statuses = pod->status.resource_claim_statuses;
  // The pod's scheduling.k8s.io PodGroup (KEP-5729), when it exists and lists claims.
  api::UnstructuredPtr pg_obj;
  if (const std::string& pg = pod->spec.scheduling_group_pod_group_name; !pg.empty()) {
    pg_obj =
        store_.GetObject(std::string("PodGroup.") + dra::kPodGroupApiGroup + "/" + ns + "/" + pg);
  }
  bool changed = false;
  for (const auto& pc : pod->spec.resource_claims) {
    if (pc.resource_claim_template_name.empty()) continue;
    bool recorded = false;
    for (const auto& s : statuses) recorded = recorded || s.name == pc.name;
    if (recorded) continue;
    api::StatusOr<std::string> claim_name = std::string();
    std::optional<dra::PodGroupClaims> group;
    if (pg_obj) {
      auto g = dra::ParsePodGroupClaims(*pg_obj);
      if (!g.ok()) return g.status();
      group = std::move(*g);
    }
    if (const dra::PodGroupResourceClaim* entry = group ? group->Match(pc) : nullptr) {
      claim_name = PodGroupClaim(pg_obj, *group, *entry);
      pg_obj = store_.GetObject(pg_obj->Key());  // with the status just written
    } else {
      claim_name = ClaimFromTemplate(
          ns, "Pod " + pod->Key(), pc.name, pc.resource_claim_template_name,
          api::OwnerReference{"v1", "Pod", pod->metadata.name, pod->metadata.uid, true});
    }
    if (!claim_name.ok()) return claim_name.status();
    statuses.push_back(api::PodResourceClaimStatus{pc.name, *claim_name});
    changed = true;
  }
  if (!changed) return absl::OkStatus();
  api::Pod updated = *pod;
  updated.status.resource_claim_statuses = std::move(statuses);
  return store_.UpdatePod(std::move(updated));
}

void DraClaimController::OnPodGone(const api::Pod& pod) {
  // The claim the scheduler created for the pod's extended resources backed by DRA
  // (KEP-5004): owned by the pod, so the garbage collector deletes it.
  if (const auto& ext = pod.status.extended_resource_claim_status; ext) {
    api::UnstructuredPtr obj =
        store_.GetObject(Key("ResourceClaim", pod.metadata.namespace_, ext->resource_claim_name));
    bool owned = false;
    for (const auto& o :
         obj ? obj->metadata.owner_references : std::vector<api::OwnerReference>{}) {
      owned = owned || (o.controller && o.uid == pod.metadata.uid);
    }
    if (owned) (void)store_.DeleteObject(*obj);
  }
  for (const auto& pc : pod.spec.resource_claims) {
    std::string name = pc.resource_claim_name;
    if (name.empty()) {
      for (const auto& s : pod.status.resource_claim_statuses) {
        if (s.name == pc.name) name = s.resource_claim_name;
      }
    }
    if (name.empty()) continue;
    api::UnstructuredPtr obj =
        store_.GetObject(Key("ResourceClaim", pod.metadata.namespace_, name));
    if (!obj) continue;
    bool owned = false;
    for (const auto& o : obj->metadata.owner_references) {
      owned = owned || (o.controller && o.uid == pod.metadata.uid);
    }
    if (owned) {  // the garbage collector deletes the pod's generated claim
      (void)store_.DeleteObject(*obj);
      continue;
    }
    auto claim = dra::ParseResourceClaim(*obj);
    if (!claim.ok()) continue;
    const size_t before = claim->reserved_for.size();
    std::erase_if(claim->reserved_for,
                  [&](const dra::ConsumerReference& r) { return r.uid == pod.metadata.uid; });
    if (claim->reserved_for.size() == before) continue;
    if (claim->reserved_for.empty()) claim->allocation.reset();  // the last consumer went
    (void)store_.UpdateObject(dra::WithClaimStatus(*obj, *claim));
  }
}

}  // namespace phalanx::sim
