#include "plugins/dynamicresources/dynamic_resources.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <utility>

#include "absl/synchronization/mutex.h"
#include "api/duration.h"
#include "api/labels.h"
#include "framework/device_choice.h"
#include "framework/handle.h"
#include "framework/types.h"
#include "plugins/dynamicresources/extended_resources.h"
#include "plugins/helper/args.h"
#include "plugins/helper/validation.h"

namespace phalanx::plugins::dynamicresources {

using framework::Status;

namespace {

constexpr std::string_view kStateKey = "PreFilterDynamicResources";

// What PreFilter learned, shared by the cycle's points (upstream stateData; Clone shares it,
// as upstream's Clone returns the same pointer).
struct Data {
  std::vector<dra::ResourceClaimPtr> claims;  // per spec.resourceClaims entry
  // Who each claim is reserved for: the pod, or its PodGroup (KEP-5729).
  std::vector<dra::ConsumerReference> consumers;
  // Set by PreBind when it added a PodGroup to the claim's reservedFor (Unreserve undoes it).
  std::vector<bool> wrote_group;
  std::vector<std::optional<api::NodeSelector>> available_on;  // allocated claims' selectors
  std::vector<size_t> to_allocate;                             // indices of unallocated claims
  std::shared_ptr<const dra::Allocator> allocator;             // when to_allocate is not empty
  std::vector<std::optional<dra::AllocationResult>> reserved;  // set by Reserve, per claim
  mutable absl::Mutex mu;
  // Filter's allocation for each feasible node (one result per to_allocate entry).
  mutable std::map<std::string, std::vector<dra::AllocationResult>> node_allocations
      ABSL_GUARDED_BY(mu);
  std::vector<size_t> unavailable;  // allocated claims whose selector failed on some node

