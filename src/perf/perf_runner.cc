// In-process scheduler_perf runner (see perf_runner.h).
#include "perf/perf_runner.h"

#include <fnmatch.h>
#include <malloc.h>
#include <sys/resource.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <climits>
#include <cmath>
#include <ctime>
#include <deque>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "api/decode.h"
#include "config/config.h"
#include "framework/clock.h"
#include "framework/extension_point_observer.h"
#include "perf/perf_objects.h"
#include "perf/perf_template.h"
#include "perf/scheduler_options_internal.h"
#include "plugins/registry.h"
#include "scheduler/scheduler.h"
#include "sim/dra_claims.h"
#include "store/store.h"

namespace phalanx::perf {

bool ResetPeakRss() {
  malloc_trim(0);
  std::ofstream f("/proc/self/clear_refs");
  if (!f) return false;
  f << "5";
  f.flush();
  return static_cast<bool>(f);
}

long PeakRssKiB() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::atol(line.c_str() + 6);
  }
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

namespace {

// CPU time of the whole process (all threads), seconds.
double ProcessCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec / 1e9;
}

using SteadyClock = std::chrono::steady_clock;
constexpr int64_t kNoProgressLimitNs = 10LL * 60 * 1000000000LL;  // upstream's 10 minutes
constexpr const char* kPodGroupLabel = "scheduling.x-k8s.io/pod-group";

// Upstream test/integration/framework/perf_utils.go PrepareNodes' baseNode: 110 pods,
// 4 cpu, 32Gi, Ready (allocatable defaulted from capacity, as the API server does).
api::Node DefaultNode() {
  api::Node n;
  n.status.capacity["pods"] = api::Quantity::FromValue(110);
  n.status.capacity["cpu"] = api::Quantity::FromValue(4);
  n.status.capacity["memory"] = api::Quantity::FromValue(32LL * 1024 * 1024 * 1024);
  n.status.allocatable = n.status.capacity;
  n.status.conditions.push_back({"Ready", "True"});
  return n;
}

// Upstream util.go makeBasePod + test/utils MakePodSpec: generateName "pod-", one pause
// container requesting (and limited to) 100m cpu, 500Mi memory.
api::Pod DefaultPod() {
  api::Pod p;
  p.metadata.generate_name = "pod-";
  api::Container c;
  c.name = "pause";
  c.image = "k8s.gcr.io/pause:3.2";
  c.resources.requests["cpu"] = api::Quantity::FromMilli(100);
  c.resources.requests["memory"] = api::Quantity::FromValue(500LL * 1024 * 1024);
  c.resources.limits = c.resources.requests;
  p.spec.containers.push_back(std::move(c));
  return p;
}

// Per-extension-point latency samples (nanoseconds), recorded only while enabled.
class LatencyRecorder final : public framework::ExtensionPointObserver {
 public:
  void Observe(framework::ExtensionPoint p, int64_t ns) override {
    absl::MutexLock l(&mu_);
    samples_[static_cast<size_t>(p)].push_back(ns);
  }
  std::map<std::string, ExtensionPointSummary> Summaries() const {
    std::map<std::string, ExtensionPointSummary> out;
    absl::MutexLock l(&mu_);
    for (size_t i = 0; i < samples_.size(); ++i) {
      std::vector<int64_t> v = samples_[i];
      if (v.empty()) continue;
      std::sort(v.begin(), v.end());
      ExtensionPointSummary s;
      s.count = static_cast<int64_t>(v.size());
      double sum = 0;
      for (int64_t x : v) sum += static_cast<double>(x);
      s.average_us = sum / v.size() / 1000.0;
      auto q = [&](double p) {
        size_t idx = static_cast<size_t>(std::ceil(v.size() * p / 100.0));
        return v[idx == 0 ? 0 : idx - 1] / 1000.0;
      };
      s.p50_us = q(50);
      s.p90_us = q(90);
      s.p99_us = q(99);
      out[framework::ExtensionPointName(static_cast<framework::ExtensionPoint>(i))] = s;
    }
    return out;
  }

 private:
  mutable absl::Mutex mu_;
  std::array<std::vector<int64_t>, static_cast<size_t>(framework::ExtensionPoint::kCount)> samples_
      ABSL_GUARDED_BY(mu_);
};

// `s` with `prefix` (e.g. "FILE: Case/Workload: op 2 (createPods): podTemplatePath: ")
// put before its message.
api::Status Prefixed(const std::string& prefix, const api::Status& s) {
  return absl::Status(s.code(), prefix + std::string(s.message()));
}

// Error unless the decoded template `path` holds exactly one object of `kind`.
api::Status ExpectOne(const std::string& path, const std::string& kind, const api::Manifests& m) {
  size_t n = kind == "Node" ? m.nodes.size() : kind == "Pod" ? m.pods.size() : m.namespaces.size();
  if (n != 1) {
    return absl::InvalidArgumentError(path + ": expected one " + kind + ", found " +
                                      std::to_string(n));
  }
  return absl::OkStatus();
}

// A template file holding exactly one object of `kind`.
api::Status LoadTemplate(const std::string& path, const std::string& kind, api::Manifests* m) {
  if (auto s = api::LoadManifests(path, m); !s.ok()) return s;
  return ExpectOne(path, kind, *m);
}

// The Namespace template of a createNamespaces op: one Namespace, whose name may be left
// out, since upstream's createNamespacesOp (test/integration/scheduler_perf) names every
// copy "<prefix>-<i>" itself (templates/namespace-with-labels.yaml has labels only). A
// one-document template without metadata.name or generateName is decoded with a
// placeholder name, which the op replaces; every other file goes through LoadTemplate,
// whose errors (YAML, decoding, object count) are LoadManifests' own.
api::Status LoadNamespaceTemplate(const std::string& path, api::Manifests* m) {
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAllFromFile(path);
  } catch (const YAML::Exception&) {
    return LoadTemplate(path, "Namespace", m);
  }
  if (docs.size() != 1 || !docs[0].IsMap()) return LoadTemplate(path, "Namespace", m);
  const YAML::Node& doc = docs[0];  // const lookups: no key is added by looking
  const YAML::Node meta = doc["metadata"];
  if (!meta.IsMap() || meta["name"] || meta["generateName"]) {
    return LoadTemplate(path, "Namespace", m);
  }
  docs[0]["metadata"]["name"] = "namespace-template";
  if (auto s = api::DecodeManifestNode(docs[0], path, m); !s.ok()) return s;
  return ExpectOne(path, "Namespace", *m);
}

std::string NamePrefix(const api::ObjectMeta& m, const std::string& fallback) {
  if (!m.generate_name.empty()) return m.generate_name;
  if (!m.name.empty()) return m.name + "-";
  return fallback;
}

// Deterministic stand-in for uuid.NewUUID() of UniqueNodeLabelStrategy.
std::string PseudoUUID(uint64_t seed, uint64_t i) {
  uint64_t a = seed * 0x9E3779B97F4A7C15ULL + i * 0xBF58476D1CE4E5B9ULL + 1;
  auto mix = [](uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  };
  uint64_t h1 = mix(a), h2 = mix(a ^ 0xD1B54A32D192ED03ULL);
  char buf[40];
  std::snprintf(buf, sizeof buf, "%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(h1 >> 32),
                static_cast<unsigned>((h1 >> 16) & 0xffff), static_cast<unsigned>(h1 & 0xffff),
                static_cast<unsigned>(h2 >> 48),
                static_cast<unsigned long long>(h2 & 0xffffffffffffULL));
  return buf;
}

api::Unstructured MakePodGroup(const std::string& ns, const std::string& name, int64_t min_member) {
  api::Unstructured u;
  u.api_version = "scheduling.x-k8s.io/v1alpha1";
  u.kind = "PodGroup";
  u.metadata.name = name;
  u.metadata.namespace_ = ns;
  YAML::Node n;
  n["apiVersion"] = u.api_version;
  n["kind"] = u.kind;
  n["metadata"]["name"] = name;
  n["metadata"]["namespace"] = ns;
  n["spec"]["minMember"] = min_member;
  u.object = std::make_shared<const YAML::Node>(n);
  return u;
}

// The note for a test case's featureGates entry. Phalanx has no feature gates; it follows
// current upstream, where the CSI migration gates are GA and locked on (CSIMigration:
// kubernetes PR 110410, GA in 1.25, removed in 1.27; CSIMigrationAWS: KEP-1487, GA in 1.25):
// asking for them on asks for what Phalanx does anyway.
std::string FeatureGateNote(const std::string& gate, bool on) {
  const std::string g = "featureGates." + gate + "=" + (on ? "true" : "false");
  if (gate == "CSIMigration" || gate == "CSIMigrationAWS") {
    return on ? g + ": always on in Phalanx (GA and locked on upstream since 1.25)"
              : g + " not applied: Phalanx always migrates (GA and locked on upstream since 1.25)";
  }
  return g + " ignored (Phalanx has no feature gates)";
}

// One workload's run: its own clock, Store and Scheduler.
class WorkloadRun {
 public:
  WorkloadRun(const PerfConfig& cfg, const PerfTestCase& tc, const PerfWorkload& w,
              const PerfOptions& opts, PerfResult* res)
      : cfg_(cfg),
        tc_(tc),
        w_(w),
        opts_(opts),
        res_(res),
        clock_(std::chrono::duration_cast<std::chrono::nanoseconds>(
                   std::chrono::system_clock::now().time_since_epoch())
                   .count()),
        store_(clock_) {}

