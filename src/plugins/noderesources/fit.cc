#include "plugins/noderesources/fit.h"

#include <yaml-cpp/yaml.h>

#include <array>
#include <optional>

#include "api/pod_resources.h"
#include "dra/dra_manager.h"
#include "plugins/helper/args.h"
#include "plugins/helper/validation.h"

namespace phalanx::plugins::noderesources {

namespace {

constexpr std::string_view kArgsKind = "NodeResourcesFitArgs";
constexpr int64_t kMaxCustomPriorityScore = 10;

enum class FitKind { kPods, kCPU, kMemory, kEphemeralStorage, kScalar };

struct PreFilterState final : framework::StateData {
  // Requests to check: first-class fields plus the non-zero, non-ignored scalars.
  api::Resource request;
  // Extended resources of `request` that a DeviceClass serves (KEP-5004): on a node whose
  // allocatable has none of one, DynamicResources allocates devices for it instead.
  std::vector<api::ResourceId> dra_backed;
  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<PreFilterState>(*this);
  }
};

struct PreScoreState final : framework::StateData {
  std::vector<int64_t> pod_requests;  // aligned with the scoring resources
  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<PreScoreState>(*this);
  }
};

// upstream fitsRequest; calls sink(kind, scalar_id, requested, used, capacity, unresolvable)
// for every insufficient resource, in upstream order.
template <typename Sink>
void CheckFit(const api::Resource& req, const framework::NodeInfo& node, Sink&& sink) {
  const api::Resource& alloc = node.allocatable();
  const api::Resource& used = node.requested();
  const int64_t num_pods = static_cast<int64_t>(node.pods().size());
  if (num_pods + 1 > alloc.allowed_pod_number) {
    sink(FitKind::kPods, -1, 1, num_pods, alloc.allowed_pod_number, false);
  }
  if (req.milli_cpu > 0 && req.milli_cpu > alloc.milli_cpu - used.milli_cpu) {
    sink(FitKind::kCPU, -1, req.milli_cpu, used.milli_cpu, alloc.milli_cpu,
         req.milli_cpu > alloc.milli_cpu);
  }
  if (req.memory > 0 && req.memory > alloc.memory - used.memory) {
    sink(FitKind::kMemory, -1, req.memory, used.memory, alloc.memory, req.memory > alloc.memory);
  }
  if (req.ephemeral_storage > 0 &&
      req.ephemeral_storage > alloc.ephemeral_storage - used.ephemeral_storage) {
    sink(FitKind::kEphemeralStorage, -1, req.ephemeral_storage, used.ephemeral_storage,
         alloc.ephemeral_storage, req.ephemeral_storage > alloc.ephemeral_storage);
  }
  for (const auto& [id, q] : req.scalar) {
    if (q == 0) continue;
    const int64_t a = alloc.Scalar(id);
    const int64_t u = used.Scalar(id);
    if (q > a - u) sink(FitKind::kScalar, id, q, u, a, q > a);
  }
}

std::string KindName(FitKind k, api::ResourceId id) {
  switch (k) {
    case FitKind::kPods:
      return std::string(api::kResourcePods);
    case FitKind::kCPU:
      return std::string(api::kResourceCPU);
    case FitKind::kMemory:
      return std::string(api::kResourceMemory);
    case FitKind::kEphemeralStorage:
      return std::string(api::kResourceEphemeralStorage);
    case FitKind::kScalar:
      return api::ScalarResourceName(id);
  }
  return {};
}

std::string Reason(FitKind k, api::ResourceId id) {
  if (k == FitKind::kPods) return "Too many pods";
  return "Insufficient " + KindName(k, id);
}

bool AllZero(const api::Resource& r) {
  if (r.milli_cpu != 0 || r.memory != 0 || r.ephemeral_storage != 0) return false;
  return r.scalar.empty();
}

