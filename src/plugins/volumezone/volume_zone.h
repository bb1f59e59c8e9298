// VolumeZone (upstream pkg/scheduler/framework/plugins/volumezone/volume_zone.go, current
// release): the zone and region labels of the PersistentVolumes bound to a pod's
// persistentVolumeClaim volumes must match the node's.
//
//   PreFilter  for each persistentVolumeClaim volume (generic ephemeral volumes are not
//              looked at, as upstream): a claim with no name, a claim, PV or StorageClass
//              that does not exist, or an invalid one (its decode error):
//              UnschedulableAndUnresolvable with that reason ("persistentvolumeclaim \"x\"
//              not found", "persistentvolume \"x\" not found", "storageclass.storage.k8s.io
//              \"x\" not found"). An unbound claim: skipped when its class is
//              WaitForFirstConsumer, "PersistentVolumeClaim had no pv name and storageClass
//              name" without a class, else "PersistentVolume had no name" (both
//              UnschedulableAndUnresolvable). A bound claim adds its PV's topology labels
//              (failure-domain.beta.kubernetes.io/zone|region, topology.kubernetes.io/
//              zone|region; a value is a "__"-separated set, upstream LabelZonesToSet; a
//              value with an empty element is ignored, as upstream logs and skips it).
//              No labels at all: Skip.
//   Filter     a node without any of the four labels fits (single-zone clusters); else each
//              PV label's key (a beta key falls back to the node's GA key) must be on the node
//              with a value in the PV's set, or UnschedulableAndUnresolvable
//              "node(s) had no available volume zone".
// The claims and PVs come from the volume::Catalog snapshot (the binder's assumptions
// applied); without a Catalog every claim is "not found".
#pragma once

#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "framework/interface.h"
#include "framework/registry.h"
#include "volume/catalog.h"

namespace phalanx::plugins::volumezone {

inline constexpr const char* kReasonConflict = "node(s) had no available volume zone";

// One PV topology label: the label key and the set of values it allows.
struct PVTopology {
  std::string pv_name;
  std::string key;
  std::set<std::string> values;
};

// The topology labels of `pv`, in upstream's topologyLabels order (beta zone, beta region,
// GA zone, GA region).
std::vector<PVTopology> PVTopologies(const volume::PersistentVolume& pv);

class VolumeZone final : public framework::PreFilterPlugin,
                         public framework::FilterPlugin,
                         public framework::EnqueueExtensions,
                         public framework::BatchablePlugin {
 public:
  static constexpr std::string_view kName = "VolumeZone";
  // No args. Needs the volume::Catalog service (scheduler/profile.cc provides it).
  static framework::StatusOr<std::unique_ptr<framework::Plugin>> New(framework::PluginArgs args,
                                                                     framework::Handle& h);
  explicit VolumeZone(volume::Catalog* catalog) : catalog_(catalog) {}
  std::string_view Name() const override { return kName; }
  // Pods without persistentVolumeClaim volumes are trivially batchable; pods with claims are
  // never batched (VolumeBinding does not batch them either).
  bool SameSignature(const framework::PodInfo& canonical,
                     const framework::PodInfo& pod) const override;
  framework::Status PreFilter(framework::CycleState& state, const framework::PodInfo& pod,
                              framework::PreFilterResult* result) override;
  framework::Status Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::NodeInfo& node) override;
  // Storage object events (reported as kPersistentVolumeClaim), node adds and label
  // changes (upstream: PV/PVC/StorageClass add and update, Node add and label update).
  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override;

  // The PV topologies of `pod`'s claims (PreFilter's work), or a non-success status.
  framework::Status PodTopologies(const api::Pod& pod, std::vector<PVTopology>* out) const;

 private:
  volume::Catalog* catalog_;
};

}  // namespace phalanx::plugins::volumezone