  api::Status Run();

 private:
  std::string Where(const PerfOp& op) const {
    return cfg_.path + ": " + res_->name + ": op " + std::to_string(op.index) + " (" +
           PerfOpcodeName(op.kind) + ")";
  }
  // Loads every template the ops name (pod, PV and PVC templates) before anything runs, so a
  // bad template fails the workload at once.
  api::Status LoadTemplates(const std::vector<PerfOp>& ops);
  api::Status Setup();
  api::Status CreateNodes(const PerfOp& op);
  api::Status CreatePods(const PerfOp& op);
  // Pod `i` of a createPods op with PV / PVC templates: its PV and claim, written as
  // upstream's CreatePodWithPersistentVolume and fake PV controller write them.
  api::Status CreatePodVolumes(const PerfOp& op, const std::string& ns, int64_t i,
                               std::string* claim);
  api::Status CreateNamespaces(const PerfOp& op);
  // Deletes the pod (absent: nothing) and lets the claim controller release its claims.
  void DeletePodAndClaims(const std::string& ns, const std::string& name);
  api::Status StartChurn(const PerfOp& op);
  api::Status Barrier(const PerfOp& op);
  bool Sleep(const PerfOp& op);
  api::Status CreatePodSets(const PerfOp& op);
  api::Status DeletePods(const PerfOp& op);
  api::Status CreateAny(const PerfOp& op);
  api::Status UpdateAny(const PerfOp& op);
  api::Status CreateResourceDriver(const PerfOp& op);
  api::Status AllocResourceClaims(const PerfOp& op);
  void StartCollecting(const PerfOp& op);
  void StopCollecting();
  // createPods with steadyState: `op.count` pods kept alive for op.duration_ns, each
  // scheduled pod deleted and replaced by a new one.
  api::Status SteadyState(const PerfOp& op, const api::Pod& tmpl, const std::string& ns);
  // The objects of template `path` for object `index` of `count` (rendered when the file
  // is a text/template, decoded once otherwise).
  api::Status Render(const std::string& path, int64_t index, int64_t count, api::Manifests* out);
  // Runs fn(0..count-1), `per_second` of them per second of wall time (0: at once), while
  // the scheduler keeps working (upstream's ticker loops of updateAny / deletePods).
  api::Status Paced(int64_t count, int64_t per_second,
                    const std::function<api::Status(int64_t)>& fn);
  // One scheduling step for the paced and steady loops: a cycle, or the idle work (Tick,
  // background churn and deletions) when there is none.
  void Step();
  void DeleterTick();
  bool Matches(const api::Pod& p, const std::map<std::string, std::string>& sel) const {
    for (const auto& [k, v] : sel) {
      auto it = p.metadata.labels.find(k);
      if (it == p.metadata.labels.end() || it->second != v) return false;
    }
    return true;
  }
  // The measured interval's results (createPods collectMetrics, or a start/stop pair).
  void Measured(SteadyClock::time_point t0, SteadyClock::time_point t1, double cpu0, int64_t pods,
                int64_t bound);
  std::string PodNamespace(const PerfOp& op) const {
    return op.namespace_ ? *op.namespace_ : "namespace-" + std::to_string(op.index);
  }
  // The virtual clock follows wall time while the scheduler works, plus the idle time
  // skipped (see perf_runner.h).
  void SyncClock() {
    const int64_t wall =
        std::chrono::duration_cast<std::chrono::nanoseconds>(SteadyClock::now() - wall_base_)
            .count();
    clock_.AdvanceTo(clock_start_ + wall + skipped_ns_);
  }
  // Runs scheduling cycles until done() holds. False when no progress is possible.
  bool Drive(const std::function<bool()>& done);
  void OnBound(const api::Pod& pod);
  void ChurnTick();
  bool ChurnPending() const { return !churns_.empty(); }
  // One pod from `tmpl`; `claim` non-empty: its volumes are replaced by one volume "vol"
  // mounting that PersistentVolumeClaim (upstream CreatePodWithPersistentVolume).
  api::Status CreateOne(const api::Pod& tmpl, const std::string& ns, int op_index,
                        const std::string& group = "", const std::string& claim = "");

  const PerfConfig& cfg_;
  const PerfTestCase& tc_;
  const PerfWorkload& w_;
  const PerfOptions& opts_;
  PerfResult* res_;
  framework::VirtualClock clock_;
  const api::Timestamp clock_start_ = clock_.Now();
  const SteadyClock::time_point wall_base_ = SteadyClock::now();
  int64_t skipped_ns_ = 0;  // idle virtual time jumped over
  store::Store store_;
  // The resourceclaim controller upstream's harness runs beside the scheduler when DRA is on
  // (scheduler_perf's setup starts it): a pod's template claims are made and recorded in its
  // status, so that DynamicResources' PreEnqueue lets it in; a deleted pod's are released.
  sim::DraClaimController dra_claims_{store_};
  std::unique_ptr<scheduler::Scheduler> sched_;
  LatencyRecorder recorder_;
  std::vector<framework::Framework*> profiles_;

  int64_t node_seq_ = 0;
  std::map<std::string, int64_t> name_seq_;  // namespace/prefix -> next index
  std::vector<int64_t> created_per_op_;      // pods created by op
  std::vector<int64_t> bound_per_op_;        // pods bound by op
  std::map<std::string, int64_t> created_per_ns_;
  // Pods with a node per namespace now (bound minus deleted): upstream's getScheduledPods.
  std::unordered_map<std::string, int64_t> scheduled_per_ns_;
  std::map<std::string, int64_t> waiting_ns_;  // skipWaitToCompletion namespaces -> count
  int64_t total_bound_ = 0;
  int measuring_op_ = -1;
  std::vector<SteadyClock::time_point> bind_times_;
  std::vector<double> samples_;  // throughput samples (pods/s) of the collectMetrics ops

  struct Churn {
    PerfOp op;
    std::string ns;
    std::vector<api::Manifests> templates;
    std::vector<YAML::Node> raw;
    std::vector<std::vector<std::string>> live;  // recreate: names per template slot
    int64_t count = 0;
    SteadyClock::time_point next;
  };
  std::vector<Churn> churns_;
  int64_t churn_seq_ = 0;
  std::map<std::string, VolumeTemplates> volume_templates_;  // by "pv path\npvc path"

  struct TemplateFile {
    std::string text;
    bool templated = false;
    api::Manifests parsed;  // when not templated
  };
  std::map<std::string, TemplateFile> files_;
  // Per pod ("ns/name"): bound, attempted (a PodScheduled False condition) or deleted.
  std::unordered_set<std::string> bound_keys_, attempted_keys_, deleted_keys_;
  // Pods of skipWaitToCompletion ops, per namespace, for barriers (key and labels).
  std::map<std::string, std::vector<std::pair<std::string, std::map<std::string, std::string>>>>
      skip_wait_pods_;
  struct Collect {
    bool on = false;
    std::set<std::string> namespaces;
    std::map<std::string, std::string> labels;
    SteadyClock::time_point t0;
    double cpu0 = 0;
    int64_t bound = 0;
  };
  Collect collect_;
  int steady_op_ = -1;
  std::vector<std::pair<std::string, std::string>> steady_bound_;  // (ns, name) to replace
  struct Deleter {
    std::deque<std::pair<std::string, std::string>> pods;  // (ns, name)
    int64_t per_second = 0;
    SteadyClock::time_point start;
    int64_t done = 0;
  };
  std::vector<Deleter> deleters_;
  int64_t any_seq_ = 0;       // names for createAny objects with generateName
  bool keep_name_ = false;    // CreateOne: the template's own name (templated pod files)
  std::string last_created_;  // "ns/name" of the pod CreateOne made last
};

void WorkloadRun::OnBound(const api::Pod& pod) {
  ++total_bound_;
  const std::string& uid = pod.metadata.uid;
  ++scheduled_per_ns_[pod.metadata.namespace_];
  bound_keys_.insert(pod.Key());
  if (collect_.on && collect_.namespaces.count(pod.metadata.namespace_) &&
      Matches(pod, collect_.labels)) {
    ++collect_.bound;
    bind_times_.push_back(SteadyClock::now());
  }
  // uid "perf-<op>-<n>": which op created the pod.
  if (uid.size() > 5 && uid.compare(0, 5, "perf-") == 0) {
    int op = std::atoi(uid.c_str() + 5);
    if (op >= 0 && op < static_cast<int>(bound_per_op_.size())) {
      ++bound_per_op_[op];
      if (op == measuring_op_ && !collect_.on) bind_times_.push_back(SteadyClock::now());
      if (op == steady_op_) steady_bound_.emplace_back(pod.metadata.namespace_, pod.metadata.name);
    }
  }
}