  // Extended resources backed by DRA (extended_resources.h). The allocator's inputs but the
  // claims, for the allocators that add the node's extended resource claim.
  dra::AllocatorInput base_input;
  std::shared_ptr<const std::map<std::string, dra::DeviceClass>> classes;
  struct Extended {
    ExtendedResourceClass rc;
    api::ResourceId id;  // to read the node's allocatable
  };
  std::vector<Extended> extended;  // the pod's requests a DeviceClass serves, by name
  // A claim of the pod's from an earlier cycle that is not allocated and reserved for it:
  // stale (upstream: Filter rejects every node, PostFilter deletes it).
  dra::ResourceClaimPtr stale_extended;
  std::string extended_uid;  // temporary UID of the in-memory claim (pending allocation)
  // Per set of resources served by DRA on a node (a bit per `extended` entry): the claim
  // for that node, its container mappings and the allocator of every claim plus it.
  struct Variant {
    dra::ResourceClaimPtr claim;
    std::vector<api::ContainerExtendedResourceRequest> mappings;
    std::shared_ptr<const dra::Allocator> allocator;
  };
  mutable std::map<uint64_t, std::shared_ptr<const Variant>> variants ABSL_GUARDED_BY(mu);
  // Filter's variant per feasible node whose allocation includes the claim.
  mutable std::map<std::string, std::shared_ptr<const Variant>> node_variant ABSL_GUARDED_BY(mu);
  std::shared_ptr<const Variant> reserved_variant;  // Reserve's
  std::optional<dra::AllocationResult> reserved_extended;
  std::optional<api::Unstructured> created_extended;  // PreBind's, for Unreserve to delete
  // Allocated claims whose binding failed or timed out (KEP-5007): unavailable on every node,
  // deallocated by PostFilter.
  std::vector<bool> binding_unavailable;
  // PreBind's wait for binding conditions: when it ends ("device binding timeout").
  int64_t wait_deadline = 0;
};

struct State final : framework::StateData {
  std::shared_ptr<Data> d;
  std::unique_ptr<framework::StateData> Clone() const override {
    auto s = std::make_unique<State>();
    s->d = d;
    return s;
  }
};

Data* Read(const framework::CycleState& cs) {
  auto* s = cs.ReadAs<State>(kStateKey);
  return s ? s->d.get() : nullptr;
}

// Whether `c` is reserved for `consumer`: the pod by UID; a PodGroup by UID, or by name when
// the PodGroup's UID is unknown (KEP-5729 "only the name in the reference must match").
bool ReservedFor(const dra::ResourceClaim& c, const dra::ConsumerReference& consumer) {
  for (const auto& r : c.reserved_for) {
    if (r.resource != consumer.resource || r.api_group != consumer.api_group) continue;
    if (consumer.uid.empty() ? r.name == consumer.name : r.uid == consumer.uid) return true;
  }
  return false;
}

dra::ConsumerReference PodConsumer(const api::Pod& pod) {
  return dra::ConsumerReference{"", "pods", pod.metadata.name, pod.metadata.uid};
}

std::string ClaimKey(const dra::ResourceClaim& c) { return c.Key(); }

// The pod's extended-resource requests that a DeviceClass serves (upstream
// hasDeviceClassMappedExtendedResource: an extended resource name, or the implicit
// "deviceclass.resource.kubernetes.io/<class>" name, with a class), by name.
std::vector<Data::Extended> DraBackedRequests(const dra::DefaultDRAManager* m,
                                              const framework::PodInfo& pod) {
  std::vector<Data::Extended> out;
  if (!m || !m->HasExtendedResourceClasses()) return out;
  for (const auto& [id, q] : pod.requests.scalar) {
    if (q == 0) continue;
    const std::string& name = api::ScalarResourceName(id);
    if (name.rfind(dra::kImplicitExtendedResourcePrefix, 0) != 0 &&
        !helper::IsExtendedResourceName(name)) {
      continue;
    }
    std::string cls = m->ClassForExtendedResource(name);
    if (!cls.empty()) out.push_back({ExtendedResourceClass{name, std::move(cls)}, id});
  }
  std::sort(out.begin(), out.end(), [](const Data::Extended& a, const Data::Extended& b) {
    return a.rc.resource < b.rc.resource;
  });
  return out;
}

// The node's variant of the in-memory extended resource claim for the resources in `bits`
// (upstream filterExtendedResources: one claim per node, its requests for what the node
// does not advertise), built once per variant. nullptr when no request is needed.
api::StatusOr<std::shared_ptr<const Data::Variant>> VariantFor(const Data& d,
                                                               const framework::PodInfo& pod,
                                                               uint64_t bits) {
  absl::MutexLock l(&d.mu);
  if (auto it = d.variants.find(bits); it != d.variants.end()) return it->second;
  std::vector<ExtendedResourceClass> resources;
  for (size_t k = 0; k < d.extended.size(); ++k) {
    if (bits & (uint64_t{1} << k)) resources.push_back(d.extended[k].rc);
  }
  auto v = std::make_shared<Data::Variant>();
  std::vector<dra::DeviceRequest> requests;
  ExtendedResourceRequests(pod.Pod(), resources, &requests, &v->mappings);
  if (requests.empty()) {
    d.variants[bits] = nullptr;
    return std::shared_ptr<const Data::Variant>();
  }
  const api::Pod& p = pod.Pod();
  auto claim = std::make_shared<dra::ResourceClaim>();
  claim->metadata.namespace_ = p.metadata.namespace_;
  claim->metadata.name = kExtendedClaimInMemoryName;
  claim->metadata.uid = d.extended_uid;
  claim->metadata.generate_name = p.metadata.name + "-extended-resources-";
  claim->metadata.annotations[dra::kExtendedResourceClaimAnnotation] = "true";
  claim->metadata.owner_references.push_back(
      api::OwnerReference{"v1", "Pod", p.metadata.name, p.metadata.uid, true});
  claim->spec.requests = std::move(requests);
  v->claim = claim;
  dra::AllocatorInput in = d.base_input;
  for (size_t i : d.to_allocate) in.claims.push_back(d.claims[i]);
  in.claims.push_back(claim);
  auto a = dra::Allocator::New(std::move(in));
  if (!a.ok()) return a.status();
  struct Owned {
    std::shared_ptr<const std::map<std::string, dra::DeviceClass>> classes;
    dra::Allocator allocator;
  };
  auto owned = std::make_shared<Owned>(Owned{d.classes, std::move(*a)});
  v->allocator = std::shared_ptr<const dra::Allocator>(owned, &owned->allocator);
  d.variants[bits] = v;
  return std::shared_ptr<const Data::Variant>(v);
}

}  // namespace

api::Status ClaimReadyForBinding(const dra::ResourceClaim& c, bool* ready) {
  *ready = false;
  if (!c.allocation) return absl::OkStatus();
  for (const dra::DeviceResult& r : c.allocation->devices) {
    if (r.binding_conditions.empty()) continue;
    // getAllocatedDeviceStatus: the entry of the same driver, pool and device.
    const dra::AllocatedDeviceStatus* st = nullptr;
    for (const auto& d : c.devices) {
      if (d.driver == r.driver && d.pool == r.pool && d.device == r.device) {
        st = &d;
        break;
      }
    }
    if (!st) return absl::OkStatus();
    auto find = [&](const std::string& type) -> const dra::DeviceCondition* {
      for (const auto& cond : st->conditions) {
        if (cond.type == type) return &cond;
      }
      return nullptr;
    };
    for (const std::string& type : r.binding_failure_conditions) {
      const dra::DeviceCondition* f = find(type);
      if (f && f->status == "True") {
        return absl::FailedPreconditionError("claim " + c.metadata.name +
                                             " binding failed: reason=" + f->reason +
                                             ", message=" + api::GoQuote(f->message));
      }
    }
    for (const std::string& type : r.binding_conditions) {
      const dra::DeviceCondition* t = find(type);
      if (!t || t->status != "True") return absl::OkStatus();
    }
  }
  *ready = true;
  return absl::OkStatus();
}

bool HasBindingConditions(const dra::ResourceClaim& c) {
  if (!c.allocation) return false;
  for (const auto& r : c.allocation->devices) {
    if (!r.binding_conditions.empty()) return true;
  }
  return false;
}

framework::StatusOr<int64_t> DynamicResources::ParseArgs(framework::PluginArgs args) {
  constexpr std::string_view kKind = "DynamicResourcesArgs";
  helper::FieldErrors errs;
  bool has_content = false;
  if (!helper::CheckArgsMap(args, kKind, {"filterTimeout", "bindingTimeout"}, &errs,
                            &has_content)) {
    return helper::ArgsError(errs, kKind);
  }
  int64_t binding = kBindingTimeoutDefaultNs;
  if (!has_content) return binding;
  // metav1.Duration: a Go duration string ("10m", "90s").
  auto duration = [&](const char* key, int64_t min_ns,
                      const char* detail) -> std::optional<int64_t> {
    const YAML::Node n = (*args)[key];
    if (!n.IsDefined() || n.IsNull()) return std::nullopt;
    if (!n.IsScalar()) {
      errs.Invalid(key, std::string_view("object"), "must be a duration string");
      return std::nullopt;
    }
    auto d = api::ParseGoDuration(n.Scalar());
    if (!d.ok()) {
      errs.Invalid(key, n.Scalar(), std::string(d.status().message()));
      return std::nullopt;
    }
    if (*d < min_ns) {
      errs.Invalid(key, n.Scalar(), detail);
      return std::nullopt;
    }
    return *d;
  };
  // ValidateDynamicResourcesArgs (pkg/scheduler/apis/config/validation).
  (void)duration("filterTimeout", 0, "must be zero or positive");
  if (auto b = duration("bindingTimeout", api::kNanosPerSecond, "must be at least 1 second")) {
    binding = *b;
  }
  if (!errs.empty()) return helper::ArgsError(errs, kKind);
  return binding;
}

framework::StatusOr<std::unique_ptr<framework::Plugin>> DynamicResources::New(
    framework::PluginArgs args, framework::Handle& h) {
  auto timeout = ParseArgs(args);
  if (!timeout.ok()) return timeout.status();
  return std::unique_ptr<framework::Plugin>(
      new DynamicResources(h, h.Service<dra::DefaultDRAManager>(), *timeout));
}

bool DynamicResources::ClaimTimedOut(const dra::ResourceClaim& c, int64_t now) const {
  if (!c.allocation || !c.allocation->allocation_timestamp || !HasBindingConditions(c)) {
    return false;
  }
  return *c.allocation->allocation_timestamp + binding_timeout_ns_ < now;
}

api::StatusOr<std::vector<dra::ResourceClaimPtr>> DynamicResources::PodClaims(
    const dra::DefaultDRAManager& m, const api::Pod& pod,
    std::vector<dra::ConsumerReference>* consumers) {
  std::vector<dra::ResourceClaimPtr> out;
  // KEP-5729: the pod's PodGroup (spec.schedulingGroup.podGroupName) and its claims. An
  // unknown PodGroup owns no claims (the gang plugins keep such a pod waiting anyway).
  std::shared_ptr<const dra::PodGroupClaims> group;
  if (const std::string& pg = pod.spec.scheduling_group_pod_group_name; !pg.empty()) {
    auto g = m.PodGroupClaimsOf(pod.metadata.namespace_, pg);
    if (g.ok()) {
      group = *g;
    } else if (!absl::IsNotFound(g.status())) {
      return g.status();
    }
  }
  for (const auto& pc : pod.spec.resource_claims) {
    const dra::PodGroupResourceClaim* group_claim = group ? group->Match(pc) : nullptr;
    // k8s.io/dynamic-resource-allocation/resourceclaim.Name: the claim's own name, or the
    // generated one from the pod's status (ErrClaimNotFound until the controller wrote it);
    // for a PodGroup's claim, the PodGroup's status names it too (KEP-5729 "Create").
    std::string name = pc.resource_claim_name;
    const bool generated = name.empty();
    if (generated) {
      const std::string* claim_name = nullptr;
      for (const auto& s : pod.status.resource_claim_statuses) {
        if (s.name == pc.name) claim_name = &s.resource_claim_name;
      }
      if (!claim_name && group_claim) {
        auto it = group->statuses.find(pc.name);
        if (it != group->statuses.end()) claim_name = &it->second;
      }
      if (!claim_name) {
        return absl::NotFoundError("pod \"" + pod.Key() + "\": ResourceClaim not created yet");
      }
      if (claim_name->empty()) continue;  // no claim was needed
      name = *claim_name;
    }
    auto claim = m.GetClaim(pod.metadata.namespace_, name);
    if (!claim.ok()) return claim.status();
    const dra::ResourceClaim& c = **claim;
    if (c.metadata.deletion_timestamp) {
      return absl::FailedPreconditionError("resourceclaim \"" + c.metadata.name +
                                           "\" is being deleted");
    }
    if (generated && group_claim) {
      // KEP-5729: a claim generated for the PodGroup is owned by it.
      bool owned = false;
      for (const auto& o : c.metadata.owner_references) {
        owned = owned || (o.controller && o.kind == "PodGroup" &&
                          (group->metadata.uid.empty() ? o.name == group->metadata.name
                                                       : o.uid == group->metadata.uid));
      }
      if (!owned) {
        return absl::FailedPreconditionError(
            "ResourceClaim " + c.Key() + " was not created for pod group " +
            pod.metadata.namespace_ + "/" + group->metadata.name + " (pod group is not owner)");
      }
    } else if (generated) {
      // resourceclaim.IsForPod: the pod must be the claim's controlling owner.
      bool owned = false;
      for (const auto& o : c.metadata.owner_references) {
        owned = owned || (o.controller && o.uid == pod.metadata.uid);
      }
      if (!owned) {
        return absl::FailedPreconditionError("ResourceClaim " + c.Key() +
                                             " was not created for pod " + pod.Key() +
                                             " (pod is not owner)");
      }
    }
    if (consumers) consumers->push_back(group_claim ? group->Consumer() : PodConsumer(pod));
    out.push_back(*claim);
  }
  return out;
}

Status DynamicResources::PreEnqueue(const framework::PodInfo& pod) {
  if (pod.Pod().spec.resource_claims.empty()) return Status::Success();
  if (!dra_) {
    return Status::UnschedulableAndUnresolvable(
        "DynamicResources: this scheduler has no DRA state (dra::DefaultDRAManager service)");
  }
  auto claims = PodClaims(*dra_, pod.Pod());
  if (!claims.ok())
    return Status::UnschedulableAndUnresolvable(std::string(claims.status().message()));
  return Status::Success();
}

Status DynamicResources::PreFilter(framework::CycleState& state, const framework::PodInfo& pod,
                                   framework::PreFilterResult*) {
  std::vector<Data::Extended> extended = DraBackedRequests(dra_, pod);
  if (pod.Pod().spec.resource_claims.empty() && extended.empty()) {
    return Status(framework::Code::kSkip);
  }
  if (!dra_) {
    return Status::UnschedulableAndUnresolvable(
        "DynamicResources: this scheduler has no DRA state (dra::DefaultDRAManager service)");
  }
  if (extended.size() > 63) {
    return Status::UnschedulableAndUnresolvable(
        "more than 63 extended resources backed by DRA in one pod");
  }
  auto st = std::make_unique<State>();
  st->d = std::make_shared<Data>();
  Data& d = *st->d;
  auto claims = CycleClaims(pod.Pod(), &d.consumers);
  if (!claims.ok())
    return Status::UnschedulableAndUnresolvable(std::string(claims.status().message()));
  d.claims = std::move(*claims);
  if (!extended.empty()) {
    // upstream preFilterExtendedResources: the claim made in an earlier cycle, if any.
    const api::Pod& p = pod.Pod();
    if (auto found = dra_->FindExtendedResourceClaim(p.metadata.namespace_, p.metadata.name,
                                                     p.metadata.uid)) {
      if (found->allocation && ReservedFor(*found, PodConsumer(p))) {
        d.claims.push_back(found);  // serves the resources already: an allocated claim
        d.consumers.push_back(PodConsumer(p));
      } else {
        d.stale_extended = found;
      }
    } else {
      d.extended = std::move(extended);
      d.extended_uid = "extended-resources/" + p.metadata.uid;
    }
  }
  if (d.claims.empty() && d.extended.empty() && !d.stale_extended) {
    return Status(framework::Code::kSkip);
  }
  d.available_on.resize(d.claims.size());
  d.reserved.resize(d.claims.size());
  d.wrote_group.resize(d.claims.size());
  d.binding_unavailable.resize(d.claims.size());
  auto classes = dra_->Classes();
  const int64_t now = h_.GetClock().Now();
  for (size_t i = 0; i < d.claims.size(); ++i) {
    const dra::ResourceClaim& c = *d.claims[i];
    if (c.allocation) {
      if (c.reserved_for.size() >= dra::kReservedForMaxSize && !ReservedFor(c, d.consumers[i])) {
        return Status::UnschedulableAndUnresolvable("resourceclaim in use");
      }
      d.available_on[i] = c.allocation->node_selector;
      // Upstream's Filter: a claim whose binding failed, or that is not ready past its
      // binding timeout, is unavailable (on every node: it depends on no node), so that
      // PostFilter deallocates it and another device can be tried.
      bool ready = false;
      const api::Status st = ClaimReadyForBinding(c, &ready);
      d.binding_unavailable[i] = !st.ok() || (!ready && ClaimTimedOut(c, now));
      continue;
    }
    d.to_allocate.push_back(i);
    if (dra_->HasPendingAllocation(c.metadata.uid)) {
      return Status::UnschedulableAndUnresolvable("resource claim " + ClaimKey(c) +
                                                  " is in the process of being allocated");
    }
    for (const auto& req : c.spec.requests) {
      for (const auto* s : req.Specs()) {
        if (classes->count(s->device_class_name)) continue;
        if (api::Status err = dra_->ClassError(s->device_class_name); !err.ok()) {
          return Status::UnschedulableAndUnresolvable("request " + s->name + ": " +
                                                      std::string(err.message()));
        }
        return Status::UnschedulableAndUnresolvable("request " + s->name + ": device class " +
                                                    s->device_class_name + " does not exist");
      }
    }
  }
  if (!d.to_allocate.empty() || !d.extended.empty()) {
    dra::AllocatorInput in;
    in.classes = classes.get();
    in.slice_index = dra_->SliceIndexView();
    in.in_use_index = dra_->InUse();
    in.memo = dra_->Memo();
    if (!joint_mode_) {  // devices a gang member placed on the view took (shares as shares)
      for (const auto& [uid, c] : tentative_) in.Hold(*c->allocation);
    }
    d.base_input = in;
    d.classes = classes;
  }
  if (!d.to_allocate.empty()) {
    dra::AllocatorInput in = d.base_input;
    for (size_t i : d.to_allocate) in.claims.push_back(d.claims[i]);
    auto a = dra::Allocator::New(std::move(in));
    if (!a.ok()) return Status::UnschedulableAndUnresolvable(std::string(a.status().message()));
    // Keep the class map alive with the allocator.
    struct Owned {
      std::shared_ptr<const std::map<std::string, dra::DeviceClass>> classes;
      dra::Allocator allocator;
    };
    auto owned = std::make_shared<Owned>(Owned{classes, std::move(*a)});
    d.allocator = std::shared_ptr<const dra::Allocator>(owned, &owned->allocator);
  }
  state.Write(kStateKey, std::move(st));
  return Status::Success();
}

Status DynamicResources::Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                                const framework::NodeInfo& node_info) {
  Data* d = Read(state);
  if (!d || (d->claims.empty() && d->extended.empty() && !d->stale_extended)) {
    return Status::Success();
  }
  // A claim of an earlier cycle: PostFilter deletes it, the next attempt starts anew.
  if (d->stale_extended) return Status::Unschedulable("cannot schedule extended resource claim");
  const api::Node& node = *node_info.node();
  for (size_t i = 0; i < d->claims.size(); ++i) {
    const auto& sel = d->available_on[i];
    if (d->binding_unavailable[i] ||
        (sel && !api::NodeSelectorMatches(*sel, node.metadata.labels, node.metadata.name))) {
      return Status::UnschedulableAndUnresolvable("resourceclaim not available on the node");
    }
  }
  // Extended resources the node does not advertise (allocatable 0) come from DRA here.
  std::shared_ptr<const Data::Variant> variant;
  if (!d->extended.empty()) {
    uint64_t bits = 0;
    for (size_t k = 0; k < d->extended.size(); ++k) {
      if (node_info.allocatable().Scalar(d->extended[k].id) == 0) bits |= uint64_t{1} << k;
    }
    if (bits) {
      auto v = VariantFor(*d, pod, bits);
      if (!v.ok()) return Status::UnschedulableAndUnresolvable(std::string(v.status().message()));
      variant = *v;
    }
  }
  const dra::Allocator* allocator = variant ? variant->allocator.get() : d->allocator.get();
  if (!allocator) return Status::Success();
  auto r = allocator->Allocate(node);
  if (!r.ok()) return Status::Error(std::string(r.status().message()));
  if (!r->ok) {
    // An invalid pool the node sees: upstream's reason (allocator_incubating.go), not the
    // generic one.
    std::string reason = r->reason.empty() ? "cannot allocate all claims" : r->reason;
    if (!r->failed_claim.empty()) reason += " (claim " + r->failed_claim + ")";
    return Status::UnschedulableAndUnresolvable(reason);
  }
  absl::MutexLock l(&d->mu);
  d->node_allocations[node.metadata.name] = std::move(r->results);
  if (variant) {
    d->node_variant[node.metadata.name] = std::move(variant);
  } else {
    d->node_variant.erase(node.metadata.name);
  }
  return Status::Success();
}

