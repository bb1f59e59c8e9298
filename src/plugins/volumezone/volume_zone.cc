#include "plugins/volumezone/volume_zone.h"

#include "framework/handle.h"

namespace phalanx::plugins::volumezone {

namespace {

using framework::Status;

constexpr const char* kStateKey = "PreFilterVolumeZone";

// Upstream topologyLabels (v1.LabelFailureDomainBetaZone, ...BetaRegion, LabelTopologyZone,
// LabelTopologyRegion), in this order.
constexpr const char* kBetaZone = "failure-domain.beta.kubernetes.io/zone";
constexpr const char* kBetaRegion = "failure-domain.beta.kubernetes.io/region";
constexpr const char* kZone = "topology.kubernetes.io/zone";
constexpr const char* kRegion = "topology.kubernetes.io/region";
constexpr const char* kTopologyLabels[] = {kBetaZone, kBetaRegion, kZone, kRegion};

struct StateData final : framework::StateData {
  std::vector<PVTopology> topologies;
  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<StateData>(*this);
  }
};

Status Unresolvable(std::string msg) {
  return Status(framework::Code::kUnschedulableAndUnresolvable, std::move(msg));
}

// The four keys as strings, so that Filter's label lookups do not allocate.
const std::string (&TopologyKeys())[4] {
  static const std::string kKeys[4] = {kBetaZone, kBetaRegion, kZone, kRegion};
  return kKeys;
}

// upstream translateToGALabel.
const std::string& ToGALabel(const std::string& key) {
  const auto& k = TopologyKeys();
  if (key == k[1]) return k[3];
  if (key == k[0]) return k[2];
  return key;
}

// upstream volumehelpers.LabelZonesToSet: "a__b" -> {a, b}; false when an element is empty
// after trimming spaces.
bool ZonesToSet(const std::string& value, std::set<std::string>* out) {
  size_t start = 0;
  while (true) {
    const size_t end = value.find("__", start);
    std::string zone =
        value.substr(start, end == std::string::npos ? std::string::npos : end - start);
    const size_t b = zone.find_first_not_of(" \t\n\r\f\v");
    const size_t e = zone.find_last_not_of(" \t\n\r\f\v");
    if (b == std::string::npos) return false;
    out->insert(zone.substr(b, e - b + 1));
    if (end == std::string::npos) return true;
    start = end + 2;
  }
}

bool HasClaimVolumes(const api::Pod& pod) {
  for (const auto& v : pod.spec.volumes) {
    if (!v.persistent_volume_claim.empty()) return true;
  }
  return false;
}

}  // namespace

std::vector<PVTopology> PVTopologies(const volume::PersistentVolume& pv) {
  std::vector<PVTopology> out;
  for (const char* key : kTopologyLabels) {
    auto it = pv.labels.find(key);
    if (it == pv.labels.end()) continue;
    PVTopology t{pv.name, key, {}};
    if (!ZonesToSet(it->second, &t.values)) continue;  // upstream logs and ignores it
    out.push_back(std::move(t));
  }
  return out;
}

framework::StatusOr<std::unique_ptr<framework::Plugin>> VolumeZone::New(framework::PluginArgs,
                                                                        framework::Handle& h) {
  return std::unique_ptr<framework::Plugin>(new VolumeZone(h.Service<volume::Catalog>()));
}

Status VolumeZone::PodTopologies(const api::Pod& pod, std::vector<PVTopology>* out) const {
  volume::ViewPtr view;
  for (const auto& vol : pod.spec.volumes) {
    // Only persistentVolumeClaim volumes (upstream getPVbyPod); the decoder keeps
    // claimName "" as "no claim", so an empty name cannot reach here.
    if (vol.persistent_volume_claim.empty()) continue;
    if (!view) view = catalog_ ? catalog_->Snapshot() : std::make_shared<volume::View>();
    const std::string& claim = vol.persistent_volume_claim;
    volume::PVCPtr c = view->PVC(pod.metadata.namespace_ + "/" + claim);
    if (!c) return Unresolvable("persistentvolumeclaim \"" + claim + "\" not found");
    if (!c->error.empty()) return Unresolvable(c->error);
    if (c->volume_name.empty()) {
      const std::string cls = view->ClassOf(*c);
      if (cls.empty()) {
        return Unresolvable("PersistentVolumeClaim had no pv name and storageClass name");
      }
      const volume::StorageClass* sc = view->Class(cls);
      if (!sc) return Unresolvable("storageclass.storage.k8s.io \"" + cls + "\" not found");
      if (!sc->error.empty()) return Unresolvable(sc->error);
      if (sc->WaitForFirstConsumer()) continue;  // skip unbound volumes
      return Unresolvable("PersistentVolume had no name");
    }
    volume::PVPtr pv = view->PV(c->volume_name);
    if (!pv) return Unresolvable("persistentvolume \"" + c->volume_name + "\" not found");
    if (!pv->error.empty()) return Unresolvable(pv->error);
    std::vector<PVTopology> t = PVTopologies(*pv);
    out->insert(out->end(), std::make_move_iterator(t.begin()), std::make_move_iterator(t.end()));
  }
  return Status::Success();
}

Status VolumeZone::PreFilter(framework::CycleState& state, const framework::PodInfo& pod,
                             framework::PreFilterResult*) {
  auto d = std::make_unique<StateData>();
  if (Status s = PodTopologies(pod.Pod(), &d->topologies); !s.IsSuccess()) return s;
  if (d->topologies.empty()) return Status(framework::Code::kSkip);
  state.Write(kStateKey, std::move(d));
  return Status::Success();
}

Status VolumeZone::Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                          const framework::NodeInfo& ni) {
  if (pod.Pod().spec.volumes.empty()) return Status::Success();
  const api::Node* node = ni.node();
  if (!node) return Status::Error("node not found");
  std::vector<PVTopology> computed;
  const std::vector<PVTopology>* topologies = nullptr;
  if (const auto* d = state.ReadAs<StateData>(kStateKey)) {
    topologies = &d->topologies;
  } else {
    // upstream: fall back to computing the list here.
    if (Status s = PodTopologies(pod.Pod(), &computed); !s.IsSuccess()) return s;
    topologies = &computed;
  }
  const auto& labels = node->metadata.labels;
  bool constrained = false;
  for (const std::string& key : TopologyKeys()) constrained = constrained || labels.count(key) != 0;
  if (!constrained) return Status::Success();  // single-zone cluster without labels
  for (const auto& t : *topologies) {
    auto it = labels.find(t.key);
    if (it == labels.end()) it = labels.find(ToGALabel(t.key));
    if (it == labels.end() || t.values.count(it->second) == 0) return Unresolvable(kReasonConflict);
  }
  return Status::Success();
}

std::vector<framework::ClusterEventWithHint> VolumeZone::EventsToRegister() const {
  using framework::EventResource;
  return {
      {{EventResource::kPersistentVolumeClaim, framework::kAdd | framework::kUpdate,
        "StorageObjectChange"},
       nullptr},
      {{EventResource::kNode, framework::kAdd | framework::kUpdateNodeLabel, "NodeAddOrLabel"},
       nullptr},
  };
}

bool VolumeZone::SameSignature(const framework::PodInfo& canonical,
                               const framework::PodInfo& pod) const {
  return !HasClaimVolumes(*canonical.pod) && !HasClaimVolumes(*pod.pod);
}

}  // namespace phalanx::plugins::volumezone