api::Status WorkloadRun::LoadTemplates(const std::vector<PerfOp>& ops) {
  for (const auto& op : ops) {
    if (op.kind != PerfOpKind::kCreatePods && op.kind != PerfOpKind::kCreatePodGroups) continue;
    if (!op.pod_template_path.empty()) {
      api::Manifests m;
      if (auto s = Render(op.pod_template_path, 0, std::max<int64_t>(op.count, 1), &m); !s.ok()) {
        return Prefixed(Where(op) + ": podTemplatePath: ", s);
      }
      if (m.pods.size() != 1) {
        return absl::InvalidArgumentError(Where(op) + ": podTemplatePath: " + op.pod_template_path +
                                          ": expected one Pod, found " +
                                          std::to_string(m.pods.size()));
      }
    }
    if (op.pvc_template_path.empty()) continue;
    const std::string key = op.pv_template_path + "\n" + op.pvc_template_path;
    if (volume_templates_.count(key)) continue;
    VolumeTemplates t;
    if (auto s = LoadVolumeTemplates(op.pv_template_path, op.pvc_template_path, &t); !s.ok()) {
      return Prefixed(Where(op) + ": persistentVolume(Claim)TemplatePath: ", s);
    }
    volume_templates_.emplace(key, std::move(t));
  }
  return absl::OkStatus();
}

api::Status WorkloadRun::Setup() {
  store_.set_keep_all_events(false);
  scheduler::SchedulerOptions so;
  // --config, else the test case's schedulerConfigPath, else the default configuration.
  const std::string config =
      opts_.config_path.empty() ? tc_.scheduler_config_path : opts_.config_path;
  if (auto st = BenchSchedulerOptions(config, opts_.parallelism, opts_.registry, opts_.seed, &so);
      !st.ok()) {
    return st;
  }
  so.clock = &clock_;
  so.client = &store_;
  so.binding_workers = 0;
  so.opportunistic_batching = opts_.opportunistic_batching;
  std::vector<std::string> names;
  for (const auto& p : so.config.profiles) names.push_back(p.scheduler_name);
  auto s = scheduler::Scheduler::New(std::move(so));
  if (!s.ok()) {
    return absl::InvalidArgumentError(
        (config.empty() ? std::string("default configuration") : config) + ": " +
        s.status().Message());
  }
  sched_ = std::move(s).value();
  for (const auto& n : names) {
    if (auto* f = sched_->Profile(n)) profiles_.push_back(f);
  }
  sched_->on_bound = [this](const api::Pod& pod, const std::string&) { OnBound(pod); };
  sched_->AddEventHandlers(store_);
  store_.AddPodHandlers({nullptr,
                         [this](const api::PodPtr&, const api::PodPtr& p) {
                           for (const auto& c : p->status.conditions) {
                             if (c.type == "PodScheduled" && c.status == "False")
                               attempted_keys_.insert(p->Key());
                           }
                         },
                         [this](const api::PodPtr& p) {
                           if (!p->spec.node_name.empty())
                             --scheduled_per_ns_[p->metadata.namespace_];
                           deleted_keys_.insert(p->Key());
                         }});
  return absl::OkStatus();
}

api::Status WorkloadRun::CreateNodes(const PerfOp& op) {
  api::Node base = DefaultNode();
  std::string prefix = "node-" + std::to_string(op.index) + "-";  // upstream's GenerateName
  bool templated = false;
  if (!op.node_template_path.empty()) {
    api::Manifests m;
    if (auto s = Render(op.node_template_path, 0, op.count, &m); !s.ok()) {
      return Prefixed(Where(op) + ": nodeTemplatePath: ", s);
    }
    if (m.nodes.size() != 1) {
      return absl::InvalidArgumentError(Where(op) + ": nodeTemplatePath: " + op.node_template_path +
                                        ": expected one Node, found " +
                                        std::to_string(m.nodes.size()));
    }
    base = m.nodes[0];
    templated = files_[op.node_template_path].templated;
    prefix = NamePrefix(base.metadata, prefix);
  }
  const NodeStrategy& st = op.strategy;
  std::map<std::string, api::Quantity> alloc;
  for (const auto& [k, v] : st.allocatable) {
    auto q = api::Quantity::Parse(v);
    if (!q.ok()) {
      return absl::InvalidArgumentError(Where(op) + ": nodeAllocatableStrategy.nodeAllocatable." +
                                        k + ": " + std::string(q.status().message()));
    }
    alloc[k] = *q;
  }
  for (int64_t i = 0; i < op.count; ++i) {
    api::Node n = base;
    if (templated && i > 0) {
      api::Manifests m;
      if (auto s = Render(op.node_template_path, i, op.count, &m); !s.ok() || m.nodes.size() != 1) {
        return Prefixed(Where(op) + ": nodeTemplatePath: ",
                        s.ok() ? absl::InvalidArgumentError("expected one Node") : s);
      }
      n = m.nodes[0];
    }
    // A name in the template is the node's (upstream creates the template as it is: one
    // node, or one per rendering); generateName gets a suffix.
    if (n.metadata.name.empty() || (!templated && op.count > 1)) {
      n.metadata.name = NamePrefix(n.metadata, prefix) + std::to_string(node_seq_);
    }
    n.metadata.generate_name.clear();
    n.metadata.uid.clear();
    n.metadata.resource_version.clear();
    // "Create nodes with the usual kubernetes.io/hostname label" (upstream's
    // IntegrationTestNodePreparer.PrepareNodes, test/integration/framework/perf_utils.go),
    // before the strategy is applied: hostname topology keys (PodTopologySpread, pod
    // (anti-)affinity) find the label on every node, template or not.
    n.metadata.labels["kubernetes.io/hostname"] = n.metadata.name;
    switch (st.kind) {
      case NodeStrategy::Kind::kTrivial:
        break;
      case NodeStrategy::Kind::kNodeAllocatable:
        for (const auto& [k, q] : alloc) n.status.allocatable[k] = q;
        break;
      case NodeStrategy::Kind::kLabel:
        n.metadata.labels[st.label_key] = st.label_values[i % st.label_values.size()];
        break;
      case NodeStrategy::Kind::kUniqueLabel:
        n.metadata.labels[st.label_key] = PseudoUUID(opts_.seed, node_seq_);
        break;
    }
    ++node_seq_;
    const std::string name = n.metadata.name;
    auto r = store_.CreateNode(std::move(n));
    if (!r.ok()) {
      return absl::InvalidArgumentError(Where(op) + ": creating node: " + std::string(r.message()));
    }
    // Upstream NodeAllocatableStrategy.PrepareDependentObjects: the node's CSINode.
    if (st.kind == NodeStrategy::Kind::kNodeAllocatable) {
      if (auto c = store_.CreateObject(MakeCSINode(name, st)); !c.ok()) {
        return absl::InvalidArgumentError(Where(op) + ": creating CSINode " + name + ": " +
                                          std::string(c.message()));
      }
    }
  }
  return absl::OkStatus();
}

api::Status WorkloadRun::CreateOne(const api::Pod& tmpl, const std::string& ns, int op_index,
                                   const std::string& group, const std::string& claim) {
  api::Pod p = tmpl;
  if (!claim.empty()) p.spec.volumes = {api::Volume{"vol", claim, nullptr, {}}};
  const std::string prefix = group.empty() ? NamePrefix(tmpl.metadata, "pod-") : group + "-";
  int64_t& seq = name_seq_[ns + "/" + prefix];
  // A templated pod with a name of its own (".Index" in it) keeps it, as upstream creates it.
  if (!(keep_name_ && !p.metadata.name.empty())) p.metadata.name = prefix + std::to_string(seq);
  ++seq;
  p.metadata.generate_name.clear();
  p.metadata.namespace_ = ns;
  p.metadata.uid =
      "perf-" + std::to_string(op_index) + "-" + std::to_string(created_per_op_[op_index]);
  p.metadata.resource_version.clear();
  if (!group.empty()) p.metadata.labels[kPodGroupLabel] = group;
  // 1 ns of virtual time per pod: creation order is the queue's FIFO order at equal
  // priority, as with upstream's real timestamps.
  clock_.Advance(1);
  const std::string name = p.metadata.name;
  auto r = store_.CreatePod(std::move(p));
  if (r.ok()) r = dra_claims_.OnPodCreated(ns, name);
  if (!r.ok()) {
    return absl::InvalidArgumentError("creating pod in namespace " + ns + ": " +
                                      std::string(r.message()));
  }
  ++created_per_op_[op_index];
  ++created_per_ns_[ns];
  last_created_ = ns + "/" + name;
  return absl::OkStatus();
}

