// HTTPExtender and its libcurl transport (http_extender.h). Messages follow upstream
// pkg/scheduler/extender.go and Go net/http's error wording.
#include "extender/http_extender.h"

#include <curl/curl.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <set>
#include <utility>

#include "extender/wire.h"
#include "framework/handle.h"

namespace phalanx::extender {
namespace {

using nlohmann::json;

struct CurlGlobal {
  CurlGlobal() { curl_global_init(CURL_GLOBAL_DEFAULT); }
};

size_t Collect(char* data, size_t size, size_t n, void* user) {
  static_cast<std::string*>(user)->append(data, size * n);
  return size * n;
}

// "host:port" of a URL, with the scheme's default port (Go prints the dialled address).
std::string HostPort(const std::string& url) {
  size_t start = url.find("://");
  const bool https = url.rfind("https", 0) == 0;
  start = start == std::string::npos ? 0 : start + 3;
  size_t end = url.find_first_of("/?#", start);
  std::string hp = url.substr(start, end == std::string::npos ? std::string::npos : end - start);
  if (hp.find(':') == std::string::npos || (hp.front() == '[' && hp.back() == ']')) {
    hp += https ? ":443" : ":80";
  }
  return hp;
}

std::string Lower(std::string s) {
  if (!s.empty()) s[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(s[0])));
  return s;
}

class CurlTransport final : public Transport {
 public:
  explicit CurlTransport(const config::Extender& cfg) : cfg_(cfg) {
    static CurlGlobal global;
    (void)global;
  }
  ~CurlTransport() override {
    absl::MutexLock l(&mu_);
    for (CURL* h : idle_) curl_easy_cleanup(h);
  }

  HttpResponse Post(const std::string& url, const std::string& body) override {
    HttpResponse r;
    CURL* h = Acquire();
    if (h == nullptr) {
      r.error = "curl_easy_init failed";
      return r;
    }
    char errbuf[CURL_ERROR_SIZE] = {0};
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(h, CURLOPT_URL, url.c_str());
    curl_easy_setopt(h, CURLOPT_POST, 1L);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, Collect);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &r.body);
    curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
    headers = curl_slist_append(headers, "Expect:");
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    const CURLcode rc = curl_easy_perform(h);
    if (rc == CURLE_OK) {
      curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r.status);
    } else {
      r.error = Describe(h, rc, url, errbuf);
      r.body.clear();
    }
    curl_slist_free_all(headers);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, nullptr);
    Release(h);
    return r;
  }

 private:
  // Go's wording for the common failures; curl's own message otherwise.
  static std::string Describe(CURL* h, CURLcode rc, const std::string& url, const char* errbuf) {
    long os_errno = 0;
    curl_easy_getinfo(h, CURLINFO_OS_ERRNO, &os_errno);
    char* ip = nullptr;
    long port = 0;
    curl_easy_getinfo(h, CURLINFO_PRIMARY_IP, &ip);
    curl_easy_getinfo(h, CURLINFO_PRIMARY_PORT, &port);
    const std::string addr = ip != nullptr && *ip != '\0' && port != 0
                                 ? std::string(ip) + ":" + std::to_string(port)
                                 : HostPort(url);
    switch (rc) {
      case CURLE_COULDNT_CONNECT:
        return "dial tcp " + addr + ": connect: " +
               Lower(std::strerror(os_errno != 0 ? static_cast<int>(os_errno) : ECONNREFUSED));
      case CURLE_OPERATION_TIMEDOUT:
        return "context deadline exceeded (Client.Timeout exceeded while awaiting headers)";
      case CURLE_COULDNT_RESOLVE_HOST: {
        std::string host = HostPort(url);
        host = host.substr(0, host.rfind(':'));
        return "dial tcp: lookup " + host + ": no such host";
      }
      default:
        return *errbuf != '\0' ? std::string(errbuf) : std::string(curl_easy_strerror(rc));
    }
  }

  CURL* Acquire() {
    {
      absl::MutexLock l(&mu_);
      if (!idle_.empty()) {
        CURL* h = idle_.back();
        idle_.pop_back();
        return h;
      }
    }
    CURL* h = curl_easy_init();
    if (h != nullptr) Configure(h);
    return h;
  }
  void Release(CURL* h) {
    absl::MutexLock l(&mu_);
    idle_.push_back(h);
  }

  void Configure(CURL* h) {
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    const int64_t timeout_ns = cfg_.http_timeout_ns > 0 ? cfg_.http_timeout_ns : kDefaultTimeoutNs;
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>((timeout_ns + 999'999) / 1'000'000));
    curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
    const config::ExtenderTLSConfig tls = cfg_.tls_config.value_or(config::ExtenderTLSConfig{});
    const bool has_ca = !tls.ca_file.empty() || !tls.ca_data.empty();
    // upstream makeTransport: enableHTTPS without a CA means Insecure.
    const bool insecure = tls.insecure || (cfg_.enable_https && !has_ca);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, insecure ? 0L : 1L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, insecure ? 0L : 2L);
    // The blobs are copied by libcurl (CURL_BLOB_COPY).
    if (!tls.ca_data.empty()) {
      curl_blob blob{const_cast<char*>(tls.ca_data.data()), tls.ca_data.size(), CURL_BLOB_COPY};
      curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &blob);
    } else if (!tls.ca_file.empty()) {
      curl_easy_setopt(h, CURLOPT_CAINFO, tls.ca_file.c_str());
    }
    if (!tls.cert_data.empty()) {
      curl_blob blob{const_cast<char*>(tls.cert_data.data()), tls.cert_data.size(), CURL_BLOB_COPY};
      curl_easy_setopt(h, CURLOPT_SSLCERT_BLOB, &blob);
      curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
    } else if (!tls.cert_file.empty()) {
      curl_easy_setopt(h, CURLOPT_SSLCERT, tls.cert_file.c_str());
    }
    if (!tls.key_data.empty()) {
      curl_blob blob{const_cast<char*>(tls.key_data.data()), tls.key_data.size(), CURL_BLOB_COPY};
      curl_easy_setopt(h, CURLOPT_SSLKEY_BLOB, &blob);
      curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
    } else if (!tls.key_file.empty()) {
      curl_easy_setopt(h, CURLOPT_SSLKEY, tls.key_file.c_str());
    }
  }

  const config::Extender cfg_;
  absl::Mutex mu_;
  std::vector<CURL*> idle_ ABSL_GUARDED_BY(mu_);
};

