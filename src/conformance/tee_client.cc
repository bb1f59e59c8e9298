#include "conformance/tee_client.h"

namespace phalanx::conformance {

api::Status TeeClusterClient::Bind(const api::Pod& pod, const std::string& node) {
  (void)wire_.Bind(pod, node);
  return primary_.Bind(pod, node);
}

api::Status TeeClusterClient::DeletePod(const api::Pod& pod) {
  (void)wire_.DeletePod(pod);
  return primary_.DeletePod(pod);
}

api::Status TeeClusterClient::PatchPodAnnotations(
    const api::Pod& pod, const std::map<std::string, std::string>& annotations) {
  (void)wire_.PatchPodAnnotations(pod, annotations);
  return primary_.PatchPodAnnotations(pod, annotations);
}

api::Status TeeClusterClient::PutObject(const api::Unstructured& obj) {
  (void)wire_.PutObject(obj);
  return primary_.PutObject(obj);
}

api::StatusOr<api::Unstructured> TeeClusterClient::PostObject(const api::Unstructured& obj) {
  (void)wire_.PostObject(obj);
  return primary_.PostObject(obj);
}

api::Status TeeClusterClient::DeleteObject(const api::Unstructured& obj) {
  (void)wire_.DeleteObject(obj);
  return primary_.DeleteObject(obj);
}

api::Status TeeClusterClient::UpdatePodStatus(const api::Pod& pod,
                                              const api::PodCondition* condition,
                                              const std::string* nominated_node_name) {
  (void)wire_.UpdatePodStatus(pod, condition, nominated_node_name);
  return primary_.UpdatePodStatus(pod, condition, nominated_node_name);
}

api::Status TeeClusterClient::UpdateResourceClaimStatus(const api::Unstructured& claim) {
  (void)wire_.UpdateResourceClaimStatus(claim);
  return primary_.UpdateResourceClaimStatus(claim);
}

api::StatusOr<api::Unstructured> TeeClusterClient::CreateResourceClaim(
    const api::Unstructured& claim) {
  (void)wire_.CreateResourceClaim(claim);
  return primary_.CreateResourceClaim(claim);
}

api::Status TeeClusterClient::DeleteResourceClaim(const api::Unstructured& claim) {
  (void)wire_.DeleteResourceClaim(claim);
  return primary_.DeleteResourceClaim(claim);
}

api::Status TeeClusterClient::PatchPodExtendedResourceClaimStatus(
    const api::Pod& pod, const api::PodExtendedResourceClaimStatus& status) {
  (void)wire_.PatchPodExtendedResourceClaimStatus(pod, status);
  return primary_.PatchPodExtendedResourceClaimStatus(pod, status);
}

void TeeClusterClient::RecordEvent(const api::Pod& pod, std::string_view type,
                                   std::string_view reason, std::string_view message) {
  wire_.RecordEvent(pod, type, reason, message);
  primary_.RecordEvent(pod, type, reason, message);
}

void TeeClusterClient::RecordObjectEvent(std::string_view api_version, std::string_view kind,
                                         std::string_view ns, std::string_view name,
                                         std::string_view type, std::string_view reason,
                                         std::string_view message) {
  wire_.RecordObjectEvent(api_version, kind, ns, name, type, reason, message);
  primary_.RecordObjectEvent(api_version, kind, ns, name, type, reason, message);
}

void TeeClusterClient::UpdatePodGroupStatus(std::string_view api_version, std::string_view kind,
                                            std::string_view ns, std::string_view name,
                                            const PodGroupStatus& status) {
  wire_.UpdatePodGroupStatus(api_version, kind, ns, name, status);
  primary_.UpdatePodGroupStatus(api_version, kind, ns, name, status);
}

}  // namespace phalanx::conformance
