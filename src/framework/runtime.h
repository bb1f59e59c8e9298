// The framework runtime: instantiates a profile's plugins from a Registry and runs them
// at each extension point (upstream pkg/scheduler/framework/runtime/framework.go).
//
// Plugin lists per extension point are built as upstream does: the plugins enabled for
// the point, then multiPoint plugins that implement the point's interface (minus those
// disabled there; a point's explicit entry overrides the multiPoint one), in order.
// Errors at construction name the profile and the plugin, e.g.
//   profile "default-scheduler": plugins.score.enabled: Score plugin "Foo" does not exist
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "framework/extension_point_observer.h"
#include "framework/handle.h"
#include "framework/interface.h"
#include "framework/parallelize.h"
#include "framework/podgroup.h"
#include "framework/registry.h"

namespace phalanx::config {
struct Plugins;
struct Profile;
}  // namespace phalanx::config

namespace phalanx::framework {

// Collaborators a Framework needs; pointers must outlive it.
struct FrameworkOptions {
  const Clock* clock = nullptr;
  ClusterClient* client = nullptr;
  const NodeInfoLister* snapshot = nullptr;  // the scheduler's Snapshot, refreshed per cycle
  Parallelizer* parallelizer = nullptr;
  std::function<std::vector<PodInfoPtr>(const std::string&)> nominated_pods_for_node;
  // Optional: the same pods as a shared immutable list (nullptr: none), used instead of
  // nominated_pods_for_node where set (no list copy per node and Filter call).
  std::function<std::shared_ptr<const std::vector<PodInfoPtr>>(const NodeInfo&)>
      nominated_pods_view;
  std::function<int32_t(const api::Pod&)> priority_of;
  std::function<uint64_t(uint64_t)> random;  // uniform in [0, n)
  // Domain services for plugins (gang state, queues and quotas: see ServiceRegistry).
  ServiceRegistry services;
  // Namespace labels (nullptr functions: no namespace informer).
  std::function<bool(std::string_view, std::map<std::string, std::string>*)> namespace_labels;
  std::function<void(
      const std::function<void(const std::string&, const std::map<std::string, std::string>&)>&)>
      for_each_namespace;
  // PodDisruptionBudgets (nullptr: no PDB informer, none).
  std::function<std::vector<api::PodDisruptionBudgetPtr>()> pod_disruption_budgets;
  // Handle::ClusterObjectEpoch (nullptr: not tracked).
  std::function<uint64_t()> cluster_object_epoch;
  int32_t percentage_of_nodes_to_score = 0;  // global value; the profile may override
};

// A pod that Permit told to wait. Completion (all plugins allowed, one rejected, or the
// timeout) calls `on_done` exactly once with Success or the rejection status; the binding
// cycle continues there. Timeouts are enforced by ExpireWaitingPods(now) so that a virtual
// clock drives them in simulate.
class WaitingPodImpl;

// The per-plugin scores of one RunScorePlugins run, aligned with its nodes, kept so that
// one changed node can be scored again without scoring the others (RescoreScoreTable).
struct ScoreTable {
  std::vector<size_t> plugins;                   // indices of the Score plugins that ran
  std::vector<int64_t> weights;                  // their weights
  std::vector<std::vector<int64_t>> raw;         // [plugin][node] before NormalizeScore
  std::vector<std::vector<int64_t>> normalized;  // [plugin][node] after it
};

// Raw (pre-NormalizeScore) Score plugin results kept per node across the scheduling
// cycles of pods of one signature (opportunistic batching of plain pods, KEP-5598;
// Scheduler's NodeResultCache). Indexed by a slot per node (the node's position in the
// snapshot's node list); a slot's scores are valid while its NodeInfo is the same object
// at the same generation (NodeInfo::generation()). Relies on the BatchablePlugin
// contract: a signable pod's raw Score on a node depends on the pod, that node and the
// cluster, not on which other nodes PreScore got.
struct RawScoreCache {
  bool initialized = false;
  std::vector<size_t> plugins;            // indices of the Score plugins that ran
  std::vector<std::vector<int64_t>> raw;  // [plugin][slot]
  // [plugin] how many slots hold a non-zero raw score: a plugin at 0 scores every node 0,
  // and its row needs no gathering from `raw` (e.g. TaintToleration without taints).
  std::vector<size_t> nonzero;
  std::vector<const NodeInfo*> node;  // [slot] the NodeInfo scored, nullptr: none
  std::vector<int64_t> generation;    // [slot] its generation then
  int64_t computed = 0;               // nodes scored (statistics, tests)
  void Clear() {
    initialized = false;
    plugins.clear();
    raw.clear();
    nonzero.clear();
    node.clear();
    generation.clear();
  }
};

class Framework final : public Handle {
 public:
  [[nodiscard]] static StatusOr<std::unique_ptr<Framework>> New(const Registry& registry,
                                                                const config::Profile& profile,
                                                                FrameworkOptions opts);
  ~Framework() override;

