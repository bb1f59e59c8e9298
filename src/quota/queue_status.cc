#include "quota/queue_status.h"

#include <cstdio>
#include <string_view>
#include <utility>

#include "quota/device_charge.h"

namespace phalanx::quota {

namespace {

std::string JsonStr(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

// {"cpu":"2","memory":"1024"}: every resource of `list` but "pods", and "0" for the
// `zero_keys` it lacks.
// GPU shares (quota/device_charge.h kGpuShareMilli) are written as part of nvidia.com/gpu
// ("1500m": one device and a half share).
std::string ResourceJson(const ResourceList& list, const std::set<std::string>& zero_keys) {
  std::map<std::string, int64_t> all;
  for (const auto& k : zero_keys) all[k == kGpuShareMilli ? kGpuQuotaResource : k] = 0;
  for (const auto& [k, v] : list) {
    if (k != "pods" && k != kGpuShareMilli) all[k] = v;
  }
  const bool shares = list.count(kGpuShareMilli) > 0;
  if (shares) all[kGpuQuotaResource] = GpuMilli(list);
  std::string out = "{";
  for (const auto& [k, v] : all) {
    if (out.size() > 1) out += ",";
    std::string q = QuantityString(k, v);
    if (shares && k == kGpuQuotaResource) {
      q = v % 1000 == 0 ? std::to_string(v / 1000) : std::to_string(v) + "m";
    }
    out += JsonStr(k) + ":" + JsonStr(q);
  }
  return out + "}";
}

ResourceList Sum(ResourceList a, const ResourceList& b) {
  for (const auto& [k, v] : b) a[k] += v;
  return a;
}

// Adds the resource names of `list` ("pods" aside) to the ones a status has written.
void CollectKeys(const ResourceList& list, std::set<std::string>* keys) {
  for (const auto& [k, v] : list) {
    if (k != "pods") keys->insert(k);
  }
}

}  // namespace

std::string QueueObjectRef::Key() const {
  return api_version + "/" + kind + "/" + namespace_ + "/" + name;
}

QueueObjectRef RefOf(const api::Unstructured& obj) {
  QueueObjectRef r;
  r.api_version = obj.api_version;
  r.kind = obj.kind;
  r.resource = obj.kind == "Queue" ? "queues" : "elasticquotas";
  // Queues are cluster-scoped; a decoder may have defaulted a namespace.
  r.namespace_ = obj.kind == "Queue" ? "" : obj.metadata.namespace_;
  r.name = obj.metadata.name;
  r.uid = obj.metadata.uid;
  return r;
}

std::string QuantityString(const std::string& resource, int64_t amount) {
  if (resource == "cpu") {
    if (amount % 1000 == 0) return std::to_string(amount / 1000);
    return std::to_string(amount) + "m";
  }
  return std::to_string(amount);
}

std::string QueueStatusJson(const QueueObjectReport& report,
                            const std::set<std::string>& zero_keys) {
  if (!report.object || !IsQueueObject(*report.object)) return "";
  const api::Unstructured& o = *report.object;
  const QueueStatus& s = report.status;
  const std::string group = o.Group();
  if (o.kind == "ElasticQuota") return "{\"used\":" + ResourceJson(s.allocated, zero_keys) + "}";
  if (group == "scheduling.volcano.sh") {
    return "{\"state\":\"Open\",\"pending\":" + std::to_string(report.units.pending) +
           ",\"running\":" + std::to_string(report.units.running) +
           ",\"inqueue\":" + std::to_string(report.units.inqueue) +
           ",\"allocated\":" + ResourceJson(s.allocated, zero_keys) + "}";
  }
  // KAI
  std::string children = "[";
  for (const auto& c : report.children) {
    if (children.size() > 1) children += ",";
    children += JsonStr(c);
  }
  children += "]";
  return "{\"childQueues\":" + children + ",\"allocated\":" + ResourceJson(s.allocated, zero_keys) +
         ",\"requested\":" + ResourceJson(Sum(s.allocated, s.pending), zero_keys) + "}";
}

QueueStatusWriter::QueueStatusWriter(const QueueManager& queues, QueueStatusSink& sink,
                                     int64_t min_interval_ns)
    : queues_(queues), sink_(sink), min_interval_ns_(min_interval_ns) {}

QueueStatusWriterCounters QueueStatusWriter::counters() const {
  absl::MutexLock l(&mu_);
  return counters_;
}

QueueStatusWriterCounters QueueStatusWriter::Sync(api::Timestamp now) {
  absl::MutexLock l(&mu_);
  if (any_pass_ && now - last_pass_ < min_interval_ns_) return counters_;
  const uint64_t generation = queues_.Generation();
  if (any_pass_ && generation == last_generation_ && !retry_) return counters_;
  any_pass_ = true;
  last_pass_ = now;
  last_generation_ = generation;
  retry_ = false;
  ++counters_.passes;
  std::set<std::string> seen;
  for (const QueueObjectReport& r : queues_.ObjectReports()) {
    const QueueObjectRef ref = RefOf(*r.object);
    const std::string key = ref.Key();
    seen.insert(key);
    Written& w = objects_[key];
    if (!r.error.empty()) {
      if (w.reported != r.error) {
        sink_.ReportInvalid(ref, r.error);
        w.reported = r.error;
        ++counters_.invalid_reports;
      }
      continue;  // no status for an object that takes no part in scheduling
    }
    w.reported.clear();
    const std::string json = QueueStatusJson(r, w.keys);
    if (json.empty()) continue;
    if (json == w.json) {
      ++counters_.unchanged;
      continue;
    }
    if (sink_.PatchStatus(ref, json).ok()) {
      w.json = json;
      CollectKeys(r.status.allocated, &w.keys);
      CollectKeys(r.status.pending, &w.keys);
      ++counters_.writes;
    } else {
      retry_ = true;
      ++counters_.errors;
    }
  }
  for (auto it = objects_.begin(); it != objects_.end();) {
    it = seen.count(it->first) ? std::next(it) : objects_.erase(it);
  }
  const std::vector<std::string> warnings = queues_.Warnings();  // only ever grows
  for (; warnings_reported_ < warnings.size(); ++warnings_reported_) {
    sink_.ReportWarning(warnings[warnings_reported_]);
    ++counters_.warnings;
  }
  return counters_;
}

}  // namespace phalanx::quota