bool HasManaged(const std::set<std::string>& managed, const std::vector<api::Container>& cs) {
  for (const auto& c : cs) {
    for (const auto& [name, q] : c.resources.requests) {
      if (managed.count(name)) return true;
    }
    for (const auto& [name, q] : c.resources.limits) {
      if (managed.count(name)) return true;
    }
  }
  return false;
}

// A map of node name -> string (FailedNodesMap); absent or null gives an empty map.
api::Status ReadFailedMap(const json* v, const char* field,
                          std::map<std::string, std::string>* out) {
  if (v == nullptr || v->is_null()) return api::Status();
  if (!v->is_object()) return absl::InvalidArgumentError(std::string(field) + " must be an object");
  for (auto it = v->begin(); it != v->end(); ++it) {
    if (!it.value().is_string()) {
      return absl::InvalidArgumentError(std::string(field) + "[" + it.key() + "] must be a string");
    }
    (*out)[it.key()] = it.value().get<std::string>();
  }
  return api::Status();
}

}  // namespace

api::StatusOr<std::unique_ptr<Transport>> NewCurlTransport(const config::Extender& cfg) {
  if (cfg.tls_config && !cfg.tls_config->server_name.empty()) {
    return absl::InvalidArgumentError(
        "tlsConfig.serverName is not supported (libcurl has no TLS server name override); "
        "use a urlPrefix whose host matches the certificate");
  }
  return std::unique_ptr<Transport>(std::make_unique<CurlTransport>(cfg));
}

HTTPExtender::HTTPExtender(const config::Extender& cfg, std::unique_ptr<Transport> transport)
    : cfg_(cfg), transport_(std::move(transport)) {}

bool HTTPExtender::IsInterested(const api::Pod& pod) const {
  if (cfg_.managed_resources.empty()) return true;
  std::set<std::string> managed;
  for (const auto& r : cfg_.managed_resources) managed.insert(r.name);
  return HasManaged(managed, pod.spec.containers) || HasManaged(managed, pod.spec.init_containers);
}

api::Status HTTPExtender::Send(const std::string& verb, const std::string& args, json* result) {
  std::string url = cfg_.url_prefix;
  while (!url.empty() && url.back() == '/') url.pop_back();
  url += "/" + verb;
  HttpResponse r = transport_->Post(url, args);
  if (!r.error.empty()) return absl::UnavailableError("Post \"" + url + "\": " + r.error);
  if (r.status != 200) {
    return absl::UnavailableError("failed " + verb + " with extender at URL " + url + ", code " +
                                  std::to_string(r.status));
  }
  *result = json::parse(r.body, nullptr, false);
  if (result->is_discarded()) {
    return absl::InvalidArgumentError("extender " + cfg_.url_prefix + ": " + verb +
                                      ": response is not JSON");
  }
  return api::Status();
}

