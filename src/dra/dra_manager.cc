#include "dra/dra_manager.h"

#include <utility>

namespace phalanx::dra {

namespace {

std::string NsName(const api::ObjectMeta& m) { return m.namespace_ + "/" + m.name; }

// What a claim's allocation holds: its results not for admin access. A result with a
// shareID is a share of a device with allowMultipleAllocations (its consumedCapacity counts
// against the device), any other a whole device in use (upstream's scheduler gathers
// AllocatedDevices, AllocatedSharedDeviceIDs and AggregatedCapacity the same way).
std::vector<DeviceResult> DevicesOf(const ResourceClaim* c) {
  std::vector<DeviceResult> out;
  if (!c || !c->allocation) return out;
  for (const auto& d : c->allocation->devices) {
    if (!d.admin_access) out.push_back(d);
  }
  return out;
}

void Apply(InUseIndex* index, const std::vector<DeviceResult>& results, int sign) {
  for (const auto& d : results) {
    const DeviceId id{d.driver, d.pool, d.device};
    if (d.share_id.empty()) {
      index->Add(id, sign);
    } else {
      index->AddShare(id, d.consumed_capacity, sign);
    }
  }
}

}  // namespace

void DefaultDRAManager::SetContribution(std::map<std::string, std::vector<DeviceResult>>* by,
                                        const std::string& key, const ResourceClaim* c) {
  std::vector<DeviceResult> now = DevicesOf(c);
  auto it = by->find(key);
  if (it == by->end() && now.empty()) return;
  if (it != by->end() && it->second == now) return;
  if (it != by->end()) Apply(&in_use_, it->second, -1);
  Apply(&in_use_, now, +1);
  if (now.empty()) {
    by->erase(key);
  } else {
    (*by)[key] = std::move(now);
  }
  in_use_view_.reset();
}

void DefaultDRAManager::RecountClaim(const std::string& nn) {
  const ResourceClaim* c = nullptr;
  auto it = claims_.find(nn);
  if (it != claims_.end() && !pending_.count(it->second->metadata.uid)) {
    auto w = written_.find(nn);
    c = w != written_.end() ? w->second.get() : it->second.get();
  }
  SetContribution(&claim_devices_, nn, c);
}

void DefaultDRAManager::RecountPending(const std::string& uid) {
  auto p = pending_.find(uid);
  SetContribution(&pending_devices_, uid, p == pending_.end() ? nullptr : p->second.get());
  if (auto u = uid_to_nn_.find(uid); u != uid_to_nn_.end()) RecountClaim(u->second);
}

void DefaultDRAManager::SlicesChanged() {
  slice_index_.reset();
  memo_->Prune();
}

bool DefaultDRAManager::OnObjectAdd(const api::UnstructuredPtr& obj) {
  const Kind kind = KindOf(*obj);
  if (kind == Kind::kNone) return false;
  absl::MutexLock l(&mu_);
  ++generation_;
  const std::string key = obj->Key();
  errors_.erase(key);
  auto fail = [&](const api::Status& s)
                  ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { errors_[key] = std::string(s.message()); };
  switch (kind) {
    case Kind::kDeviceClass: {
      auto c = ParseDeviceClass(*obj);
      classes_.erase(obj->metadata.name);
      if (c.ok()) {
        classes_[obj->metadata.name] = std::move(*c);
      } else {
        fail(c.status());
      }
      classes_view_.reset();
      extended_view_.reset();
      break;
    }
    case Kind::kResourceSlice: {
      auto s = ParseResourceSlice(*obj);
      slices_.erase(obj->metadata.name);
      tainted_.erase(obj->metadata.name);
      if (s.ok()) {
        slices_[obj->metadata.name] = std::make_shared<const ResourceSlice>(std::move(*s));
      } else {
        fail(s.status());
      }
      SlicesChanged();
      break;
    }
    case Kind::kResourceClaim: {
      const std::string nn = NsName(obj->metadata);
      auto c = ParseResourceClaim(*obj);
      if (auto old = claims_.find(nn); old != claims_.end()) {
        uid_to_nn_.erase(old->second->metadata.uid);
      }
      claims_.erase(nn);
      claim_objects_[nn] = obj;
      written_.erase(nn);  // the informer caught up with our write (or a newer change)
      if (c.ok()) {
        uid_to_nn_[c->metadata.uid] = nn;
        claims_[nn] = std::make_shared<const ResourceClaim>(std::move(*c));
      } else {
        fail(c.status());
      }
      RecountClaim(nn);
      break;
    }
    case Kind::kResourceClaimTemplate: {
      const std::string nn = NsName(obj->metadata);
      auto t = ParseResourceClaimTemplate(*obj);
      templates_.erase(nn);
      if (t.ok()) {
        templates_[nn] = std::move(*t);
      } else {
        fail(t.status());
      }
      break;
    }
    case Kind::kDeviceTaintRule: {
      auto t = ParseDeviceTaintRule(*obj);
      taint_rules_.erase(obj->metadata.name);
      tainted_.clear();
      if (t.ok()) {
        taint_rules_[obj->metadata.name] = std::move(*t);
      } else {
        fail(t.status());
      }
      SlicesChanged();  // the allocator's index holds the patched slices
      break;
    }
    case Kind::kNone:
      break;
  }
  return true;
}

bool DefaultDRAManager::OnObjectDelete(const api::UnstructuredPtr& obj) {
  const Kind kind = KindOf(*obj);
  if (kind == Kind::kNone) return false;
  absl::MutexLock l(&mu_);
  ++generation_;
  errors_.erase(obj->Key());
  const std::string nn = NsName(obj->metadata);
  switch (kind) {
    case Kind::kDeviceClass:
      classes_.erase(obj->metadata.name);
      classes_view_.reset();
      extended_view_.reset();
      break;
    case Kind::kResourceSlice:
      slices_.erase(obj->metadata.name);
      tainted_.erase(obj->metadata.name);
      SlicesChanged();
      break;
    case Kind::kDeviceTaintRule:
      taint_rules_.erase(obj->metadata.name);
      tainted_.clear();
      SlicesChanged();
      break;
    case Kind::kResourceClaim:
      if (auto old = claims_.find(nn); old != claims_.end()) {
        uid_to_nn_.erase(old->second->metadata.uid);
      }
      claims_.erase(nn);
      claim_objects_.erase(nn);
      written_.erase(nn);
      RecountClaim(nn);
      break;
    case Kind::kResourceClaimTemplate:
      templates_.erase(nn);
      break;
    case Kind::kNone:
      break;
  }
  return true;
}

void DefaultDRAManager::OnPodGroup(const api::UnstructuredPtr& obj, bool deleted) {
  if (!IsWorkloadPodGroup(*obj)) return;
  const std::string nn = NsName(obj->metadata);
  absl::MutexLock l(&mu_);
  ++generation_;
  pod_groups_.erase(nn);
  pod_group_errors_.erase(nn);
  if (deleted) return;
  auto pg = ParsePodGroupClaims(*obj);
  if (pg.ok()) {
    pod_groups_[nn] = std::make_shared<const PodGroupClaims>(std::move(*pg));
  } else {
    pod_group_errors_[nn] = std::string(pg.status().message());
  }
}

api::StatusOr<std::shared_ptr<const PodGroupClaims>> DefaultDRAManager::PodGroupClaimsOf(
    const std::string& ns, const std::string& name) const {
  absl::MutexLock l(&mu_);
  const std::string nn = ns + "/" + name;
  if (auto e = pod_group_errors_.find(nn); e != pod_group_errors_.end()) {
    return absl::InvalidArgumentError(e->second);
  }
  auto it = pod_groups_.find(nn);
  if (it == pod_groups_.end()) return absl::NotFoundError("podgroup \"" + name + "\" not found");
  return it->second;
}

api::StatusOr<ResourceClaimPtr> DefaultDRAManager::GetClaim(const std::string& ns,
                                                            const std::string& name) const {
  absl::MutexLock l(&mu_);
  const std::string nn = ns + "/" + name;
  auto it = claims_.find(nn);
  if (it == claims_.end()) {
    auto obj = claim_objects_.find(nn);
    if (obj != claim_objects_.end()) {
      auto err = errors_.find(obj->second->Key());
      if (err != errors_.end()) return absl::InvalidArgumentError(err->second);
    }
    return absl::NotFoundError("resourceclaim \"" + name + "\" not found");
  }
  if (auto p = pending_.find(it->second->metadata.uid); p != pending_.end()) return p->second;
  if (auto w = written_.find(nn); w != written_.end()) return w->second;
  return it->second;
}

api::UnstructuredPtr DefaultDRAManager::ClaimObject(const std::string& ns,
                                                    const std::string& name) const {
  absl::MutexLock l(&mu_);
  auto it = claim_objects_.find(ns + "/" + name);
  return it == claim_objects_.end() ? nullptr : it->second;
}

api::StatusOr<ResourceClaimTemplate> DefaultDRAManager::GetTemplate(const std::string& ns,
                                                                    const std::string& name) const {
  absl::MutexLock l(&mu_);
  auto it = templates_.find(ns + "/" + name);
  if (it == templates_.end()) {
    const std::string key = std::string("ResourceClaimTemplate.") + kGroup + "/" + ns + "/" + name;
    auto err = errors_.find(key);
    if (err != errors_.end()) return absl::InvalidArgumentError(err->second);
    return absl::NotFoundError("resourceclaimtemplate \"" + name + "\" not found");
  }
  return it->second;
}

std::shared_ptr<const std::map<std::string, DeviceClass>> DefaultDRAManager::Classes() const {
  absl::MutexLock l(&mu_);
  if (!classes_view_) {
    classes_view_ = std::make_shared<const std::map<std::string, DeviceClass>>(classes_);
  }
  return classes_view_;
}

ResourceClaimPtr DefaultDRAManager::FindExtendedResourceClaim(const std::string& ns,
                                                              const std::string& pod_name,
                                                              const std::string& pod_uid) const {
  std::string found;
  {
    absl::MutexLock l(&mu_);
    const std::string prefix = ns + "/";
    for (auto it = claims_.lower_bound(prefix);
         it != claims_.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
      if (IsExtendedResourceClaimOf(it->second->metadata, pod_name, pod_uid)) {
        found = it->second->metadata.name;
        break;
      }
    }
  }
  if (found.empty()) return nullptr;
  auto c = GetClaim(ns, found);
  return c.ok() ? *c : nullptr;
}

std::string DefaultDRAManager::ClassForExtendedResource(const std::string& resource_name) const {
  absl::MutexLock l(&mu_);
  const std::string_view prefix = kImplicitExtendedResourcePrefix;
  if (resource_name.rfind(prefix, 0) == 0) {
    std::string cls = resource_name.substr(prefix.size());
    return classes_.count(cls) ? cls : std::string();
  }
  if (!extended_view_) {
    std::map<std::string, std::string> m;
    std::map<std::string, const DeviceClass*> best;
    for (const auto& [name, c] : classes_) {  // by name: the first of equal timestamps wins
      if (c.extended_resource_name.empty()) continue;
      const DeviceClass*& b = best[c.extended_resource_name];
      if (!b || c.creation_timestamp > b->creation_timestamp) b = &c;
    }
    for (const auto& [res, c] : best) m[res] = c->name;
    extended_view_ = std::make_shared<const std::map<std::string, std::string>>(std::move(m));
  }
  auto it = extended_view_->find(resource_name);
  return it == extended_view_->end() ? std::string() : it->second;
}

bool DefaultDRAManager::HasExtendedResourceClasses() const {
  absl::MutexLock l(&mu_);
  return !classes_.empty();
}

api::Status DefaultDRAManager::ClassError(const std::string& name) const {
  absl::MutexLock l(&mu_);
  auto it = errors_.find(std::string("DeviceClass.") + kGroup + "//" + name);
  return it == errors_.end() ? absl::OkStatus() : absl::InvalidArgumentError(it->second);
}

std::vector<ResourceSlicePtr> DefaultDRAManager::Slices() const {
  absl::MutexLock l(&mu_);
  return SlicesLocked();
}

std::vector<ResourceSlicePtr> DefaultDRAManager::SlicesLocked() const {
  std::vector<ResourceSlicePtr> out;
  out.reserve(slices_.size());
  for (const auto& [n, s] : slices_) {
    if (taint_rules_.empty()) {
      out.push_back(s);
      continue;
    }
    auto it = tainted_.find(n);
    if (it == tainted_.end()) it = tainted_.emplace(n, WithRuleTaints(s)).first;
    out.push_back(it->second);
  }
  return out;
}

ResourceSlicePtr DefaultDRAManager::WithRuleTaints(const ResourceSlicePtr& s) const {
  std::shared_ptr<ResourceSlice> copy;
  for (size_t i = 0; i < s->devices.size(); ++i) {
    for (const auto& [name, rule] : taint_rules_) {
      if (!rule.Matches(s->driver, s->pool, s->devices[i].name)) continue;
      if (!copy) copy = std::make_shared<ResourceSlice>(*s);
      copy->devices[i].taints.push_back(rule.taint);
    }
  }
  return copy ? ResourceSlicePtr(std::move(copy)) : s;
}

std::vector<DeviceTaintRule> DefaultDRAManager::TaintRules() const {
  absl::MutexLock l(&mu_);
  std::vector<DeviceTaintRule> out;
  for (const auto& [n, r] : taint_rules_) out.push_back(r);
  return out;
}

std::set<DeviceId> DefaultDRAManager::AllocatedDevicesExcept(
    const std::set<std::string>& uids) const {
  return InUseExcept(uids)->ToSet();
}

std::shared_ptr<const InUseIndex> DefaultDRAManager::InUse() const {
  absl::MutexLock l(&mu_);
  if (!in_use_view_) in_use_view_ = std::make_shared<const InUseIndex>(in_use_);
  return in_use_view_;
}

std::shared_ptr<const InUseIndex> DefaultDRAManager::InUseExcept(
    const std::set<std::string>& uids) const {
  if (uids.empty()) return InUse();
  absl::MutexLock l(&mu_);
  auto out = std::make_shared<InUseIndex>(in_use_);
  for (const auto& uid : uids) {
    if (auto p = pending_devices_.find(uid); p != pending_devices_.end()) {
      Apply(out.get(), p->second, -1);
    }
    auto u = uid_to_nn_.find(uid);
    if (u == uid_to_nn_.end()) continue;
    if (auto c = claim_devices_.find(u->second); c != claim_devices_.end()) {
      Apply(out.get(), c->second, -1);
    }
  }
  return out;
}

std::shared_ptr<const SliceIndex> DefaultDRAManager::SliceIndexView() const {
  absl::MutexLock l(&mu_);
  // Built from the slices as Slices() returns them: DeviceTaintRules' taints included.
  if (!slice_index_) slice_index_ = SliceIndex::Build(SlicesLocked());
  return slice_index_;
}

std::vector<std::string> DefaultDRAManager::Errors() const {
  absl::MutexLock l(&mu_);
  std::vector<std::string> out;
  for (const auto& [k, e] : errors_) out.push_back(e);
  return out;
}

bool DefaultDRAManager::HasPendingAllocation(const std::string& uid) const {
  absl::MutexLock l(&mu_);
  return pending_.count(uid) > 0;
}

void DefaultDRAManager::SignalPendingAllocation(const ResourceClaim& claim) {
  absl::MutexLock l(&mu_);
  ++generation_;
  pending_[claim.metadata.uid] = std::make_shared<const ResourceClaim>(claim);
  RecountPending(claim.metadata.uid);
}

bool DefaultDRAManager::RemovePendingAllocation(const std::string& uid) {
  absl::MutexLock l(&mu_);
  ++generation_;
  const bool erased = pending_.erase(uid) > 0;
  RecountPending(uid);
  return erased;
}

void DefaultDRAManager::AssumeWritten(const ResourceClaim& claim) {
  absl::MutexLock l(&mu_);
  ++generation_;
  pending_.erase(claim.metadata.uid);
  const std::string nn = claim.Key();
  // In-process stores deliver the write's event before the write returns: the informer's
  // version is already this one.
  auto it = claims_.find(nn);
  if (it != claims_.end() && it->second->allocation == claim.allocation &&
      it->second->reserved_for == claim.reserved_for) {
    written_.erase(nn);
  } else {
    written_[nn] = std::make_shared<const ResourceClaim>(claim);
  }
  RecountPending(claim.metadata.uid);
  RecountClaim(nn);
}

uint64_t DefaultDRAManager::generation() const {
  absl::MutexLock l(&mu_);
  return generation_;
}

}  // namespace phalanx::dra
