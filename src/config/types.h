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
  PluginSet pre_enqueue, queue_sort, pre_filter, filter, post_filter, pre_score, score, reserve,
      permit, pre_bind, bind, post_bind, multi_point;
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

// extenders[].tlsConfig (upstream v1 ExtenderTLSConfig, a subset of client-go's
// rest.TLSClientConfig). The *_data fields hold the decoded bytes of the base64 strings
// the file gives (Go []byte in JSON).
struct ExtenderTLSConfig {
  bool insecure = false;
  std::string server_name;
  std::string cert_file, key_file, ca_file;  // PEM files
  std::string cert_data, key_data, ca_data;  // PEM bytes
};

// extenders[].managedResources[] (upstream v1 ExtenderManagedResource): an extended
// resource the extender manages; a pod asking for one of them (requests or limits) is
// what makes the extender "interested" (IsInterested). ignoredByScheduler: true adds the
// name to NodeResourcesFit's ignoredResources.
struct ExtenderManagedResource {
  std::string name;
  bool ignored_by_scheduler = false;
};

// One HTTP extender (upstream pkg/scheduler/apis/config/v1 Extender; semantics in
// pkg/scheduler/extender.go). Verbs are appended to urlPrefix ("<urlPrefix>/<verb>"); an
// empty verb means the extender does not implement that call.
struct Extender {
  std::string url_prefix;
  std::string filter_verb;
  std::string preempt_verb;
  std::string prioritize_verb;
  std::string bind_verb;
  // Multiplies the extender's 0..10 prioritize scores; must be > 0 when prioritizeVerb is
  // set (validation).
  int64_t weight = 0;
  bool enable_https = false;
  std::optional<ExtenderTLSConfig> tls_config;
  // Timeout of one call in nanoseconds; 0 means upstream's DefaultExtenderTimeout (5 s,
  // pkg/scheduler/extender.go NewHTTPExtender).
  int64_t http_timeout_ns = 0;
  // The extender caches nodes itself: calls send node names (ExtenderArgs.NodeNames)
  // instead of whole Node objects.
  bool node_cache_capable = false;
  std::vector<ExtenderManagedResource> managed_resources;
  // An unreachable or failing extender is skipped instead of failing the pod's cycle.
  bool ignorable = false;
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
  std::vector<Profile> profiles;
  // HTTP extenders, called in this order after the Filter plugins (ignorable ones are moved
  // behind the others when the scheduler is built, as upstream's buildExtenders does).
  std::vector<Extender> extenders;
};

}  // namespace phalanx::config