// upstream haveAnyRequestedResourcesIncreased.
bool HaveAnyRequestedResourcesIncreased(const api::Pod& pod, const api::Node& original,
                                        const api::Node& modified) {
  const api::Resource req = api::PodRequests(pod);
  const api::Resource o = api::ResourceListToResource(original.status.allocatable);
  const api::Resource m = api::ResourceListToResource(modified.status.allocatable);
  if (m.allowed_pod_number > o.allowed_pod_number) return true;
  if (AllZero(req)) return false;
  if ((req.milli_cpu > 0 && m.milli_cpu > o.milli_cpu) || (req.memory > 0 && m.memory > o.memory) ||
      (req.ephemeral_storage > 0 && m.ephemeral_storage > o.ephemeral_storage)) {
    return true;
  }
  for (const auto& [id, q] : req.scalar) {
    if (q == 0 || !helper::IsScalarResourceName(api::ScalarResourceName(id))) continue;
    if (m.Scalar(id) > o.Scalar(id)) return true;
  }
  return false;
}

// upstream isSchedulableAfterPodScaleDown.
bool IsSchedulableAfterPodScaleDown(const api::Pod& target, const api::Pod& original,
                                    const api::Pod& modified) {
  if (modified.metadata.uid == target.metadata.uid) return true;
  if (modified.spec.node_name.empty()) return false;
  const api::Resource o = api::PodRequests(original);
  const api::Resource m = api::PodRequests(modified);
  const api::Resource t = api::PodRequests(target);
  if (t.milli_cpu != 0 && o.milli_cpu > m.milli_cpu) return true;
  if (t.memory != 0 && o.memory > m.memory) return true;
  if (t.ephemeral_storage != 0 && o.ephemeral_storage > m.ephemeral_storage) return true;
  for (const auto& [id, q] : t.scalar) {
    if (q == 0 || !helper::IsScalarResourceName(api::ScalarResourceName(id))) continue;
    if (o.Scalar(id) > m.Scalar(id)) return true;
  }
  return false;
}

bool ParseResources(const YAML::Node& n, const std::string& path, std::vector<ResourceSpec>* out,
                    helper::FieldErrors* errs) {
  if (!n.IsDefined() || n.IsNull()) return true;
  if (!n.IsSequence()) {
    errs->TypeInvalid(path, "must be a list");
    return false;
  }
  bool ok = true;
  for (size_t i = 0; i < n.size(); ++i) {
    const std::string p = path + "[" + std::to_string(i) + "]";
    ResourceSpec r;
    r.weight = 0;
    if (helper::CheckMap(n[i], p, {"name", "weight"}, errs)) {
      ok &= helper::ReadString(n[i]["name"], p + ".name", &r.name, errs);
      ok &= helper::ReadInt(n[i]["weight"], p + ".weight", &r.weight, errs);
    } else {
      ok = false;
    }
    out->push_back(std::move(r));
  }
  return ok;
}

bool ParseShape(const YAML::Node& n, const std::string& path,
                std::vector<UtilizationShapePoint>* out, helper::FieldErrors* errs) {
  if (!n.IsDefined() || n.IsNull()) return true;
  if (!n.IsSequence()) {
    errs->TypeInvalid(path, "must be a list");
    return false;
  }
  bool ok = true;
  for (size_t i = 0; i < n.size(); ++i) {
    const std::string p = path + "[" + std::to_string(i) + "]";
    UtilizationShapePoint pt;
    if (helper::CheckMap(n[i], p, {"utilization", "score"}, errs)) {
      ok &= helper::ReadInt(n[i]["utilization"], p + ".utilization", &pt.utilization, errs);
      ok &= helper::ReadInt(n[i]["score"], p + ".score", &pt.score, errs);
    } else {
      ok = false;
    }
    out->push_back(pt);
  }
  return ok;
}

}  // namespace