api::Status WorkloadRun::CreatePods(const PerfOp& op) {
  api::Pod tmpl = DefaultPod();
  bool templated = false;
  if (!op.pod_template_path.empty()) {
    api::Manifests m;
    if (auto s = Render(op.pod_template_path, 0, op.count, &m); !s.ok()) {
      return Prefixed(Where(op) + ": podTemplatePath: ", s);
    }
    tmpl = m.pods[0];
    templated = files_[op.pod_template_path].templated;
  }
  const std::string ns = PodNamespace(op);
  if (op.steady_state) return SteadyState(op, tmpl, ns);
  keep_name_ = templated;
  // The pod of index i: the template rendered for it (text/template files) or `tmpl`.
  auto pod_for = [&](int64_t i, api::Pod* out) -> api::Status {
    if (!templated || i == 0) {
      *out = tmpl;
      return absl::OkStatus();
    }
    api::Manifests m;
    if (auto s = Render(op.pod_template_path, i, op.count, &m); !s.ok()) return s;
    *out = m.pods[0];
    return absl::OkStatus();
  };
  const bool groups = op.kind == PerfOpKind::kCreatePodGroups;
  const int64_t total = groups ? op.count * op.pods_per_group : op.count;
  std::vector<std::string> group_names;
  if (groups) {
    // PodGroups first, so that members are not gated on a missing PodGroup.
    for (int64_t g = 0; g < op.count; ++g) {
      std::string name = "group-" + std::to_string(op.index) + "-" + std::to_string(g);
      auto r = store_.CreateObject(MakePodGroup(ns, name, op.min_member));
      if (!r.ok()) {
        return absl::InvalidArgumentError(Where(op) + ": creating PodGroup " + ns + "/" + name +
                                          ": " + std::string(r.message()));
      }
      group_names.push_back(std::move(name));
    }
  }
  auto t0 = SteadyClock::now();
  const double cpu0 = ProcessCpuSeconds();
  if (op.collect_metrics && !collect_.on) {
    measuring_op_ = op.index;
    bind_times_.clear();
    bind_times_.reserve(static_cast<size_t>(total));
    for (auto* f : profiles_) f->SetExtensionPointObserver(&recorder_);
  }
  if (groups) {
    for (int64_t g = 0; g < op.count; ++g) {
      for (int64_t i = 0; i < op.pods_per_group; ++i) {
        if (auto s = CreateOne(tmpl, ns, op.index, group_names[g]); !s.ok()) {
          return Prefixed(Where(op) + ": ", s);
        }
      }
    }
  } else {
    std::string claim;
    api::Pod pod;
    for (int64_t i = 0; i < op.count; ++i) {
      if (!op.pvc_template_path.empty()) {
        if (auto s = CreatePodVolumes(op, ns, i, &claim); !s.ok()) return s;
      }
      if (auto s = pod_for(i, &pod); !s.ok()) return Prefixed(Where(op) + ": podTemplatePath: ", s);
      if (auto s = CreateOne(pod, ns, op.index, "", claim); !s.ok()) {
        return Prefixed(Where(op) + ": ", s);
      }
      if (op.skip_wait) skip_wait_pods_[ns].emplace_back(last_created_, pod.metadata.labels);
    }
  }
  keep_name_ = false;
  if (op.skip_wait) {
    waiting_ns_[ns] += total;
    return absl::OkStatus();
  }
  // Upstream waitUntilPodsScheduledInNamespace: the namespace's scheduled pods (whichever op
  // created them) reach this op's count. For a measured op, whose namespace is its own in
  // upstream's files, that is its own pods; for setup ops sharing a namespace (e.g.
  // MixedSchedulingBasePod) pods that cannot be placed stay pending, as upstream.
  const int idx = op.index;
  const int64_t bound0 = bound_per_op_[idx];  // createPodSets runs one op in many namespaces
  bool ok = Drive([&] {
    return op.collect_metrics ? bound_per_op_[idx] - bound0 >= total
                              : scheduled_per_ns_[ns] >= total;
  });
  if (op.collect_metrics && !collect_.on) {
    auto t1 = bind_times_.empty() ? SteadyClock::now() : bind_times_.back();
    for (auto* f : profiles_) f->SetExtensionPointObserver(nullptr);
    measuring_op_ = -1;
    Measured(t0, t1, cpu0, total, bound_per_op_[idx]);
  }
  if (!ok) {
    std::string err =
        Where(op) + ": only " +
        std::to_string(op.collect_metrics ? bound_per_op_[idx] : scheduled_per_ns_[ns]) + " of " +
        std::to_string(total) + " pods scheduled in namespace " + ns + " (no progress possible)";
    if (auto ev = store_.Events(); !ev.empty()) {
      for (auto it = ev.rbegin(); it != ev.rend(); ++it) {
        if (it->reason == "FailedScheduling") {
          err += "; last failure: " + it->pod_key + ": " + it->message;
          break;
        }
      }
    }
    return absl::InvalidArgumentError(err);
  }
  return absl::OkStatus();
}

api::Status WorkloadRun::CreatePodVolumes(const PerfOp& op, const std::string& ns, int64_t i,
                                          std::string* claim) {
  const VolumeTemplates& t =
      volume_templates_.at(op.pv_template_path + "\n" + op.pvc_template_path);
  PodVolumeObjects o = MakePodVolumeObjects(t, ns, i);
  *claim = o.claim_name;
  // Upstream's order: create the PV, write its status (Bound), create the claim, write its
  // status (Bound). Its fake PV controller binds the claim on the PV's events; the in-process
  // run delivers that event once the claim exists (upstream's informer delivers it after
  // the creator's next calls; an event for a claim not created yet is dropped there).
  auto write = [&](const char* what, const std::string& name, api::Status s) -> api::Status {
    if (s.ok()) return s;
    return absl::InvalidArgumentError(Where(op) + ": " + what + " " + name + ": " +
                                      std::string(s.message()));
  };
  const std::string pvc_name = ns + "/" + o.claim_name;
  api::Status s =
      write("creating PersistentVolume", o.pv.metadata.name, store_.CreateObject(o.pv_created));
  if (s.ok())
    s = write("updating the status of PersistentVolume", o.pv.metadata.name,
              store_.UpdateObject(o.pv));
  if (s.ok())
    s = write("creating PersistentVolumeClaim", pvc_name, store_.CreateObject(o.pvc_created));
  if (s.ok())
    s = write("updating the status of PersistentVolumeClaim", pvc_name, store_.UpdateObject(o.pvc));
  if (!s.ok()) return s;
  api::UnstructuredPtr stored = store_.GetObject(o.pvc.Key());
  api::Unstructured bound;
  if (stored && FakePVControllerSync(o.pv, *stored, &bound)) {
    s = write("binding PersistentVolumeClaim", pvc_name, store_.UpdateObject(std::move(bound)));
  }
  return s;
}

void WorkloadRun::DeletePodAndClaims(const std::string& ns, const std::string& name) {
  api::PodPtr pod = store_.GetPod(ns, name);
  if (!pod) return;
  if (store_.DeletePod(ns, name).ok()) dra_claims_.OnPodGone(*pod);
}

api::Status WorkloadRun::CreateNamespaces(const PerfOp& op) {
  api::Namespace base;
  if (!op.namespace_template_path.empty()) {
    api::Manifests m;
    if (auto s = LoadNamespaceTemplate(op.namespace_template_path, &m); !s.ok()) {
      return Prefixed(Where(op) + ": namespaceTemplatePath: ", s);
    }
    base = m.namespaces[0];
  }
  for (int64_t i = 0; i < op.count; ++i) {
    api::Namespace ns = base;
    ns.metadata.name = op.prefix + "-" + std::to_string(i);
    ns.metadata.generate_name.clear();
    auto r = store_.CreateNamespace(std::move(ns));
    if (!r.ok()) {
      return absl::InvalidArgumentError(Where(op) + ": " + std::string(r.message()));
    }
  }
  return absl::OkStatus();
}

api::Status WorkloadRun::StartChurn(const PerfOp& op) {
  Churn c;
  c.op = op;
  c.ns = op.namespace_ ? *op.namespace_ : "namespace-" + std::to_string(op.index);
  for (const auto& path : op.template_paths) {
    api::Manifests m;
    if (auto s = api::LoadManifests(path, &m); !s.ok()) {
      return absl::InvalidArgumentError(Where(op) + ": templatePaths: " + std::string(s.message()));
    }
    YAML::Node raw;
    try {
      raw = YAML::LoadFile(path);
    } catch (const YAML::Exception& e) {
      return absl::InvalidArgumentError(Where(op) + ": templatePaths: " + path + ": " + e.what());
    }
    if (m.nodes.size() + m.pods.size() + m.namespaces.size() == 0 &&
        (!raw.IsMap() || !raw["kind"].IsScalar() || !raw["apiVersion"].IsScalar())) {
      return absl::InvalidArgumentError(Where(op) + ": templatePaths: " + path +
                                        ": expected one object with kind and apiVersion");
    }
    c.templates.push_back(std::move(m));
    c.raw.push_back(raw);
  }
  c.live.assign(c.templates.size(), std::vector<std::string>(std::max<int64_t>(op.number, 0)));
  c.next = SteadyClock::now() + std::chrono::milliseconds(op.interval_ms);
  churns_.push_back(std::move(c));
  return absl::OkStatus();
}

// One churn step per due tick (upstream churnOp: create N, or recreate in a ring of N).
void WorkloadRun::ChurnTick() {
  if (churns_.empty()) return;
  auto now = SteadyClock::now();
  for (auto& c : churns_) {
    while (c.next <= now) {
      c.next += std::chrono::milliseconds(c.op.interval_ms);
      if (c.op.mode == "create" && c.op.number > 0 && c.count >= c.op.number) break;
      const size_t slot = c.op.number > 0 ? static_cast<size_t>(c.count % c.op.number) : 0;
      for (size_t t = 0; t < c.templates.size(); ++t) {
        const api::Manifests& m = c.templates[t];
        std::string* live = c.op.mode == "recreate" ? &c.live[t][slot] : nullptr;
        if (live && !live->empty()) {  // recreate: delete the slot's object
          if (!m.nodes.empty())
            (void)store_.DeleteNode(*live);
          else if (!m.pods.empty())
            DeletePodAndClaims(c.ns, *live);
          else if (m.namespaces.empty()) {
            api::Unstructured u;
            u.api_version = c.raw[t]["apiVersion"].Scalar();
            u.kind = c.raw[t]["kind"].Scalar();
            u.metadata.name = *live;
            u.metadata.namespace_ = c.ns;
            (void)store_.DeleteObject(u);
          }
          live->clear();
          continue;
        }
        std::string name =
            "churn-" + std::to_string(c.op.index) + "-" + std::to_string(churn_seq_++);
        if (!m.nodes.empty()) {
          api::Node n = m.nodes[0];
          n.metadata.name = name;
          (void)store_.CreateNode(std::move(n));
        } else if (!m.pods.empty()) {
          api::Pod p = m.pods[0];
          p.metadata.name = name;
          p.metadata.namespace_ = c.ns;
          p.metadata.uid.clear();
          (void)store_.CreatePod(std::move(p));
        } else if (!m.namespaces.empty()) {
          api::Namespace ns = m.namespaces[0];
          ns.metadata.name = name;
          (void)store_.CreateNamespace(std::move(ns));
        } else {
          api::Unstructured u;
          u.api_version = c.raw[t]["apiVersion"].Scalar();
          u.kind = c.raw[t]["kind"].Scalar();
          u.metadata.name = name;
          u.metadata.namespace_ = c.ns;
          YAML::Node obj = YAML::Clone(c.raw[t]);
          obj["metadata"]["name"] = name;
          obj["metadata"]["namespace"] = c.ns;
          u.object = std::make_shared<const YAML::Node>(obj);
          (void)store_.CreateObject(std::move(u));
        }
        if (live) *live = name;
      }
      ++c.count;
    }
  }
}