std::string HTTPExtender::ArgsJson(const api::Pod& pod,
                                   const std::vector<const framework::NodeInfo*>& nodes) const {
  json args = {{"Pod", PodJson(pod)}, {"Nodes", nullptr}, {"NodeNames", nullptr}};
  if (cfg_.node_cache_capable) {
    json names = json::array();
    for (const auto* ni : nodes) names.push_back(ni->name());
    args["NodeNames"] = std::move(names);
  } else {
    json items = json::array();
    for (const auto* ni : nodes) items.push_back(NodeJson(*ni->node()));
    args["Nodes"] = {{"metadata", json::object()}, {"items", std::move(items)}};
  }
  return args.dump();
}

api::Status HTTPExtender::Filter(const api::Pod& pod,
                                 const std::vector<const framework::NodeInfo*>& nodes,
                                 framework::ExtenderFilterResult* out) {
  *out = framework::ExtenderFilterResult{};
  if (cfg_.filter_verb.empty()) {
    out->nodes = nodes;
    return api::Status();
  }
  json result;
  if (api::Status s = Send(cfg_.filter_verb, ArgsJson(pod, nodes), &result); !s.ok()) return s;
  if (const json* e = Field(result, "Error");
      e && e->is_string() && !e->get<std::string>().empty()) {
    return absl::UnknownError(e->get<std::string>());
  }
  std::map<std::string, const framework::NodeInfo*> by_name;
  for (const auto* ni : nodes) by_name[ni->name()] = ni;
  auto take = [&](const std::string& name) -> api::Status {
    auto it = by_name.find(name);
    if (it == by_name.end()) {
      return absl::InvalidArgumentError("extender \"" + cfg_.url_prefix +
                                        "\" claims a filtered node \"" + name +
                                        "\" which is not found in the input node list");
    }
    out->nodes.push_back(it->second);
    return api::Status();
  };
  const json* names = Field(result, "NodeNames");
  const json* list = Field(result, "Nodes");
  if (cfg_.node_cache_capable && names && names->is_array()) {
    for (const json& n : *names) {
      if (!n.is_string()) return absl::InvalidArgumentError("NodeNames must be strings");
      if (api::Status s = take(n.get<std::string>()); !s.ok()) return s;
    }
  } else if (list && list->is_object()) {
    const json* items = Field(*list, "items");
    if (items && items->is_array()) {
      for (const json& n : *items) {
        const json* meta = Field(n, "metadata");
        const json* name = meta ? Field(*meta, "name") : nullptr;
        if (!name || !name->is_string()) {
          return absl::InvalidArgumentError("extender \"" + cfg_.url_prefix +
                                            "\": Nodes.items[] without metadata.name");
        }
        if (api::Status s = take(name->get<std::string>()); !s.ok()) return s;
      }
    }
  }
  if (api::Status s = ReadFailedMap(Field(result, "FailedNodes"), "FailedNodes", &out->failed);
      !s.ok()) {
    return s;
  }
  return ReadFailedMap(Field(result, "FailedAndUnresolvableNodes"), "FailedAndUnresolvableNodes",
                       &out->unresolvable);
}

api::Status HTTPExtender::Prioritize(const api::Pod& pod,
                                     const std::vector<const framework::NodeInfo*>& nodes,
                                     std::map<std::string, int64_t>* scores, int64_t* weight) {
  scores->clear();
  *weight = 0;
  if (cfg_.prioritize_verb.empty()) {
    for (const auto* ni : nodes) (*scores)[ni->name()] = 0;
    return api::Status();
  }
  json result;
  if (api::Status s = Send(cfg_.prioritize_verb, ArgsJson(pod, nodes), &result); !s.ok()) return s;
  if (!result.is_array() && !result.is_null()) {
    return absl::InvalidArgumentError("extender " + cfg_.url_prefix +
                                      ": prioritize: HostPriorityList must be a list");
  }
  if (result.is_array()) {
    for (const json& hp : result) {
      const json* host = Field(hp, "Host");
      const json* score = Field(hp, "Score");
      if (!host || !host->is_string() || (score && !score->is_number_integer())) {
        return absl::InvalidArgumentError("extender " + cfg_.url_prefix +
                                          ": prioritize: bad HostPriority " + hp.dump());
      }
      (*scores)[host->get<std::string>()] += score ? score->get<int64_t>() : 0;
    }
  }
  *weight = cfg_.weight;
  return api::Status();
}