Status DynamicResources::PostFilter(framework::CycleState& state, const framework::PodInfo& pod,
                                    const framework::NodeToStatus&, framework::PostFilterResult*) {
  // Pods without claims: upstream's fast path (1.36), whose reason every unschedulable
  // pod's message carries ("... 2 Insufficient cpu. no new claims to deallocate, preemption: ...").
  Data* d = Read(state);
  // upstream PostFilter: the pod's extended resource claim of an earlier cycle is deleted, so
  // that the next attempt allocates anew.
  if (d && d->stale_extended) {
    const dra::ResourceClaim& c = *d->stale_extended;
    if (auto obj = dra_->ClaimObject(c.metadata.namespace_, c.metadata.name)) {
      if (auto s = h_.Client().DeleteResourceClaim(*obj); !s.ok() && !absl::IsNotFound(s)) {
        return Status::Error("delete extended resource claim " + c.Key() + ": " +
                             std::string(s.message()));
      }
    }
    return Status::Unschedulable("deletion of ResourceClaim completed");
  }
  if (pod.Pod().spec.resource_claims.empty()) {
    return Status::Unschedulable("no new claims to deallocate");
  }
  if (!d || d->claims.empty()) return Status::Unschedulable("no new claims to deallocate");
  // An allocated claim that no node can use and that only this pod (or nobody) reserved:
  // deallocate it (upstream PostFilter), so that the next attempt can allocate it anew.
  for (size_t i = 0; i < d->claims.size(); ++i) {
    const dra::ResourceClaim& c = *d->claims[i];
    if (!c.allocation || (!d->available_on[i] && !d->binding_unavailable[i])) continue;
    bool usable = false;
    if (!d->binding_unavailable[i]) {
      for (const auto* ni : h_.SnapshotSharedLister().List()) {
        const api::Node& n = *ni->node();
        usable = usable ||
                 api::NodeSelectorMatches(*d->available_on[i], n.metadata.labels, n.metadata.name);
      }
    }
    if (usable) continue;
    if (c.reserved_for.empty() ||
        (c.reserved_for.size() == 1 && c.reserved_for[0].uid == pod.Pod().metadata.uid)) {
      auto obj = dra_->ClaimObject(c.metadata.namespace_, c.metadata.name);
      if (!obj) continue;
      dra::ResourceClaim cleared = c;
      cleared.allocation.reset();
      cleared.reserved_for.clear();
      cleared.devices.clear();  // WithClaimStatus drops status.devices with the allocation
      if (auto s = h_.Client().UpdateResourceClaimStatus(dra::WithClaimStatus(*obj, cleared));
          !s.ok()) {
        return Status::Error(std::string(s.message()));
      }
      dra_->AssumeWritten(cleared);
      return Status::Unschedulable("deallocation of ResourceClaim completed");
    }
  }
  return Status::Unschedulable("still not schedulable");
}

