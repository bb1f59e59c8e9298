// HTTP scheduler extenders (upstream pkg/scheduler/extender.go HTTPExtender, v1.20 and
// current master): each call POSTs JSON to "<urlPrefix>/<verb>" with Content-Type
// application/json and decodes the JSON answer of a 200 response.
//
//   Filter      ExtenderArgs{Pod, Nodes | NodeNames} -> ExtenderFilterResult{Nodes |
//               NodeNames, FailedNodes, FailedAndUnresolvableNodes, Error}
//   Prioritize  ExtenderArgs -> HostPriorityList [{Host, Score}]
//   Bind        ExtenderBindingArgs{PodName, PodNamespace, PodUID, Node} ->
//               ExtenderBindingResult{Error}
//   Preempt     ExtenderPreemptionArgs{Pod, NodeNameToVictims | NodeNameToMetaVictims} ->
//               ExtenderPreemptionResult{NodeNameToMetaVictims}
//
// nodeCacheCapable extenders get node names (NodeNames, NodeNameToMetaVictims: victims by
// UID) instead of whole objects. The transport is libcurl (one pooled handle per call in
// flight, connections kept alive); tests inject a fake Transport.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "api/status.h"
#include "config/types.h"
#include "framework/extender.h"

namespace phalanx::extender {

// Upstream DefaultExtenderTimeout (extender.go): used when httpTimeout is 0.
inline constexpr int64_t kDefaultTimeoutNs = 5'000'000'000;

// What a POST returned: the HTTP status and body, or the transport's error (status 0) in
// Go net/http's wording where it has one, e.g. "dial tcp 127.0.0.1:1: connect: connection
// refused", "context deadline exceeded (Client.Timeout exceeded while awaiting headers)".
struct HttpResponse {
  long status = 0;
  std::string body;
  std::string error;  // "" when a response arrived
};

// Sends one POST. Thread-safe.
class Transport {
 public:
  virtual ~Transport() = default;
  virtual HttpResponse Post(const std::string& url, const std::string& json_body) = 0;
};

// libcurl transport with the extender's timeout and TLS settings (upstream makeTransport:
// enableHTTPS without a CA turns verification off; tlsConfig gives CA, client certificate
// and key as files or PEM bytes). Errors: tlsConfig.serverName (curl has no SNI override)
// is refused as unsupported.
api::StatusOr<std::unique_ptr<Transport>> NewCurlTransport(const config::Extender& cfg);

class HTTPExtender final : public framework::Extender {
 public:
  HTTPExtender(const config::Extender& cfg, std::unique_ptr<Transport> transport);

  const std::string& Name() const override { return cfg_.url_prefix; }
  bool IsIgnorable() const override { return cfg_.ignorable; }
  bool IsInterested(const api::Pod& pod) const override;
  bool IsBinder() const override { return !cfg_.bind_verb.empty(); }
  bool SupportsPreemption() const override { return !cfg_.preempt_verb.empty(); }
  bool IsPrioritizer() const override { return !cfg_.prioritize_verb.empty(); }

  api::Status Filter(const api::Pod& pod, const std::vector<const framework::NodeInfo*>& nodes,
                     framework::ExtenderFilterResult* out) override;
  api::Status Prioritize(const api::Pod& pod, const std::vector<const framework::NodeInfo*>& nodes,
                         std::map<std::string, int64_t>* scores, int64_t* weight) override;
  api::Status Bind(const api::Pod& pod, const std::string& node) override;
  api::Status ProcessPreemption(const api::Pod& pod,
                                const framework::ExtenderVictimsMap& candidates,
                                const framework::NodeInfoLister& nodes,
                                framework::ExtenderVictimsMap* out) override;

 private:
  // POSTs `args` to <urlPrefix>/<verb> and parses the 200 answer into *result (upstream
  // send). Errors: `Post "<url>": <transport error>`, `failed <verb> with extender at URL
  // <url>, code <status>`, and a body that is not JSON.
  api::Status Send(const std::string& verb, const std::string& args, nlohmann::json* result);
  std::string ArgsJson(const api::Pod& pod,
                       const std::vector<const framework::NodeInfo*>& nodes) const;

  config::Extender cfg_;
  std::unique_ptr<Transport> transport_;
};

// The configured extenders in upstream's order (buildExtenders: non-ignorable first, then
// the ignorable ones, each group in file order), with their curl transports. Errors name
// the extender: "extenders[1] (https://x): tlsConfig.serverName is not supported".
api::StatusOr<std::vector<std::unique_ptr<framework::Extender>>> BuildExtenders(
    const std::vector<config::Extender>& cfgs);

// The resources of extenders with ignoredByScheduler: true, in file order (upstream
// buildExtenders' ignoredExtendedResources).
std::vector<std::string> IgnoredExtendedResources(const std::vector<config::Extender>& cfgs);

}  // namespace phalanx::extender