api::Status HTTPExtender::Bind(const api::Pod& pod, const std::string& node) {
  if (cfg_.bind_verb.empty()) return absl::InternalError("unexpected empty bindVerb in extender");
  json args = {{"PodName", pod.metadata.name},
               {"PodNamespace", pod.metadata.namespace_},
               {"PodUID", pod.metadata.uid},
               {"Node", node}};
  json result;
  if (api::Status s = Send(cfg_.bind_verb, args.dump(), &result); !s.ok()) return s;
  if (const json* e = Field(result, "Error");
      e && e->is_string() && !e->get<std::string>().empty()) {
    return absl::UnknownError(e->get<std::string>());
  }
  return api::Status();
}

api::Status HTTPExtender::ProcessPreemption(const api::Pod& pod,
                                            const framework::ExtenderVictimsMap& candidates,
                                            const framework::NodeInfoLister& nodes,
                                            framework::ExtenderVictimsMap* out) {
  out->clear();
  if (cfg_.preempt_verb.empty()) {
    return absl::InternalError("preempt verb is not defined for extender " + cfg_.url_prefix +
                               " but run into ProcessPreemption");
  }
  json victims = json::object();
  for (const auto& [node, v] : candidates) {
    json pods = json::array();
    for (const auto& p : v.pods) {
      if (cfg_.node_cache_capable) {
        pods.push_back({{"UID", p->pod->metadata.uid}});
      } else {
        pods.push_back(PodJson(*p->pod));
      }
    }
    victims[node] = {{"Pods", std::move(pods)}, {"NumPDBViolations", v.num_pdb_violations}};
  }
  json args = {
      {"Pod", PodJson(pod)}, {"NodeNameToVictims", nullptr}, {"NodeNameToMetaVictims", nullptr}};
  args[cfg_.node_cache_capable ? "NodeNameToMetaVictims" : "NodeNameToVictims"] =
      std::move(victims);
  json result;
  if (api::Status s = Send(cfg_.preempt_verb, args.dump(), &result); !s.ok()) return s;
  const json* meta = Field(result, "NodeNameToMetaVictims");
  if (meta == nullptr || meta->is_null()) return api::Status();
  if (!meta->is_object()) {
    return absl::InvalidArgumentError("extender " + cfg_.url_prefix +
                                      ": NodeNameToMetaVictims must be an object");
  }
  // upstream convertToVictims: victims by UID among the node's pods.
  for (auto it = meta->begin(); it != meta->end(); ++it) {
    const framework::NodeInfo* ni = nodes.Get(it.key());
    if (ni == nullptr) {
      return absl::NotFoundError("nodeinfo not found for node name \"" + it.key() + "\"");
    }
    framework::ExtenderVictims v;
    if (const json* n = Field(it.value(), "NumPDBViolations"); n && n->is_number_integer()) {
      v.num_pdb_violations = n->get<int64_t>();
    }
    const json* pods = Field(it.value(), "Pods");
    for (const json& mp : pods && pods->is_array() ? *pods : json::array()) {
      const json* uid = Field(mp, "UID");
      const std::string want = uid && uid->is_string() ? uid->get<std::string>() : "";
      framework::PodInfoPtr found;
      for (const auto& p : ni->pods()) {
        if (p->pod->metadata.uid == want) found = p;
      }
      if (!found) {
        return absl::NotFoundError(
            "extender: " + cfg_.url_prefix + " claims to preempt pod (UID: &{" + want +
            "}) on node: " + it.key() + ", but the pod is not found on that node");
      }
      v.pods.push_back(std::move(found));
    }
    (*out)[it.key()] = std::move(v);
  }
  return api::Status();
}

api::StatusOr<std::vector<std::unique_ptr<framework::Extender>>> BuildExtenders(
    const std::vector<config::Extender>& cfgs) {
  std::vector<std::unique_ptr<framework::Extender>> out, ignorable;
  for (size_t i = 0; i < cfgs.size(); ++i) {
    auto t = NewCurlTransport(cfgs[i]);
    if (!t.ok()) {
      return absl::InvalidArgumentError("extenders[" + std::to_string(i) + "] (" +
                                        cfgs[i].url_prefix +
                                        "): " + std::string(t.status().message()));
    }
    auto e = std::make_unique<HTTPExtender>(cfgs[i], std::move(t).value());
    (cfgs[i].ignorable ? ignorable : out).push_back(std::move(e));
  }
  for (auto& e : ignorable) out.push_back(std::move(e));
  return out;
}

std::vector<std::string> IgnoredExtendedResources(const std::vector<config::Extender>& cfgs) {
  std::vector<std::string> out;
  for (const auto& c : cfgs) {
    for (const auto& r : c.managed_resources) {
      if (r.ignored_by_scheduler) out.push_back(r.name);
    }
  }
  return out;
}

}  // namespace phalanx::extender
