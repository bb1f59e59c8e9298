#include "client/cluster_client.h"

#include <spdlog/spdlog.h>

#include <cctype>
#include <cinttypes>
#include <cstdio>

#include "client/objects.h"

namespace phalanx::client {

namespace {

constexpr size_t kMaxQueuedEvents = 10000;
constexpr size_t kMaxEventMessage = 1024;
constexpr int64_t kCorrelationWindowNs = 600LL * api::kNanosPerSecond;
constexpr size_t kMaxCorrelated = 4096;

std::string PodPath(const api::Pod& pod) {
  return "/api/v1/namespaces/" + pod.metadata.namespace_ + "/pods/" + pod.metadata.name;
}

std::string GroupOf(std::string_view api_version) {
  auto slash = api_version.find('/');
  return slash == std::string_view::npos ? std::string()
                                         : std::string(api_version.substr(0, slash));
}

std::string ObjKey(std::string_view api_version, std::string_view kind, std::string_view ns,
                   std::string_view name) {
  return GroupOf(api_version) + "/" + std::string(kind) + "/" + std::string(ns) + "/" +
         std::string(name);
}

// Resource path of a namespaced custom object: kinds map to their lowercase plural
// (PodGroup -> podgroups, Workload -> workloads), as the CRDs of every dialect name them.
std::string ObjectPath(std::string_view api_version, std::string_view kind, std::string_view ns,
                       std::string_view name) {
  std::string plural;
  for (char c : kind) plural += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  plural += "s";
  return "/apis/" + std::string(api_version) + "/namespaces/" + std::string(ns) + "/" + plural +
         "/" + std::string(name);
}

}  // namespace

LiveClusterClient::LiveClusterClient(RestClient& api, RestClient& events,
                                     const cluster::Clock& clock, std::string component)
    : api_(api), events_(events), clock_(clock), component_(std::move(component)) {
  status_thread_ = std::thread([this] { StatusLoop(); });
  event_thread_ = std::thread([this] { EventLoop(); });
}

LiveClusterClient::~LiveClusterClient() { Flush(std::chrono::milliseconds(0)); }

api::Status LiveClusterClient::Bind(const api::Pod& pod, const std::string& node) {
  const std::string body =
      "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":" +
      JsonString(pod.metadata.name) + ",\"namespace\":" + JsonString(pod.metadata.namespace_) +
      (pod.metadata.uid.empty() ? std::string() : ",\"uid\":" + JsonString(pod.metadata.uid)) +
      "},\"target\":{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"name\":" + JsonString(node) + "}}";
  const std::string path = PodPath(pod) + "/binding";
  Response r = api_.Do("POST", path, body);
  absl::MutexLock l(&mu_);
  if (r.ok()) {
    ++counters_.binds;
    return absl::OkStatus();
  }
  ++counters_.bind_errors;
  std::string reason;
  const std::string msg = StatusMessage(r.body, &reason);
  const absl::StatusCode code = ResponseCode(r, reason);
  if (r.status == 404) {
    return api::Status(code, "binding pod " + pod.Key() + " to " + node +
                                 ": pod not found (deleted?)" + (msg.empty() ? "" : ": " + msg));
  }
  if (r.status == 409) {
    return api::Status(code, "binding pod " + pod.Key() + " to " + node +
                                 ": conflict (already bound, or recreated): " + msg);
  }
  return api::Status(
      code, "binding pod " + pod.Key() + " to " + node + ": " + api_.Describe("POST", path, r));
}

api::Status LiveClusterClient::DeletePod(const api::Pod& pod) {
  std::string body = "{\"apiVersion\":\"v1\",\"kind\":\"DeleteOptions\"";
  if (!pod.metadata.uid.empty()) {
    body += ",\"preconditions\":{\"uid\":" + JsonString(pod.metadata.uid) + "}";
  }
  body += "}";
  Response r = api_.Do("DELETE", PodPath(pod), body);
  if (r.ok() || r.status == 404) return absl::OkStatus();
  api::Status s = api_.ToStatus("DELETE", PodPath(pod), r);
  return api::Status(s.code(), "deleting pod " + pod.Key() + ": " + std::string(s.message()));
}

namespace {

api::Status PutWhole(RestClient& api, const api::Unstructured& obj, const std::string& suffix) {
  const std::string base = UnstructuredPath(obj);
  if (base.empty() || !obj.object) {
    return absl::InvalidArgumentError("cannot write " + obj.kind + " " + obj.metadata.name +
                                      ": no API path for kind " + obj.kind + " of " +
                                      obj.api_version);
  }
  const std::string path = base + suffix;
  Response r = api.Do("PUT", path, YamlToJson(*obj.object));
  if (r.ok()) return absl::OkStatus();
  api::Status s = api.ToStatus("PUT", path, r);
  std::string id = obj.metadata.namespace_.empty()
                       ? obj.metadata.name
                       : obj.metadata.namespace_ + "/" + obj.metadata.name;
  return api::Status(s.code(), "updating " + obj.kind + " " + id + ": " + std::string(s.message()));
}

}  // namespace

api::Status LiveClusterClient::PutObject(const api::Unstructured& obj) {
  return PutWhole(api_, obj, "");
}

api::Status LiveClusterClient::UpdateResourceClaimStatus(const api::Unstructured& claim) {
  return PutWhole(api_, claim, "/status");
}

api::StatusOr<api::Unstructured> LiveClusterClient::CreateResourceClaim(
    const api::Unstructured& claim) {
  return PostObject(claim);
}

api::StatusOr<api::Unstructured> LiveClusterClient::PostObject(const api::Unstructured& in) {
  api::Unstructured probe = in;
  probe.metadata.name.clear();
  std::string path = UnstructuredPath(probe);  // ".../<resource>/" with no name
  if (path.empty() || !in.object) {
    return absl::InvalidArgumentError("cannot create " + in.kind + ": no API path for " +
                                      in.api_version);
  }
  path.pop_back();
  Response r = api_.Do("POST", path, YamlToJson(*in.object));
  if (!r.ok()) {
    api::Status s = api_.ToStatus("POST", path, r);
    return api::Status(s.code(), "creating " + in.kind + " in " + in.metadata.namespace_ + ": " +
                                     std::string(s.message()));
  }
  ResourceType rt;
  rt.group = in.Group();
  rt.version = in.api_version.substr(in.api_version.find('/') + 1);
  const std::string resource = path.substr(path.rfind('/') + 1);
  rt.resource = resource;
  rt.kind = in.kind;
  auto obj = DecodeObjectJson(r.body, rt);
  if (!obj.ok()) return obj.status();
  return *std::static_pointer_cast<const api::Unstructured>(obj->ptr);
}

api::Status LiveClusterClient::DeleteResourceClaim(const api::Unstructured& claim) {
  return DeleteObject(claim);
}

api::Status LiveClusterClient::DeleteObject(const api::Unstructured& claim) {
  const std::string path = UnstructuredPath(claim);
  if (path.empty()) {
    return absl::InvalidArgumentError("cannot delete " + claim.kind + " " + claim.metadata.name);
  }
  std::string body = "{\"apiVersion\":\"v1\",\"kind\":\"DeleteOptions\"";
  if (!claim.metadata.uid.empty()) {
    body += ",\"preconditions\":{\"uid\":" + JsonString(claim.metadata.uid) + "}";
  }
  body += "}";
  Response r = api_.Do("DELETE", path, body);
  if (r.ok() || (r.status == 404 && claim.kind == "ResourceClaim")) return absl::OkStatus();
  api::Status s = api_.ToStatus("DELETE", path, r);
  return api::Status(s.code(), "deleting " + claim.kind + " " + claim.metadata.namespace_ + "/" +
                                   claim.metadata.name + ": " + std::string(s.message()));
}

std::string LiveClusterClient::ExtendedResourceClaimStatusPatchJson(
    const api::Pod& pod, const api::PodExtendedResourceClaimStatus& status) {
  std::string body = "{";
  if (!pod.metadata.uid.empty()) {
    body += "\"metadata\":{\"uid\":" + JsonString(pod.metadata.uid) + "},";
  }
  body += "\"status\":{\"extendedResourceClaimStatus\":{\"requestMappings\":[";
  for (size_t i = 0; i < status.request_mappings.size(); ++i) {
    const auto& m = status.request_mappings[i];
    if (i) body += ",";
    body += "{\"containerName\":" + JsonString(m.container_name) +
            ",\"resourceName\":" + JsonString(m.resource_name) +
            ",\"requestName\":" + JsonString(m.request_name) + "}";
  }
  return body + "],\"resourceClaimName\":" + JsonString(status.resource_claim_name) + "}}}";
}

api::Status LiveClusterClient::PatchPodExtendedResourceClaimStatus(
    const api::Pod& pod, const api::PodExtendedResourceClaimStatus& status) {
  const std::string path = PodPath(pod) + "/status";
  Response r = api_.Do("PATCH", path, ExtendedResourceClaimStatusPatchJson(pod, status),
                       "application/strategic-merge-patch+json");
  if (r.ok()) return absl::OkStatus();
  api::Status s = api_.ToStatus("PATCH", path, r);
  return api::Status(s.code(), "patching status.extendedResourceClaimStatus of pod " + pod.Key() +
                                   ": " + std::string(s.message()));
}

std::string LiveClusterClient::AnnotationPatchJson(
    const api::Pod& pod, const std::map<std::string, std::string>& annotations) {
  std::string body = "{\"metadata\":{";
  if (!pod.metadata.uid.empty()) body += "\"uid\":" + JsonString(pod.metadata.uid) + ",";
  body += "\"annotations\":{";
  bool first = true;
  for (const auto& [k, v] : annotations) {
    if (!first) body += ",";
    first = false;
    body += JsonString(k) + ":" + JsonString(v);
  }
  return body + "}}}";
}

api::Status LiveClusterClient::PatchPodAnnotations(
    const api::Pod& pod, const std::map<std::string, std::string>& annotations) {
  const std::string path = PodPath(pod);
  Response r = api_.Do("PATCH", path, AnnotationPatchJson(pod, annotations),
                       "application/strategic-merge-patch+json");
  absl::MutexLock l(&mu_);
  if (r.ok()) {
    ++counters_.annotation_patches;
    return absl::OkStatus();
  }
  ++counters_.annotation_patch_errors;
  api::Status s = api_.ToStatus("PATCH", path, r);
  return api::Status(
      s.code(), "patching the annotations of pod " + pod.Key() + ": " + std::string(s.message()));
}

api::Status LiveClusterClient::UpdatePodStatus(const api::Pod& pod,
                                               const api::PodCondition* condition,
                                               const std::string* nominated) {
  // Skip a patch that would change nothing (upstream updatePod does the same).
  bool changes = false;
  if (condition) {
    bool same = false;
    for (const auto& c : pod.status.conditions) {
      if (c.type == condition->type) {
        same = c.status == condition->status && c.reason == condition->reason &&
               c.message == condition->message;
      }
    }
    changes = changes || !same;
  }
  if (nominated && *nominated != pod.status.nominated_node_name) changes = true;
  if (!changes) return absl::OkStatus();

  std::string status = "{";
  bool first = true;
  if (condition) {
    const std::string now = FormatTime(clock_.Now());
    status += "\"conditions\":[{\"type\":" + JsonString(condition->type) +
              ",\"status\":" + JsonString(condition->status) +
              ",\"reason\":" + JsonString(condition->reason) +
              ",\"message\":" + JsonString(condition->message) +
              ",\"lastProbeTime\":null,\"lastTransitionTime\":" + JsonString(now) + "}]";
    first = false;
  }
  if (nominated) {
    if (!first) status += ",";
    status += "\"nominatedNodeName\":" +
              (nominated->empty() ? std::string("null") : JsonString(*nominated));
  }
  status += "}";
  StatusPatch p{pod.metadata.namespace_, pod.metadata.name, "{\"status\":" + status + "}"};
  const std::string key = pod.Key();
  {
    absl::MutexLock l(&mu_);
    if (stop_) return absl::CancelledError("cluster client stopped");
    if (!status_pending_.count(key)) status_order_.push_back(key);
    status_pending_[key] = std::move(p);
  }
  cv_.SignalAll();
  return absl::OkStatus();
}

void LiveClusterClient::StatusLoop() {
  for (;;) {
    StatusPatch p;
    PodGroupWrite w;
    bool is_pod = false;
    {
      absl::MutexLock l(&mu_);
      while (!stop_ && status_order_.empty() && pg_order_.empty()) cv_.Wait(&mu_);
      if (status_order_.empty() && pg_order_.empty()) return;
      if (!status_order_.empty()) {
        const std::string key = std::move(status_order_.front());
        status_order_.pop_front();
        auto it = status_pending_.find(key);
        if (it == status_pending_.end()) continue;
        p = std::move(it->second);
        status_pending_.erase(it);
        is_pod = true;
      } else {
        const std::string key = std::move(pg_order_.front());
        pg_order_.pop_front();
        auto it = pg_pending_.find(key);
        if (it == pg_pending_.end()) continue;
        w = std::move(it->second);
        pg_pending_.erase(it);
      }
      ++status_inflight_;
    }
    if (!is_pod) {
      SendPodGroupStatus(w);
      {
        absl::MutexLock l(&mu_);
        --status_inflight_;
      }
      cv_.SignalAll();
      continue;
    }
    const std::string path = "/api/v1/namespaces/" + p.ns + "/pods/" + p.name + "/status";
    Response r = api_.Do("PATCH", path, p.body, "application/strategic-merge-patch+json");
    {
      absl::MutexLock l(&mu_);
      --status_inflight_;
      if (r.ok()) {
        ++counters_.status_patches;
      } else if (r.status != 404) {  // a deleted pod needs no status
        ++counters_.status_errors;
        spdlog::warn("updating the status of pod {}/{}: {}", p.ns, p.name,
                     api_.Describe("PATCH", path, r));
      }
    }
    cv_.SignalAll();
  }
}

std::string LiveClusterClient::PodGroupStatusJson(std::string_view group, const PodGroupStatus& st,
                                                  api::Timestamp now) {
  std::string out;
  auto field = [&out](std::string_view name, const std::string& json) {
    out += (out.empty() ? "{\"" : ",\"") + std::string(name) + "\":" + json;
  };
  auto count = [&](std::string_view name, int32_t v) { field(name, std::to_string(v)); };
  const std::string message = JsonString(st.condition_message.substr(0, kMaxEventMessage));
  const std::string condition_head =
      "{\"type\":" + JsonString(st.condition_type) +
      ",\"status\":" + JsonString(st.condition_status) +
      ",\"reason\":" + JsonString(st.condition_reason) + ",\"message\":" + message +
      ",\"lastTransitionTime\":" +
      JsonString(FormatTime(st.condition_time != 0 ? st.condition_time : now));
  if (!st.phase.empty()) field("phase", JsonString(st.phase));
  if (group == "scheduling.volcano.sh") {
    if (!st.condition_type.empty()) field("conditions", "[" + condition_head + "}]");
    count("running", st.running);
    count("succeeded", st.succeeded);
    count("failed", st.failed);
  } else if (group == "scheduling.run.ai") {
    count("pending", st.pending);
    count("running", st.running);
    count("succeeded", st.succeeded);
    count("failed", st.failed);
    // A merge patch replaces the list: [] clears the condition once the gang is placed.
    field("schedulingConditions",
          st.condition_type.empty()
              ? "[]"
              : "[" + condition_head + ",\"nodePool\":\"default\",\"reasons\":[{\"reason\":" +
                    JsonString(st.condition_reason) + ",\"message\":" + message + "}]}]");
  } else if (group == "scheduling.k8s.io") {
    if (!st.condition_type.empty()) field("conditions", "[" + condition_head + "}]");
  } else {
    // scheduling.x-k8s.io's CRD has no status.scheduled (it would be pruned); the older
    // scheduling.sigs.k8s.io CRD (Koordinator's) keeps it.
    if (group == "scheduling.sigs.k8s.io") count("scheduled", st.scheduled);
    count("running", st.running);
    count("succeeded", st.succeeded);
    count("failed", st.failed);
    if (st.schedule_start_time != 0) {
      field("scheduleStartTime", JsonString(FormatTime(st.schedule_start_time)));
    }
    if (!st.occupied_by.empty()) field("occupiedBy", JsonString(st.occupied_by));
  }
  return out.empty() ? "{}" : out + "}";
}

void LiveClusterClient::UpdatePodGroupStatus(std::string_view api_version, std::string_view kind,
                                             std::string_view ns, std::string_view name,
                                             const PodGroupStatus& status) {
  const std::string key = ObjKey(api_version, kind, ns, name);
  {
    absl::MutexLock l(&mu_);
    if (stop_) return;
    PodGroupStatus merged = status;
    // Empty fields are not written (the merge patch keeps them): compare against what the
    // object will hold.
    const PodGroupStatus* base = nullptr;
    auto pend = pg_pending_.find(key);
    auto done = pg_written_.find(key);
    if (pend != pg_pending_.end()) {
      base = &pend->second.status;
    } else if (done != pg_written_.end()) {
      base = &done->second;
    }
    if (base) {
      if (merged.occupied_by.empty()) merged.occupied_by = base->occupied_by;
      if (merged.schedule_start_time == 0) merged.schedule_start_time = base->schedule_start_time;
    }
    // The condition's transition time from the status last queued (a write in flight is
    // in neither map yet).
    auto cond = pg_condition_.find(key);
    merged.MergeConditionTime(cond == pg_condition_.end() ? nullptr : &cond->second, clock_.Now());
    pg_condition_[key] = merged;
    if (pend != pg_pending_.end()) {
      pend->second.status = std::move(merged);
      // A pending write that returns to what is already written is dropped on send.
      return;
    }
    if (done != pg_written_.end() && done->second == merged) {
      ++counters_.podgroup_status_skipped;
      return;
    }
    pg_pending_[key] = PodGroupWrite{std::string(api_version), std::string(kind), std::string(ns),
                                     std::string(name), std::move(merged)};
    pg_order_.push_back(key);
  }
  cv_.SignalAll();
}

void LiveClusterClient::SendPodGroupStatus(const PodGroupWrite& w) {
  const std::string key = ObjKey(w.api_version, w.kind, w.ns, w.name);
  bool skip_status;
  {
    absl::MutexLock l(&mu_);
    auto done = pg_written_.find(key);
    if (done != pg_written_.end() && done->second == w.status) {
      ++counters_.podgroup_status_skipped;
      return;
    }
    skip_status = no_status_subresource_.count(w.api_version) > 0;
  }
  const std::string base = ObjectPath(w.api_version, w.kind, w.ns, w.name);
  const std::string body =
      "{\"status\":" + PodGroupStatusJson(GroupOf(w.api_version), w.status, clock_.Now()) + "}";
  std::string path = base + "/status";
  Response r;
  if (!skip_status) r = api_.Do("PATCH", path, body, "application/merge-patch+json");
  if (skip_status || r.status == 404) {
    // No status subresource (or the object is gone: then this 404s too).
    path = base;
    r = api_.Do("PATCH", path, body, "application/merge-patch+json");
    if (r.ok() && !skip_status) {
      spdlog::info("{} has no status subresource: writing PodGroup status to the main resource",
                   w.api_version);
      absl::MutexLock l(&mu_);
      no_status_subresource_.insert(w.api_version);
    }
  }
  absl::MutexLock l(&mu_);
  if (r.ok()) {
    ++counters_.podgroup_status_writes;
    pg_written_[key] = w.status;
    return;
  }
  pg_written_.erase(key);
  if (r.status == 404) return;  // deleted meanwhile
  ++counters_.podgroup_status_errors;
  spdlog::warn("updating the status of {} {}/{}: {}", w.kind, w.ns, w.name,
               api_.Describe("PATCH", path, r));
}

void LiveClusterClient::ObserveObject(const api::Unstructured& obj, bool deleted) {
  if (obj.kind != "PodGroup" && obj.kind != "Workload" && obj.kind != "Queue" &&
      obj.kind != "ElasticQuota") {
    return;
  }
  // Queues (KAI, Volcano) are cluster-scoped: no namespace, whatever the decoder defaulted.
  const std::string key =
      ObjKey(obj.api_version, obj.kind, obj.kind == "Queue" ? "" : obj.metadata.namespace_,
             obj.metadata.name);
  absl::MutexLock l(&mu_);
  if (deleted) {
    uids_.erase(key);
    pg_written_.erase(key);
    pg_condition_.erase(key);
  } else {
    uids_[key] = obj.metadata.uid;
  }
}

void LiveClusterClient::RecordObjectEvent(std::string_view api_version, std::string_view kind,
                                          std::string_view ns, std::string_view name,
                                          std::string_view type, std::string_view reason,
                                          std::string_view message) {
  EventReq e;
  e.ns = std::string(ns);
  e.pod_name = std::string(name);
  e.obj_api_version = std::string(api_version);
  e.obj_kind = std::string(kind);
  e.type = std::string(type);
  e.reason = std::string(reason);
  e.message = std::string(message.substr(0, kMaxEventMessage));
  e.time = clock_.Now();
  {
    absl::MutexLock l(&mu_);
    if (stop_) return;
    auto it = uids_.find(ObjKey(api_version, kind, ns, name));
    if (it != uids_.end()) e.pod_uid = it->second;
    if (events_q_.size() >= kMaxQueuedEvents) {
      ++counters_.events_dropped;
      return;
    }
    events_q_.push_back(std::move(e));
  }
  cv_.SignalAll();
}

void LiveClusterClient::RecordEvent(const api::Pod& pod, std::string_view type,
                                    std::string_view reason, std::string_view message) {
  EventReq e;
  e.ns = pod.metadata.namespace_;
  e.pod_name = pod.metadata.name;
  e.pod_uid = pod.metadata.uid;
  e.type = std::string(type);
  e.reason = std::string(reason);
  e.message = std::string(message.substr(0, kMaxEventMessage));
  e.time = clock_.Now();
  {
    absl::MutexLock l(&mu_);
    if (stop_) return;
    if (events_q_.size() >= kMaxQueuedEvents) {
      ++counters_.events_dropped;
      return;
    }
    events_q_.push_back(std::move(e));
  }
  cv_.SignalAll();
}

void LiveClusterClient::EventLoop() {
  for (;;) {
    EventReq e;
    {
      absl::MutexLock l(&mu_);
      while (!stop_ && events_q_.empty()) cv_.Wait(&mu_);
      if (events_q_.empty()) return;
      e = std::move(events_q_.front());
      events_q_.pop_front();
      ++events_inflight_;
    }
    SendEvent(e);
    {
      absl::MutexLock l(&mu_);
      --events_inflight_;
    }
    cv_.SignalAll();
  }
}

void LiveClusterClient::SendEvent(const EventReq& e) {
  // Events about cluster-scoped objects (KAI / Volcano Queues) live in "default", as
  // client-go's recorder puts them (tools/record/event.go makeEvent: metav1.NamespaceDefault
  // when the reference has no namespace); involvedObject.namespace stays empty.
  const std::string ev_ns = e.ns.empty() ? "default" : e.ns;
  const std::string base = "/api/v1/namespaces/" + ev_ns + "/events";
  const std::string corr = e.obj_kind + "/" + e.ns + "/" + e.pod_name + "/" + e.pod_uid + "\x1f" +
                           e.type + "\x1f" + e.reason + "\x1f" + e.message;
  auto it = seen_.find(corr);
  if (it != seen_.end() && e.time - it->second.first < kCorrelationWindowNs) {
    Seen& s = it->second;
    ++s.count;
    s.last = e.time;
    const std::string body = "{\"count\":" + std::to_string(s.count) +
                             ",\"lastTimestamp\":" + JsonString(FormatTime(e.time)) + "}";
    Response r = events_.Do("PATCH", base + "/" + s.name, body, "application/merge-patch+json");
    if (r.ok()) {
      absl::MutexLock l(&mu_);
      ++counters_.events;
      return;
    }
    seen_.erase(it);  // e.g. the event expired (TTL): create a new one
  }
  char suffix[32];
  std::snprintf(suffix, sizeof suffix, ".%" PRIx64, static_cast<uint64_t>(e.time));
  const std::string name = e.pod_name + suffix;
  const std::string ts = JsonString(FormatTime(e.time));
  const std::string body =
      "{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{\"name\":" + JsonString(name) +
      ",\"namespace\":" + JsonString(ev_ns) +
      "},\"involvedObject\":{\"apiVersion\":" + JsonString(e.obj_api_version) +
      ",\"kind\":" + JsonString(e.obj_kind) + ",\"namespace\":" + JsonString(e.ns) +
      ",\"name\":" + JsonString(e.pod_name) + ",\"uid\":" + JsonString(e.pod_uid) +
      "},\"reason\":" + JsonString(e.reason) + ",\"message\":" + JsonString(e.message) +
      ",\"type\":" + JsonString(e.type) + ",\"source\":{\"component\":" + JsonString(component_) +
      "},\"reportingComponent\":" + JsonString(component_) + ",\"firstTimestamp\":" + ts +
      ",\"lastTimestamp\":" + ts + ",\"count\":1}";
  Response r = events_.Do("POST", base, body);
  absl::MutexLock l(&mu_);
  if (!r.ok()) {
    ++counters_.event_errors;
    spdlog::warn("recording event {} for {} {}/{}: {}", e.reason, e.obj_kind, e.ns, e.pod_name,
                 events_.Describe("POST", base, r));
    return;
  }
  ++counters_.events;
  if (seen_.size() >= kMaxCorrelated) {
    // Drop the entries outside the window; if all are recent, start over.
    for (auto s = seen_.begin(); s != seen_.end();) {
      s = e.time - s->second.first >= kCorrelationWindowNs ? seen_.erase(s) : std::next(s);
    }
    if (seen_.size() >= kMaxCorrelated) seen_.clear();
  }
  seen_[corr] = Seen{name, 1, e.time, e.time};
}

void LiveClusterClient::Flush(std::chrono::milliseconds timeout) {
  {
    absl::MutexLock l(&mu_);
    if (!stop_ && timeout.count() > 0) {
      // Until everything queued was sent or `timeout` passed (steady clock).
      const auto deadline = std::chrono::steady_clock::now() + timeout;
      while (!(status_order_.empty() && pg_order_.empty() && events_q_.empty() &&
               status_inflight_ == 0 && events_inflight_ == 0)) {
        const auto now = std::chrono::steady_clock::now();
        if (now >= deadline) break;
        cv_.WaitWithTimeout(&mu_, absl::FromChrono(deadline - now));
      }
    }
    stop_ = true;
    status_order_.clear();
    status_pending_.clear();
    pg_order_.clear();
    pg_pending_.clear();
    events_q_.clear();
  }
  cv_.SignalAll();
  if (status_thread_.joinable()) status_thread_.join();
  if (event_thread_.joinable()) event_thread_.join();
}

LiveClusterClient::Counters LiveClusterClient::counters() const {
  absl::MutexLock l(&mu_);
  return counters_;
}

}  // namespace phalanx::client