Status DynamicResources::Reserve(framework::CycleState& state, const framework::PodInfo& pod,
                                 const std::string& node) {
  Data* d = Read(state);
  if (!d || (d->to_allocate.empty() && d->extended.empty())) return Status::Success();
  std::vector<dra::AllocationResult> results;
  std::shared_ptr<const Data::Variant> variant;
  {
    absl::MutexLock l(&d->mu);
    auto it = d->node_allocations.find(node);
    if (it == d->node_allocations.end()) {
      // No claim to allocate and the node advertises the extended resources itself.
      if (d->to_allocate.empty()) return Status::Success();
      return Status::Error("claim allocation not found for node");
    }
    results = it->second;
    if (auto v = d->node_variant.find(node); v != d->node_variant.end()) variant = v->second;
  }
  // Devices taken since Filter (another pod's Reserve, a gang member reserved before this
  // one): allocate again on the node against the current state.
  // A claim shared by gang members may be in flight from an earlier member's Reserve with
  // this very allocation: its own devices are no conflict.
  std::set<std::string> own;
  for (size_t i : d->to_allocate) own.insert(d->claims[i]->metadata.uid);
  if (variant) own.insert(d->extended_uid);
  const std::shared_ptr<const dra::InUseIndex> in_use = dra_->InUseExcept(own);
  // Allocate again when a device of Filter's allocation was taken since, when it holds
  // shares of a device (whether the shares taken since leave room is not in the whole-device
  // check), or when a plugin that reserved before this one chose the devices
  // (framework/device_choice.h).
  bool conflict = false;
  for (const auto& r : results) {
    for (const auto& dev : r.devices) {
      conflict =
          conflict || !dev.share_id.empty() ||
          (!dev.admin_access && in_use->Contains(dra::DeviceId{dev.driver, dev.pool, dev.device}));
    }
  }
  const auto* preferred = state.ReadAs<framework::DeviceChoice>(framework::kPreferredDevicesKey);
  if (preferred && preferred->node != node) preferred = nullptr;
  if (conflict || preferred) {
    const framework::NodeInfo* ni = h_.SnapshotSharedLister().Get(node);
    if (!ni) return Status::Error("node " + node + " not in the snapshot");
    auto classes = dra_->Classes();
    dra::AllocatorInput in;
    for (size_t i : d->to_allocate) in.claims.push_back(d->claims[i]);
    if (variant) in.claims.push_back(variant->claim);
    in.classes = classes.get();
    in.slice_index = dra_->SliceIndexView();
    in.in_use_index = in_use;
    in.memo = dra_->Memo();
    if (preferred) in.preferred = preferred->devices;
    auto a = dra::Allocator::New(std::move(in));
    if (!a.ok()) return Status::UnschedulableAndUnresolvable(std::string(a.status().message()));
    auto r = a->Allocate(*ni->node());
    if (!r.ok()) return Status::Error(std::string(r.status().message()));
    if (!r->ok) {
      return Status::Unschedulable(
          "cannot allocate all claims" +
          (r->failed_claim.empty() ? std::string() : " (claim " + r->failed_claim + ")"));
    }
    results = std::move(r->results);
  }
  // The devices allocated, for a plugin that reserves after this one (GpuShare).
  auto chosen = std::make_unique<framework::DeviceChoice>();
  chosen->node = node;
  for (const auto& r : results) {
    for (const auto& dev : r.devices) {
      if (!dev.admin_access) chosen->devices[dev.driver].push_back(dev.device);
    }
  }
  state.Write(framework::kAllocatedDevicesKey, std::move(chosen));
  for (size_t k = 0; k < d->to_allocate.size(); ++k) {
    const size_t i = d->to_allocate[k];
    d->reserved[i] = results[k];
    dra::ResourceClaim c = *d->claims[i];
    c.allocation = results[k];
    dra_->SignalPendingAllocation(c);
  }
  if (variant) {
    // The in-memory claim's allocation is in flight under its temporary UID until PreBind
    // writes the claim it creates.
    d->reserved_variant = variant;
    d->reserved_extended = results.back();
    dra::ResourceClaim c = *variant->claim;
    c.allocation = results.back();
    dra_->SignalPendingAllocation(c);
  }
  return Status::Success();
}

