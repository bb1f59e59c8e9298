#include "client/informer.h"

#include <simdjson.h>
#include <spdlog/spdlog.h>

#include <future>
#include <random>
#include <set>

#include "client/wait.h"

namespace phalanx::client {

namespace {

ResourceType Obj(std::string group, std::string resource, std::string kind) {
  ResourceType t;
  t.group = std::move(group);
  t.resource = std::move(resource);
  t.kind = std::move(kind);
  t.target = Target::kObject;
  return t;
}

}  // namespace

std::vector<ResourceType> CoreResources() {
  std::vector<ResourceType> v;
  ResourceType pods{"",    "v1",         "pods",
                    "Pod", Target::kPod, "status.phase!=Succeeded,status.phase!=Failed"};
  v.push_back(pods);
  // The complement, for gang status (Running -> Succeeded / Failed counts): a pod that
  // ends leaves the first watch as a delete of its last state and enters this one with
  // its terminal phase. Pending / Running / Unknown are the other phases (core/v1
  // PodPhase; the API server sets Pending on create, so no pod has an empty phase).
  v.push_back({"", "v1", "pods", "Pod", Target::kTerminalPod,
               "status.phase!=Pending,status.phase!=Running,status.phase!=Unknown"});
  v.push_back({"", "v1", "nodes", "Node", Target::kNode, ""});
  v.push_back({"", "v1", "namespaces", "Namespace", Target::kNamespace, ""});
  v.push_back(
      {"scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", Target::kPriorityClass, ""});
  // Storage objects for VolumeBinding (src/volume; upstream's scheduler watches the same
  // and deploy/rbac.yaml grants them as kube-scheduler's ClusterRole does).
  v.push_back({"", "v1", "persistentvolumes", "PersistentVolume", Target::kObject, ""});
  v.push_back({"", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", Target::kObject, ""});
  return v;
}

std::vector<ResourceType> OptionalObjectResources() {
  return {
      // PodDisruptionBudgets for DefaultPreemption: policy/v1 (1.21+) or, on older
      // servers, policy/v1beta1 (discovery takes the preferred served version).
      ResourceType{"policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget",
                   Target::kPodDisruptionBudget, ""},
      // storage.k8s.io (src/volume): classes, CSI drivers and nodes, capacities.
      Obj("storage.k8s.io", "storageclasses", "StorageClass"),
      Obj("storage.k8s.io", "csinodes", "CSINode"),
      Obj("storage.k8s.io", "csidrivers", "CSIDriver"),
      Obj("storage.k8s.io", "csistoragecapacities", "CSIStorageCapacity"),
      // resource.k8s.io (src/dra; DynamicResources): discovery takes the preferred served
      // version (v1 since 1.34; dra/model.h also reads v1beta1's request shape).
      Obj("resource.k8s.io", "deviceclasses", "DeviceClass"),
      Obj("resource.k8s.io", "resourceslices", "ResourceSlice"),
      Obj("resource.k8s.io", "resourceclaims", "ResourceClaim"),
      Obj("resource.k8s.io", "resourceclaimtemplates", "ResourceClaimTemplate"),
      // DeviceTaintRule (KEP-5055): v1alpha3 (1.33) / v1beta2 (1.35), served when the
      // DRADeviceTaintRules feature gate is on; the first served version is used.
      Obj("resource.k8s.io", "devicetaintrules", "DeviceTaintRule"),
      Obj("scheduling.x-k8s.io", "podgroups", "PodGroup"),     // Coscheduling
      Obj("scheduling.sigs.k8s.io", "podgroups", "PodGroup"),  // Coscheduling (legacy)
      Obj("scheduling.volcano.sh", "podgroups", "PodGroup"),   // Volcano
      Obj("scheduling.run.ai", "podgroups", "PodGroup"),       // KAI
      // Queues and quotas (quota/queue_tree.h): KAI Queue (scheduling.run.ai/v2), Volcano
      // Queue, ElasticQuota of CapacityScheduling and of Koordinator.
      Obj("scheduling.run.ai", "queues", "Queue"),
      Obj("scheduling.volcano.sh", "queues", "Queue"),
      Obj("scheduling.x-k8s.io", "elasticquotas", "ElasticQuota"),
      Obj("scheduling.sigs.k8s.io", "elasticquotas", "ElasticQuota"),
      // KAI Topology (cluster-scoped; levels of a PodGroup's topologyConstraint), and the
      // Kueue Topology that KAI read before it had its own. Not served: a PodGroup naming
      // a Topology stays pending with `topology "x" not found` (gang/topology.h).
      Obj("kai.scheduler", "topologies", "Topology"),
      Obj("kueue.x-k8s.io", "topologies", "Topology"),
      // Volcano HyperNodes (cluster-scoped; the tiers of a Volcano PodGroup's
      // spec.networkTopology). Not served: such a gang stays pending with `no HyperNode
      // exists` (gang/topology_hypernode.h).
      Obj("topology.volcano.sh", "hypernodes", "HyperNode"),
      Obj("scheduling.k8s.io", "workloads", "Workload"),  // 1.35+ Workload API
      Obj("scheduling.k8s.io", "podgroups", "PodGroup"),  // 1.36+
      // 1.37 head (v1alpha3): a group of PodGroups (gang/dialects.h; its members stay
      // pending naming spec.parentCompositePodGroupName).
      Obj("scheduling.k8s.io", "compositepodgroups", "CompositePodGroup"),
      Obj("batch", "jobs", "Job"),  // PodGrouper owners
      Obj("jobset.x-k8s.io", "jobsets", "JobSet"),
      Obj("kubeflow.org", "pytorchjobs", "PyTorchJob"),
      Obj("kubeflow.org", "mpijobs", "MPIJob"),
      Obj("kubeflow.org", "tfjobs", "TFJob"),
      Obj("kubeflow.org", "xgboostjobs", "XGBoostJob"),
      Obj("kubeflow.org", "paddlejobs", "PaddleJob"),
      Obj("kubeflow.org", "jaxjobs", "JAXJob"),
      // LeaderWorkerSet: its pods name it by label (leaderworkerset.sigs.k8s.io/name);
      // PodGrouper reads its size and startupPolicy.
      Obj("leaderworkerset.x-k8s.io", "leaderworkersets", "LeaderWorkerSet"),
      // Koordinator's ClusterNetworkTopology "default": the layers of gather rules.
      Obj("scheduling.koordinator.sh", "clusternetworktopologies", "ClusterNetworkTopology"),
      // cluster-autoscaler's ProvisioningRequests (the ProvisioningRequest plugin's
      // scale-up for gangs reads their conditions).
      Obj("autoscaling.x-k8s.io", "provisioningrequests", "ProvisioningRequest"),
  };
}

struct LiveInformerFactory::Reflector {
  size_t index = 0;  // into types_ and status_
  ResourceType type;
  std::thread thread;
};

LiveInformerFactory::LiveInformerFactory(RestClient& client, InformerOptions opts)
    : client_(client), opts_(opts), types_(CoreResources()) {
  dispatcher_ = std::thread([this] { DispatchLoop(); });
}

LiveInformerFactory::~LiveInformerFactory() { Stop(); }

// ---- discovery ----

api::Status LiveInformerFactory::Discover() {
  Response r = client_.Do("GET", "/apis");
  if (api::Status s = client_.ToStatus("GET", "/apis", r); !s.ok()) return s;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(r.body).get(doc)) {
    return absl::DataLossError("GET " + client_.server() + "/apis: malformed JSON");
  }
  // group -> versions, preferred first.
  std::map<std::string, std::vector<std::string>> groups;
  simdjson::dom::array arr;
  if (!doc["groups"].get(arr)) {
    for (auto g : arr) {
      std::string_view name, preferred;
      if (g["name"].get(name)) continue;
      auto& versions = groups[std::string(name)];
      if (!g["preferredVersion"]["version"].get(preferred)) {
        versions.emplace_back(preferred);
      }
      simdjson::dom::array vs;
      if (g["versions"].get(vs)) continue;
      for (auto v : vs) {
        std::string_view ver;
        if (!v["version"].get(ver) && std::string(ver) != std::string(preferred)) {
          versions.emplace_back(ver);
        }
      }
    }
  }
  std::vector<ResourceType> found;
  std::map<std::string, std::set<std::string>> served;  // "group/version" -> resources
  for (ResourceType t : OptionalObjectResources()) {
    auto g = groups.find(t.group);
    if (g == groups.end()) continue;
    for (const std::string& v : g->second) {
      const std::string gv = t.group + "/" + v;
      if (!served.count(gv)) {
        Response rr = client_.Do("GET", "/apis/" + gv);
        auto& set = served[gv];
        if (!rr.ok()) {
          spdlog::warn("discovery: {}", client_.Describe("GET", "/apis/" + gv, rr));
          continue;
        }
        simdjson::dom::element d;
        simdjson::dom::array res;
        if (parser.parse(rr.body).get(d) || d["resources"].get(res)) continue;
        for (auto e : res) {
          std::string_view n;
          if (!e["name"].get(n)) set.emplace(n);
        }
      }
      if (served[gv].count(t.resource)) {
        t.version = v;
        found.push_back(t);
        break;
      }
    }
  }
  types_ = CoreResources();
  for (auto& t : found) types_.push_back(t);
  return absl::OkStatus();
}

std::vector<std::string> LiveInformerFactory::Resources() const {
  std::vector<std::string> out;
  for (const auto& t : types_) out.push_back(t.Name() + "/" + t.version);
  return out;
}

// ---- reflectors ----

void LiveInformerFactory::Start() {
  if (started_) return;
  started_ = true;
  PostAndWait([this] {
    caches_.clear();
    for (const auto& t : types_) caches_.push_back(Cache{t, {}});
  });
  for (size_t i = 0; i < types_.size(); ++i) {
    auto r = std::make_unique<Reflector>();
    r->index = i;
    r->type = types_[i];
    reflectors_.push_back(std::move(r));
  }
  {
    absl::MutexLock l(&status_mu_);
    for (const auto& t : types_) {
      ReflectorStatus st;
      st.resource = t.Name();
      status_.push_back(std::move(st));
    }
  }
  for (auto& r : reflectors_) {
    Reflector* p = r.get();
    p->thread = std::thread([this, p] { RunReflector(p); });
  }
}

bool LiveInformerFactory::Sleep(std::chrono::milliseconds d) {
  absl::MutexLock l(&sleep_mu_);
  return SleepUnlessStopped(sleep_cv_, sleep_mu_, stop_, d);
}

void LiveInformerFactory::SetError(Reflector* r, api::Status e) {
  {
    absl::MutexLock l(&status_mu_);
    status_[r->index].last_error = std::move(e);
  }
  synced_cv_.SignalAll();
}

api::Status LiveInformerFactory::LastError(const Reflector& r) const {
  absl::MutexLock l(&status_mu_);
  return status_[r.index].last_error;
}

void LiveInformerFactory::RunReflector(Reflector* r) {
  std::mt19937_64 rng(std::random_device{}() ^ r->index);
  auto backoff = opts_.initial_backoff;
  auto jittered = [&](std::chrono::milliseconds d) {
    std::uniform_real_distribution<double> u(1.0, 1.2);
    return std::chrono::milliseconds(static_cast<int64_t>(d.count() * u(rng)));
  };
  auto grow = [&] { backoff = std::min(backoff * 2, opts_.max_backoff); };
  std::string rv;
  bool need_list = true;
  while (!stop_.load()) {
    if (need_list) {
      bool gone = false;
      if (!ListAll(r, &rv, &gone)) {
        if (stop_.load()) break;
        spdlog::warn("informer {}: {}; retrying in {} ms", r->type.Name(),
                     std::string(LastError(*r).message()), backoff.count());
        if (!Sleep(jittered(backoff))) break;
        grow();
        continue;
      }
      need_list = false;
    }
    bool gone = false;
    const auto started = std::chrono::steady_clock::now();
    const bool ok = Watch(r, &rv, &gone);
    if (stop_.load()) break;
    if (gone) {
      // The resourceVersion is too old (compacted): relist at once.
      spdlog::info("informer {}: resourceVersion {} expired (410 Gone); relisting", r->type.Name(),
                   rv);
      need_list = true;
      continue;
    }
    if (ok) {
      backoff = opts_.initial_backoff;  // the server closed a healthy watch: re-watch
      continue;
    }
    if (std::chrono::steady_clock::now() - started > std::chrono::seconds(30)) {
      backoff = opts_.initial_backoff;
    }
    spdlog::warn("informer {}: {}; re-watching in {} ms", r->type.Name(),
                 std::string(LastError(*r).message()), backoff.count());
    if (!Sleep(jittered(backoff))) break;
    grow();
  }
}

bool LiveInformerFactory::ListAll(Reflector* r, std::string* rv, bool* gone) {
  std::vector<Object> all;
  std::string cont;
  std::string list_rv;
  size_t skipped = 0;
  for (;;) {
    const std::string path = r->type.ListPath(opts_.page_size, cont);
    Response resp = client_.Do("GET", path);
    if (stop_.load()) return false;
    if (resp.status == 410 && !cont.empty()) {
      // The continue token expired mid-way: start over with a fresh consistent list.
      all.clear();
      cont.clear();
      continue;
    }
    if (!resp.ok()) {
      *gone = resp.status == 410;
      SetError(r, client_.ToStatus("GET", path, resp));
      return false;
    }
    ListPage page;
    if (api::Status s = DecodeList(resp.body, r->type, &page); !s.ok()) {
      SetError(r, std::move(s));
      return false;
    }
    for (const auto& s : page.skipped) {
      spdlog::warn("informer {}: skipping an object that does not decode: {}", r->type.Name(), s);
    }
    skipped += page.skipped.size();
    for (auto& o : page.items) all.push_back(std::move(o));
    list_rv = page.resource_version;
    cont = page.continue_token;
    if (cont.empty()) break;
  }
  *rv = list_rv;
  const size_t idx = r->index;
  const size_t n = all.size();
  Post([this, idx, items = std::move(all)]() mutable { Replace(idx, std::move(items)); });
  {
    absl::MutexLock l(&status_mu_);
    ReflectorStatus& st = status_[r->index];
    st.last_error = absl::OkStatus();
    st.resource_version = list_rv;
    ++st.relists;
  }
  // Synced once the dispatcher has applied the first list.
  Post([this, r] {
    {
      absl::MutexLock l(&status_mu_);
      status_[r->index].synced = true;
    }
    synced_cv_.SignalAll();
  });
  spdlog::debug("informer {}: listed {} objects at resourceVersion {} ({} skipped)", r->type.Name(),
                n, list_rv, skipped);
  return true;
}

bool LiveInformerFactory::Watch(Reflector* r, std::string* rv, bool* gone) {
  std::uniform_int_distribution<int64_t> dist(opts_.min_watch_timeout_seconds,
                                              2 * opts_.min_watch_timeout_seconds - 1);
  thread_local std::mt19937_64 rng(std::random_device{}());
  const int64_t timeout = dist(rng);
  std::string path = r->type.CollectionPath() + "?watch=1&allowWatchBookmarks=true" +
                     "&resourceVersion=" + UrlEncode(*rv) +
                     "&timeoutSeconds=" + std::to_string(timeout);
  if (!r->type.field_selector.empty()) {
    path += "&fieldSelector=" + UrlEncode(r->type.field_selector);
  }
  const size_t idx = r->index;
  api::Status stream_error;
  int64_t events = 0;
  auto on_line = [&](std::string_view line) -> bool {
    WatchEvent ev;
    if (api::Status s = DecodeWatchEvent(line, r->type, &ev); !s.ok()) {
      const std::string err(s.message());
      if (!ev.resource_version.empty()) {
        // A well-formed event whose object we cannot decode: skip it, keep watching.
        spdlog::warn("informer {}: skipping {} event: {}", r->type.Name(), ev.type, err);
        *rv = ev.resource_version;
        return true;
      }
      stream_error = std::move(s);
      return false;
    }
    if (ev.type == "ERROR") {
      if (ev.error_code == 410) {
        *gone = true;
      } else {
        stream_error =
            absl::UnavailableError(r->type.Name() + " watch: error " +
                                   std::to_string(ev.error_code) + ": " + ev.error_message);
      }
      return false;
    }
    if (!ev.resource_version.empty()) *rv = ev.resource_version;
    if (ev.type == "BOOKMARK") return true;
    Op op = ev.type == "ADDED" ? Op::kAdd : ev.type == "DELETED" ? Op::kDelete : Op::kUpdate;
    ++events;
    Post([this, idx, op, obj = std::move(ev.object)]() mutable { Apply(idx, op, std::move(obj)); });
    return true;
  };
  Response resp = client_.Stream(path, on_line, &stop_, timeout + 30);
  {
    absl::MutexLock l(&status_mu_);
    ReflectorStatus& st = status_[r->index];
    st.events += events;
    st.resource_version = *rv;
  }
  if (stop_.load() || *gone) return true;
  if (resp.status == 410) {
    *gone = true;
    return true;
  }
  if (!stream_error.ok()) {
    SetError(r, stream_error);
    return false;
  }
  if (resp.curl_code != 0 || resp.status != 200) {
    // A transfer that times out on our side after the server's timeout is a normal end.
    if (resp.status == 200 && resp.curl_code == 28 /* CURLE_OPERATION_TIMEDOUT */) return true;
    api::Status failed = client_.ToStatus("GET", path, resp);
    // A watch answered with another 2xx than 200 passes Response::ok().
    if (failed.ok()) failed = absl::UnknownError(client_.Describe("GET", path, resp));
    SetError(r, std::move(failed));
    return false;
  }
  return true;
}

api::Status LiveInformerFactory::WaitForCacheSync(std::chrono::milliseconds timeout,
                                                  const std::atomic<bool>* stop) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  absl::MutexLock l(&status_mu_);
  for (;;) {
    bool all = true;
    for (const auto& r : reflectors_) all = all && status_[r->index].synced;
    if (all) return absl::OkStatus();
    if ((stop && stop->load()) || std::chrono::steady_clock::now() >= deadline) break;
    synced_cv_.WaitWithTimeout(&status_mu_, absl::Milliseconds(200));
  }
  std::string msg;
  for (const auto& r : reflectors_) {
    const ReflectorStatus& st = status_[r->index];
    if (st.synced) continue;
    if (!msg.empty()) msg += "; ";
    msg += st.resource + ": " +
           (st.last_error.ok() ? std::string("no response yet")
                               : std::string(st.last_error.message()));
  }
  if (stop && stop->load()) {
    return absl::CancelledError("stopped before the informer caches synced: " + msg);
  }
  return absl::DeadlineExceededError("informer caches not synced after " +
                                     std::to_string(timeout.count() / 1000) + " s: " + msg);
}

bool LiveInformerFactory::HasSynced() const {
  absl::MutexLock l(&status_mu_);
  for (const auto& r : reflectors_) {
    if (!status_[r->index].synced) return false;
  }
  return started_;
}

std::vector<ReflectorStatus> LiveInformerFactory::Status() const {
  absl::MutexLock l(&status_mu_);
  std::vector<ReflectorStatus> out;
  for (const auto& r : reflectors_) out.push_back(status_[r->index]);
  return out;
}

void LiveInformerFactory::Stop() {
  stop_ = true;
  sleep_cv_.SignalAll();
  for (auto& r : reflectors_) {
    if (r->thread.joinable()) r->thread.join();
  }
  {
    absl::MutexLock l(&q_mu_);
    q_stop_ = true;
  }
  q_cv_.SignalAll();
  if (dispatcher_.joinable()) dispatcher_.join();
}

// ---- dispatcher ----

void LiveInformerFactory::Post(std::function<void()> fn) {
  {
    absl::MutexLock l(&q_mu_);
    if (q_stop_) return;
    queue_.push_back(std::move(fn));
  }
  q_cv_.Signal();
}

void LiveInformerFactory::PostAndWait(std::function<void()> fn) {
  std::promise<void> done;
  auto fut = done.get_future();
  bool posted = false;
  {
    absl::MutexLock l(&q_mu_);
    if (!q_stop_) {
      queue_.push_back([&] {
        fn();
        done.set_value();
      });
      posted = true;
    }
  }
  if (!posted) return;
  q_cv_.Signal();
  fut.wait();
}

void LiveInformerFactory::DispatchLoop() {
  for (;;) {
    std::function<void()> fn;
    {
      absl::MutexLock l(&q_mu_);
      while (!q_stop_ && queue_.empty()) q_cv_.Wait(&q_mu_);
      if (queue_.empty()) return;
      fn = std::move(queue_.front());
      queue_.pop_front();
    }
    try {
      fn();
    } catch (const std::exception& e) {
      spdlog::error("informer: event handler threw: {}", e.what());
    }
  }
}

template <typename T>
static void Call(const std::vector<cluster::EventHandlers<T>>& hs, int op,
                 const std::shared_ptr<const void>& old_obj,
                 const std::shared_ptr<const void>& obj) {
  auto o = std::static_pointer_cast<const T>(old_obj);
  auto n = std::static_pointer_cast<const T>(obj);
  for (const auto& h : hs) {
    if (op == 0 && h.on_add) h.on_add(n);
    if (op == 1 && h.on_update) h.on_update(o, n);
    if (op == 2 && h.on_delete) h.on_delete(o);
  }
}

void LiveInformerFactory::Notify(Target t, Op op, const std::shared_ptr<const void>& old_obj,
                                 const std::shared_ptr<const void>& obj) {
  const int o = op == Op::kAdd ? 0 : op == Op::kUpdate ? 1 : 2;
  switch (t) {
    case Target::kPod:
      Call(pod_h_, o, old_obj, obj);
      break;
    case Target::kNode:
      Call(node_h_, o, old_obj, obj);
      break;
    case Target::kNamespace:
      Call(ns_h_, o, old_obj, obj);
      break;
    case Target::kPriorityClass:
      Call(pc_h_, o, old_obj, obj);
      break;
    case Target::kPodDisruptionBudget:
      Call(pdb_h_, o, old_obj, obj);
      break;
    case Target::kObject:
      Call(obj_h_, o, old_obj, obj);
      break;
    case Target::kTerminalPod:
      Call(terminal_pod_h_, o, old_obj, obj);
      break;
  }
}

void LiveInformerFactory::Replace(size_t idx, std::vector<Object> items) {
  Cache& c = caches_[idx];
  std::unordered_map<std::string, size_t> next;  // key -> position in items
  next.reserve(items.size());
  for (size_t i = 0; i < items.size(); ++i) next[items[i].key] = i;
  // Deletes first (objects gone while we were not watching), then adds and updates in the
  // order of the list.
  for (auto it = c.objects.begin(); it != c.objects.end();) {
    if (!next.count(it->first)) {
      auto old = it->second.ptr;
      it = c.objects.erase(it);
      Notify(c.type.target, Op::kDelete, old, old);
    } else {
      ++it;
    }
  }
  for (size_t i = 0; i < items.size(); ++i) {
    Object& o = items[i];
    if (next[o.key] != i) continue;  // a duplicate key: the last one wins
    auto it = c.objects.find(o.key);
    if (it == c.objects.end()) {
      auto p = o.ptr;
      std::string key = o.key;
      c.objects.emplace(std::move(key), std::move(o));
      Notify(c.type.target, Op::kAdd, nullptr, p);
    } else if (it->second.resource_version != o.resource_version) {
      auto old = it->second.ptr;
      it->second = std::move(o);
      Notify(c.type.target, Op::kUpdate, old, it->second.ptr);
    }
  }
}

void LiveInformerFactory::Apply(size_t idx, Op op, Object obj) {
  Cache& c = caches_[idx];
  auto it = c.objects.find(obj.key);
  if (op == Op::kDelete) {
    if (it == c.objects.end()) return;
    auto old = it->second.ptr;
    c.objects.erase(it);
    // The final state from the server is the freshest; handlers receive it.
    Notify(c.type.target, Op::kDelete, obj.ptr ? obj.ptr : old, obj.ptr ? obj.ptr : old);
    return;
  }
  if (it == c.objects.end()) {
    auto p = obj.ptr;
    c.objects.emplace(obj.key, std::move(obj));
    Notify(c.type.target, Op::kAdd, nullptr, p);
    return;
  }
  auto old = it->second.ptr;
  it->second = std::move(obj);
  Notify(c.type.target, Op::kUpdate, old, it->second.ptr);
}

void LiveInformerFactory::AddPodHandlers(cluster::EventHandlers<api::Pod> h) {
  PostAndWait([this, h = std::move(h)] {
    pod_h_.push_back(h);
    for (auto& c : caches_) {
      if (c.type.target != Target::kPod || !h.on_add) continue;
      for (auto& [k, o] : c.objects) h.on_add(std::static_pointer_cast<const api::Pod>(o.ptr));
    }
  });
}

void LiveInformerFactory::AddTerminalPodHandlers(cluster::EventHandlers<api::Pod> h) {
  PostAndWait([this, h = std::move(h)] {
    terminal_pod_h_.push_back(h);
    for (auto& c : caches_) {
      if (c.type.target != Target::kTerminalPod || !h.on_add) continue;
      for (auto& [k, o] : c.objects) h.on_add(std::static_pointer_cast<const api::Pod>(o.ptr));
    }
  });
}

void LiveInformerFactory::AddNodeHandlers(cluster::EventHandlers<api::Node> h) {
  PostAndWait([this, h = std::move(h)] {
    node_h_.push_back(h);
    for (auto& c : caches_) {
      if (c.type.target != Target::kNode || !h.on_add) continue;
      for (auto& [k, o] : c.objects) h.on_add(std::static_pointer_cast<const api::Node>(o.ptr));
    }
  });
}

void LiveInformerFactory::AddPriorityClassHandlers(cluster::EventHandlers<api::PriorityClass> h) {
  PostAndWait([this, h = std::move(h)] {
    pc_h_.push_back(h);
    for (auto& c : caches_) {
      if (c.type.target != Target::kPriorityClass || !h.on_add) continue;
      for (auto& [k, o] : c.objects) {
        h.on_add(std::static_pointer_cast<const api::PriorityClass>(o.ptr));
      }
    }
  });
}

void LiveInformerFactory::AddNamespaceHandlers(cluster::EventHandlers<api::Namespace> h) {
  PostAndWait([this, h = std::move(h)] {
    ns_h_.push_back(h);
    for (auto& c : caches_) {
      if (c.type.target != Target::kNamespace || !h.on_add) continue;
      for (auto& [k, o] : c.objects) {
        h.on_add(std::static_pointer_cast<const api::Namespace>(o.ptr));
      }
    }
  });
}

void LiveInformerFactory::AddObjectHandlers(cluster::EventHandlers<api::Unstructured> h) {
  PostAndWait([this, h = std::move(h)] {
    obj_h_.push_back(h);
    for (auto& c : caches_) {
      if (c.type.target != Target::kObject || !h.on_add) continue;
      for (auto& [k, o] : c.objects) {
        h.on_add(std::static_pointer_cast<const api::Unstructured>(o.ptr));
      }
    }
  });
}

void LiveInformerFactory::AddPodDisruptionBudgetHandlers(
    cluster::EventHandlers<api::PodDisruptionBudget> h) {
  PostAndWait([this, h = std::move(h)] {
    pdb_h_.push_back(h);
    for (auto& c : caches_) {
      if (c.type.target != Target::kPodDisruptionBudget || !h.on_add) continue;
      for (auto& [k, o] : c.objects) {
        h.on_add(std::static_pointer_cast<const api::PodDisruptionBudget>(o.ptr));
      }
    }
  });
}

}  // namespace phalanx::client