framework::StatusOr<NodeResourcesFitArgs> ParseNodeResourcesFitArgs(framework::PluginArgs args) {
  NodeResourcesFitArgs out;
  helper::FieldErrors errs;
  bool has_content = false;
  if (!helper::CheckArgsMap(args, kArgsKind,
                            {"ignoredResources", "ignoredResourceGroups", "scoringStrategy"}, &errs,
                            &has_content)) {
    return helper::ArgsError(errs, kArgsKind);
  }
  bool has_strategy = false, has_ratio_param = false;
  std::string type_name;
  if (has_content) {
    const YAML::Node& a = *args;
    helper::ReadStringList(a["ignoredResources"], "ignoredResources", &out.ignored_resources,
                           &errs);
    helper::ReadStringList(a["ignoredResourceGroups"], "ignoredResourceGroups",
                           &out.ignored_resource_groups, &errs);
    const YAML::Node ss = a["scoringStrategy"];
    if (helper::CheckMap(ss, "scoringStrategy", {"type", "resources", "requestedToCapacityRatio"},
                         &errs)) {
      has_strategy = true;
      helper::ReadString(ss["type"], "scoringStrategy.type", &type_name, &errs);
      std::vector<ResourceSpec> res;
      ParseResources(ss["resources"], "scoringStrategy.resources", &res, &errs);
      out.resources = std::move(res);
      const YAML::Node r = ss["requestedToCapacityRatio"];
      if (helper::CheckMap(r, "scoringStrategy.requestedToCapacityRatio", {"shape"}, &errs)) {
        has_ratio_param = true;
        ParseShape(r["shape"], "scoringStrategy.requestedToCapacityRatio.shape", &out.shape, &errs);
      }
    }
  }
  if (!errs.empty()) return helper::ArgsError(errs, kArgsKind);

  // Defaulting (SetDefaults_NodeResourcesFitArgs).
  if (!has_strategy) type_name = "LeastAllocated";
  if (out.resources.empty()) out.resources = {{"cpu", 1}, {"memory", 1}};
  for (auto& r : out.resources) {
    if (r.weight == 0) r.weight = 1;
  }

  // Validation (ValidateNodeResourcesFitArgs).
  for (size_t i = 0; i < out.ignored_resources.size(); ++i) {
    const std::string p = "ignoredResources[" + std::to_string(i) + "]";
    for (const auto& msg : helper::IsQualifiedName(out.ignored_resources[i])) {
      errs.Invalid(p, out.ignored_resources[i], msg);
    }
  }
  for (size_t i = 0; i < out.ignored_resource_groups.size(); ++i) {
    const std::string p = "ignoredResourceGroups[" + std::to_string(i) + "]";
    const std::string& g = out.ignored_resource_groups[i];
    if (g.find('/') != std::string::npos) {
      errs.Invalid(p, g, "resource group name can't contain '/'");
    }
    for (const auto& msg : helper::IsQualifiedName(g)) errs.Invalid(p, g, msg);
  }
  if (type_name == "LeastAllocated") {
    out.type = ScoringStrategyType::kLeastAllocated;
  } else if (type_name == "MostAllocated") {
    out.type = ScoringStrategyType::kMostAllocated;
  } else if (type_name == "RequestedToCapacityRatio") {
    out.type = ScoringStrategyType::kRequestedToCapacityRatio;
  } else {
    errs.NotSupported("scoringStrategy.type", type_name,
                      {"LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"});
  }
  for (size_t i = 0; i < out.resources.size(); ++i) {
    const auto& r = out.resources[i];
    if (r.weight <= 0 || r.weight > 100) {
      errs.Invalid("scoringStrategy.resources[" + std::to_string(i) + "].weight", r.weight,
                   "resource weight of " + r.name + " not in valid range (0, 100]");
    }
  }
  if (has_ratio_param) {
    // Upstream validates the shape under the path "scoringStrategy.shape".
    const std::string sp = "scoringStrategy.shape";
    if (out.shape.empty()) {
      errs.Required(sp, "at least one point must be specified");
    } else {
      for (size_t i = 1; i < out.shape.size(); ++i) {
        if (out.shape[i - 1].utilization >= out.shape[i].utilization) {
          errs.Invalid(sp + "[" + std::to_string(i) + "].utilization", out.shape[i].utilization,
                       "utilization values must be sorted in increasing order");
          break;
        }
      }
      for (size_t i = 0; i < out.shape.size(); ++i) {
        const auto& pt = out.shape[i];
        if (pt.utilization < 0 || pt.utilization > 100) {
          errs.Invalid(sp + "[" + std::to_string(i) + "].utilization", pt.utilization,
                       "not in valid range [0, 100]");
        }
        if (pt.score < 0 || pt.score > kMaxCustomPriorityScore) {
          errs.Invalid(sp + "[" + std::to_string(i) + "].score", pt.score,
                       "not in valid range [0, 10]");
        }
      }
    }
  } else if (errs.empty() && out.type == ScoringStrategyType::kRequestedToCapacityRatio) {
    // Upstream would dereference a nil requestedToCapacityRatio; reject instead.
    errs.Required("scoringStrategy.requestedToCapacityRatio",
                  "must be set for type RequestedToCapacityRatio");
  }
  if (!errs.empty()) return helper::ArgsError(errs, kArgsKind);
  return out;
}

