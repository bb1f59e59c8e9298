// Test builders for pods and nodes (in the style of upstream's st.MakePod()/MakeNode()).
//   auto pod = PodBuilder("web-0").Namespace("ns").Req("cpu", "500m").Obj();
//   auto node = NodeBuilder("n1").Capacity({{"cpu", "4"}, {"pods", "110"}}).Obj();
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/types.h"
#include "framework/types.h"

namespace phalanx::testing {

// Parses a quantity or aborts the test binary (test inputs are literals).
api::Quantity Q(const std::string& text);

class PodBuilder {
 public:
  explicit PodBuilder(std::string name, std::string ns = "default");
  PodBuilder& Namespace(std::string ns);
  PodBuilder& UID(std::string uid);
  PodBuilder& Label(std::string k, std::string v);
  PodBuilder& Annotation(std::string k, std::string v);
  // Adds a container named "c<N>" with these requests (e.g. {{"cpu","1"},{"memory","1Gi"}}).
  PodBuilder& Container(const std::map<std::string, std::string>& requests, std::string image = "");
  // Shorthand: one request on the first container (created if needed).
  PodBuilder& Req(const std::string& resource, const std::string& quantity);
  PodBuilder& InitContainer(const std::map<std::string, std::string>& requests,
                            bool sidecar = false);
  PodBuilder& Overhead(const std::map<std::string, std::string>& overhead);
  PodBuilder& HostPort(int32_t port, std::string protocol = "TCP", std::string ip = "");
  PodBuilder& NodeName(std::string node);
  PodBuilder& SchedulerName(std::string name);
  PodBuilder& Priority(int32_t p);
  PodBuilder& NodeSelector(std::map<std::string, std::string> sel);
  PodBuilder& NodeAffinityIn(std::string key, std::vector<std::string> values);
  PodBuilder& NodeAffinityNotIn(std::string key, std::vector<std::string> values);
  PodBuilder& PreferredNodeAffinity(int32_t weight, std::string key,
                                    std::vector<std::string> values);
  PodBuilder& Toleration(std::string key, std::string op, std::string value, std::string effect);
  PodBuilder& SchedulingGate(std::string name);
  PodBuilder& CreationTimestamp(api::Timestamp t);
  PodBuilder& Phase(std::string phase);
  // Sets metadata.deletionTimestamp (a terminating pod).
  PodBuilder& Terminating(api::Timestamp t = 1);
  // Adds a controller ownerReference (apiVersion apps/v1 unless `api_version` is given).
  PodBuilder& OwnerReference(std::string kind, std::string name, std::string api_version = "");
  // Inter-pod (anti-)affinity terms (upstream st.MakePod().PodAffinity...). Required terms
  // append to requiredDuringSchedulingIgnoredDuringExecution, preferred ones to
  // preferredDuringSchedulingIgnoredDuringExecution with `weight`.
  PodBuilder& PodAffinity(api::PodAffinityTerm term);
  PodBuilder& PodAntiAffinity(api::PodAffinityTerm term);
  PodBuilder& PreferredPodAffinity(int32_t weight, api::PodAffinityTerm term);
  PodBuilder& PreferredPodAntiAffinity(int32_t weight, api::PodAffinityTerm term);
  // Shorthands: a required term with one matchExpression on `label_key`.
  PodBuilder& PodAffinityIn(std::string label_key, std::string topology_key,
                            std::vector<std::string> values);
  PodBuilder& PodAffinityNotIn(std::string label_key, std::string topology_key,
                               std::vector<std::string> values);
  PodBuilder& PodAffinityExists(std::string label_key, std::string topology_key);
  PodBuilder& PodAntiAffinityIn(std::string label_key, std::string topology_key,
                                std::vector<std::string> values);
  PodBuilder& PodAntiAffinityNotIn(std::string label_key, std::string topology_key,
                                   std::vector<std::string> values);
  PodBuilder& PodAntiAffinityExists(std::string label_key, std::string topology_key);
  // Appends a topology spread constraint (upstream st.MakePod().SpreadConstraint).
  PodBuilder& SpreadConstraint(int32_t max_skew, std::string topology_key,
                               std::string when_unsatisfiable,
                               std::optional<api::LabelSelector> selector,
                               std::optional<int32_t> min_domains = std::nullopt,
                               std::string node_affinity_policy = "",
                               std::string node_taints_policy = "",
                               std::vector<std::string> match_label_keys = {});
  api::Pod Obj() const { return pod_; }
  api::PodPtr Ptr() const { return std::make_shared<api::Pod>(pod_); }
  framework::PodInfoPtr Info() const { return framework::PodInfo::Make(Ptr()); }

 private:
  api::Pod pod_;
};

class NodeBuilder {
 public:
  explicit NodeBuilder(std::string name);
  NodeBuilder& Label(std::string k, std::string v);
  // Sets capacity and allocatable (e.g. {{"cpu","4"},{"memory","8Gi"},{"pods","110"}}).
  NodeBuilder& Capacity(const std::map<std::string, std::string>& res);
  NodeBuilder& Taint(std::string key, std::string value, std::string effect);
  NodeBuilder& Unschedulable(bool u = true);
  NodeBuilder& Image(std::string name, int64_t size_bytes);
  api::Node Obj() const { return node_; }
  api::NodePtr Ptr() const { return std::make_shared<api::Node>(node_); }

 private:
  api::Node node_;
};

// Label selector builders (upstream st.MakeLabelSelector()).
api::LabelSelectorRequirement SelectorIn(std::string key, std::vector<std::string> values);
api::LabelSelectorRequirement SelectorNotIn(std::string key, std::vector<std::string> values);
api::LabelSelectorRequirement SelectorExists(std::string key);
api::LabelSelectorRequirement SelectorDoesNotExist(std::string key);
api::LabelSelector MakeLabelSelector(std::map<std::string, std::string> match_labels,
                                     std::vector<api::LabelSelectorRequirement> exprs = {});
// A pod affinity term: labelSelector {matchExpressions: exprs} and topologyKey.
api::PodAffinityTerm AffinityTerm(std::vector<api::LabelSelectorRequirement> exprs,
                                  std::string topology_key);

// A NodeInfo holding `node` and `pods` (each pod gets spec.nodeName = node name).
framework::NodeInfo MakeNodeInfo(const api::Node& node, const std::vector<api::Pod>& pods = {});

}  // namespace phalanx::testing