  const std::string& ProfileName() const { return profile_name_; }
  int32_t PercentageOfNodesToScore() const { return percentage_of_nodes_to_score_; }

  // ---- extension points ----
  // Success, or the first non-success status with plugin() set.
  Status RunPreEnqueuePlugins(const PodInfo& pod);
  bool QueueSortLess(const QueuedPodInfo& a, const QueuedPodInfo& b) const;
  // The QueueSort plugin's integer key (QueueSortPlugin::HasSortKey / SortKey).
  bool QueueSortHasKey() const;
  QueueSortKey QueueSortKeyOf(const QueuedPodInfo& p) const;
  // The QueueSort plugin's partitions (QueueSortPlugin::HasPartitions / Partition /
  // PartitionLess).
  bool QueueSortHasPartitions() const;
  std::string QueueSortPartitionOf(const QueuedPodInfo& p) const;
  bool QueueSortPartitionLess(const std::string& a, const std::string& b) const;
  // (plugin name, event with hint) of every plugin implementing EnqueueExtensions.
  std::vector<std::pair<std::string, ClusterEventWithHint>> EventHints() const;

  // Upstream semantics: UnschedulableAndUnresolvable stops at once, Unschedulable is
  // returned after running the rest; an empty merged PreFilterResult is
  // UnschedulableAndUnresolvable "node(s) didn't satisfy plugin X". Before any plugin, a
  // pod with PodSpec::unsupported_fields (the field audit, api/field_audit.h) is
  // UnschedulableAndUnresolvable "<field>: not supported by this scheduler", whatever the
  // profile's plugins.
  Status RunPreFilterPlugins(CycleState& state, const PodInfo& pod, PreFilterResult* result);
  // First failing Filter's status (plugin() set); non-rejection codes become Error.
  Status RunFilterPlugins(const CycleState& state, const PodInfo& pod,
                          const NodeInfo& node) override;
  // Runs filters as if higher-or-equal priority pods nominated to the node were there
  // (upstream RunFilterPluginsWithNominatedPods): first with them added, then (for
  // affinity) without; the first failure is returned. When no PreFilter plugin that ran for
  // this pod has PreFilterExtensions, adding the pods changes only the NodeInfo, so the
  // node-with-nominated-pods is built once and kept on the NodeInfo (NominatedOverlay) for
  // later cycles that add the same pods, instead of copying the NodeInfo and the
  // CycleState per node and cycle. May run concurrently for different NodeInfos.
  Status RunFilterPluginsWithNominatedPods(const CycleState& state, const PodInfo& pod,
                                           const NodeInfo& node);
  bool HasPostFilterPlugins() const { return !post_filter_.empty(); }
  Status RunPostFilterPlugins(CycleState& state, const PodInfo& pod, const NodeToStatus& f,
                              PostFilterResult* result);
  bool HasScorePlugins() const { return !score_.empty(); }
  bool HasFilterPlugins() const { return !filter_.empty(); }
  Status RunPreScorePlugins(CycleState& state, const PodInfo& pod,
                            const std::vector<const NodeInfo*>& nodes);
  // Weighted sum of normalized scores per node, aligned with `nodes`. With `table`, also
  // keeps each plugin's scores before and after NormalizeScore there, for
  // RescoreScoreTable.
  Status RunScorePlugins(const CycleState& state, const PodInfo& pod,
                         const std::vector<const NodeInfo*>& nodes, std::vector<int64_t>* totals,
                         ScoreTable* table = nullptr);
  // RunScorePlugins for a pod of the signature `cache` holds results for: `slots[i]` is
  // nodes[i]'s slot (< generations.size(), the number of slots), `generations[slot]` the
  // current NodeInfo::generation() of the node in that slot (read from a contiguous array
  // instead of the NodeInfos). Nodes with valid cached raw scores are not scored
  // again; the others are scored (in parallel) and cached. Every plugin's raw row over
  // `nodes` is then normalized and weighted exactly as RunScorePlugins does, so *totals
  // equal RunScorePlugins(state, pod, nodes). A cache made for another set of active
  // Score plugins (PreScore skips) is cleared first. Errors as RunScorePlugins.
  Status RunScorePluginsCached(const CycleState& state, const PodInfo& pod,
                               const std::vector<const NodeInfo*>& nodes,
                               const std::vector<uint32_t>& slots,
                               const std::vector<int64_t>& generations, RawScoreCache* cache,
                               std::vector<int64_t>* totals);
  // Brings `table` (made by RunScorePlugins for `nodes`, possibly for another pod of the
  // same signature) and `totals` up to date for `pod` after one node changed: with
  // `removed`, the node that was at index `i` has been erased from `nodes` (it no longer
  // fits); otherwise nodes[i] got a pod and is scored again. Plugins with NormalizeScore
  // are normalized again over all of `nodes` when their scores changed, so totals equal
  // what RunScorePlugins(state, pod, nodes) would return. Returns false (table unusable,
  // nothing to rely on) when the Score plugins that run for `pod` differ from the table's;
  // errors as RunScorePlugins in *status.
  bool RescoreScoreTable(const CycleState& state, const PodInfo& pod,
                         const std::vector<const NodeInfo*>& nodes, size_t i, bool removed,
                         ScoreTable* table, std::vector<int64_t>* totals, Status* status);
  // Whether `pod` may reuse the nodes filtered and scored for `canonical` (KEP-5598 pod
  // signature): every PreFilter/Filter/PreScore/Score plugin is a BatchablePlugin that
  // finds them the same, they have equal priority and neither has a nominated node nor
  // unsupported fields.
  // SameSignature(p, p) says whether `p` can start a batch. False for a profile with a
  // plugin that is not batchable.
  bool SameSignature(const PodInfo& canonical, const PodInfo& pod) const override;
  Status RunReservePluginsReserve(CycleState& state, const PodInfo& pod, const std::string& node);
  void RunReservePluginsUnreserve(CycleState& state, const PodInfo& pod, const std::string& node);
  // Success, rejection, or Wait: then the pod is registered as waiting and `on_done` runs
  // later (possibly on another thread) with the outcome.
  Status RunPermitPlugins(CycleState& state, const PodInfo& pod, const std::string& node,
                          std::function<void(Status)> on_done);
  // The first PodGroupPlugin's plan for `pod` (empty: schedule alone).
  Status RunPlanPodGroup(const PodInfo& pod, QueuedPodGroupInfo* group);
  // Every PodGroupCycleListener, in the profile's order.
  void RunPodGroupCycleDone(const QueuedPodGroupInfo& group, bool committed,
                            const std::string& reason);
  // Every PodGroupPlugin's AdmitPodGroup in order; the first rejection (with the plugin set).
  Status RunAdmitPodGroup(const QueuedPodGroupInfo& group, const std::vector<const PodInfo*>& pods,
                          const std::vector<size_t>& pod_group_of);
  // The PodGroupPostFilter plugins in order (framework/podgroup.h) until one returns
  // Success, whose result goes to *result (with the plugin set on the status); Unschedulable
  // when none did. The message of every status that is not Skip is appended to *messages,
  // in order.
  Status RunPodGroupPostFilterPlugins(CycleState& state, const QueuedPodGroupInfo& group,
                                      const PodGroupAttempt& attempt,
                                      PodGroupFeasibility& feasibility,
                                      PodGroupPostFilterResult* result,
                                      std::vector<std::string>* messages);
  bool HasPodGroupPlugins() const { return !pod_group_.empty(); }
  // The profile's PodGroupPlugins in order.
  const std::vector<PodGroupPlugin*>& PodGroupPlugins() const { return pod_group_; }
  // The PostFilter plugins (postFilter point, multiPoint included, in that order) that
  // implement PodGroupPostFilterPlugin (upstream frameworkImpl.podGroupPostFilterPlugins).
  const std::vector<PodGroupPostFilterPlugin*>& PodGroupPostFilterPlugins() const {
    return pod_group_post_filter_;
  }
  // Placements of `level` from every PlacementGenerate plugin, in the profile's order,
  // concatenated (upstream RunPlacementGeneratePlugins). Success when some plugin offered
  // one; otherwise the first plugin's Unschedulable (why there is none), or Error when the
  // profile has no such plugin.
  Status RunPlacementGeneratePlugins(CycleState& state, const QueuedPodGroupInfo& group,
                                     const PlacementLevel& level, std::vector<Placement>* out);
  bool HasPlacementGeneratePlugins() const { return !placement_generate_.empty(); }
  // Every PlacementScore plugin's score of `placement` (the trial on the view), in order:
  // (*out)[k] is plugin k's. The first error stops them.
  Status RunPlacementScorePlugins(CycleState& state, const QueuedPodGroupInfo& group,
                                  const std::vector<PodInfoPtr>& pods, const Placement& placement,
                                  const PodGroupAssignments& assignments,
                                  std::vector<PlacementScore>* out);
  // The weighted totals of one level's feasible placements (upstream
  // RunPlacementScorePlugins' second half): scores[i][k] is plugin k's score of placement i;
  // each plugin's scores are normalized over the placements first (its
  // PlacementScoreExtensions), then totals[i] = sum over k of weight_k * scores[i][k].
  Status TotalPlacementScores(CycleState& state, const QueuedPodGroupInfo& group,
                              std::vector<std::vector<PlacementScore>>& scores,
                              std::vector<int64_t>* totals);
  // The profile's PodGroupVictimPolicy plugins (enabled for any point), in order.
  const std::vector<PodGroupVictimPolicy*>& PodGroupVictimPolicies() const {
    return pod_group_victim_policies_;
  }
  // The profile's PodGroupPlacementPlugins (enabled for any point), in order.
  const std::vector<PodGroupPlacementPlugin*>& PodGroupPlacementPlugins() const {
    return pod_group_placement_;
  }
  // The PreBind plugins in order from the `from`-th. With `waiting`, a plugin's Wait is
  // returned as is (with its name) and *waiting is its index, for RunPreBindWait; without,
  // Wait is an error like any status other than Success or a rejection.
  Status RunPreBindPlugins(CycleState& state, const PodInfo& pod, const std::string& node,
                           size_t from = 0, size_t* waiting = nullptr);
  // PreBind plugin `index`'s PreBindWait (framework/prebind_wait.h: Wait with *wake_at,
  // Success, or its failure, an error wrapped as RunPreBindPlugins wraps one); an Error when
  // the plugin is no WaitingPreBindPlugin.
  Status RunPreBindWait(size_t index, CycleState& state, const PodInfo& pod,
                        const std::string& node, int64_t now, int64_t* wake_at);
  Status RunBindPlugins(CycleState& state, const PodInfo& pod, const std::string& node);
  void RunPostBindPlugins(CycleState& state, const PodInfo& pod, const std::string& node);