std::vector<InsufficientResource> Fits(const api::Pod& pod, const framework::NodeInfo& node) {
  std::vector<InsufficientResource> out;
  api::Resource req = api::PodRequests(pod);
  std::erase_if(req.scalar, [](const std::pair<api::ResourceId, int64_t>& e) {
    return !helper::IsScalarResourceName(api::ScalarResourceName(e.first));
  });
  CheckFit(req, node,
           [&](FitKind k, api::ResourceId id, int64_t req, int64_t used, int64_t cap, bool unres) {
             out.push_back({KindName(k, id), Reason(k, id), req, used, cap, unres});
           });
  return out;
}

namespace {
std::vector<UtilizationShapePoint> ScaledShape(const std::vector<UtilizationShapePoint>& shape) {
  std::vector<UtilizationShapePoint> out;
  out.reserve(shape.size());
  // MaxCustomPriorityScore (10) is rescaled to MaxNodeScore (100).
  for (const auto& p : shape) {
    out.push_back({p.utilization, p.score * (framework::kMaxNodeScore / kMaxCustomPriorityScore)});
  }
  return out;
}
}  // namespace

Fit::Fit(NodeResourcesFitArgs args)
    : args_(std::move(args)),
      ignored_resources_(args_.ignored_resources.begin(), args_.ignored_resources.end()),
      ignored_groups_(args_.ignored_resource_groups.begin(), args_.ignored_resource_groups.end()),
      allocation_(args_.resources, /*use_requested=*/false),
      shape_fn_(ScaledShape(args_.shape)) {}

bool Fit::IgnoredScalar(const std::string& name) const {
  if (ignored_resources_.empty() && ignored_groups_.empty()) return false;
  if (!helper::IsExtendedResourceName(name)) return false;
  if (ignored_resources_.count(name)) return true;
  if (!ignored_groups_.empty()) {
    std::string_view prefix = std::string_view(name).substr(0, name.find('/'));
    if (ignored_groups_.find(prefix) != ignored_groups_.end()) return true;
  }
  return false;
}

framework::Status Fit::PreFilter(framework::CycleState& state, const framework::PodInfo& pod,
                                 framework::PreFilterResult* /*result*/) {
  auto s = std::make_unique<PreFilterState>();
  s->request.milli_cpu = pod.requests.milli_cpu;
  s->request.memory = pod.requests.memory;
  s->request.ephemeral_storage = pod.requests.ephemeral_storage;
  for (const auto& [id, q] : pod.requests.scalar) {
    if (q == 0) continue;
    const std::string& name = api::ScalarResourceName(id);
    // Upstream's framework.Resource drops names that are not scalar resources.
    if (!helper::IsScalarResourceName(name) || IgnoredScalar(name)) continue;
    s->request.scalar.emplace_back(id, q);
    if (dra_ && dra_->HasExtendedResourceClasses() &&
        !dra_->ClassForExtendedResource(name).empty()) {
      s->dra_backed.push_back(id);
    }
  }
  state.Write(kPreFilterStateKey, std::move(s));
  return framework::Status();
}