void WorkloadRun::Measured(SteadyClock::time_point t0, SteadyClock::time_point t1, double cpu0,
                           int64_t pods, int64_t bound) {
  const double secs = std::chrono::duration<double>(t1 - t0).count();
  res_->measured_pods += pods;
  res_->scheduled_measured += bound;
  res_->seconds += secs;
  res_->cpu_seconds += ProcessCpuSeconds() - cpu0;
  // Throughput samples: pods bound per window since t0, scaled to pods/s.
  double win_ms = opts_.throughput_window_ms;
  if (win_ms <= 0) win_ms = std::clamp(secs * 1000.0 / 50.0, 1.0, 1000.0);
  res_->window_ms = win_ms;
  const auto win = std::chrono::duration<double, std::milli>(win_ms);
  const size_t full = static_cast<size_t>(std::floor(secs * 1000.0 / win_ms));
  std::vector<double> counts(full, 0.0);
  for (const auto& t : bind_times_) {
    size_t k = static_cast<size_t>(std::chrono::duration<double, std::milli>(t - t0) / win);
    if (k < full) counts[k] += 1;
  }
  for (double& c : counts) c = c * 1000.0 / win_ms;
  samples_.insert(samples_.end(), counts.begin(), counts.end());
}

api::Status WorkloadRun::Render(const std::string& path, int64_t index, int64_t count,
                                api::Manifests* out) {
  auto it = files_.find(path);
  if (it == files_.end()) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return absl::InvalidArgumentError(path + ": cannot read");
    std::stringstream ss;
    ss << in.rdbuf();
    TemplateFile f;
    f.text = ss.str();
    f.templated = IsTemplated(f.text);
    if (!f.templated) {
      if (auto s = api::DecodeManifests(f.text, path, &f.parsed); !s.ok()) return s;
    }
    it = files_.emplace(path, std::move(f)).first;
  }
  if (!it->second.templated) {
    *out = it->second.parsed;
    return absl::OkStatus();
  }
  auto text = RenderTemplate(
      it->second.text, path,
      {{"Index", static_cast<double>(index)}, {"Count", static_cast<double>(count)}});
  if (!text.ok()) return text.status();
  *out = api::Manifests{};
  return api::DecodeManifests(*text, path + " (rendered for .Index " + std::to_string(index) + ")",
                              out);
}

void WorkloadRun::Step() {
  SyncClock();
  if (sched_->ScheduleOne(false)) {
    ChurnTick();
    DeleterTick();
    return;
  }
  sched_->Tick();
  ChurnTick();
  DeleterTick();
  if (sched_->ScheduleOne(false)) return;
  // Idle: a short wall-time wait, as upstream's scheduler idles until an event.
  std::this_thread::sleep_for(std::chrono::microseconds(200));
}

api::Status WorkloadRun::Paced(int64_t count, int64_t per_second,
                               const std::function<api::Status(int64_t)>& fn) {
  const auto start = SteadyClock::now();
  for (int64_t i = 0; i < count; ++i) {
    if (per_second > 0) {
      // upstream: a ticker of 1s / per_second; the first tick after one period.
      const auto due = start + std::chrono::nanoseconds((i + 1) * 1000000000LL / per_second);
      while (SteadyClock::now() < due) Step();
    }
    if (auto s = fn(i); !s.ok()) return s;
  }
  return absl::OkStatus();
}

void WorkloadRun::DeleterTick() {
  if (deleters_.empty()) return;
  const auto now = SteadyClock::now();
  for (auto& d : deleters_) {
    while (!d.pods.empty()) {
      if (d.per_second > 0 &&
          now < d.start + std::chrono::nanoseconds((d.done + 1) * 1000000000LL / d.per_second)) {
        break;
      }
      DeletePodAndClaims(d.pods.front().first, d.pods.front().second);
      d.pods.pop_front();
      ++d.done;
    }
  }
  deleters_.erase(std::remove_if(deleters_.begin(), deleters_.end(),
                                 [](const Deleter& d) { return d.pods.empty(); }),
                  deleters_.end());
}

api::Status WorkloadRun::CreatePodSets(const PerfOp& op) {
  for (int64_t i = 0; i < op.count; ++i) {
    PerfOp inner = *op.create_pods;
    inner.namespace_ = op.namespace_prefix + "-" + std::to_string(i);
    if (auto s = CreatePods(inner); !s.ok()) return s;
  }
  return absl::OkStatus();
}

api::Status WorkloadRun::DeletePods(const PerfOp& op) {
  Deleter d;
  d.per_second = op.per_second;
  d.start = SteadyClock::now();
  for (const auto& p : store_.ListPods()) {
    if (p->metadata.namespace_ == *op.namespace_ && Matches(*p, op.label_selector)) {
      d.pods.emplace_back(p->metadata.namespace_, p->metadata.name);
    }
  }
  const size_t n = d.pods.size();
  deleters_.push_back(std::move(d));
  if (op.skip_wait) return absl::OkStatus();
  while (!deleters_.empty()) Step();
  (void)n;
  return absl::OkStatus();
}

namespace {
// Kinds without a namespace (the API server's cluster-scoped resources the templates use).
bool ClusterScoped(const std::string& kind) {
  static const std::set<std::string> kinds = {"Node",
                                              "Namespace",
                                              "PersistentVolume",
                                              "StorageClass",
                                              "CSINode",
                                              "CSIDriver",
                                              "PriorityClass",
                                              "DeviceClass",
                                              "ResourceSlice",
                                              "DeviceTaintRule",
                                              "Queue",
                                              "HyperNode",
                                              "Topology",
                                              "ResourcePoolStatusRequest"};
  return kinds.count(kind) > 0;
}
}  // namespace

api::Status WorkloadRun::CreateAny(const PerfOp& op) {
  for (int64_t i = 0; i < op.count; ++i) {
    api::Manifests m;
    if (auto s = Render(op.template_path, i, op.count, &m); !s.ok()) {
      return Prefixed(Where(op) + ": templatePath: ", s);
    }
    auto ns_for = [&](const std::string& kind, std::string* ns) -> api::Status {
      if (op.namespace_) {
        if (ClusterScoped(kind)) {
          return absl::InvalidArgumentError(Where(op) + ": namespace \"" + *op.namespace_ +
                                            "\" set for " + op.template_path + ", but " + kind +
                                            " is cluster-scoped");
        }
        *ns = *op.namespace_;
      } else if (!ClusterScoped(kind) && ns->empty()) {
        return absl::InvalidArgumentError(Where(op) + ": namespace not set for " +
                                          op.template_path + ", but " + kind + " is namespaced");
      }
      return absl::OkStatus();
    };
    auto named = [&](api::ObjectMeta* meta) {
      if (meta->name.empty()) meta->name = meta->generate_name + std::to_string(any_seq_++);
      meta->generate_name.clear();
    };
    api::Status st;
    for (auto& n : m.nodes) {
      named(&n.metadata);
      if (st.ok()) st = store_.CreateNode(n);
    }
    for (auto& ns : m.namespaces) {
      named(&ns.metadata);
      if (st.ok()) st = store_.CreateNamespace(ns);
    }
    for (auto& pc : m.priority_classes) {
      if (st.ok()) st = store_.CreatePriorityClass(pc);
    }
    for (auto& pdb : m.pod_disruption_budgets) {
      if (st.ok()) st = ns_for("PodDisruptionBudget", &pdb.metadata.namespace_);
      if (st.ok()) st = store_.CreatePodDisruptionBudget(pdb);
    }
    for (auto& p : m.pods) {
      if (st.ok()) st = ns_for("Pod", &p.metadata.namespace_);
      named(&p.metadata);
      if (st.ok()) st = store_.CreatePod(p);
      if (st.ok()) st = dra_claims_.OnPodCreated(p.metadata.namespace_, p.metadata.name);
    }
    for (auto& o : m.objects) {
      if (o.kind == "Namespace" || o.kind == "PriorityClass" || o.kind == "PodDisruptionBudget") {
        continue;  // typed above
      }
      if (st.ok()) st = ns_for(o.kind, &o.metadata.namespace_);
      if (!st.ok()) break;
      named(&o.metadata);
      YAML::Node doc = o.object ? YAML::Clone(*o.object) : YAML::Node(YAML::NodeType::Map);
      doc["metadata"]["name"] = o.metadata.name;
      if (!o.metadata.namespace_.empty()) doc["metadata"]["namespace"] = o.metadata.namespace_;
      doc["metadata"].remove("generateName");
      o.object = std::make_shared<const YAML::Node>(doc);
      st = store_.CreateObject(o);
    }
    if (!st.ok()) {
      return absl::InvalidArgumentError(Where(op) + ": " + op.template_path + ": " +
                                        std::string(st.message()));
    }
  }
  return absl::OkStatus();
}

