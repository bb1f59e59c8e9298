#include "plugins/registry.h"

#include "plugins/defaultbinder/default_binder.h"
#include "plugins/defaultpreemption/default_preemption.h"
#include "plugins/defragmentation/defragmentation.h"
#include "plugins/dynamicresources/dynamic_resources.h"
#include "plugins/gangreservation/gang_reservation.h"
#include "plugins/gangscheduling/gang_scheduling.h"
#include "plugins/gpupolicy/best_fit.h"
#include "plugins/gpupolicy/dot_product.h"
#include "plugins/gpupolicy/fgd.h"
#include "plugins/gpupolicy/frag_lookahead.h"
#include "plugins/gpupolicy/gpu_clustering.h"
#include "plugins/gpupolicy/gpu_packing.h"
#include "plugins/gpupolicy/random_score.h"
#include "plugins/gpushare/gpu_share.h"
#include "plugins/gpushare/guard.h"
#include "plugins/imagelocality/image_locality.h"
#include "plugins/interpodaffinity/interpod_affinity.h"
#include "plugins/nodeaffinity/node_affinity.h"
#include "plugins/nodedeclaredfeatures/node_declared_features.h"
#include "plugins/nodename/node_name.h"
#include "plugins/nodeports/node_ports.h"
#include "plugins/noderesources/balanced_allocation.h"
#include "plugins/noderesources/fit.h"
#include "plugins/nodeunschedulable/node_unschedulable.h"
#include "plugins/nodevolumelimits/csi.h"
#include "plugins/placementbinpacking/placement_bin_packing.h"
#include "plugins/podgrouppodscount/podgroup_pods_count.h"
#include "plugins/podtopologyspread/pod_topology_spread.h"
#include "plugins/prioritysort/priority_sort.h"
#include "plugins/provisioningrequest/provisioning_request.h"
#include "plugins/queues/queues.h"
#include "plugins/schedulinggates/scheduling_gates.h"
#include "plugins/tainttoleration/taint_toleration.h"
#include "plugins/topologyplacement/topology_placement.h"
#include "plugins/volumebinding/volume_binding.h"
#include "plugins/volumerestrictions/volume_restrictions.h"
#include "plugins/volumezone/volume_zone.h"

namespace phalanx::plugins {

namespace {
template <typename P>
void Add(framework::Registry& r) {
  // Names are unique by construction; a duplicate would be a programming error.
  (void)r.Register(std::string(P::kName), &P::New);
}
}  // namespace

framework::Registry NewInTreeRegistry() {
  framework::Registry r;
  Add<prioritysort::PrioritySort>(r);
  Add<schedulinggates::SchedulingGates>(r);
  Add<nodeunschedulable::NodeUnschedulable>(r);
  Add<nodename::NodeName>(r);
  Add<nodedeclaredfeatures::NodeDeclaredFeatures>(r);
  Add<tainttoleration::TaintToleration>(r);
  Add<nodeaffinity::NodeAffinity>(r);
  Add<nodeports::NodePorts>(r);
  Add<noderesources::Fit>(r);
  Add<podtopologyspread::PodTopologySpread>(r);
  Add<interpodaffinity::InterPodAffinity>(r);
  Add<dynamicresources::DynamicResources>(r);
  Add<defaultpreemption::DefaultPreemption>(r);
  Add<noderesources::BalancedAllocation>(r);
  Add<imagelocality::ImageLocality>(r);
  Add<defaultbinder::DefaultBinder>(r);
  Add<volumebinding::VolumeBinding>(r);
  Add<volumezone::VolumeZone>(r);
  Add<volumerestrictions::VolumeRestrictions>(r);
  Add<nodevolumelimits::CSILimits>(r);
  Add<gangscheduling::GangScheduling>(r);
  Add<gangscheduling::GangPrioritySort>(r);
  // The PodGroup cycle's placement generation and scoring (KEP-5732): TopologyPlacement and
  // PlacementBinPacking are in the default set, PodGroupPodsCount is not.
  Add<topologyplacement::TopologyPlacement>(r);
  Add<placementbinpacking::PlacementBinPacking>(r);
  Add<podgrouppodscount::PodGroupPodsCount>(r);
  // Reservations with backfill for gangs that wait too long; not in the default
  // set: enabling it (threshold > 0) turns reservations on (docs/gangs.md).
  Add<gangreservation::GangReservation>(r);
  // Atomic scale-up for gangs through cluster-autoscaler's ProvisioningRequests; not in the
  // default set (docs/scale-up.md).
  Add<provisioningrequest::ProvisioningRequest>(r);
  // Moves running pods off a node to make room for a pod whose free capacity is scattered;
  // not in the default set (docs/defragmentation.md).
  Add<defragmentation::Defragmentation>(r);
  // Queues and quotas (KAI / Volcano Queue, ElasticQuota); not in the default set (see
  // docs/queues.md; `phalanx simulate` enables it when the scenario has queue objects).
  Add<queues::Queues>(r);
  // GPU sharing and placement policies (not in the default set; see examples/gpu-sharing).
  Add<gpushare::GpuShare>(r);
  // In the default set: keeps GPU shares off profiles without GpuShare (guard.h).
  Add<gpushare::GpuShareGuard>(r);
  Add<gpupolicy::FGDScore>(r);
  Add<gpupolicy::FragLookaheadScore>(r);
  Add<gpupolicy::BestFitScore>(r);
  Add<gpupolicy::DotProductScore>(r);
  Add<gpupolicy::GpuPackingScore>(r);
  Add<gpupolicy::GpuClusteringScore>(r);
  Add<gpupolicy::RandomScore>(r);
  return r;
}

}  // namespace phalanx::plugins