framework::Status Fit::Filter(const framework::CycleState& state, const framework::PodInfo& /*pod*/,
                              const framework::NodeInfo& node) {
  const auto* s = state.ReadAs<PreFilterState>(kPreFilterStateKey);
  if (s == nullptr) {
    return framework::Status::Error(
        "error reading \"PreFilterNodeResourcesFit\" from cycleState: not found");
  }
  // fit.go fitsRequest: an extended resource backed by DRA that the node does not advertise
  // (allocatable 0) is DynamicResources' to check (its devices), not this plugin's.
  std::optional<api::Resource> without_dra;
  for (api::ResourceId id : s->dra_backed) {
    if (node.allocatable().Scalar(id) != 0) continue;
    if (!without_dra) without_dra = s->request;
    std::erase_if(without_dra->scalar,
                  [id](const std::pair<api::ResourceId, int64_t>& e) { return e.first == id; });
  }
  const api::Resource& request = without_dra ? *without_dra : s->request;
  int insufficient = 0;
  bool unresolvable = false;
  FitKind first_kind = FitKind::kPods;
  CheckFit(request, node, [&](FitKind k, api::ResourceId, int64_t, int64_t, int64_t, bool unres) {
    if (insufficient++ == 0) first_kind = k;
    unresolvable = unresolvable || unres;
  });
  if (insufficient == 0) return framework::Status();
  if (insufficient == 1 && first_kind != FitKind::kScalar) {
    // One first-class resource short, the common rejection: a prebuilt Status (with this
    // plugin's name) shared by every node that fails the same way, no allocation per node.
    static const auto kSingle = [] {
      std::array<framework::Status, 8> out;
      for (int k = 0; k < 4; ++k) {
        for (int u = 0; u < 2; ++u) {
          out[static_cast<size_t>(k * 2 + u)] = framework::Status(
              u ? framework::Code::kUnschedulableAndUnresolvable : framework::Code::kUnschedulable,
              Reason(static_cast<FitKind>(k), api::ResourceId{}));
          out[static_cast<size_t>(k * 2 + u)].WithPlugin(kName);
        }
      }
      return out;
    }();
    return kSingle[static_cast<size_t>(static_cast<int>(first_kind) * 2 + (unresolvable ? 1 : 0))];
  }
  std::vector<std::string> reasons;
  CheckFit(request, node, [&](FitKind k, api::ResourceId id, int64_t, int64_t, int64_t, bool) {
    reasons.push_back(Reason(k, id));
  });
  return framework::Status(unresolvable ? framework::Code::kUnschedulableAndUnresolvable
                                        : framework::Code::kUnschedulable,
                           std::move(reasons));
}

framework::Status Fit::PreScore(framework::CycleState& state, const framework::PodInfo& pod,
                                const std::vector<const framework::NodeInfo*>&) {
  auto s = std::make_unique<PreScoreState>();
  s->pod_requests.resize(allocation_.size());
  allocation_.PodRequests(pod, s->pod_requests.data());
  state.Write(kPreScoreStateKey, std::move(s));
  return framework::Status();
}

int64_t Fit::ScoreVectors(const int64_t* requested, const int64_t* allocatable) const {
  switch (args_.type) {
    case ScoringStrategyType::kLeastAllocated:
      return LeastAllocatedScore(allocation_.resolved(), requested, allocatable);
    case ScoringStrategyType::kMostAllocated:
      return MostAllocatedScore(allocation_.resolved(), requested, allocatable);
    case ScoringStrategyType::kRequestedToCapacityRatio:
      return RequestedToCapacityRatioScore(shape_fn_, allocation_.resolved(), requested,
                                           allocatable);
  }
  return 0;
}