void DynamicResources::Unreserve(framework::CycleState& state, const framework::PodInfo& pod,
                                 const std::string&) {
  Data* d = Read(state);
  if (!d) return;
  // upstream unreserveExtendedResourceClaim: the allocation in flight goes, and the claim
  // PreBind created is deleted.
  if (d->reserved_variant) dra_->RemovePendingAllocation(d->extended_uid);
  d->reserved_variant.reset();
  d->reserved_extended.reset();
  if (d->created_extended) {
    (void)h_.Client().DeleteResourceClaim(*d->created_extended);
    d->created_extended.reset();
  }
  for (size_t i = 0; i < d->claims.size(); ++i) {
    const dra::ResourceClaim& c = *d->claims[i];
    dra_->RemovePendingAllocation(c.metadata.uid);
    d->reserved[i].reset();
    // A reservation PreBind wrote: take the pod out of reservedFor again. A PodGroup's
    // reservation only when this pod's PreBind added it (the first member of the group to
    // get there; the members bound before keep it, KEP-5729 "Deallocate").
    const dra::ConsumerReference& consumer = d->consumers[i];
    if (consumer.resource != "pods" && !d->wrote_group[i]) continue;
    d->wrote_group[i] = false;
    auto now = dra_->GetClaim(c.metadata.namespace_, c.metadata.name);
    if (!now.ok() || !ReservedFor(**now, consumer)) continue;
    auto obj = dra_->ClaimObject(c.metadata.namespace_, c.metadata.name);
    if (!obj) continue;
    dra::ResourceClaim updated = **now;
    std::erase_if(updated.reserved_for, [&](const dra::ConsumerReference& r) {
      return r.resource == consumer.resource && r.api_group == consumer.api_group &&
             r.uid == consumer.uid && r.name == consumer.name;
    });
    // Nobody left: the allocation goes too (as the resourceclaim controller would).
    if (updated.reserved_for.empty() && consumer.resource != "pods") updated.allocation.reset();
    if (h_.Client().UpdateResourceClaimStatus(dra::WithClaimStatus(*obj, updated)).ok()) {
      dra_->AssumeWritten(updated);
    }
  }
}