  // Rejects waiting pods whose Permit timeout passed at `now`; returns how many.
  int ExpireWaitingPods(api::Timestamp now);
  // Earliest Permit deadline of a waiting pod, or INT64_MAX.
  api::Timestamp NextPermitDeadline() const;
  size_t NumWaitingPods() const;

  // Latency and evaluation hooks for benchmarks and live metrics
  // (extension_point_observer.h); nullptr (default) disables them. Set before scheduling
  // starts or between cycles, not while a cycle runs.
  void SetExtensionPointObserver(ExtensionPointObserver* o);
  ExtensionPointObserver* extension_point_observer() const { return observer_; }

  std::vector<std::string> ListPlugins(std::string_view extension_point) const;
  int64_t ScoreWeight(std::string_view plugin) const;

  // ---- Handle ----
  const NodeInfoLister& SnapshotSharedLister() const override { return *opts_.snapshot; }
  const Clock& GetClock() const override { return *opts_.clock; }
  ClusterClient& Client() override { return *opts_.client; }
  void IterateOverWaitingPods(const std::function<void(WaitingPod&)>& fn) override;
  WaitingPod* GetWaitingPod(std::string_view uid) override;
  void RejectWaitingPod(std::string_view uid) override;
  Status RunPreFilterExtensionAddPod(CycleState& state, const PodInfo& pod,
                                     const PodInfoPtr& to_add, const NodeInfo& node) override;
  Status RunPreFilterExtensionRemovePod(CycleState& state, const PodInfo& pod,
                                        const PodInfoPtr& to_remove, const NodeInfo& node) override;
  std::vector<PodInfoPtr> NominatedPodsForNode(const std::string& node) const override;
  std::shared_ptr<const std::vector<PodInfoPtr>> NominatedPodsViewForNode(
      const NodeInfo& node) const override;
  int32_t PriorityOf(const api::Pod& pod) const override;
  uint64_t Random(uint64_t n) override;
  Parallelizer* GetParallelizer() override { return opts_.parallelizer; }
  const ServiceRegistry& Services() const override { return opts_.services; }
  bool HasNamespaces() const override { return static_cast<bool>(opts_.namespace_labels); }
  bool NamespaceLabels(std::string_view name,
                       std::map<std::string, std::string>* out) const override {
    return opts_.namespace_labels && opts_.namespace_labels(name, out);
  }
  void ForEachNamespace(
      const std::function<void(const std::string&, const std::map<std::string, std::string>&)>& fn)
      const override {
    if (opts_.for_each_namespace) opts_.for_each_namespace(fn);
  }
  std::vector<api::PodDisruptionBudgetPtr> PodDisruptionBudgets() const override {
    return opts_.pod_disruption_budgets ? opts_.pod_disruption_budgets()
                                        : std::vector<api::PodDisruptionBudgetPtr>{};
  }
  std::optional<uint64_t> ClusterObjectEpoch() const override {
    if (!opts_.cluster_object_epoch) return std::nullopt;
    return opts_.cluster_object_epoch();
  }