framework::Status Fit::ScoreRange(const framework::CycleState& state, const framework::PodInfo& pod,
                                  const framework::NodeInfo* const* nodes, size_t count,
                                  int64_t* scores) {
  const size_t n = allocation_.size();
  if (n == 0) return framework::Status::Error("resources not found");
  ScratchBuffer pod_req(n);
  const int64_t* reqs;
  if (const auto* s = state.ReadAs<PreScoreState>(kPreScoreStateKey)) {
    reqs = s->pod_requests.data();
  } else {
    allocation_.PodRequests(pod, pod_req.data());
    reqs = pod_req.data();
  }
  allocation_.ScoreNodes(
      nodes, count, reqs,
      [this](const int64_t* requested, const int64_t* allocatable) {
        return ScoreVectors(requested, allocatable);
      },
      scores);
  return framework::Status();
}

std::vector<framework::ClusterEventWithHint> Fit::EventsToRegister() const {
  std::vector<framework::ClusterEventWithHint> events(2);
  // InPlacePodVerticalScaling is on (beta default since 1.33): a scale-down frees resources.
  events[0].event = {framework::EventResource::kPod,
                     framework::kDelete | framework::kUpdatePodScaleDown, "PodDelete|PodScaleDown"};
  events[0].hint = [](const api::Pod& pod, const framework::EventObjects& objs) {
    if (objs.new_pod == nullptr) {
      const api::Pod* deleted = objs.old_pod;
      if (deleted == nullptr) return framework::QueueingHint::kQueue;
      // A deleted pod that was neither bound nor nominated freed nothing.
      if (deleted->spec.node_name.empty() && deleted->status.nominated_node_name.empty()) {
        return framework::QueueingHint::kQueueSkip;
      }
      return framework::QueueingHint::kQueue;
    }
    if (objs.old_pod == nullptr) return framework::QueueingHint::kQueue;
    return IsSchedulableAfterPodScaleDown(pod, *objs.old_pod, *objs.new_pod)
               ? framework::QueueingHint::kQueue
               : framework::QueueingHint::kQueueSkip;
  };
  events[1].event = {framework::EventResource::kNode,
                     framework::kAdd | framework::kUpdateNodeAllocatable,
                     "NodeAdd|NodeAllocatableChange"};
  events[1].hint = [](const api::Pod& pod, const framework::EventObjects& objs) {
    if (objs.new_node == nullptr) return framework::QueueingHint::kQueue;
    const framework::NodeInfo modified(std::make_shared<api::Node>(*objs.new_node));
    // The pod will not fit the new or updated node anyway.
    if (!Fits(pod, modified).empty()) return framework::QueueingHint::kQueueSkip;
    if (objs.old_node == nullptr) return framework::QueueingHint::kQueue;
    return HaveAnyRequestedResourcesIncreased(pod, *objs.old_node, *objs.new_node)
               ? framework::QueueingHint::kQueue
               : framework::QueueingHint::kQueueSkip;
  };
  return events;
}

framework::StatusOr<std::unique_ptr<framework::Plugin>> Fit::New(framework::PluginArgs args,
                                                                 framework::Handle& h) {
  auto parsed = ParseNodeResourcesFitArgs(args);
  if (!parsed.ok()) return parsed.status();
  auto fit = std::make_unique<Fit>(std::move(parsed.value()));
  fit->dra_ = h.Service<dra::DefaultDRAManager>();
  return std::unique_ptr<framework::Plugin>(std::move(fit));
}

bool Fit::SameSignature(const framework::PodInfo& canonical, const framework::PodInfo& pod) const {
  return canonical.requests == pod.requests &&
         canonical.non_zero_requests == pod.non_zero_requests &&
         canonical.scoring_non_zero_requests == pod.scoring_non_zero_requests;
}

}  // namespace phalanx::plugins::noderesources
