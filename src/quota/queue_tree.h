// Queues and elastic quotas in the dialects users already have, mapped to one model, and
// the validated queue tree built from them.
//
// Dialects (object -> QueueSpec):
//   KAI      scheduling.run.ai/v2 Queue (cluster-scoped): spec.parentQueue, spec.priority,
//            spec.resources.{cpu,memory,gpu}.{quota,limit,overQuotaWeight},
//            spec.preemptMinRuntime, spec.reclaimMinRuntime (Go durations), and
//            spec.resources.*.lendingLimit (not a KAI field: Kueue's, see docs/queues.md).
//            spec.priority defaults to 100 as KAI's (queue_types.go). Units as KAI's: cpu in
//            millicores, memory in megabytes (10^6 bytes), gpu in devices (nvidia.com/gpu). quota
//            -1: no guaranteed quota; limit -1: unlimited (KAI docs/queues).
//   Volcano  scheduling.volcano.sh/v1beta1 Queue (cluster-scoped): spec.weight (over-quota
//            weight of every resource), spec.capability (limit), spec.guarantee.resource
//            (guarantee), spec.deserved (used as the guarantee when no guarantee is
//            given), spec.parent, spec.priority, spec.reclaimable.
//   ElasticQuota scheduling.x-k8s.io/v1alpha1 (scheduler-plugins CapacityScheduling) and
//            scheduling.sigs.k8s.io/v1alpha1 (Koordinator): spec.min (guarantee), spec.max
//            (limit); namespaced. Koordinator's tree: label
//            quota.scheduling.koordinator.sh/parent; annotation
//            quota.scheduling.koordinator.sh/shared-weight (JSON resource list; default max).
//            Idle min of other quotas may be borrowed (CapacityScheduling semantics).
//
// Resource amounts use Kubernetes' canonical units: "cpu" in milli-CPU, "memory" /
// "ephemeral-storage" in bytes, "pods" a count, extended resources ("nvidia.com/gpu") a
// count. Fractional counts are rounded down.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/types.h"
#include "api/unstructured.h"

namespace phalanx::quota {

// Resource name -> amount (units above). A name absent from a limit means "no limit".
using ResourceList = std::map<std::string, int64_t>;

enum class QueueDialect : uint8_t {
  kKAI,                 // scheduling.run.ai/v2 Queue
  kVolcano,             // scheduling.volcano.sh/v1beta1 Queue
  kCapacityScheduling,  // scheduling.x-k8s.io/v1alpha1 ElasticQuota
  kKoordinator,         // scheduling.sigs.k8s.io/v1alpha1 ElasticQuota
};
const char* QueueDialectName(QueueDialect d);

inline constexpr const char* kKoordinatorParentLabel = "quota.scheduling.koordinator.sh/parent";
inline constexpr const char* kKoordinatorSharedWeightAnnotation =
    "quota.scheduling.koordinator.sh/shared-weight";

struct QueueSpec {
  std::string name;        // KAI / Volcano: the queue name; ElasticQuota: metadata.name
  std::string namespace_;  // ElasticQuota: the namespace whose pods it governs
  QueueDialect dialect = QueueDialect::kKAI;
  std::string source;      // e.g. "Queue team-a (scheduling.run.ai/v2)", for messages
  std::string parent;      // "" = top level
  int32_t priority = 0;    // KAI (default 100) / Volcano priority: over-quota order
  ResourceList guarantee;  // KAI quota, Volcano guarantee (or deserved), ElasticQuota min
  ResourceList limit;      // KAI limit, Volcano capability, ElasticQuota max; absent = none
  // Over-quota weight per resource; resources absent here use default_weight.
  std::map<std::string, double> weight;
  double default_weight = 1.0;
  ResourceList lending_limit;  // KAI lendingLimit: most of its idle quota others may borrow
  bool reclaimable = true;     // Volcano reclaimable: false = never a reclaim victim
  // KAI spec.preemptMinRuntime / spec.reclaimMinRuntime (ns; unset = inherit from the
  // parent, KAI minruntime plugin): a job of the queue that (re)started less than this ago
  // is not a victim of priority preemption / of reclaim.
  std::optional<int64_t> preempt_min_runtime_ns;
  std::optional<int64_t> reclaim_min_runtime_ns;
  bool borrows_idle_min = false;  // ElasticQuota: may use other quotas' idle min
  api::Timestamp creation_timestamp = 0;
  // Non-empty when a field is invalid, naming the object and field; pods of the queue
  // stay pending with this reason.
  std::string invalid;

  double WeightOf(const std::string& resource) const;
  // Limit of `resource`, or INT64_MAX when unlimited.
  int64_t LimitOf(const std::string& resource) const;
  int64_t GuaranteeOf(const std::string& resource) const;
};

// True for the queue kinds above (KAI / Volcano Queue, ElasticQuota of either group).
bool IsQueueObject(const api::Unstructured& obj);

// The QueueSpec of a queue object (invalid fields set `invalid`, never throws); nullopt
// when the object is not a queue kind.
std::optional<QueueSpec> QueueFromObject(const api::Unstructured& obj);

// The validated hierarchy. Queues whose own spec is invalid, whose parent is missing, that
// sit on a parent cycle, or one of whose ancestors is unusable are listed in `errors`
// (queue name -> message naming the object and field) and take no part in fair share or
// admission; their pods stay pending with the message.
struct QueueTree {
  std::map<std::string, QueueSpec> queues;                   // every queue by name
  std::map<std::string, std::vector<std::string>> children;  // parent -> children ("" = roots)
  std::map<std::string, std::string> errors;
  // Queues by name for ElasticQuota lookups by namespace (first by name).
  std::map<std::string, std::string> quota_by_namespace;

  bool Has(const std::string& name) const { return queues.count(name) > 0; }
  bool Usable(const std::string& name) const { return Has(name) && !errors.count(name); }
  // `name`, its parent, ..., the top-level queue. Empty for an unknown queue.
  std::vector<std::string> PathToRoot(const std::string& name) const;
};

// Builds and validates the tree. Duplicate names (two dialects defining the same queue) keep
// the first by (dialect, source) and report the rest.
QueueTree BuildQueueTree(const std::vector<QueueSpec>& specs);

// "16 nvidia.com/gpu", "4 cpu" (cpu shown in cores when whole, else "1500m cpu"),
// "32Gi memory" — for messages.
std::string FormatAmount(const std::string& resource, int64_t amount);
// Amounts of `list` joined with ", " in name order.
std::string FormatList(const ResourceList& list);

}  // namespace phalanx::quota