 private:
  Framework() = default;
  // New's steps: the plugins' factories (args from pluginConfig, checked first); the
  // Score weights; EnqueueExtensions, PodGroup plugins and whether the profile can batch.
  Status InstantiatePlugins(const Registry& registry, const config::Profile& profile,
                            const std::vector<std::string>& needed,
                            std::unordered_map<std::string, Plugin*>* plugins);
  void SetScoreWeights(const config::Plugins& ps);
  void CollectExtensions(const config::Plugins& ps, const std::vector<std::string>& needed,
                         const std::unordered_map<std::string, Plugin*>& plugins);
  friend class WaitingPodImpl;
  Status RunPreFilterPluginsInternal(CycleState& state, const PodInfo& pod,
                                     PreFilterResult* result);
  Status RunScorePluginsCachedInternal(const CycleState& state, const PodInfo& pod,
                                       const std::vector<const NodeInfo*>& nodes,
                                       const std::vector<uint32_t>& slots,
                                       const std::vector<int64_t>& generations,
                                       RawScoreCache* cache, std::vector<int64_t>* totals);
  Status RunScorePluginsInternal(const CycleState& state, const PodInfo& pod,
                                 const std::vector<const NodeInfo*>& nodes,
                                 std::vector<int64_t>* totals, ScoreTable* table);
  // Hands the Filter and Score evaluations counted since the last call to the observer
  // (scheduling thread: at PreFilter and after Score).
  void FlushPluginEvaluations();
  void RemoveWaitingPod(const std::string& uid) ABSL_LOCKS_EXCLUDED(waiting_mu_);

