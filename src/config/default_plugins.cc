// Default plugin sets per API version and the merge of a profile's plugins into them.
// Facts carried over from upstream pkg/scheduler/apis/config/{v1,v1beta3,v1beta2}/
// default_plugins.go.
#include "config/default_plugins.h"

#include <map>
#include <set>
#include <string>
#include <vector>

#include "config/config.h"

namespace phalanx::config {

const std::set<std::string>& ImplementedInTreePlugins() {
  // VolumeBinding binds claims (src/plugins/volumebinding, src/volume); VolumeZone,
  // NodeVolumeLimits and VolumeRestrictions check the claims' PVs and the in-tree volumes.
  // EBSLimits, GCEPDLimits, AzureDiskLimits (defaults of v1beta2/v1beta3) were removed
  // upstream and will not land (NodeVolumeLimits honours their node allocatable keys).
  static const std::set<std::string> kImplemented = {
      "SchedulingGates",
      "PrioritySort",
      "NodeUnschedulable",
      "NodeName",
      "TaintToleration",
      "NodeAffinity",
      "NodePorts",
      "NodeResourcesFit",
      "NodeResourcesBalancedAllocation",
      "ImageLocality",
      "DefaultBinder",
      "GangScheduling",
      "TopologyPlacement",
      "PlacementBinPacking",
      "PodGroupPodsCount",
      "VolumeBinding",
      "VolumeZone",
      "VolumeRestrictions",
      "NodeVolumeLimits",
      "PodTopologySpread",
      "InterPodAffinity",
      "NodeDeclaredFeatures",
      "DynamicResources",
      "DefaultPreemption",
  };
  return kImplemented;
}

namespace internal {
namespace {

constexpr std::string_view kGpuShareGuard = "GpuShareGuard";

std::vector<PluginRef> Refs(std::initializer_list<PluginRef> list) { return list; }

// Every extension point of `p`, in upstream's mergePlugins order.
template <typename P, typename F>
void ForEachPoint(P& p, F&& f) {
  f(p.multi_point);
  f(p.pre_enqueue);
  f(p.queue_sort);
  f(p.pre_filter);
  f(p.filter);
  f(p.post_filter);
  f(p.pre_score);
  f(p.score);
  f(p.reserve);
  f(p.permit);
  f(p.pre_bind);
  f(p.bind);
  f(p.post_bind);
}

void V1Defaults(Plugins& p) {
  // v1 getDefaultPlugins (current releases; the in-tree EBS/GCE PD/Azure Disk volume
  // limit plugins are gone), with DynamicResources inserted before DefaultPreemption as
  // applyFeatureGates does while DynamicResourceAllocation is on (GA and on by default
  // since 1.34; pkg/scheduler/apis/config/v1/default_plugins.go).
  // NodeDeclaredFeatures (KEP-5328, GA in 1.37, a PreFilter/Filter plugin with no
  // score) sits after NodeName; its place in the list does not change placements.
  p.multi_point.enabled = Refs({
      {"SchedulingGates", 0},
      {"PrioritySort", 0},
      {"NodeUnschedulable", 0},
      {"NodeName", 0},
      {"NodeDeclaredFeatures", 0},
      {"TaintToleration", 3},
      {"NodeAffinity", 2},
      {"NodePorts", 0},
      {"NodeResourcesFit", 1},
      {"VolumeRestrictions", 0},
      {"NodeVolumeLimits", 0},
      {"VolumeBinding", 0},
      {"VolumeZone", 0},
      {"PodTopologySpread", 2},
      {"InterPodAffinity", 2},
      {"DynamicResources", 0},
      {"DefaultPreemption", 0},
      {"NodeResourcesBalancedAllocation", 1},
      {"ImageLocality", 1},
      {"DefaultBinder", 0},
      // Upstream adds GangScheduling with the GenericWorkload / GangScheduling feature
      // gates (alpha, off by default in 1.35); Phalanx exists for gangs and enables it.
      // It does nothing for pods that name no gang.
      {"GangScheduling", 0},
      // A gang's topology constraint goes through the PlacementGenerate / PlacementScore
      // points of the PodGroup cycle (KEP-5732; upstream adds TopologyPlacement with the
      // TopologyAwareWorkloadScheduling feature gate): the domains of its levels, scored
      // tightest first. They do nothing for a gang without a topology.
      {"TopologyPlacement", 0},
      {"PlacementBinPacking", 0},
  });
}

void V1beta3Defaults(Plugins& p) {
  // v1beta3 getDefaultPlugins (last served by 1.28): same weights as v1; the volume
  // limit plugins were still listed; SchedulingGates was appended at the end by
  // applyFeatureGates (PodSchedulingReadiness, on by default since 1.27).
  p.multi_point.enabled = Refs({
      {"PrioritySort", 0},     {"NodeUnschedulable", 0},  {"NodeName", 0},
      {"TaintToleration", 3},  {"NodeAffinity", 2},       {"NodePorts", 0},
      {"NodeResourcesFit", 1}, {"VolumeRestrictions", 0}, {"EBSLimits", 0},
      {"GCEPDLimits", 0},      {"NodeVolumeLimits", 0},   {"AzureDiskLimits", 0},
      {"VolumeBinding", 0},    {"VolumeZone", 0},         {"PodTopologySpread", 2},
      {"InterPodAffinity", 2}, {"DefaultPreemption", 0},  {"NodeResourcesBalancedAllocation", 1},
      {"ImageLocality", 1},    {"DefaultBinder", 0},      {"SchedulingGates", 0},
  });
}

void V1beta2Defaults(Plugins& p) {
  // v1beta2 getDefaultPlugins (last served by 1.27): per-extension-point sets, every
  // score weight 1 except PodTopologySpread 2; PreEnqueue SchedulingGates from
  // applyFeatureGates (PodSchedulingReadiness, on by default in 1.27).
  p.pre_enqueue.enabled = Refs({{"SchedulingGates", 0}});
  p.queue_sort.enabled = Refs({{"PrioritySort", 0}});
  p.pre_filter.enabled = Refs({
      {"NodeResourcesFit", 0},
      {"NodePorts", 0},
      {"VolumeRestrictions", 0},
      {"PodTopologySpread", 0},
      {"InterPodAffinity", 0},
      {"VolumeBinding", 0},
      {"VolumeZone", 0},
      {"NodeAffinity", 0},
      {"TaintToleration", 0},
  });
  p.filter.enabled = Refs({
      {"NodeUnschedulable", 0},
      {"NodeName", 0},
      {"TaintToleration", 0},
      {"NodeAffinity", 0},
      {"NodePorts", 0},
      {"NodeResourcesFit", 0},
      {"VolumeRestrictions", 0},
      {"EBSLimits", 0},
      {"GCEPDLimits", 0},
      {"NodeVolumeLimits", 0},
      {"AzureDiskLimits", 0},
      {"VolumeBinding", 0},
      {"VolumeZone", 0},
      {"PodTopologySpread", 0},
      {"InterPodAffinity", 0},
  });
  p.post_filter.enabled = Refs({{"DefaultPreemption", 0}});
  p.pre_score.enabled = Refs({
      {"InterPodAffinity", 0},
      {"PodTopologySpread", 0},
      {"TaintToleration", 0},
      {"NodeAffinity", 0},
  });
  p.score.enabled = Refs({
      {"NodeResourcesBalancedAllocation", 1},
      {"ImageLocality", 1},
      {"InterPodAffinity", 1},
      {"NodeResourcesFit", 1},
      {"NodeAffinity", 1},
      {"PodTopologySpread", 2},
      {"TaintToleration", 1},
  });
  p.reserve.enabled = Refs({{"VolumeBinding", 0}});
  p.pre_bind.enabled = Refs({{"VolumeBinding", 0}});
  p.bind.enabled = Refs({{"DefaultBinder", 0}});
}

}  // namespace

Plugins UpstreamDefaultPlugins(ApiVersion version) {
  Plugins p;
  switch (version) {
    case ApiVersion::kV1:
      V1Defaults(p);
      break;
    case ApiVersion::kV1beta3:
      V1beta3Defaults(p);
      break;
    case ApiVersion::kV1beta2:
      V1beta2Defaults(p);
      break;
  }
  return p;
}

Plugins DefaultPlugins(ApiVersion version) {
  Plugins p = UpstreamDefaultPlugins(version);
  const std::set<std::string>& implemented = ImplementedInTreePlugins();
  ForEachPoint(p, [&](PluginSet& set) {
    std::vector<PluginRef> kept;
    for (PluginRef& ref : set.enabled) {
      if (implemented.count(ref.name) != 0) kept.push_back(std::move(ref));
    }
    set.enabled = std::move(kept);
  });
  // Phalanx's: GPU shares (KAI gpu-fraction, Alibaba gpu-milli, ...) are never placed by a
  // profile that does not account for them (plugins/gpushare/guard.h); MergePlugins drops
  // it from a profile that enables GpuShare.
  p.multi_point.enabled.push_back({std::string(kGpuShareGuard), 0});
  return p;
}

PluginSet MergePluginSet(const PluginSet& defaults, const PluginSet& custom, bool keep_disabled) {
  std::set<std::string> disabled_names;
  PluginSet out;
  for (const PluginRef& d : custom.disabled) {
    disabled_names.insert(d.name);
    if (keep_disabled) out.disabled.push_back(PluginRef{d.name, 0});
  }
  for (const PluginRef& d : defaults.disabled) {
    disabled_names.insert(d.name);
    if (keep_disabled) out.disabled.push_back(PluginRef{d.name, 0});
  }
  // Name -> index of the custom enabled plugin; the last occurrence wins, as with
  // upstream's map assignment.
  std::map<std::string, size_t> custom_index;
  for (size_t i = 0; i < custom.enabled.size(); ++i) custom_index[custom.enabled[i].name] = i;

  std::set<size_t> replaced;
  if (disabled_names.count("*") == 0) {
    for (const PluginRef& def : defaults.enabled) {
      if (disabled_names.count(def.name) != 0) continue;
      auto it = custom_index.find(def.name);
      if (it != custom_index.end()) {
        // The default plugin is explicitly re-configured: replace it in place.
        out.enabled.push_back(custom.enabled[it->second]);
        replaced.insert(it->second);
      } else {
        out.enabled.push_back(def);
      }
    }
  }
  for (size_t i = 0; i < custom.enabled.size(); ++i) {
    if (replaced.count(i) == 0) out.enabled.push_back(custom.enabled[i]);
  }
  return out;
}

// MergePlugins without the GpuShareGuard step: each extension point merged.
static Plugins MergeEachPoint(const Plugins& defaults, const Plugins& custom, bool keep_disabled) {
  Plugins out;
  out.multi_point = MergePluginSet(defaults.multi_point, custom.multi_point, keep_disabled);
  out.pre_enqueue = MergePluginSet(defaults.pre_enqueue, custom.pre_enqueue, keep_disabled);
  out.queue_sort = MergePluginSet(defaults.queue_sort, custom.queue_sort, keep_disabled);
  out.pre_filter = MergePluginSet(defaults.pre_filter, custom.pre_filter, keep_disabled);
  out.filter = MergePluginSet(defaults.filter, custom.filter, keep_disabled);
  out.post_filter = MergePluginSet(defaults.post_filter, custom.post_filter, keep_disabled);
  out.pre_score = MergePluginSet(defaults.pre_score, custom.pre_score, keep_disabled);
  out.score = MergePluginSet(defaults.score, custom.score, keep_disabled);
  out.reserve = MergePluginSet(defaults.reserve, custom.reserve, keep_disabled);
  out.permit = MergePluginSet(defaults.permit, custom.permit, keep_disabled);
  out.pre_bind = MergePluginSet(defaults.pre_bind, custom.pre_bind, keep_disabled);
  out.bind = MergePluginSet(defaults.bind, custom.bind, keep_disabled);
  out.post_bind = MergePluginSet(defaults.post_bind, custom.post_bind, keep_disabled);
  return out;
}

Plugins MergePlugins(const Plugins& defaults, const Plugins& custom, bool keep_disabled) {
  Plugins out = MergeEachPoint(defaults, custom, keep_disabled);
  // GpuShare accounts for GPU shares itself: its guard goes (plugins/gpushare/guard.h).
  bool gpu_share = false;
  ForEachPoint(out, [&](PluginSet& set) {
    for (const auto& ref : set.enabled) gpu_share = gpu_share || ref.name == "GpuShare";
  });
  if (gpu_share) {
    ForEachPoint(out, [&](PluginSet& set) {
      std::erase_if(set.enabled, [](const PluginRef& r) { return r.name == kGpuShareGuard; });
    });
  }
  return out;
}

}  // namespace internal

std::vector<PluginRef> DefaultMultiPointPlugins() {
  try {
    return internal::DefaultPlugins(internal::ApiVersion::kV1).multi_point.enabled;
  } catch (...) {
    return {};
  }
}

}  // namespace phalanx::config