Status DynamicResources::PreBind(framework::CycleState& state, const framework::PodInfo& pod,
                                 const std::string& node) {
  Data* d = Read(state);
  if (!d) return Status::Success();
  for (size_t i = 0; i < d->claims.size(); ++i) {
    const dra::ResourceClaim& orig = *d->claims[i];
    absl::MutexLock write_lock(
        &claim_write_mu_[std::hash<std::string>{}(orig.metadata.uid) % kClaimWriteStripes]);
    // The claim as it is now (another member of a shared claim may have written it).
    auto now = dra_->GetClaim(orig.metadata.namespace_, orig.metadata.name);
    if (!now.ok()) return Status::Error(std::string(now.status().message()));
    dra::ResourceClaim c = **now;
    if (c.metadata.uid != orig.metadata.uid) {
      return Status::Error("resourceclaim " + c.Key() + " was replaced (UID changed)");
    }
    if (ReservedFor(c, d->consumers[i]) && c.allocation) continue;
    if (d->reserved[i]) {
      if (c.allocation && !(*c.allocation == *d->reserved[i])) {
        return Status::Error("resourceclaim " + c.Key() + " got allocated elsewhere meanwhile");
      }
      // Kept when written already (by a gang member): its timestamp stays.
      if (!c.allocation) c.allocation = d->reserved[i];
    }
    if (!c.allocation) return Status::Error("resourceclaim " + c.Key() + " is not allocated");
    // bindClaim: allocationTimestamp when unset, from the scheduler's clock (the binding
    // timeout counts from it; the virtual clock in simulate).
    if (!c.allocation->allocation_timestamp) {
      c.allocation->allocation_timestamp = h_.GetClock().Now();
    }
    if (c.reserved_for.size() >= dra::kReservedForMaxSize) {
      return Status::Error("resourceclaim " + c.Key() + ": reservedFor is full");
    }
    c.reserved_for.push_back(d->consumers[i]);
    auto obj = dra_->ClaimObject(c.metadata.namespace_, c.metadata.name);
    if (!obj) return Status::Error("resourceclaim " + c.Key() + " not found");
    if (auto s = h_.Client().UpdateResourceClaimStatus(dra::WithClaimStatus(*obj, c)); !s.ok()) {
      return Status::Error("resourceclaim " + c.Key() + ": " + std::string(s.message()));
    }
    dra_->AssumeWritten(c);
    d->wrote_group[i] = d->consumers[i].resource != "pods";
  }
  if (d->reserved_variant && d->reserved_extended) {
    if (Status s = BindExtendedClaim(state, pod.Pod()); !s.IsSuccess()) return s;
  }
  // KEP-5007: a device with binding conditions (e.g. one a fabric attaches to the node
  // first) keeps the pod here until its driver reports them; PreBindWait polls.
  bool wait = false;
  for (const auto& orig : d->claims) {
    auto now = dra_->GetClaim(orig->metadata.namespace_, orig->metadata.name);
    wait = wait || (now.ok() && HasBindingConditions(**now));
  }
  if (!wait) return Status::Success();
  h_.Client().RecordEvent(pod.Pod(), "Normal", "BindingConditionsPending",
                          "waiting for binding conditions for device on node " + node);
  d->wait_deadline = h_.GetClock().Now() + binding_timeout_ns_;
  return Status(framework::Code::kWait,
                "waiting for binding conditions for device on node " + node);
}

