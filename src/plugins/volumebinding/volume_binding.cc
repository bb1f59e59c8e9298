#include "plugins/volumebinding/volume_binding.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>

#include "framework/handle.h"
#include "plugins/helper/args.h"
#include "plugins/helper/validation.h"

namespace phalanx::plugins::volumebinding {

namespace {

constexpr const char* kStateKey = "PreFilterVolumeBinding";
constexpr const char* kArgsKind = "VolumeBindingArgs";
constexpr int64_t kMaxCustomPriorityScore = 10;  // upstream config.MaxCustomPriorityScore

using framework::Status;

// What PreFilter found (upstream stateData).
struct StateData final : framework::StateData {
  volume::ViewPtr view;
  std::vector<volume::PVCPtr> bound;    // claims with spec.volumeName
  std::vector<volume::PVCPtr> to_bind;  // unbound WaitForFirstConsumer claims, smallest first
  std::set<std::string> taken;          // PVs held by in-flight pods on the view
  std::shared_ptr<Choices> choices = std::make_shared<Choices>();
  bool all_bound = true;  // set by Reserve
  std::unique_ptr<framework::StateData> Clone() const override {
    auto c = std::make_unique<StateData>(*this);
    c->choices = std::make_shared<Choices>();
    absl::MutexLock a(&choices->mu);
    absl::MutexLock b(&c->choices->mu);
    c->choices->by_node = choices->by_node;
    return c;
  }
};

bool OwnedBy(const volume::PersistentVolumeClaim& c, const api::Pod& pod) {
  for (const auto& o : c.owner_references) {
    if (o.controller && o.kind == "Pod" && (o.uid == pod.metadata.uid || o.uid.empty()) &&
        o.name == pod.metadata.name) {
      return true;
    }
  }
  return false;
}

Status Unresolvable(std::string msg) {
  return Status(framework::Code::kUnschedulableAndUnresolvable, std::move(msg));
}

// Whether the claim exists, is not being deleted and (ephemeral) belongs to the pod; run
// on every claim of the pod before any is classified, so that these reasons come first,
// as upstream's PreFilter checks them all (podHasPVCs) before GetPodVolumeClaims.
Status CheckExists(const volume::View& v, const api::Pod& pod, const PodClaim& pc) {
  const std::string key = pod.metadata.namespace_ + "/" + pc.name;
  volume::PVCPtr c = v.PVC(key);
  if (!c) {
    if (pc.ephemeral) {
      return Unresolvable(
          "waiting for ephemeral volume controller to create the "
          "persistentvolumeclaim \"" +
          pc.name + "\"");
    }
    return Unresolvable("persistentvolumeclaim \"" + pc.name + "\" not found");
  }
  if (c->deleting)
    return Unresolvable("persistentvolumeclaim \"" + pc.name + "\" is being deleted");
  if (pc.ephemeral && !OwnedBy(*c, pod)) {
    return Unresolvable("PVC " + key + " was not created for pod " + pod.Key() +
                        " (pod is not owner)");
  }
  return Status::Success();
}

// Classifies one claim of `pod` (CheckExists passed) into *d; a non-success status
// rejects the pod.
Status Classify(const volume::View& v, const api::Pod& pod, const PodClaim& pc, StateData* d) {
  const std::string key = pod.metadata.namespace_ + "/" + pc.name;
  volume::PVCPtr c = v.PVC(key);
  if (!c->error.empty()) return Unresolvable(c->error);
  if (!c->volume_name.empty()) {
    if (volume::PVPtr pv = v.PV(c->volume_name); pv && !pv->error.empty()) {
      return Unresolvable(pv->error);
    }
    // Pre-bound (spec.volumeName) but not bind-completed: the PV controller has not
    // bound it (yet, or ever: its PV may be missing or held by another claim). Upstream
    // treats it as an unbound Immediate claim (binder.go GetPodVolumeClaims: "Prebound
    // PVCs are treated as unbound immediate binding").
    if (!c->FullyBound()) return Unresolvable(kReasonUnboundImmediate);
    d->bound.push_back(c);
    return Status::Success();
  }
  const std::string cls = v.ClassOf(*c);
  if (cls.empty()) return Unresolvable(kReasonUnboundImmediate);  // no class: Immediate
  const volume::StorageClass* sc = v.Class(cls);
  if (!sc) {
    return Unresolvable("persistentvolumeclaim \"" + key + "\": storageclass.storage.k8s.io \"" +
                        cls + "\" not found");
  }
  if (!sc->error.empty())
    return Unresolvable("persistentvolumeclaim \"" + key + "\": " + sc->error);
  if (!sc->WaitForFirstConsumer()) return Unresolvable(kReasonUnboundImmediate);
  d->to_bind.push_back(c);
  return Status::Success();
}

}  // namespace

std::vector<PodClaim> PodClaims(const api::Pod& pod) {
  std::vector<PodClaim> out;
  for (const auto& v : pod.spec.volumes) {
    if (v.ephemeral_claim_template) {
      out.push_back({pod.metadata.name + "-" + v.name, true});
    } else if (!v.persistent_volume_claim.empty()) {
      out.push_back({v.persistent_volume_claim, false});
    }
  }
  return out;
}

namespace {

// Decodes `shape` (a list of {utilization, score}) into *out; type errors into *errs.
void ReadShape(const YAML::Node& n, std::vector<noderesources::UtilizationShapePoint>* out,
               helper::FieldErrors* errs) {
  if (!n.IsSequence()) {
    errs->TypeInvalid("shape", "must be a list");
    return;
  }
  for (size_t i = 0; i < n.size(); ++i) {
    const std::string p = "shape[" + std::to_string(i) + "]";
    noderesources::UtilizationShapePoint pt;
    if (helper::CheckMap(n[i], p, {"utilization", "score"}, errs)) {
      helper::ReadInt(n[i]["utilization"], p + ".utilization", &pt.utilization, errs);
      helper::ReadInt(n[i]["score"], p + ".score", &pt.score, errs);
    }  // a null entry is a zero point, as upstream's decoding makes it
    out->push_back(pt);
  }
}

// Upstream validation.go validateFunctionShape (path "shape").
void ValidateShape(const std::vector<noderesources::UtilizationShapePoint>& shape,
                   helper::FieldErrors* errs) {
  if (shape.empty()) {
    errs->Required("shape", "at least one point must be specified");
    return;
  }
  for (size_t i = 1; i < shape.size(); ++i) {
    if (shape[i - 1].utilization >= shape[i].utilization) {
      errs->Invalid("shape[" + std::to_string(i) + "].utilization", shape[i].utilization,
                    "utilization values must be sorted in increasing order");
      break;
    }
  }
  for (size_t i = 0; i < shape.size(); ++i) {
    const std::string p = "shape[" + std::to_string(i) + "]";
    if (shape[i].utilization < 0 || shape[i].utilization > 100) {
      errs->Invalid(p + ".utilization", shape[i].utilization, "not in valid range [0, 100]");
    }
    if (shape[i].score < 0 || shape[i].score > kMaxCustomPriorityScore) {
      errs->Invalid(p + ".score", shape[i].score, "not in valid range [0, 10]");
    }
  }
}

}  // namespace

framework::StatusOr<VolumeBindingArgs> ParseVolumeBindingArgs(framework::PluginArgs args) {
  VolumeBindingArgs out;
  helper::FieldErrors errs;
  bool has_content = false;
  if (!helper::CheckArgsMap(args, kArgsKind, {"bindTimeoutSeconds", "shape"}, &errs,
                            &has_content)) {
    return helper::ArgsError(errs, kArgsKind);
  }
  if (!has_content) return out;
  helper::ReadInt((*args)["bindTimeoutSeconds"], "bindTimeoutSeconds", &out.bind_timeout_seconds,
                  &errs);
  if (errs.empty() && out.bind_timeout_seconds < 0) {
    return Status::Error(std::string(kArgsKind) + ": bindTimeoutSeconds: Invalid value: " +
                         std::to_string(out.bind_timeout_seconds) +
                         ": must be greater than or equal to 0");
  }
  const YAML::Node shape = (*args)["shape"];
  if (shape.IsDefined() && !shape.IsNull()) {
    std::vector<noderesources::UtilizationShapePoint> points;
    ReadShape(shape, &points, &errs);
    if (!errs.empty()) return helper::ArgsError(errs, kArgsKind);
    if (points.empty()) {
      // SetDefaults_VolumeBindingArgs with StorageCapacityScoring on: most free capacity first.
      points = {{0, kMaxCustomPriorityScore}, {100, 0}};
    }
    ValidateShape(points, &errs);
    out.shape = std::move(points);
  }
  if (!errs.empty()) return helper::ArgsError(errs, kArgsKind);
  return out;
}

namespace {
std::vector<noderesources::UtilizationShapePoint> ScaleShape(
    const std::vector<noderesources::UtilizationShapePoint>& shape) {
  std::vector<noderesources::UtilizationShapePoint> out;
  for (const auto& p : shape) {
    out.push_back({p.utilization, p.score * (framework::kMaxNodeScore / kMaxCustomPriorityScore)});
  }
  return out;
}
}  // namespace

CapacityScorer::CapacityScorer(const std::vector<noderesources::UtilizationShapePoint>& shape)
    : f_(ScaleShape(shape)) {}

int64_t CapacityScorer::operator()(const std::map<std::string, StorageResource>& classes) const {
  constexpr int64_t kMaxUtilization = 100;
  int64_t sum = 0;
  int64_t n = 0;
  for (const auto& [cls, r] : classes) {
    if (r.capacity <= 0 || r.requested > r.capacity) {
      sum += f_(kMaxUtilization);
    } else {
      sum += f_(noderesources::ScaledUtilization(r.requested, r.capacity, kMaxUtilization));
    }
    ++n;
  }
  if (n == 0) return 0;
  return (2 * sum + n) / (2 * n);  // math.Round of a non-negative mean
}

framework::StatusOr<std::unique_ptr<framework::Plugin>> VolumeBinding::New(
    framework::PluginArgs args, framework::Handle& h) {
  auto parsed = ParseVolumeBindingArgs(args);
  if (!parsed.ok()) return parsed.status();
  return std::unique_ptr<framework::Plugin>(
      new VolumeBinding(h.Service<volume::Catalog>(), &h, parsed.value()));
}

std::set<std::string> VolumeBinding::TakenByInFlight(const std::string& self_uid) {
  std::set<std::string> taken;
  absl::MutexLock l(&inflight_mu_);
  const framework::NodeInfoLister& lister = handle_->SnapshotSharedLister();
  for (auto it = inflight_.begin(); it != inflight_.end();) {
    if (it->first == self_uid) {
      ++it;
      continue;
    }
    bool on_view = false;
    absl::MutexLock cl(&it->second->mu);
    for (const auto& [node, vols] : it->second->by_node) {
      const framework::NodeInfo* ni = lister.Get(node);
      if (!ni) continue;
      for (const auto& p : ni->pods()) {
        if (p->pod->metadata.uid != it->first) continue;
        on_view = true;
        for (const auto& b : vols.static_bindings) taken.insert(b.pv);
        break;
      }
      if (on_view) break;
    }
    if (on_view) {
      ++it;
    } else {
      it = inflight_.erase(it);  // its trial was reverted or it failed: its choices are void
    }
  }
  return taken;
}

Status VolumeBinding::PreFilter(framework::CycleState& state, const framework::PodInfo& pod,
                                framework::PreFilterResult*) {
  const std::vector<PodClaim> claims = PodClaims(pod.Pod());
  if (claims.empty()) return Status(framework::Code::kSkip);
  auto d = std::make_unique<StateData>();
  d->view = catalog_ ? catalog_->Snapshot() : std::make_shared<volume::View>();
  for (const auto& pc : claims) {
    if (Status s = CheckExists(*d->view, pod.Pod(), pc); !s.IsSuccess()) return s;
  }
  for (const auto& pc : claims) {
    if (Status s = Classify(*d->view, pod.Pod(), pc, d.get()); !s.IsSuccess()) return s;
  }
  std::stable_sort(
      d->to_bind.begin(), d->to_bind.end(),
      [](const volume::PVCPtr& a, const volume::PVCPtr& b) { return a->request < b->request; });
  if (!d->to_bind.empty()) {
    d->taken = TakenByInFlight(pod.Pod().metadata.uid);
    absl::MutexLock l(&inflight_mu_);
    inflight_[pod.Pod().metadata.uid] = d->choices;
  }
  state.Write(kStateKey, std::move(d));
  return Status::Success();
}

Status VolumeBinding::Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                             const framework::NodeInfo& ni) {
  const api::Node* node = ni.node();
  if (!node) return Status::Error("node not found");
  const auto* d = state.ReadAs<StateData>(kStateKey);
  if (!d) return Status::Error("VolumeBinding: no PreFilter state");
  std::vector<std::string> reasons;
  for (const auto& c : d->bound) {
    volume::PVPtr pv = d->view->PV(c->volume_name);
    if (!pv) {
      reasons.push_back(kReasonPVNotExist);
      break;
    }
    if (!volume::NodeAffinityAdmits(*pv, *node)) {
      reasons.push_back(kReasonNodeConflict);
      break;
    }
  }
  volume::PodVolumes vols;
  vols.node = node->metadata.name;
  if (!d->to_bind.empty()) {
    std::set<std::string> exclude = d->taken;
    std::vector<const volume::PersistentVolumeClaim*> provision;
    for (const auto& c : d->to_bind) {
      if (volume::PVPtr pv = volume::FindMatchingVolume(*d->view, *c, node, exclude)) {
        exclude.insert(pv->name);
        vols.static_bindings.push_back({c->Key(), pv->name});
      } else {
        provision.push_back(c.get());
      }
    }
    for (const auto* c : provision) {
      const volume::Provision p = volume::CheckProvision(*d->view, *c, *node);
      if (p == volume::Provision::kNoProvision) {
        reasons.push_back(kReasonBindConflict);
        break;
      }
      if (p == volume::Provision::kNoCapacity) {
        reasons.push_back(kReasonNotEnoughSpace);
        break;
      }
      vols.provisions.push_back(c->Key());
    }
  }
  if (!reasons.empty()) {
    Status s(framework::Code::kUnschedulableAndUnresolvable, reasons[0]);
    for (size_t i = 1; i < reasons.size(); ++i) s.AppendReason(reasons[i]);
    return s;
  }
  if (!vols.empty()) {
    absl::MutexLock l(&d->choices->mu);
    d->choices->by_node[vols.node] = std::move(vols);
  }
  return Status::Success();
}