api::Status WorkloadRun::UpdateAny(const PerfOp& op) {
  return Paced(op.count, op.per_second, [&](int64_t i) -> api::Status {
    api::Manifests m;
    if (auto s = Render(op.template_path, i, op.count, &m); !s.ok()) {
      return Prefixed(Where(op) + ": templatePath: ", s);
    }
    api::Status st;
    // Upstream updates the whole object (and then its status) with the template: what the
    // template does not say is gone, except what the API server keeps (identity, the
    // binding of a pod).
    for (auto& n : m.nodes) {
      if (op.namespace_) {
        return absl::InvalidArgumentError(Where(op) + ": namespace \"" + *op.namespace_ +
                                          "\" set, but Node is cluster-scoped");
      }
      auto old = store_.GetNode(n.metadata.name);
      if (!old) {
        return absl::InvalidArgumentError(Where(op) + ": node " + n.metadata.name + " not found");
      }
      n.metadata.uid = old->metadata.uid;
      if (st.ok()) st = store_.UpdateNode(n);
    }
    for (auto& p : m.pods) {
      if (!op.namespace_) {
        return absl::InvalidArgumentError(Where(op) + ": namespace not set, but Pod is namespaced");
      }
      p.metadata.namespace_ = *op.namespace_;
      auto old = store_.GetPod(p.metadata.namespace_, p.metadata.name);
      if (!old) {
        return absl::InvalidArgumentError(Where(op) + ": pod " + p.Key() + " not found");
      }
      p.metadata.uid = old->metadata.uid;
      if (p.spec.node_name.empty()) p.spec.node_name = old->spec.node_name;
      if (st.ok()) st = store_.UpdatePod(p);
    }
    for (auto& o : m.objects) {
      if (op.namespace_) o.metadata.namespace_ = *op.namespace_;
      YAML::Node doc = o.object ? YAML::Clone(*o.object) : YAML::Node(YAML::NodeType::Map);
      if (op.namespace_) doc["metadata"]["namespace"] = *op.namespace_;
      o.object = std::make_shared<const YAML::Node>(doc);
      if (st.ok()) st = store_.UpdateObject(o);
    }
    if (!st.ok()) {
      return absl::InvalidArgumentError(Where(op) + ": " + op.template_path + ": " +
                                        std::string(st.message()));
    }
    return absl::OkStatus();
  });
}

api::Status WorkloadRun::CreateResourceDriver(const PerfOp& op) {
  // Upstream dra.go createResourceDriverOp / resourceSlice: one ResourceSlice per node whose
  // name matches the glob, named after the node, one pool of its own, maxClaimsPerNode
  // devices "instance-<i>" with the attributes and capacity upstream gives them (the binding
  // condition fields are stripped with DRADeviceBindingConditions off, upstream's default).
  for (const auto& node : store_.ListNodes()) {
    const std::string& name = node->metadata.name;
    if (fnmatch(op.nodes_glob.c_str(), name.c_str(), 0) != 0) continue;
    YAML::Node doc;
    doc["apiVersion"] = "resource.k8s.io/v1";
    doc["kind"] = "ResourceSlice";
    doc["metadata"]["name"] = name;
    doc["spec"]["driver"] = op.driver_name;
    doc["spec"]["nodeName"] = name;
    doc["spec"]["pool"]["name"] = name;
    doc["spec"]["pool"]["generation"] = 0;
    doc["spec"]["pool"]["resourceSliceCount"] = 1;
    for (int64_t i = 0; i < op.max_claims_per_node; ++i) {
      YAML::Node d;
      d["name"] = "instance-" + std::to_string(i);
      d["attributes"]["model"]["string"] = "A100";
      d["attributes"]["family"]["string"] = "GPU";
      d["attributes"]["driverVersion"]["version"] = "1.2.3";
      d["attributes"]["dra.example.com/numa"]["int"] = i;
      d["capacity"]["memory"]["value"] = "1Gi";
      doc["spec"]["devices"].push_back(d);
    }
    api::Manifests m;
    if (auto s = api::DecodeManifestNode(doc, Where(op), &m); !s.ok() || m.objects.size() != 1) {
      return s.ok() ? absl::InternalError(Where(op) + ": ResourceSlice did not decode") : s;
    }
    if (auto s = store_.CreateObject(m.objects[0]); !s.ok()) {
      return absl::InvalidArgumentError(Where(op) + ": creating ResourceSlice " + name + ": " +
                                        std::string(s.message()));
    }
  }
  return absl::OkStatus();
}

api::Status WorkloadRun::AllocResourceClaims(const PerfOp& op) {
  // Upstream allocates each unallocated claim of the namespace with the structured
  // allocator on a random node, without a consumer. Here the scheduler's own allocation
  // does it: a pause pod per claim references it and is scheduled (DynamicResources
  // allocates and reserves the claim), then the pod is deleted and the claim's reservation
  // dropped, which leaves the claim allocated and unreserved as upstream's op leaves it.
  std::vector<api::UnstructuredPtr> claims;
  for (const auto& o : store_.ListObjects()) {
    if (o->kind != "ResourceClaim" || o->Group() != "resource.k8s.io") continue;
    if (op.namespace_ && o->metadata.namespace_ != *op.namespace_) continue;
    // A claim without status: operator[] on a const node gives an invalid node, which
    // throws (YAML::InvalidNode) when asked its type, so ask IsDefined first.
    const YAML::Node status = (*o->object)["status"];
    if (status.IsDefined() && status.IsMap() && status["allocation"].IsDefined()) continue;
    claims.push_back(o);
  }
  std::vector<std::string> pods;
  for (size_t i = 0; i < claims.size(); ++i) {
    const auto& c = claims[i];
    const std::string name = "alloc-claim-" + std::to_string(i);
    const std::string yaml =
        "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name +
        ", namespace: " + c->metadata.namespace_ +
        "}\nspec:\n  resourceClaims: [{name: c, resourceClaimName: " + c->metadata.name +
        "}]\n  containers: [{name: pause, image: pause, resources: {claims: "
        "[{name: c}]}}]\n";
    api::Manifests m;
    if (auto s = api::DecodeManifests(yaml, Where(op), &m); !s.ok()) return s;
    if (auto s = store_.CreatePod(m.pods[0]); !s.ok()) {
      return absl::InvalidArgumentError(Where(op) + ": " + std::string(s.message()));
    }
    pods.push_back(c->metadata.namespace_ + "/" + name);
  }
  const bool ok = Drive([&] {
    for (const auto& k : pods) {
      if (!bound_keys_.count(k)) return false;
    }
    return true;
  });
  if (!ok) {
    for (size_t i = 0; i < pods.size(); ++i) {
      if (!bound_keys_.count(pods[i])) {
        return absl::InvalidArgumentError(Where(op) + ": could not allocate claim " +
                                          claims[i]->Key() + " (" + std::to_string(i) + " of " +
                                          std::to_string(claims.size()) + ")");
      }
    }
  }
  for (size_t i = 0; i < pods.size(); ++i) {
    const auto slash = pods[i].find('/');
    DeletePodAndClaims(pods[i].substr(0, slash), pods[i].substr(slash + 1));
    api::UnstructuredPtr now = store_.GetObject(claims[i]->Key());
    if (!now || !now->object) continue;
    api::Unstructured u = *now;
    YAML::Node doc = YAML::Clone(*u.object);
    if (doc["status"].IsMap()) doc["status"].remove("reservedFor");
    u.object = std::make_shared<const YAML::Node>(doc);
    (void)store_.UpdateObject(std::move(u));
  }
  return absl::OkStatus();
}

void WorkloadRun::StartCollecting(const PerfOp& op) {
  collect_ = Collect{};
  collect_.on = true;
  collect_.namespaces.insert(op.namespaces.begin(), op.namespaces.end());
  collect_.labels = op.label_selector;
  collect_.t0 = SteadyClock::now();
  collect_.cpu0 = ProcessCpuSeconds();
  bind_times_.clear();
  if (!op.metrics_name.empty()) res_->name += "/" + op.metrics_name;
  for (auto* f : profiles_) f->SetExtensionPointObserver(&recorder_);
}

void WorkloadRun::StopCollecting() {
  if (!collect_.on) return;
  for (auto* f : profiles_) f->SetExtensionPointObserver(nullptr);
  const auto t1 = bind_times_.empty() ? SteadyClock::now() : bind_times_.back();
  Measured(collect_.t0, t1, collect_.cpu0, collect_.bound, collect_.bound);
  collect_ = Collect{};
}