  std::string profile_name_;
  FrameworkOptions opts_;
  int32_t percentage_of_nodes_to_score_ = 0;
  std::vector<std::unique_ptr<Plugin>> owned_;
  std::vector<PreEnqueuePlugin*> pre_enqueue_;
  QueueSortPlugin* queue_sort_ = nullptr;
  std::vector<PreFilterPlugin*> pre_filter_;
  std::vector<PreFilterPlugin*> pre_filter_with_extensions_;  // subset of pre_filter_
  std::vector<FilterPlugin*> filter_;
  std::vector<PostFilterPlugin*> post_filter_;
  std::vector<PreScorePlugin*> pre_score_;
  std::vector<ScorePlugin*> score_;
  std::vector<int64_t> score_weights_;  // aligned with score_
  std::vector<ReservePlugin*> reserve_;
  std::vector<PermitPlugin*> permit_;
  std::vector<PreBindPlugin*> pre_bind_;
  std::vector<BindPlugin*> bind_;
  std::vector<PostBindPlugin*> post_bind_;
  std::vector<EnqueueExtensions*> enqueue_ext_;
  std::vector<PodGroupPlugin*> pod_group_;
  std::vector<PodGroupCycleListener*> pod_group_listeners_;
  std::vector<PodGroupPostFilterPlugin*> pod_group_post_filter_;
  std::vector<PodGroupVictimPolicy*> pod_group_victim_policies_;
  std::vector<PodGroupPlacementPlugin*> pod_group_placement_;
  std::vector<PlacementGeneratePlugin*> placement_generate_;
  std::vector<PlacementScorePlugin*> placement_score_;
  std::vector<int64_t> placement_score_weights_;  // aligned with placement_score_
  // Distinct PreFilter/Filter/PreScore/Score plugins; batchable_ is false when one of them
  // is not a BatchablePlugin.
  std::vector<const BatchablePlugin*> batchable_plugins_;
  bool batchable_ = false;

  ExtensionPointObserver* observer_ = nullptr;
  // Per-node evaluation counts of each Filter / Score plugin (aligned with filter_ /
  // score_), allocated when the observer WantsEvaluations; added to from the workers.
  struct alignas(64) EvalCount {
    std::atomic<uint64_t> n{0};
  };
  std::unique_ptr<EvalCount[]> filter_evaluations_, score_evaluations_;

  mutable absl::Mutex waiting_mu_;
  std::unordered_map<std::string, std::shared_ptr<WaitingPodImpl>> waiting_
      ABSL_GUARDED_BY(waiting_mu_);
};

}  // namespace phalanx::framework
