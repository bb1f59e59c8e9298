#include "plugins/gpushare/context.h"

#include <algorithm>
#include <set>
#include <string>
#include <unordered_set>

namespace phalanx::plugins::gpushare {

namespace {

absl::Mutex g_registry_mu(absl::kConstInit);
std::map<const void*, std::weak_ptr<GpuContext>>& Registry()
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(g_registry_mu) {
  static auto* m = new std::map<const void*, std::weak_ptr<GpuContext>>();
  return *m;
}

}  // namespace

gpu::PodShape PodShapeOf(const framework::PodInfo& pod, const gpu::GpuAsk& ask,
                         const gpu::NodeGpus* gpus) {
  gpu::PodShape s;
  s.milli_cpu = pod.non_zero_requests.milli_cpu;
  if (ask.has_gpu()) {
    s.gpu_count = ask.count;
    s.milli_gpu = gpus ? gpu::MilliOnNode(ask, *gpus) : ask.milli;
    if (s.milli_gpu == 0) s.milli_gpu = gpu::kMilliPerGpu;  // unknown memory: a whole device
    for (size_t i = 0; i < ask.models.size(); ++i) {
      if (i) s.models += '|';
      s.models += ask.models[i];
    }
  }
  return s;
}

std::string AffinityTag(const gpu::GpuAsk& ask) {
  if (!ask.has_gpu()) return "";
  if (ask.count == 1 && !ask.is_whole()) return "share-gpu";
  if (ask.is_whole()) return std::to_string(ask.count) + "-gpu";
  return std::to_string(ask.count) + "x-share-gpu";
}

std::shared_ptr<GpuContext> GpuContext::For(framework::Handle& handle) {
  absl::MutexLock l(&g_registry_mu);
  auto& reg = Registry();
  auto it = reg.find(&handle);
  if (it != reg.end()) {
    if (auto ctx = it->second.lock()) return ctx;
  }
  // Drop expired entries so that the map does not grow with short-lived frameworks.
  for (auto i = reg.begin(); i != reg.end();) {
    i = i->second.expired() ? reg.erase(i) : std::next(i);
  }
  auto ctx = std::make_shared<GpuContext>();
  ctx->dra_ = handle.Service<dra::DefaultDRAManager>();
  reg[&handle] = ctx;
  return ctx;
}

std::shared_ptr<GpuContext> GpuContext::Find(const framework::Handle& handle) {
  absl::MutexLock l(&g_registry_mu);
  auto it = Registry().find(&handle);
  return it == Registry().end() ? nullptr : it->second.lock();
}

void GpuContext::Assign(const std::string& uid, const std::string& node,
                        std::vector<int32_t> devices) {
  absl::MutexLock l(&mu_);
  auto& a = assigned_[uid];
  if (!a.node.empty() && a.node != node) ++node_epoch_[a.node];
  a.node = node;
  a.devices = std::move(devices);
  ++node_epoch_[node];
}

void GpuContext::Release(const std::string& uid) {
  absl::MutexLock l(&mu_);
  auto it = assigned_.find(uid);
  if (it == assigned_.end()) return;
  ++node_epoch_[it->second.node];
  assigned_.erase(it);
}

std::optional<std::vector<int32_t>> GpuContext::Assignment(const std::string& uid) const {
  absl::ReaderMutexLock l(&mu_);
  auto it = assigned_.find(uid);
  if (it == assigned_.end()) return std::nullopt;
  return it->second.devices;
}

size_t GpuContext::NumAssignments() const {
  absl::ReaderMutexLock l(&mu_);
  return assigned_.size();
}

void GpuContext::MaybePrune(const framework::NodeInfoLister& lister) {
  size_t pods = 0;
  for (const auto* ni : lister.List()) pods += ni->pods().size();
  {
    absl::ReaderMutexLock l(&mu_);
    if (assigned_.size() <= 2 * pods + 1024) return;
  }
  std::unordered_set<std::string> alive;
  alive.reserve(pods * 2);
  for (const auto* ni : lister.List()) {
    for (const auto& p : ni->pods()) alive.insert(PodIdentity(*p->pod));
  }
  absl::MutexLock l(&mu_);
  for (auto it = assigned_.begin(); it != assigned_.end();) {
    if (alive.count(it->first)) {
      ++it;
    } else {
      ++node_epoch_[it->second.node];
      it = assigned_.erase(it);
    }
  }
}

uint64_t GpuContext::NodeEpoch(const std::string& node) const {
  auto it = node_epoch_.find(node);
  return it == node_epoch_.end() ? 0 : it->second;
}

NodeGpuState GpuContext::ComputeState(const framework::NodeInfo& ni,
                                      const std::string& self_uid) const {
  NodeGpuState st;
  if (ni.node() == nullptr) return st;
  st.gpus = gpu::ParseNodeGpus(*ni.node());
  st.shape.model = st.gpus.model;
  st.shape.milli_cpu_capacity = ni.allocatable().milli_cpu;
  st.shape.milli_cpu_left = ni.allocatable().milli_cpu - ni.requested().milli_cpu;
  st.shape.free_milli.assign(static_cast<size_t>(std::max(0, st.gpus.count)), gpu::kMilliPerGpu);
  auto& free = st.shape.free_milli;

  struct Pending {
    const framework::PodInfo* pod;
    gpu::GpuAsk ask;
    int32_t milli;
  };
  std::vector<Pending> unknown;
  std::vector<int32_t> devs;
  std::set<std::string> dra_claims;  // claims counted by TakeDraGpus
  {
    absl::ReaderMutexLock l(&mu_);
    for (const auto& pi : ni.pods()) {
      const api::Pod& p = *pi->pod;
      gpu::GpuAsk ask = gpu::ParseGpuAsk(p);
      if (!ask.has_gpu() && ask.error.empty() && dra_ && !p.spec.resource_claims.empty()) {
        TakeDraGpus(p, ni.name(), &dra_claims, &free);
      }
      if (!ask.has_gpu() || !ask.error.empty()) continue;
      const bool self = !self_uid.empty() && PodIdentity(p) == self_uid;
      if (!self) {
        std::string tag = AffinityTag(ask);
        if (!tag.empty()) ++st.affinity[tag];
      }
      int32_t milli = gpu::MilliOnNode(ask, st.gpus);
      if (milli == 0) milli = gpu::kMilliPerGpu;  // memory ask on a model of unknown memory
      bool known = false;
      devs.clear();
      // This process's own choice first (an annotation on a pod it is binding may be a
      // stale one from an attempt that never bound), then the pod's annotations (pods
      // bound before a restart, or by another scheduler).
      if (auto it = assigned_.find(PodIdentity(p)); it != assigned_.end()) {
        devs = it->second.devices;
        known = true;
      } else if (gpu::RecordedDevices(p, ni.name(), &devs)) {
        known = true;
      }
      if (!known || self) {
        unknown.push_back({pi.get(), std::move(ask), milli});
        continue;
      }
      bool over = false;
      for (int32_t d : devs) {
        if (d < 0 || d >= static_cast<int32_t>(free.size()) || free[d] < milli) {
          over = true;
          if (d >= 0 && d < static_cast<int32_t>(free.size())) free[d] = 0;
          continue;
        }
        free[d] -= milli;
      }
      if (over) ++st.overcommitted_pods;
    }
  }
  // Pods without devices, in pod order, best fit (what Filter assumed for them).
  int32_t self_milli = 0;
  for (const auto& u : unknown) {
    const bool self = !self_uid.empty() && PodIdentity(*u.pod->pod) == self_uid;
    if (!self) st.others_unassigned = true;
    std::vector<int32_t> d = gpu::ChooseBestFit(free, u.ask.count, u.milli);
    if (d.empty()) {
      if (!self) ++st.overcommitted_pods;
      continue;
    }
    for (int32_t i : d) free[i] -= u.milli;
    if (self) {
      st.self_in_order = std::move(d);
      self_milli = u.milli;
    }
  }
  for (int32_t i : st.self_in_order) free[i] += self_milli;  // the pod itself is left out
  return st;
}

void GpuContext::TakeDraGpus(const api::Pod& pod, const std::string& node,
                             std::set<std::string>* seen, std::vector<int32_t>* free) const {
  for (const auto& pc : pod.spec.resource_claims) {
    std::string name = pc.resource_claim_name;
    if (name.empty()) {
      for (const auto& st : pod.status.resource_claim_statuses) {
        if (st.name == pc.name) name = st.resource_claim_name;
      }
    }
    if (name.empty()) continue;
    auto claim = dra_->GetClaim(pod.metadata.namespace_, name);
    if (!claim.ok() || !(*claim)->allocation) continue;
    if (!seen->insert((*claim)->metadata.uid.empty() ? pod.metadata.namespace_ + "/" + name
                                                     : (*claim)->metadata.uid)
             .second) {
      continue;
    }
    for (const auto& d : (*claim)->allocation->devices) {
      if (d.admin_access || d.driver != gpu::kDraGpuDriver || d.pool != node) continue;
      const int32_t i = gpu::DraGpuIndex(d.device);
      if (i < 0 || i >= static_cast<int32_t>(free->size())) continue;
      int64_t milli = gpu::kMilliPerGpu;
      if (auto c = d.consumed_capacity.find(gpu::kDraGpuCompute);
          !d.share_id.empty() && c != d.consumed_capacity.end()) {
        milli = std::clamp<int64_t>(c->second.Value(), 0, gpu::kMilliPerGpu);
      }
      (*free)[i] = std::max<int32_t>(0, (*free)[i] - static_cast<int32_t>(milli));
    }
  }
}

std::shared_ptr<const NodeGpuState> GpuContext::State(const framework::NodeInfo& ni) {
  const std::string& name = ni.name();
  const framework::PodInfoPtr last = ni.pods().empty() ? nullptr : ni.pods().back();
  {
    absl::ReaderMutexLock l(&mu_);
    auto it = cache_.find(name);
    if (it != cache_.end() && it->second.generation == ni.generation() &&
        it->second.pods == ni.pods().size() && it->second.last == last &&
        it->second.epoch == NodeEpoch(name)) {
      return it->second.state;
    }
  }
  uint64_t epoch;
  {
    absl::ReaderMutexLock l(&mu_);
    epoch = NodeEpoch(name);
  }
  auto st = std::make_shared<const NodeGpuState>(ComputeState(ni, ""));
  absl::MutexLock l(&mu_);
  Cached& c = cache_[name];
  c.generation = ni.generation();
  c.pods = ni.pods().size();
  c.last = last;
  c.epoch = epoch;
  c.state = st;
  return st;
}

void GpuContext::RegisterDevicePolicy(const std::string& name, DevicePolicy* policy) {
  absl::MutexLock l(&mu_);
  policies_.emplace_back(name, policy);
}

void GpuContext::UnregisterDevicePolicy(DevicePolicy* policy) {
  absl::MutexLock l(&mu_);
  std::erase_if(policies_, [&](const auto& p) { return p.second == policy; });
}

DevicePolicy* GpuContext::PreferredDevicePolicy(std::string* name) const {
  absl::ReaderMutexLock l(&mu_);
  if (policies_.empty()) return nullptr;
  if (name) *name = policies_.front().first;
  return policies_.front().second;
}

void GpuContext::SetTargetWorkload(std::shared_ptr<const gpu::TargetWorkload> w) {
  absl::MutexLock l(&mu_);
  workload_ = std::move(w);
}

std::shared_ptr<const gpu::TargetWorkload> GpuContext::target_workload() const {
  absl::ReaderMutexLock l(&mu_);
  return workload_;
}

}  // namespace phalanx::plugins::gpushare
