// A ClusterClient that does every write twice: on `primary` (the in-process Store, which
// the scheduler under test reads back) and through `wire` (the real LiveClusterClient
// against a RecordingServer), so that a run of the real scheduler leaves behind every
// request body Phalanx would send to a cluster, for the conformance suite to validate.
// Results come from `primary`.
#pragma once

#include "client/cluster_client.h"
#include "cluster/client.h"

namespace phalanx::conformance {

class TeeClusterClient final : public cluster::ClusterClient {
 public:
  TeeClusterClient(cluster::ClusterClient& primary, client::LiveClusterClient& wire)
      : primary_(primary), wire_(wire) {}

  api::Status Bind(const api::Pod& pod, const std::string& node) override;
  api::Status DeletePod(const api::Pod& pod) override;
  api::Status PatchPodAnnotations(const api::Pod& pod,
                                  const std::map<std::string, std::string>& annotations) override;
  api::Status PutObject(const api::Unstructured& obj) override;
  api::StatusOr<api::Unstructured> PostObject(const api::Unstructured& obj) override;
  api::Status DeleteObject(const api::Unstructured& obj) override;
  api::Status UpdatePodStatus(const api::Pod& pod, const api::PodCondition* condition,
                              const std::string* nominated_node_name) override;
  api::Status UpdateResourceClaimStatus(const api::Unstructured& claim) override;
  api::StatusOr<api::Unstructured> CreateResourceClaim(const api::Unstructured& claim) override;
  api::Status DeleteResourceClaim(const api::Unstructured& claim) override;
  api::Status PatchPodExtendedResourceClaimStatus(
      const api::Pod& pod, const api::PodExtendedResourceClaimStatus& status) override;
  void RecordEvent(const api::Pod& pod, std::string_view type, std::string_view reason,
                   std::string_view message) override;
  void RecordObjectEvent(std::string_view api_version, std::string_view kind, std::string_view ns,
                         std::string_view name, std::string_view type, std::string_view reason,
                         std::string_view message) override;
  void UpdatePodGroupStatus(std::string_view api_version, std::string_view kind,
                            std::string_view ns, std::string_view name,
                            const PodGroupStatus& status) override;

 private:
  cluster::ClusterClient& primary_;
  client::LiveClusterClient& wire_;
};

}  // namespace phalanx::conformance