Status DynamicResources::BindExtendedClaim(framework::CycleState& state, const api::Pod& pod) {
  Data* d = Read(state);
  // upstream bindClaim for the special claim: create it (createExtendedResourceClaimInAPI),
  // write its allocation and the pod in reservedFor, then name it in the pod's
  // status.extendedResourceClaimStatus (patchPodExtendedResourceClaimStatus).
  const Data::Variant& v = *d->reserved_variant;
  auto created =
      h_.Client().CreateResourceClaim(ExtendedResourceClaimObject(pod, v.claim->spec.requests));
  if (!created.ok()) {
    return Status::Error("create claim for extended resources: " +
                         std::string(created.status().message()));
  }
  d->created_extended = *created;
  auto parsed = dra::ParseResourceClaim(*created);
  if (!parsed.ok()) return Status::Error(std::string(parsed.status().message()));
  dra::ResourceClaim c = std::move(*parsed);
  c.allocation = d->reserved_extended;
  c.allocation->allocation_timestamp = h_.GetClock().Now();
  c.reserved_for.push_back(PodConsumer(pod));
  if (auto s = h_.Client().UpdateResourceClaimStatus(dra::WithClaimStatus(*created, c)); !s.ok()) {
    return Status::Error("resourceclaim " + c.Key() + ": " + std::string(s.message()));
  }
  dra_->AssumeWritten(c);
  dra_->RemovePendingAllocation(d->extended_uid);
  d->reserved_variant.reset();
  if (auto s = h_.Client().PatchPodExtendedResourceClaimStatus(
          pod, api::PodExtendedResourceClaimStatus{v.mappings, c.metadata.name});
      !s.ok()) {
    return Status::Error(std::string(s.message()));
  }
  return Status::Success();
}

Status DynamicResources::PreBindWait(framework::CycleState& state, const framework::PodInfo&,
                                     const std::string&, int64_t now, int64_t* wake_at) {
  Data* d = Read(state);
  if (!d) return Status::Success();
  // isPodReadyForBinding: every claim as the informer has it now.
  for (const auto& orig : d->claims) {
    auto c = dra_->GetClaim(orig->metadata.namespace_, orig->metadata.name);
    if (!c.ok()) return Status::Error(std::string(c.status().message()));
    bool ready = false;
    if (api::Status st = ClaimReadyForBinding(**c, &ready); !st.ok()) {
      return Status::Error(std::string(st.message()));
    }
    if (ready) continue;
    if (ClaimTimedOut(**c, now)) {
      return Status::Error("claim " + (*c)->metadata.name + " binding timeout");
    }
    // wait.PollUntilContextTimeout's deadline.
    if (now >= d->wait_deadline) return Status::Error("device binding timeout");
    *wake_at = std::min(d->wait_deadline, now + kBindingPollIntervalNs);
    return Status(framework::Code::kWait, "waiting for binding conditions");
  }
  return Status::Success();
}

api::StatusOr<std::vector<dra::ResourceClaimPtr>> DynamicResources::CycleClaims(
    const api::Pod& pod, std::vector<dra::ConsumerReference>* consumers) const {
  auto claims = PodClaims(*dra_, pod, consumers);
  if (!claims.ok() || joint_mode_ || tentative_.empty()) return claims;
  for (auto& c : *claims) {
    if (c->allocation) continue;
    auto it = tentative_.find(c->metadata.uid);
    if (it != tentative_.end()) c = it->second;
  }
  return claims;
}

bool DynamicResources::SameSignature(const framework::PodInfo& canonical,
                                     const framework::PodInfo& pod) const {
  // Pods whose extended resources DRA serves take devices as claims do: unsignable too.
  return canonical.Pod().spec.resource_claims.empty() && pod.Pod().spec.resource_claims.empty() &&
         DraBackedRequests(dra_, canonical).empty() && DraBackedRequests(dra_, pod).empty();
}

bool DynamicResources::ConcernsPodGroupMember(const framework::PodInfo& pod) const {
  return !pod.Pod().spec.resource_claims.empty() || !DraBackedRequests(dra_, pod).empty();
}

void DynamicResources::PlacedOnView(const framework::CycleState& state, const framework::PodInfo&,
                                    const std::string& node) {
  Data* d = Read(state);
  if (!d || (d->to_allocate.empty() && d->extended.empty()) || joint_mode_) return;
  absl::MutexLock l(&d->mu);
  auto it = d->node_allocations.find(node);
  if (it == d->node_allocations.end()) return;
  for (size_t k = 0; k < d->to_allocate.size(); ++k) {
    auto c = std::make_shared<dra::ResourceClaim>(*d->claims[d->to_allocate[k]]);
    c->allocation = it->second[k];
    tentative_[c->metadata.uid] = std::move(c);
  }
  // The member's extended resource claim takes its devices on the view too.
  if (auto v = d->node_variant.find(node); v != d->node_variant.end() && v->second) {
    auto c = std::make_shared<dra::ResourceClaim>(*v->second->claim);
    c->allocation = it->second.back();
    tentative_[c->metadata.uid] = std::move(c);
  }
}

void DynamicResources::ViewReset() { tentative_.clear(); }

void DynamicResources::SetJointMode(bool joint) {
  joint_mode_ = joint;
  tentative_.clear();
}