api::Status WorkloadRun::SteadyState(const PerfOp& op, const api::Pod& tmpl,
                                     const std::string& ns) {
  keep_name_ = false;
  for (int64_t i = 0; i < op.count; ++i) {
    if (auto s = CreateOne(tmpl, ns, op.index); !s.ok()) return Prefixed(Where(op) + ": ", s);
  }
  const auto t0 = SteadyClock::now();
  const double cpu0 = ProcessCpuSeconds();
  const bool measure = op.collect_metrics && !collect_.on;
  if (measure) {
    measuring_op_ = op.index;
    bind_times_.clear();
    for (auto* f : profiles_) f->SetExtensionPointObserver(&recorder_);
  }
  steady_op_ = op.index;
  const auto end = t0 + std::chrono::nanoseconds(op.duration_ns);
  int64_t replaced = 0;
  while (SteadyClock::now() < end) {
    Step();
    for (const auto& [pns, name] : steady_bound_) {
      DeletePodAndClaims(pns, name);
      if (auto s = CreateOne(tmpl, ns, op.index); !s.ok()) return Prefixed(Where(op) + ": ", s);
      ++replaced;
    }
    steady_bound_.clear();
  }
  steady_op_ = -1;
  if (measure) {
    for (auto* f : profiles_) f->SetExtensionPointObserver(nullptr);
    measuring_op_ = -1;
    Measured(t0, SteadyClock::now(), cpu0, replaced, replaced);
  }
  return absl::OkStatus();
}

bool WorkloadRun::Drive(const std::function<bool()>& done) {
  int64_t last_bound = total_bound_;
  api::Timestamp last_progress = clock_.Now();
  int64_t idle_bound = total_bound_;
  auto idle_since = SteadyClock::now();
  auto last_tick = SteadyClock::now();
  for (;;) {
    if (done()) return true;
    SyncClock();
    if (sched_->ScheduleOne(false)) {
      ChurnTick();
      DeleterTick();
      // Periodic work while busy (upstream flushes backoffQ every second).
      auto now = SteadyClock::now();
      if (now - last_tick > std::chrono::milliseconds(10)) {
        last_tick = now;
        SyncClock();
        sched_->Tick();
      }
      continue;
    }
    SyncClock();
    sched_->Tick();
    if (sched_->ScheduleOne(false)) continue;
    if (done()) return true;
    if (total_bound_ != last_bound) {
      last_bound = total_bound_;
      last_progress = clock_.Now();
    }
    if (!deleters_.empty()) {
      // Paced deletions free room: wait for the next one (wall time).
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      DeleterTick();
      continue;
    }
    if (ChurnPending()) {
      // Churned objects may unblock pods: wait (wall time) for the next churn tick, for
      // at most 10 s without a binding.
      if (total_bound_ != idle_bound) {
        idle_bound = total_bound_;
        idle_since = SteadyClock::now();
      }
      if (SteadyClock::now() - idle_since > std::chrono::seconds(10)) return false;
      auto next = churns_.front().next;
      for (const auto& c : churns_) next = std::min(next, c.next);
      std::this_thread::sleep_until(next);
      ChurnTick();
    }
    api::Timestamp wake = sched_->NextWakeTime();
    if (wake == INT64_MAX) {
      if (ChurnPending()) continue;
      return false;
    }
    if (wake - last_progress > kNoProgressLimitNs) return false;
    if (wake > clock_.Now()) skipped_ns_ += wake - clock_.Now();  // idle: no wall time spent
    clock_.AdvanceTo(wake);
    sched_->Tick();
  }
}

api::Status WorkloadRun::Barrier(const PerfOp& op) {
  std::vector<std::string> nss = op.namespaces;
  for (const auto& ns : nss) {
    if (!skip_wait_pods_.count(ns)) {
      return absl::InvalidArgumentError(Where(op) + ": namespaces: unknown namespace " + ns +
                                        " (no earlier skipWaitToCompletion op created pods there)");
    }
  }
  if (nss.empty()) {
    for (const auto& [ns, pods] : skip_wait_pods_) nss.push_back(ns);
  }
  // Upstream waitUntilPodsScheduled / waitUntilPodsAttempted: the skipWaitToCompletion pods
  // of the namespaces whose labels match are scheduled (Scheduled) or were tried at least
  // once (Attempted: scheduled, or marked unschedulable).
  const bool attempted = op.stage_requirement == "Attempted";
  auto satisfied = [&](const std::string& key) {
    return bound_keys_.count(key) || deleted_keys_.count(key) ||
           (attempted && attempted_keys_.count(key));
  };
  std::vector<std::string> targets;
  for (const auto& ns : nss) {
    for (const auto& [key, labels] : skip_wait_pods_[ns]) {
      bool match = true;
      for (const auto& [k, v] : op.label_selector) {
        auto it = labels.find(k);
        match = match && it != labels.end() && it->second == v;
      }
      if (match) targets.push_back(key);
    }
  }
  size_t next = 0;  // targets[0, next) are satisfied
  bool ok = Drive([&] {
    while (next < targets.size() && satisfied(targets[next])) ++next;
    return next == targets.size();
  });
  if (!ok) {
    return absl::InvalidArgumentError(
        Where(op) + ": only " + std::to_string(next) + " of " + std::to_string(targets.size()) +
        " pods " + (attempted ? "attempted" : "scheduled") + " (no progress possible); first " +
        "waiting: " + (next < targets.size() ? targets[next] : std::string("-")));
  }
  if (op.label_selector.empty()) {
    for (const auto& ns : nss) {
      skip_wait_pods_.erase(ns);
      waiting_ns_.erase(ns);
    }
  }
  return absl::OkStatus();
}

bool WorkloadRun::Sleep(const PerfOp& op) {
  const auto end = SteadyClock::now() + std::chrono::nanoseconds(op.duration_ns);
  while (SteadyClock::now() < end) {
    SyncClock();
    if (sched_->ScheduleOne(false)) {
      ChurnTick();
      continue;
    }
    auto until = end;
    for (const auto& c : churns_) until = std::min(until, c.next);
    if (!deleters_.empty())
      until = std::min(until, SteadyClock::now() + std::chrono::milliseconds(1));
    std::this_thread::sleep_until(until);
    ChurnTick();
    DeleterTick();
    sched_->Tick();
  }
  SyncClock();
  sched_->Tick();
  return true;
}

api::Status WorkloadRun::Run() {
  std::vector<PerfOp> ops;
  if (auto s = PatchParams(cfg_, tc_, w_, &ops); !s.ok()) return s;
  std::map<std::string, bool> gates = tc_.feature_gates;
  for (const auto& [k, v] : w_.feature_gates) gates[k] = v;  // the workload's win
  for (const auto& [k, v] : gates) res_->notes.push_back(FeatureGateNote(k, v));
  if (opts_.config_path.empty() && !tc_.scheduler_config_path.empty()) {
    res_->notes.push_back("schedulerConfigPath " + tc_.scheduler_config_path);
  }
  if (auto s = LoadTemplates(ops); !s.ok()) return s;
  if (auto s = Setup(); !s.ok()) return s;
  created_per_op_.assign(ops.size(), 0);
  bound_per_op_.assign(ops.size(), 0);
  ResetPeakRss();
  for (const auto& op : ops) {
    api::Status st;
    switch (op.kind) {
      case PerfOpKind::kCreateNodes:
        st = CreateNodes(op);
        break;
      case PerfOpKind::kCreatePods:
      case PerfOpKind::kCreatePodGroups:
        st = CreatePods(op);
        break;
      case PerfOpKind::kBarrier:
        st = Barrier(op);
        break;
      case PerfOpKind::kChurn:
        st = StartChurn(op);
        break;
      case PerfOpKind::kCreateNamespaces:
        st = CreateNamespaces(op);
        break;
      case PerfOpKind::kSleep:
        Sleep(op);
        break;
      case PerfOpKind::kCreatePodSets:
        st = CreatePodSets(op);
        break;
      case PerfOpKind::kDeletePods:
        st = DeletePods(op);
        break;
      case PerfOpKind::kCreateAny:
        st = CreateAny(op);
        break;
      case PerfOpKind::kUpdateAny:
        st = UpdateAny(op);
        break;
      case PerfOpKind::kCreateResourceDriver:
        st = CreateResourceDriver(op);
        break;
      case PerfOpKind::kAllocResourceClaims:
        st = AllocResourceClaims(op);
        break;
      case PerfOpKind::kStartCollectingMetrics:
        StartCollecting(op);
        break;
      case PerfOpKind::kStopCollectingMetrics:
        StopCollecting();
        break;
    }
    if (!st.ok()) return st;
  }
  StopCollecting();  // a start without its stop: measured to the end
  deleters_.clear();
  // The workload is over: churn stops (upstream cancels its context). No implicit
  // barrier (later upstream): pods still pending are reported, not waited for.
  churns_.clear();
  int64_t created = 0;
  for (int64_t c : created_per_op_) created += c;
  int64_t bound = 0;
  for (int64_t b : bound_per_op_) bound += b;
  res_->pending_at_end = created - bound;
  res_->peak_rss_kib = PeakRssKiB();
  res_->extension_points = recorder_.Summaries();
  ThroughputSummary& t = res_->throughput;
  t.average = res_->seconds > 0 ? res_->scheduled_measured / res_->seconds : 0;
  std::vector<double> s = samples_;
  res_->samples = static_cast<int64_t>(s.size());
  if (s.empty()) s.push_back(t.average);  // shorter than one window
  std::sort(s.begin(), s.end());
  auto q = [&](double p) {
    size_t idx = static_cast<size_t>(std::ceil(s.size() * p / 100.0));
    return s[idx == 0 ? 0 : idx - 1];
  };
  t.p50 = q(50);
  t.p90 = q(90);
  t.p95 = q(95);
  t.p99 = q(99);
  return absl::OkStatus();
}

}  // namespace

