#include "app/queue_status_sink.h"

#include <spdlog/spdlog.h>

namespace phalanx::app {

std::string LiveQueueStatusSink::ObjectPath(const quota::QueueObjectRef& ref) {
  std::string p = "/apis/" + ref.api_version;
  if (!ref.namespace_.empty()) p += "/namespaces/" + ref.namespace_;
  return p + "/" + ref.resource + "/" + ref.name;
}

api::Status LiveQueueStatusSink::PatchStatus(const quota::QueueObjectRef& ref,
                                             const std::string& status_json) {
  const std::string type = ref.api_version + "/" + ref.resource;
  bool main_only;
  {
    absl::MutexLock l(&mu_);
    main_only = no_status_subresource_.count(type) > 0;
  }
  const std::string base = ObjectPath(ref);
  const std::string body = "{\"status\":" + status_json + "}";
  std::string path = base + "/status";
  client::Response r;
  if (!main_only) r = api_.Do("PATCH", path, body, "application/merge-patch+json");
  if (main_only || r.status == 404) {
    path = base;
    r = api_.Do("PATCH", path, body, "application/merge-patch+json");
    if (r.ok() && !main_only) {
      spdlog::info("{} {} has no status subresource: writing queue status to the main resource",
                   ref.api_version, ref.resource);
      absl::MutexLock l(&mu_);
      no_status_subresource_.insert(type);
    }
  }
  if (r.ok() || r.status == 404) return absl::OkStatus();  // 404: deleted meanwhile
  api::Status s = api_.ToStatus("PATCH", path, r);
  spdlog::warn("updating the status of {} {}: {}", ref.kind,
               ref.namespace_.empty() ? ref.name : ref.namespace_ + "/" + ref.name,
               std::string(s.message()));
  return s;
}

void LiveQueueStatusSink::ReportInvalid(const quota::QueueObjectRef& ref,
                                        const std::string& message) {
  spdlog::warn("invalid queue object: {}", message);
  events_.RecordObjectEvent(ref.api_version, ref.kind, ref.namespace_, ref.name, "Warning",
                            "InvalidQueue", message);
}

void LiveQueueStatusSink::ReportWarning(const std::string& message) {
  spdlog::warn("queue accounting: {}", message);
}

}  // namespace phalanx::app