Status DynamicResources::PlaceJointly(const std::vector<framework::CycleState*>& states,
                                      const std::vector<const framework::PodInfo*>& pods,
                                      const std::vector<std::string>& nodes) {
  if (!dra_) return Status::Success();
  // Every member's unallocated claims, each claim once (a claim the gang shares is
  // allocated on its first member's node and must be usable on the others').
  dra::AllocatorInput in;
  std::vector<const api::Node*> claim_nodes;
  std::map<std::string, size_t> index;  // claim UID -> position in in.claims
  std::vector<std::vector<size_t>> member_claims(pods.size());
  for (size_t m = 0; m < pods.size(); ++m) {
    Data* d = Read(*states[m]);
    if (!d || (d->to_allocate.empty() && d->extended.empty())) continue;
    const framework::NodeInfo* ni = h_.SnapshotSharedLister().Get(nodes[m]);
    if (!ni) return Status::Error("node " + nodes[m] + " not in the snapshot");
    std::vector<dra::ResourceClaimPtr> member = {};
    for (size_t i : d->to_allocate) member.push_back(d->claims[i]);
    {
      absl::MutexLock l(&d->mu);
      auto v = d->node_variant.find(nodes[m]);
      if (v != d->node_variant.end() && v->second) member.push_back(v->second->claim);
    }
    for (const auto& c : member) {
      auto [it, inserted] = index.emplace(c->metadata.uid, in.claims.size());
      if (inserted) {
        in.claims.push_back(c);
        claim_nodes.push_back(ni->node());
      }
      member_claims[m].push_back(it->second);
    }
  }
  if (in.claims.empty()) return Status::Success();
  auto classes = dra_->Classes();
  in.classes = classes.get();
  in.slice_index = dra_->SliceIndexView();
  in.in_use_index = dra_->InUse();
  in.memo = dra_->Memo();
  auto a = dra::Allocator::New(std::move(in));
  if (!a.ok()) return Status::UnschedulableAndUnresolvable(std::string(a.status().message()));
  auto r = a->AllocateOn(claim_nodes);
  if (!r.ok()) return Status::Error(std::string(r.status().message()));
  if (!r->ok) {
    return Status::Unschedulable(
        "cannot allocate all claims of the pod group's members together" +
        (r->failed_claim.empty() ? std::string() : " (claim " + r->failed_claim + ")"));
  }
  for (size_t m = 0; m < pods.size(); ++m) {
    if (member_claims[m].empty()) continue;
    const framework::NodeInfo* ni = h_.SnapshotSharedLister().Get(nodes[m]);
    std::vector<dra::AllocationResult> results;
    for (size_t k : member_claims[m]) {
      const dra::AllocationResult& res = r->results[k];
      if (res.node_selector &&
          !api::NodeSelectorMatches(*res.node_selector, ni->node()->metadata.labels, nodes[m])) {
        return Status::Unschedulable("resourceclaim " + a->claims()[k]->Key() +
                                     " shared by the pod group is not available on node " +
                                     nodes[m]);
      }
      results.push_back(res);
    }
    Data* d = Read(*states[m]);
    absl::MutexLock l(&d->mu);
    d->node_allocations[nodes[m]] = std::move(results);
  }
  return Status::Success();
}

std::vector<framework::ClusterEventWithHint> DynamicResources::EventsToRegister() const {
  using framework::EventResource;
  using framework::QueueingHint;
  dra::DefaultDRAManager* m = dra_;
  // isSchedulableAfterClaimChange: a deallocation frees devices for anyone; otherwise only a
  // claim of this pod that was created or whose status changed.
  auto claim_hint = [m](const api::Pod& pod, const framework::EventObjects& objs) {
    const auto* n = static_cast<const api::Unstructured*>(objs.other_new);
    const auto* o = static_cast<const api::Unstructured*>(objs.other_old);
    if (!m) return QueueingHint::kQueue;
    if (!n) {  // deleted: an allocated claim's devices are free now
      if (!o) return QueueingHint::kQueue;
      auto oc = dra::ParseResourceClaim(*o);
      return !oc.ok() || oc->allocation ? QueueingHint::kQueue : QueueingHint::kQueueSkip;
    }
    if (o) {
      auto oc = dra::ParseResourceClaim(*o);
      auto nc = dra::ParseResourceClaim(*n);
      if (oc.ok() && nc.ok() && oc->allocation && !nc->allocation) return QueueingHint::kQueue;
      if (oc.ok() && nc.ok() && oc->allocation == nc->allocation &&
          oc->reserved_for == nc->reserved_for) {
        return QueueingHint::kQueueSkip;
      }
    }
    auto claims = PodClaims(*m, pod);
    if (!claims.ok()) return QueueingHint::kQueueSkip;
    for (const auto& c : *claims) {
      if (c->metadata.uid == n->metadata.uid) return QueueingHint::kQueue;
    }
    return QueueingHint::kQueueSkip;
  };
  auto pod_hint = [m](const api::Pod& pod, const framework::EventObjects& objs) {
    if (!objs.new_pod || objs.new_pod->metadata.uid != pod.metadata.uid) {
      return QueueingHint::kQueueSkip;
    }
    if (!m) return QueueingHint::kQueue;
    return PodClaims(*m, *objs.new_pod).ok() ? QueueingHint::kQueue : QueueingHint::kQueueSkip;
  };
  return {
      {{EventResource::kNode, framework::kAdd | framework::kUpdateNodeLabel, "NodeAdd"}, nullptr},
      {{EventResource::kResourceClaim, framework::kAdd | framework::kUpdate | framework::kDelete,
        "ResourceClaimChange"},
       claim_hint},
      {{EventResource::kUnscheduledPod, framework::kUpdatePodGeneratedResourceClaim,
        "PodGeneratedResourceClaim"},
       pod_hint},
      {{EventResource::kDeviceClass, framework::kAdd | framework::kUpdate, "DeviceClassChange"},
       nullptr},
      {{EventResource::kResourceSlice, framework::kAdd | framework::kUpdate, "ResourceSliceChange"},
       nullptr},
  };
}

}  // namespace phalanx::plugins::dynamicresources