api::Status RunPerfWorkload(const PerfConfig& cfg, const PerfTestCase& tc, const PerfWorkload& w,
                            const PerfOptions& opts, PerfResult* result) {
  *result = PerfResult{};
  result->name = tc.name + "/" + w.name;
  // The run (Store + Scheduler) is destroyed before returning: the next workload starts clean.
  auto run = std::make_unique<WorkloadRun>(cfg, tc, w, opts, result);
  api::Status st = run->Run();
  run.reset();
  // The threshold for the file's topic (upstream passes the area's name, e.g. "misc", to
  // RunBenchmarkPerfScheduling; here the workload file's directory name).
  result->topic = std::filesystem::path(cfg.path).parent_path().filename().string();
  result->threshold = ThresholdOf(w, result->topic);
  if (st.ok()) {
    ApplyThreshold(ThresholdMetricOf(tc, w), result);
  } else {
    const ThresholdMetric m = ThresholdMetricOf(tc, w);
    result->threshold_metric = m.name + " " + m.data_bucket;
  }
  return st;
}

void ApplyThreshold(const ThresholdMetric& m, PerfResult* result) {
  result->threshold_metric = m.name + " " + m.data_bucket;
  if (result->threshold <= 0) return;
  if (m.name != "SchedulingThroughput") {
    result->threshold_verdict = "not compared: only SchedulingThroughput is measured";
    return;
  }
  const auto& t = result->throughput;
  std::optional<double> v;
  if (m.data_bucket == "Average") v = t.average;
  if (m.data_bucket == "Perc50") v = t.p50;
  if (m.data_bucket == "Perc90") v = t.p90;
  if (m.data_bucket == "Perc95") v = t.p95;
  if (m.data_bucket == "Perc99") v = t.p99;
  if (!v) {
    // upstream: "no data present for \"SchedulingThroughput\" metric \"X\" bucket".
    result->threshold_verdict = "not compared: no data for data bucket " + m.data_bucket;
    return;
  }
  // valueWithinThreshold: strictly above (strictly below with expectLower).
  const bool pass = m.expect_lower ? *v < result->threshold : *v > result->threshold;
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s %.1f %s threshold %.1f", m.data_bucket.c_str(), *v,
                pass ? (m.expect_lower ? "<" : ">") : (m.expect_lower ? ">=" : "<="),
                result->threshold);
  result->threshold_compared = true;
  result->threshold_figure = *v;
  result->threshold_passed = pass;
  result->threshold_verdict = std::string(pass             ? "pass: "
                                          : m.expect_lower ? "ABOVE: "
                                                           : "BELOW: ") +
                              buf;
}

std::vector<std::string> ThresholdFailures(const std::vector<PerfResult>& results) {
  std::vector<std::string> out;
  for (const auto& r : results) {
    if (r.threshold_compared && !r.threshold_passed) {
      out.push_back(r.name + ": " + r.threshold_verdict);
    }
  }
  return out;
}

api::Status RunPerfWorkloads(const PerfOptions& opts, std::vector<PerfResult>* results) {
  PerfConfig cfg;
  if (auto s = LoadPerfConfig(opts.workload_file, &cfg); !s.ok()) return s;
  size_t selected = 0;
  for (const auto& tc : cfg.cases) {
    for (const auto& w : tc.workloads) {
      std::vector<std::string> labels = tc.labels;
      labels.insert(labels.end(), w.labels.begin(), w.labels.end());
      if (!WorkloadSelected(opts.workload_selector, tc.name, w.name) ||
          !LabelFilterMatches(opts.label_filter, labels)) {
        continue;
      }
      ++selected;
      if (opts.log) opts.log("running " + tc.name + "/" + w.name);
      PerfResult r;
      api::Status s;
      try {
        s = RunPerfWorkload(cfg, tc, w, opts, &r);
      } catch (const YAML::Exception& e) {
        // A template field the ops read with the wrong shape: an error naming the
        // workload (and, with --keep-going, a row), not an abort of the whole run.
        s = absl::InvalidArgumentError(opts.workload_file + ": " + tc.name + "/" + w.name + ": " +
                                       e.what());
      }
      if (!s.ok()) {
        if (!opts.keep_going) return s;
        r.error = std::string(s.message());
        if (opts.log) opts.log("  cannot run: " + r.error);
      }
      results->push_back(std::move(r));
    }
  }
  if (selected == 0) {
    std::string err = opts.workload_file + ": no workload matches";
    if (!opts.workload_selector.empty()) err += " --workload " + opts.workload_selector;
    if (!opts.label_filter.empty()) err += " --label " + opts.label_filter;
    return absl::InvalidArgumentError(err);
  }
  return absl::OkStatus();
}

std::string FormatPerfTable(const std::vector<PerfResult>& results) {
  std::ostringstream o;
  char buf[512];
  std::snprintf(buf, sizeof buf, "%-52s %7s %8s %9s %9s %9s %9s %9s %10s %10s %8s %9s %9s %6s\n",
                "workload", "pods", "seconds", "avg/s", "p50/s", "p90/s", "p99/s", "pods/cpu-s",
                "Filter p99", "Score p99", "RSS MiB", "threshold", "figure", "vs thr");
  o << buf;
  std::vector<std::string> footnotes;
  for (const auto& r : results) {
    auto ep = [&](const char* name) {
      auto it = r.extension_points.find(name);
      if (it == r.extension_points.end()) return std::string("-");
      char b[32];
      std::snprintf(b, sizeof b, "%.0fus", it->second.p99_us);
      return std::string(b);
    };
    // The threshold check: the file's threshold, the figure compared with it, the verdict.
    std::string thr = "-", figure = "-", verdict = "-";
    if (r.threshold > 0) {
      char b[32];
      std::snprintf(b, sizeof b, "%.1f", r.threshold);
      thr = b;
      verdict = "n/c";
      if (r.threshold_compared) {
        std::snprintf(b, sizeof b, "%.1f", r.threshold_figure);
        figure = b;
        verdict = r.threshold_passed                           ? "pass"
                  : r.threshold_verdict.rfind("ABOVE", 0) == 0 ? "above"
                                                               : "below";
      }
    }
    std::snprintf(buf, sizeof buf,
                  "%-52s %7lld %8.3f %9.0f %9.0f %9.0f %9.0f %9.0f %10s %10s %8ld %9s %9s %6s\n",
                  r.name.c_str(), static_cast<long long>(r.measured_pods), r.seconds,
                  r.throughput.average, r.throughput.p50, r.throughput.p90, r.throughput.p99,
                  r.cpu_seconds > 0 ? r.scheduled_measured / r.cpu_seconds : 0.0,
                  ep("Filter").c_str(), ep("Score").c_str(), r.peak_rss_kib / 1024, thr.c_str(),
                  figure.c_str(), verdict.c_str());
    o << buf;
    if (!r.error.empty()) footnotes.push_back(r.name + ": cannot run: " + r.error);
    if (r.threshold > 0) {
      footnotes.push_back(
          r.name + ": threshold (" + r.threshold_metric + ", topic " + r.topic + "): " +
          (r.threshold_verdict.empty() ? std::string("not measured") : r.threshold_verdict));
    }
    if (r.pending_at_end > 0) {
      footnotes.push_back(r.name + ": " + std::to_string(r.pending_at_end) +
                          " pods still pending at the end (not measured)");
    }
    for (const auto& n : r.notes) footnotes.push_back(r.name + ": " + n);
  }
  for (const auto& f : footnotes) o << "  " << f << "\n";
  return o.str();
}

nlohmann::json PerfResultsJson(const std::vector<PerfResult>& results) {
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& r : results) {
    nlohmann::json eps = nlohmann::json::object();
    for (const auto& [name, s] : r.extension_points) {
      eps[name] = {{"count", s.count},
                   {"average_us", s.average_us},
                   {"p50_us", s.p50_us},
                   {"p90_us", s.p90_us},
                   {"p99_us", s.p99_us}};
    }
    arr.push_back({{"name", r.name},
                   {"measured_pods", r.measured_pods},
                   {"scheduled", r.scheduled_measured},
                   {"seconds", r.seconds},
                   {"cpu_seconds", r.cpu_seconds},
                   {"throughput",
                    {{"average", r.throughput.average},
                     {"p50", r.throughput.p50},
                     {"p90", r.throughput.p90},
                     {"p95", r.throughput.p95},
                     {"p99", r.throughput.p99}}},
                   {"throughput_window_ms", r.window_ms},
                   {"throughput_samples", r.samples},
                   {"peak_rss_kib", r.peak_rss_kib},
                   {"extension_points", eps},
                   {"pending_at_end", r.pending_at_end},
                   {"topic", r.topic},
                   {"threshold", r.threshold},
                   {"threshold_metric", r.threshold_metric},
                   {"threshold_compared", r.threshold_compared},
                   {"threshold_figure", r.threshold_figure},
                   {"threshold_verdict", r.threshold_verdict},
                   {"threshold_passed", r.threshold_passed},
                   {"error", r.error},
                   {"notes", r.notes}});
  }
  return nlohmann::json{{"results", arr}};
}

}  // namespace phalanx::perf
