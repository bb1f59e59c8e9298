// KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1; v1beta2 and v1beta3 are
// converted on decode). Field names and defaults follow upstream
// pkg/scheduler/apis/config/v1/defaults.go and types.go.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace YAML {
class Node;
}

namespace phalanx::config {

struct PluginRef {
  std::string name;
  int32_t weight = 0;  // Score only; 0 means "plugin default" (1 unless the default set says)
};

struct PluginSet {
  std::vector<PluginRef> enabled;
  std::vector<PluginRef> disabled;  // name "*" disables every default plugin of the point
};

struct Plugins {
  PluginSet pre_enqueue, queue_sort, pre_filter, filter, post_filter, pre_score, score,
      reserve, permit, pre_bind, bind, post_bind, multi_point;
};

struct PluginConfig {
  std::string name;
  std::shared_ptr<const YAML::Node> args;  // never null after decode (may be an empty map)
};

struct Profile {
  std::string scheduler_name = "default-scheduler";
  std::optional<int32_t> percentage_of_nodes_to_score;  // overrides the global value
  Plugins plugins;
  std::vector<PluginConfig> plugin_config;
  // Returns the args of `plugin` or nullptr.
  const YAML::Node* ArgsFor(const std::string& plugin) const;
};

struct ClientConnection {
  std::string kubeconfig;
  std::string accept_content_types;
  std::string content_type = "application/vnd.kubernetes.protobuf";
  float qps = 50;
  int32_t burst = 100;
};

struct LeaderElection {
  bool leader_elect = true;
  int64_t lease_duration_seconds = 15;
  int64_t renew_deadline_seconds = 10;
  int64_t retry_period_seconds = 2;
  std::string resource_lock = "leases";
  std::string resource_name = "kube-scheduler";
  std::string resource_namespace = "kube-system";
};

struct KubeSchedulerConfiguration {
  std::string api_version = "kubescheduler.config.k8s.io/v1";
  int32_t parallelism = 16;
  // 0 means adaptive: max(5, 50 - numNodes/125) percent (upstream numFeasibleNodesToFind).
  int32_t percentage_of_nodes_to_score = 0;
  int64_t pod_initial_backoff_seconds = 1;
  int64_t pod_max_backoff_seconds = 10;
  // Current upstream flushes unschedulablePods after 5 minutes.
  int64_t pod_max_in_unschedulable_pods_duration_seconds = 300;
  ClientConnection client_connection;
  LeaderElection leader_election;
  std::string health_bind_address;   // "" = disabled; e.g. "0.0.0.0:10259"
  std::string metrics_bind_address;
  std::vector<Profile> profiles;
};

}  // namespace phalanx::config