namespace {

// The CSIStorageCapacity upstream's hasEnoughCapacity settles on for `claim` on `node`: the
// first object (in the view's order) of the claim's class whose topology admits the node
// and whose maximumVolumeSize (else capacity) holds the request; nullptr when the class's
// driver publishes no capacity (volume::MatchingCapacity, shared with CheckProvision).
const volume::CSIStorageCapacity* ChosenCapacity(const volume::View& v,
                                                 const volume::PersistentVolumeClaim& claim,
                                                 const api::Node& node) {
  const volume::StorageClass* sc = v.Class(v.ClassOf(claim));
  if (!sc) return nullptr;
  auto d = v.csi_drivers.find(sc->provisioner);
  if (d == v.csi_drivers.end() || !d->second.storage_capacity) return nullptr;
  return volume::MatchingCapacity(v, *sc, claim, node);
}

// Upstream Score's classResources for the node's choice `vols`.
std::map<std::string, StorageResource> ClassResources(const volume::View& v,
                                                      const volume::PodVolumes& vols,
                                                      const api::Node& node) {
  std::map<std::string, StorageResource> out;
  if (!vols.static_bindings.empty()) {
    for (const auto& b : vols.static_bindings) {
      volume::PVPtr pv = v.PV(b.pv);
      volume::PVCPtr c = v.PVC(b.claim);
      if (!pv || !c) continue;
      StorageResource& r = out[pv->storage_class];
      r.requested += c->request;
      r.capacity += pv->capacity;
    }
    return out;
  }
  for (const auto& key : vols.provisions) {
    volume::PVCPtr c = v.PVC(key);
    if (!c) continue;
    const volume::CSIStorageCapacity* cap = ChosenCapacity(v, *c, node);
    // Upstream reads capacity.capacity (a nil one would crash it); absent: left out here.
    if (!cap || !cap->capacity) continue;
    StorageResource& r = out[v.ClassOf(*c)];
    r.capacity = *cap->capacity;
    r.requested += c->request;
  }
  return out;
}

}  // namespace

