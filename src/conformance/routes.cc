#include "conformance/routes.h"

#include <map>
#include <vector>

namespace phalanx::conformance {

std::string KindOfResource(const std::string& plural) {
  static const std::map<std::string, std::string> kinds = {
      {"pods", "Pod"},
      {"events", "Event"},
      {"podgroups", "PodGroup"},
      {"workloads", "Workload"},
      {"compositepodgroups", "CompositePodGroup"},
      {"queues", "Queue"},
      {"elasticquotas", "ElasticQuota"},
      {"resourceclaims", "ResourceClaim"},
      {"leases", "Lease"},
      {"persistentvolumes", "PersistentVolume"},
      {"persistentvolumeclaims", "PersistentVolumeClaim"},
      {"poddisruptionbudgets", "PodDisruptionBudget"},
  };
  auto it = kinds.find(plural);
  return it == kinds.end() ? "" : it->second;
}

std::optional<WriteRoute> RouteOf(const RecordedRequest& r) {
  if (r.method == "GET") return std::nullopt;
  std::string path = r.path.substr(0, r.path.find('?'));
  std::vector<std::string> seg;
  for (size_t at = 1; at <= path.size();) {
    const size_t next = path.find('/', at);
    seg.push_back(path.substr(at, next == std::string::npos ? std::string::npos : next - at));
    if (next == std::string::npos) break;
    at = next + 1;
  }
  WriteRoute w;
  size_t i = 0;
  if (!seg.empty() && seg[0] == "api" && seg.size() >= 2) {
    w.gvk.version = seg[1];
    i = 2;
  } else if (seg.size() >= 3 && seg[0] == "apis") {
    w.gvk.group = seg[1];
    w.gvk.version = seg[2];
    i = 3;
  } else {
    return std::nullopt;
  }
  if (i + 1 < seg.size() && seg[i] == "namespaces") {
    w.ns = seg[i + 1];
    i += 2;
  }
  if (i >= seg.size()) return std::nullopt;
  const std::string plural = seg[i];
  if (i + 1 < seg.size()) w.name = seg[i + 1];
  const std::string sub = i + 2 < seg.size() ? seg[i + 2] : "";
  if (sub == "binding" && r.method == "POST") {
    w.gvk.kind = "Binding";
    return w;
  }
  w.gvk.kind = KindOfResource(plural);
  if (w.gvk.kind.empty()) return std::nullopt;
  if (r.method == "DELETE") {
    w.gvk.kind = "DeleteOptions";  // the body of a delete (meta/v1, served in every group)
    w.gvk.group = "";
    w.gvk.version = "v1";
    return w;
  }
  w.subresource_status = sub == "status";
  if (!sub.empty() && sub != "status") return std::nullopt;
  if (r.method == "PATCH") {
    if (r.content_type == "application/merge-patch+json") {
      w.kind = schema::WriteKind::kMergePatch;
    } else if (r.content_type == "application/strategic-merge-patch+json") {
      w.kind = schema::WriteKind::kStrategicMergePatch;
    } else {
      return std::nullopt;  // apply or JSON patches: none of Phalanx's writes
    }
  } else if (r.method != "POST" && r.method != "PUT") {
    return std::nullopt;
  }
  return w;
}

}  // namespace phalanx::conformance
