#include "quota/queue_tree.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <set>

#include "api/duration.h"
#include "api/field_errors.h"
#include "api/quantity.h"

namespace phalanx::quota {

namespace {

YAML::Node Child(const YAML::Node& n, const char* key) {
  if (!n.IsDefined() || !n.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
  const YAML::Node& cn = n;
  return cn[key];
}

bool Present(const YAML::Node& n) { return n.IsDefined() && !n.IsNull(); }

std::string Str(const YAML::Node& parent, const char* key) {
  const YAML::Node n = Child(parent, key);
  return Present(n) && n.IsScalar() ? n.Scalar() : std::string();
}

// "field: message" errors of one queue object (made with its source); the spec's
// `invalid` is errs.Summary(): "<source>: <e1>; <e2>".
using Errors = api::FieldErrors;

// A plain number (KAI's quota / limit / weight fields are numbers, not quantities).
bool Number(const YAML::Node& n, double* out) {
  if (!n.IsScalar()) return false;
  const std::string& s = n.Scalar();
  if (s.empty()) return false;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(v)) return false;
  *out = v;
  return true;
}

int64_t Clamp(double v) {
  if (v >= 9.2e18) return INT64_MAX;
  return static_cast<int64_t>(std::floor(v));
}

// A v1.ResourceList of quantities ({cpu: "4", memory: 32Gi, nvidia.com/gpu: 8}).
void QuantityList(const YAML::Node& n, const std::string& field, ResourceList* out, Errors* errs) {
  if (!Present(n)) return;
  if (!n.IsMap()) {
    errs->Add(field, "must be a map of resource name to quantity");
    return;
  }
  for (auto it = n.begin(); it != n.end(); ++it) {
    const std::string name = it->first.IsScalar() ? it->first.Scalar() : "?";
    const std::string f = field + "." + name;
    if (!it->second.IsScalar()) {
      errs->Add(f, "must be a quantity");
      continue;
    }
    api::StatusOr<api::Quantity> parsed = api::Quantity::Parse(it->second.Scalar());
    if (!parsed.ok()) {
      errs->Add(f, std::string(parsed.status().message()));
      continue;
    }
    const api::Quantity q = *parsed;
    if (q.IsNegative()) {
      errs->Add(f, "must be greater than or equal to 0, got \"" + it->second.Scalar() + "\"");
      continue;
    }
    (*out)[name] = name == "cpu" ? q.MilliValue() : q.Value();
  }
}

std::string Meta(const api::Unstructured& o) {
  // Queues are cluster-scoped (the decoder may default a namespace); ElasticQuotas are not.
  std::string id = o.metadata.namespace_.empty() || o.kind == "Queue"
                       ? o.metadata.name
                       : o.metadata.namespace_ + "/" + o.metadata.name;
  return o.kind + " " + id + " (" + o.api_version + ")";
}

// A KAI metav1.Duration field ("20s", "10m"): unset leaves *out empty.
void ParseMinRuntime(const YAML::Node& spec, const char* field, std::optional<int64_t>* out,
                     Errors* errs) {
  const YAML::Node n = Child(spec, field);
  if (!Present(n)) return;
  const std::string path = std::string("spec.") + field;
  if (!n.IsScalar()) {
    errs->Add(path, "must be a duration such as \"10m\"");
    return;
  }
  auto d = api::ParseGoDuration(n.Scalar());
  if (!d.ok()) {
    errs->Add(path, "must be a duration such as \"10m\", got \"" + n.Scalar() + "\"");
  } else if (*d < 0) {
    errs->Add(path, "must not be negative, got \"" + n.Scalar() + "\"");
  } else {
    *out = *d;
  }
}

void ParseKAI(const api::Unstructured& o, const YAML::Node& spec, QueueSpec* q, Errors* errs) {
  q->parent = Str(spec, "parentQueue");
  q->priority = 100;  // KAI QueueSpec.Priority: "When not set, default is 100."
  ParseMinRuntime(spec, "preemptMinRuntime", &q->preempt_min_runtime_ns, errs);
  ParseMinRuntime(spec, "reclaimMinRuntime", &q->reclaim_min_runtime_ns, errs);
  double v = 0;
  const YAML::Node pr = Child(spec, "priority");
  if (Present(pr)) {
    if (Number(pr, &v) && v == std::floor(v)) {
      q->priority = static_cast<int32_t>(v);
    } else {
      errs->Add("spec.priority", "must be an integer");
    }
  }
  const YAML::Node res = Child(spec, "resources");
  if (!Present(res)) return;
  if (!res.IsMap()) {
    errs->Add("spec.resources", "must be a map with cpu, memory, gpu");
    return;
  }
  struct Kind {
    const char* key;
    const char* name;
    double scale;  // KAI unit -> canonical unit
  };
  static const Kind kKinds[] = {
      {"cpu", "cpu", 1.0}, {"memory", "memory", 1e6}, {"gpu", "nvidia.com/gpu", 1.0}};
  for (const Kind& k : kKinds) {
    const YAML::Node r = Child(res, k.key);
    if (!Present(r)) continue;
    const std::string base = std::string("spec.resources.") + k.key;
    if (!r.IsMap()) {
      errs->Add(base, "must be a map with quota, limit, overQuotaWeight");
      continue;
    }
    const YAML::Node quota = Child(r, "quota");
    if (Present(quota)) {
      if (!Number(quota, &v)) {
        errs->Add(base + ".quota", "must be a number");
      } else if (v < 0 && v != -1) {
        errs->Add(base + ".quota", "must be >= 0 (or -1: no quota), got " + quota.Scalar());
      } else if (v > 0) {
        q->guarantee[k.name] = Clamp(v * k.scale);
      }
    }
    const YAML::Node limit = Child(r, "limit");
    if (Present(limit)) {
      if (!Number(limit, &v)) {
        errs->Add(base + ".limit", "must be a number");
      } else if (v < 0 && v != -1) {
        errs->Add(base + ".limit", "must be >= 0 (or -1: unlimited), got " + limit.Scalar());
      } else if (v >= 0) {
        q->limit[k.name] = Clamp(v * k.scale);
      }
    }
    const YAML::Node w = Child(r, "overQuotaWeight");
    if (Present(w)) {
      if (!Number(w, &v) || v < 0) {
        errs->Add(base + ".overQuotaWeight", "must be a number >= 0");
      } else {
        q->weight[k.name] = v;
      }
    }
    const YAML::Node lend = Child(r, "lendingLimit");
    if (Present(lend)) {
      if (!Number(lend, &v) || (v < 0 && v != -1)) {
        errs->Add(base + ".lendingLimit", "must be >= 0 (or -1: unlimited)");
      } else if (v >= 0) {
        q->lending_limit[k.name] = Clamp(v * k.scale);
      }
    }
    auto g = q->guarantee.find(k.name);
    auto l = q->limit.find(k.name);
    if (g != q->guarantee.end() && l != q->limit.end() && l->second < g->second) {
      errs->Add(base + ".limit", "must be >= quota (" + std::to_string(g->second) + ")");
    }
    auto ll = q->lending_limit.find(k.name);
    if (ll != q->lending_limit.end()) {
      const int64_t quota_amount = g == q->guarantee.end() ? 0 : g->second;
      if (ll->second > quota_amount) {  // Kueue: lendingLimit <= nominalQuota
        errs->Add(base + ".lendingLimit",
                  "must be <= quota (" + std::to_string(quota_amount) + ")");
      }
    }
  }
  (void)o;
}

void ParseVolcano(const YAML::Node& spec, QueueSpec* q, Errors* errs) {
  q->parent = Str(spec, "parent");
  if (q->parent == "root") q->parent.clear();  // Volcano's implicit root queue
  double v = 0;
  const YAML::Node w = Child(spec, "weight");
  if (Present(w)) {
    if (!Number(w, &v) || v < 0) {
      errs->Add("spec.weight", "must be a number >= 0");
    } else {
      q->default_weight = v;
    }
  }
  const YAML::Node pr = Child(spec, "priority");
  if (Present(pr)) {
    if (Number(pr, &v) && v == std::floor(v)) {
      q->priority = static_cast<int32_t>(v);
    } else {
      errs->Add("spec.priority", "must be an integer");
    }
  }
  QuantityList(Child(spec, "capability"), "spec.capability", &q->limit, errs);
  QuantityList(Child(Child(spec, "guarantee"), "resource"), "spec.guarantee.resource",
               &q->guarantee, errs);
  if (q->guarantee.empty())
    QuantityList(Child(spec, "deserved"), "spec.deserved", &q->guarantee, errs);
  const YAML::Node rec = Child(spec, "reclaimable");
  if (Present(rec)) {
    if (rec.IsScalar() && (rec.Scalar() == "true" || rec.Scalar() == "false")) {
      q->reclaimable = rec.Scalar() == "true";
    } else {
      errs->Add("spec.reclaimable", "must be true or false");
    }
  }
}

void ParseElasticQuota(const api::Unstructured& o, const YAML::Node& spec, QueueSpec* q,
                       Errors* errs) {
  QuantityList(Child(spec, "min"), "spec.min", &q->guarantee, errs);
  QuantityList(Child(spec, "max"), "spec.max", &q->limit, errs);
  q->borrows_idle_min = true;
  for (const auto& [name, min] : q->guarantee) {
    auto l = q->limit.find(name);
    if (l != q->limit.end() && l->second < min) {
      errs->Add("spec.max." + name, "must be >= spec.min." + name);
    }
  }
  if (q->dialect == QueueDialect::kKoordinator) {
    auto p = o.metadata.labels.find(kKoordinatorParentLabel);
    if (p != o.metadata.labels.end() && p->second != "root") q->parent = p->second;
    // Shared weight (over-quota weight per resource): the annotation, else max.
    auto a = o.metadata.annotations.find(kKoordinatorSharedWeightAnnotation);
    ResourceList weights;
    if (a != o.metadata.annotations.end()) {
      YAML::Node n;
      try {
        n = YAML::Load(a->second);
      } catch (const std::exception&) {
        errs->Add(std::string("metadata.annotations[") + kKoordinatorSharedWeightAnnotation + "]",
                  "must be a JSON resource list");
      }
      QuantityList(n,
                   std::string("metadata.annotations[") + kKoordinatorSharedWeightAnnotation + "]",
                   &weights, errs);
    } else {
      weights = q->limit;
    }
    for (const auto& [name, w] : weights) q->weight[name] = static_cast<double>(w);
  }
}

}  // namespace

const char* QueueDialectName(QueueDialect d) {
  switch (d) {
    case QueueDialect::kKAI:
      return "KAI";
    case QueueDialect::kVolcano:
      return "Volcano";
    case QueueDialect::kCapacityScheduling:
      return "CapacityScheduling";
    case QueueDialect::kKoordinator:
      return "Koordinator";
  }
  return "?";
}

double QueueSpec::WeightOf(const std::string& resource) const {
  auto it = weight.find(resource);
  return it == weight.end() ? default_weight : it->second;
}

int64_t QueueSpec::LimitOf(const std::string& resource) const {
  auto it = limit.find(resource);
  return it == limit.end() ? INT64_MAX : it->second;
}

int64_t QueueSpec::GuaranteeOf(const std::string& resource) const {
  auto it = guarantee.find(resource);
  return it == guarantee.end() ? 0 : it->second;
}

bool IsQueueObject(const api::Unstructured& obj) {
  const std::string g = obj.Group();
  if (obj.kind == "Queue") return g == "scheduling.run.ai" || g == "scheduling.volcano.sh";
  if (obj.kind == "ElasticQuota")
    return g == "scheduling.x-k8s.io" || g == "scheduling.sigs.k8s.io";
  return false;
}

std::optional<QueueSpec> QueueFromObject(const api::Unstructured& obj) {
  if (!IsQueueObject(obj)) return std::nullopt;
  QueueSpec q;
  q.name = obj.metadata.name;
  q.source = Meta(obj);
  q.creation_timestamp = obj.metadata.creation_timestamp;
  const std::string g = obj.Group();
  if (obj.kind == "Queue") {
    q.dialect = g == "scheduling.run.ai" ? QueueDialect::kKAI : QueueDialect::kVolcano;
  } else {
    q.namespace_ = obj.metadata.namespace_.empty() ? "default" : obj.metadata.namespace_;
    q.dialect =
        g == "scheduling.x-k8s.io" ? QueueDialect::kCapacityScheduling : QueueDialect::kKoordinator;
  }
  Errors errs(q.source);
  const YAML::Node spec = obj.object ? Child(*obj.object, "spec") : YAML::Node();
  if (Present(spec) && !spec.IsMap()) {
    errs.Add("spec", "must be a map");
  } else {
    switch (q.dialect) {
      case QueueDialect::kKAI:
        ParseKAI(obj, spec, &q, &errs);
        break;
      case QueueDialect::kVolcano:
        ParseVolcano(spec, &q, &errs);
        break;
      default:
        ParseElasticQuota(obj, spec, &q, &errs);
        break;
    }
  }
  if (q.name.empty()) errs.Add("metadata.name", "is required");
  q.invalid = errs.Summary();
  return q;
}

std::vector<std::string> QueueTree::PathToRoot(const std::string& name) const {
  std::vector<std::string> path;
  std::set<std::string> seen;
  std::string cur = name;
  while (!cur.empty()) {
    auto it = queues.find(cur);
    if (it == queues.end() || !seen.insert(cur).second) break;
    path.push_back(cur);
    cur = it->second.parent;
  }
  return path;
}

QueueTree BuildQueueTree(const std::vector<QueueSpec>& specs_in) {
  std::vector<QueueSpec> specs = specs_in;
  std::stable_sort(specs.begin(), specs.end(), [](const QueueSpec& a, const QueueSpec& b) {
    if (a.name != b.name) return a.name < b.name;
    if (a.dialect != b.dialect) return a.dialect < b.dialect;
    return a.source < b.source;
  });
  QueueTree t;
  std::map<std::string, std::string> duplicates;
  for (auto& s : specs) {
    if (t.queues.count(s.name)) {
      duplicates[s.name] += (duplicates[s.name].empty() ? "" : ", ") + s.source;
      continue;
    }
    t.queues[s.name] = s;
  }
  for (const auto& [name, q] : t.queues) {
    if (!q.invalid.empty()) t.errors[name] = q.invalid;
    auto d = duplicates.find(name);
    if (d != duplicates.end()) {
      t.errors[name] = q.source + ": metadata.name: queue " + name + " is also defined by " +
                       d->second + "; queue names must be unique across dialects";
    }
  }
  // Missing parents and cycles.
  for (const auto& [name, q] : t.queues) {
    if (q.parent.empty()) continue;
    const char* field = q.dialect == QueueDialect::kKAI ? "spec.parentQueue"
                        : q.dialect == QueueDialect::kVolcano
                            ? "spec.parent"
                            : "metadata.labels[quota.scheduling.koordinator.sh/parent]";
    if (!t.queues.count(q.parent)) {
      t.errors[name] = q.source + ": " + field + ": parent queue " + q.parent + " does not exist";
      continue;
    }
    std::vector<std::string> chain{name};
    std::string cur = q.parent;
    while (!cur.empty() && t.queues.count(cur)) {
      chain.push_back(cur);
      if (cur == name) {
        std::string c;
        for (size_t i = 0; i < chain.size(); ++i) c += (i ? " -> " : "") + chain[i];
        t.errors[name] = q.source + ": " + field + ": cycle in the queue tree: " + c;
        break;
      }
      if (chain.size() > t.queues.size() + 1) break;  // a cycle not through `name`
      cur = t.queues.at(cur).parent;
    }
  }
  // A queue is unusable when an ancestor is (or it hangs below a cycle).
  for (const auto& [name, q] : t.queues) {
    if (t.errors.count(name)) continue;
    std::set<std::string> seen{name};
    std::string cur = q.parent;
    while (!cur.empty()) {
      if (!seen.insert(cur).second || !t.queues.count(cur)) break;
      if (t.errors.count(cur)) {
        t.errors[name] =
            q.source + ": ancestor queue " + cur + " is invalid (" + t.errors.at(cur) + ")";
        break;
      }
      cur = t.queues.at(cur).parent;
    }
  }
  for (const auto& [name, q] : t.queues) {
    if (t.errors.count(name)) continue;
    t.children[q.parent].push_back(name);
    if (!q.namespace_.empty() && !t.quota_by_namespace.count(q.namespace_)) {
      t.quota_by_namespace[q.namespace_] = name;
    }
  }
  return t;
}

std::string FormatAmount(const std::string& resource, int64_t amount) {
  if (resource == "cpu") {
    if (amount % 1000 == 0) return std::to_string(amount / 1000) + " cpu";
    return std::to_string(amount) + "m cpu";
  }
  if (resource == "memory" || resource == "ephemeral-storage") {
    const int64_t gi = int64_t{1} << 30, mi = int64_t{1} << 20;
    if (amount != 0 && amount % gi == 0) return std::to_string(amount / gi) + "Gi " + resource;
    if (amount != 0 && amount % mi == 0) return std::to_string(amount / mi) + "Mi " + resource;
  }
  return std::to_string(amount) + " " + resource;
}

std::string FormatList(const ResourceList& list) {
  std::string s;
  for (const auto& [name, v] : list) s += (s.empty() ? "" : ", ") + FormatAmount(name, v);
  return s;
}

}  // namespace phalanx::quota