Status VolumeBinding::PreScore(framework::CycleState& state, const framework::PodInfo&,
                               const std::vector<const framework::NodeInfo*>&) {
  if (!scorer_ || !state.ReadAs<StateData>(kStateKey)) return Status(framework::Code::kSkip);
  return Status::Success();
}

Status VolumeBinding::Score(const framework::CycleState& state, const framework::PodInfo&,
                            const framework::NodeInfo& ni, int64_t* score) {
  *score = 0;
  const auto* d = state.ReadAs<StateData>(kStateKey);
  if (!scorer_ || !d || !ni.node()) return Status::Success();
  volume::PodVolumes vols;
  {
    absl::MutexLock l(&d->choices->mu);
    auto it = d->choices->by_node.find(ni.node()->metadata.name);
    if (it == d->choices->by_node.end()) return Status::Success();
    vols = it->second;
  }
  *score = (*scorer_)(ClassResources(*d->view, vols, *ni.node()));
  return Status::Success();
}

Status VolumeBinding::Reserve(framework::CycleState& state, const framework::PodInfo& pod,
                              const std::string& node) {
  auto* d = state.ReadAs<StateData>(kStateKey);
  if (!d) return Status::Success();  // no claims (PreFilter skipped)
  const std::string& uid = pod.Pod().metadata.uid;
  {
    absl::MutexLock l(&inflight_mu_);
    inflight_.erase(uid);  // the assumption below takes over
  }
  volume::PodVolumes vols;
  {
    absl::MutexLock l(&d->choices->mu);
    auto it = d->choices->by_node.find(node);
    if (it == d->choices->by_node.end()) {
      d->all_bound = true;
      return Status::Success();
    }
    vols = it->second;
  }
  if (!catalog_) return Status::Error("VolumeBinding: no volume catalog");
  if (api::Status err = catalog_->Assume(uid, vols); !err.ok()) {
    return Status(framework::Code::kUnschedulable, "volume binding for pod " + pod.Pod().Key() +
                                                       " on node " + node + ": " +
                                                       std::string(err.message()));
  }
  d->all_bound = false;
  return Status::Success();
}

void VolumeBinding::Unreserve(framework::CycleState& state, const framework::PodInfo& pod,
                              const std::string&) {
  {
    absl::MutexLock l(&inflight_mu_);
    inflight_.erase(pod.Pod().metadata.uid);
  }
  if (catalog_) catalog_->Revert(pod.Pod().metadata.uid);
  if (auto* d = state.ReadAs<StateData>(kStateKey)) d->all_bound = true;
}

Status VolumeBinding::PreBind(framework::CycleState& state, const framework::PodInfo& pod,
                              const std::string& node) {
  auto* d = state.ReadAs<StateData>(kStateKey);
  if (!d || d->all_bound) return Status::Success();
  volume::PodVolumes vols;
  {
    absl::MutexLock l(&d->choices->mu);
    auto it = d->choices->by_node.find(node);
    if (it == d->choices->by_node.end()) {
      return Status::Error("no pod volumes found for node \"" + node + "\"");
    }
    vols = it->second;
  }
  // The API updates, from the objects as the cluster has them (upstream bindAPIUpdate).
  volume::ViewPtr now = catalog_->Snapshot();
  for (const auto& b : vols.static_bindings) {
    volume::PVPtr pv = now->PV(b.pv);
    volume::PVCPtr c = now->PVC(b.claim);
    if (!pv || !c) return Status::Error("binding volumes: " + b.pv + " or " + b.claim + " is gone");
    if (c->volume_name == b.pv) continue;  // bound already
    api::Status s = handle_->Client().PutObject(volume::WithClaimRef(*pv->object, *c));
    if (!s.ok())
      return Status::Error("binding volumes: PersistentVolume " + b.pv + ": " +
                           std::string(s.message()));
  }
  for (const auto& key : vols.provisions) {
    volume::PVCPtr c = now->PVC(key);
    if (!c) return Status::Error("binding volumes: persistentvolumeclaim \"" + key + "\" is gone");
    if (!c->volume_name.empty()) continue;
    api::Status s = handle_->Client().PutObject(
        volume::WithAnnotation(*c->object, volume::kAnnSelectedNode, node));
    if (!s.ok())
      return Status::Error("binding volumes: PersistentVolumeClaim " + key + ": " +
                           std::string(s.message()));
  }
  // Wait for the PV controller (upstream checkBindings, polled until bindTimeout).
  std::string err;
  if (!catalog_->WaitForBindings(vols, absl::Seconds(bind_timeout_s_), &err)) {
    return Status::Error("binding volumes: " +
                         (err.empty() ? "timed out waiting for the condition" : err));
  }
  catalog_->Revert(pod.Pod().metadata.uid);  // the cluster's objects say it all now
  return Status::Success();
}

std::vector<framework::ClusterEventWithHint> VolumeBinding::EventsToRegister() const {
  using framework::EventResource;
  return {
      {{EventResource::kPersistentVolumeClaim, framework::kAdd | framework::kUpdate,
        "StorageObjectChange"},
       nullptr},
      {{EventResource::kNode, framework::kAdd | framework::kUpdateNodeLabel, "NodeAddOrLabel"},
       nullptr},
      {{EventResource::kUnscheduledPod, framework::kUpdate, "UnscheduledPodUpdate"}, nullptr},
  };
}

bool VolumeBinding::SameSignature(const framework::PodInfo& canonical,
                                  const framework::PodInfo& pod) const {
  return PodClaims(*canonical.pod).empty() && PodClaims(*pod.pod).empty();
}

}  // namespace phalanx::plugins::volumebinding
