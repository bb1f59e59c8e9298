// Decoding of KubeSchedulerConfiguration YAML/JSON into the internal types (the part of
// upstream's scheme decoding + conversion that applies here) and upstream's defaulting
// (SetDefaults_KubeSchedulerConfiguration of v1, v1beta3 and v1beta2).
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/escaping.h"
#include "config/default_plugins.h"
#include "config/internal.h"

namespace phalanx::config::internal {
namespace {

std::string Idx(const std::string& base, size_t i) { return base + "[" + std::to_string(i) + "]"; }
std::string Child(const std::string& base, std::string_view name) {
  std::string out = base;
  if (!out.empty()) out += '.';
  out += name;
  return out;
}

bool Absent(const YAML::Node& n) { return !n.IsDefined() || n.IsNull(); }

// Renders a node as the "bad value" of an error.
std::string Render(const YAML::Node& n) {
  if (Absent(n)) return "null";
  if (n.IsScalar()) return GoQuote(n.Scalar());
  if (n.IsSequence()) return "array";
  return "object";
}

// In-tree plugins whose args have a registered type ("<Name>Args") upstream; their args
// must be objects of that kind. Args of any other plugin are passed through untouched.
bool HasTypedArgs(const std::string& plugin) {
  static const std::set<std::string> kTyped = {
      "DefaultPreemption",
      "DynamicResources",
      "InterPodAffinity",
      "NodeAffinity",
      "NodeResourcesBalancedAllocation",
      "NodeResourcesFit",
      "PodTopologySpread",
      "VolumeBinding",
  };
  return kTyped.count(plugin) != 0;
}

class Decoder {
 public:
  Decoder(ApiVersion version, FieldErrors* errors) : version_(version), errors_(errors) {}

  void Fail(const YAML::Node& at, FieldError e) {
    if (at.IsDefined()) {
      const YAML::Mark mark = at.Mark();
      if (mark.line >= 0) {
        e.line = mark.line + 1;
        e.column = mark.column + 1;
      }
    }
    errors_->push_back(std::move(e));
  }

  // A plain (unquoted) scalar: numbers and booleans must not be quoted strings, as in
  // JSON (upstream decodes YAML by converting it to JSON).
  bool PlainScalar(const YAML::Node& n) { return n.IsScalar() && n.Tag() != "!"; }

  bool Int(const YAML::Node& n, const std::string& path, int64_t min, int64_t max, int64_t* out) {
    const std::string& s = n.IsScalar() ? n.Scalar() : std::string();
    bool ok = PlainScalar(n) && !s.empty();
    size_t i = 0;
    if (ok && (s[0] == '-' || s[0] == '+')) i = 1;
    ok = ok && i < s.size();
    for (size_t j = i; ok && j < s.size(); ++j) ok = s[j] >= '0' && s[j] <= '9';
    if (!ok) {
      Fail(n, Invalid(path, Render(n), "must be an integer"));
      return false;
    }
    errno = 0;
    const long long v = std::strtoll(s.c_str(), nullptr, 10);
    if (errno == ERANGE || v < min || v > max) {
      Fail(n, Invalid(path, s,
                      "must be between " + std::to_string(min) + " and " + std::to_string(max)));
      return false;
    }
    *out = v;
    return true;
  }

  void Int32(const YAML::Node& n, const std::string& path, int32_t* out) {
    if (Absent(n)) return;
    int64_t v = 0;
    if (Int(n, path, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(),
            &v)) {
      *out = static_cast<int32_t>(v);
    }
  }

  void OptInt32(const YAML::Node& n, const std::string& path, std::optional<int32_t>* out) {
    if (Absent(n)) return;
    int32_t v = 0;
    const size_t before = errors_->size();
    Int32(n, path, &v);
    if (errors_->size() == before) *out = v;
  }

  void Int64(const YAML::Node& n, const std::string& path, int64_t* out) {
    if (Absent(n)) return;
    int64_t v = 0;
    if (Int(n, path, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(),
            &v)) {
      *out = v;
    }
  }

  void Float(const YAML::Node& n, const std::string& path, float* out) {
    if (Absent(n)) return;
    const std::string& s = n.IsScalar() ? n.Scalar() : std::string();
    char* end = nullptr;
    double v = 0;
    bool ok =
        PlainScalar(n) && !s.empty() && s.find_first_not_of("0123456789+-.eE") == std::string::npos;
    if (ok) {
      errno = 0;
      v = std::strtod(s.c_str(), &end);
      ok = end == s.c_str() + s.size() && errno != ERANGE && std::isfinite(v) &&
           std::fabs(v) <= std::numeric_limits<float>::max();
    }
    if (!ok) {
      Fail(n, Invalid(path, Render(n), "must be a number"));
      return;
    }
    *out = static_cast<float>(v);
  }

  void Bool(const YAML::Node& n, const std::string& path, bool* out) {
    if (Absent(n)) return;
    // YAML 1.1 booleans, as accepted by upstream's YAML-to-JSON conversion.
    static const std::set<std::string> kTrue = {"true", "True", "TRUE", "yes", "Yes", "YES",
                                                "y",    "Y",    "on",   "On",  "ON"};
    static const std::set<std::string> kFalse = {"false", "False", "FALSE", "no",  "No", "NO",
                                                 "n",     "N",     "off",   "Off", "OFF"};
    if (PlainScalar(n) && kTrue.count(n.Scalar()) != 0) {
      *out = true;
    } else if (PlainScalar(n) && kFalse.count(n.Scalar()) != 0) {
      *out = false;
    } else {
      Fail(n, Invalid(path, Render(n), "must be a boolean"));
    }
  }

  void String(const YAML::Node& n, const std::string& path, std::string* out) {
    if (Absent(n)) return;
    if (!n.IsScalar()) {
      Fail(n, Invalid(path, Render(n), "must be a string"));
      return;
    }
    *out = n.Scalar();
  }

  // A Go duration string (metav1.Duration), stored in whole seconds.
  void Seconds(const YAML::Node& n, const std::string& path, int64_t* out) {
    if (Absent(n)) return;
    if (!n.IsScalar()) {
      Fail(n, Invalid(path, Render(n), "must be a duration string such as \"15s\""));
      return;
    }
    const api::StatusOr<int64_t> parsed = ParseGoDuration(n.Scalar());
    if (!parsed.ok()) {
      Fail(n, Invalid(path, GoQuote(n.Scalar()), std::string(parsed.status().message())));
      return;
    }
    const int64_t nanos = *parsed;
    if (nanos % 1000000000 != 0) {
      Fail(n, Invalid(path, GoQuote(n.Scalar()), "must be a whole number of seconds"));
      return;
    }
    *out = nanos / 1000000000;
  }

  // A Go duration string (metav1.Duration) in nanoseconds.
  void Nanos(const YAML::Node& n, const std::string& path, int64_t* out) {
    if (Absent(n)) return;
    if (!n.IsScalar()) {
      Fail(n, Invalid(path, Render(n), "must be a duration string such as \"5s\""));
      return;
    }
    const api::StatusOr<int64_t> parsed = ParseGoDuration(n.Scalar());
    if (!parsed.ok()) {
      Fail(n, Invalid(path, GoQuote(n.Scalar()), std::string(parsed.status().message())));
      return;
    }
    *out = *parsed;
  }

  // A Go []byte field: a base64 string (standard encoding, as encoding/json writes it).
  void Bytes(const YAML::Node& n, const std::string& path, std::string* out) {
    if (Absent(n)) return;
    if (!n.IsScalar() || !absl::Base64Unescape(n.Scalar(), out)) {
      Fail(n, Invalid(path, Render(n), "must be a base64-encoded string"));
    }
  }

  // Strict decoding of an object: a key outside `known` is an error naming it (upstream
  // decodes the configuration strictly: `unknown field "extenders[0].foo"`).
  void KnownFields(const YAML::Node& n, const std::string& path,
                   std::initializer_list<std::string_view> known) {
    for (const auto& kv : n) {
      const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : std::string("?");
      bool ok = false;
      for (std::string_view k : known) ok = ok || k == key;
      if (!ok) Fail(kv.first, FieldError::Message(Child(path, key), "unknown field"));
    }
  }

  void ExtenderTLS(const YAML::Node& n, const std::string& path, ExtenderTLSConfig* o) {
    KnownFields(n, path,
                {"insecure", "serverName", "certFile", "keyFile", "caFile", "certData", "keyData",
                 "caData"});
    Bool(n["insecure"], Child(path, "insecure"), &o->insecure);
    String(n["serverName"], Child(path, "serverName"), &o->server_name);
    String(n["certFile"], Child(path, "certFile"), &o->cert_file);
    String(n["keyFile"], Child(path, "keyFile"), &o->key_file);
    String(n["caFile"], Child(path, "caFile"), &o->ca_file);
    Bytes(n["certData"], Child(path, "certData"), &o->cert_data);
    Bytes(n["keyData"], Child(path, "keyData"), &o->key_data);
    Bytes(n["caData"], Child(path, "caData"), &o->ca_data);
  }

  // extenders[i] (upstream v1 Extender; field names from its JSON tags).
  void ExtenderItem(const YAML::Node& n, const std::string& path, Extender* o) {
    KnownFields(n, path,
                {"urlPrefix", "filterVerb", "preemptVerb", "prioritizeVerb", "bindVerb", "weight",
                 "enableHTTPS", "tlsConfig", "httpTimeout", "nodeCacheCapable", "managedResources",
                 "ignorable"});
    String(n["urlPrefix"], Child(path, "urlPrefix"), &o->url_prefix);
    String(n["filterVerb"], Child(path, "filterVerb"), &o->filter_verb);
    String(n["preemptVerb"], Child(path, "preemptVerb"), &o->preempt_verb);
    String(n["prioritizeVerb"], Child(path, "prioritizeVerb"), &o->prioritize_verb);
    String(n["bindVerb"], Child(path, "bindVerb"), &o->bind_verb);
    Int64(n["weight"], Child(path, "weight"), &o->weight);
    Bool(n["enableHTTPS"], Child(path, "enableHTTPS"), &o->enable_https);
    const YAML::Node tls = n["tlsConfig"];
    if (Map(tls, Child(path, "tlsConfig"))) {
      o->tls_config.emplace();
      ExtenderTLS(tls, Child(path, "tlsConfig"), &*o->tls_config);
    }
    Nanos(n["httpTimeout"], Child(path, "httpTimeout"), &o->http_timeout_ns);
    Bool(n["nodeCacheCapable"], Child(path, "nodeCacheCapable"), &o->node_cache_capable);
    Bool(n["ignorable"], Child(path, "ignorable"), &o->ignorable);
    const YAML::Node mr = n["managedResources"];
    const std::string mr_path = Child(path, "managedResources");
    if (!Seq(mr, mr_path)) return;
    for (size_t j = 0; j < mr.size(); ++j) {
      const std::string rpath = Idx(mr_path, j);
      if (!Map(mr[j], rpath)) {
        if (Absent(mr[j])) Fail(mr, Invalid(rpath, "null", "must be an object"));
        continue;
      }
      KnownFields(mr[j], rpath, {"name", "ignoredByScheduler"});
      ExtenderManagedResource r;
      String(mr[j]["name"], Child(rpath, "name"), &r.name);
      Bool(mr[j]["ignoredByScheduler"], Child(rpath, "ignoredByScheduler"),
           &r.ignored_by_scheduler);
      o->managed_resources.push_back(std::move(r));
    }
  }

  // True when `n` is a map; reports an error when it is present but not a map.
  bool Map(const YAML::Node& n, const std::string& path) {
    if (Absent(n)) return false;
    if (!n.IsMap()) {
      Fail(n, Invalid(path, Render(n), "must be an object"));
      return false;
    }
    return true;
  }

  bool Seq(const YAML::Node& n, const std::string& path) {
    if (Absent(n)) return false;
    if (!n.IsSequence()) {
      Fail(n, Invalid(path, Render(n), "must be a list"));
      return false;
    }
    return true;
  }

  void PluginList(const YAML::Node& n, const std::string& path, bool enabled,
                  std::vector<PluginRef>* out) {
    if (!Seq(n, path)) return;
    for (size_t i = 0; i < n.size(); ++i) {
      const YAML::Node item = n[i];
      const std::string ipath = Idx(path, i);
      if (!Map(item, ipath)) {
        if (Absent(item)) Fail(n, Invalid(ipath, "null", "must be an object"));
        continue;
      }
      KnownFields(item, ipath, {"name", "weight"});
      PluginRef ref;
      String(item["name"], Child(ipath, "name"), &ref.name);
      const YAML::Node weight = item["weight"];
      const size_t before = errors_->size();
      Int32(weight, Child(ipath, "weight"), &ref.weight);
      // Upstream accepts any int32 here; a negative weight would invert the plugin's
      // scores, so it is rejected (0 keeps meaning "the plugin's default weight").
      if (enabled && errors_->size() == before && ref.weight < 0) {
        Fail(weight, Invalid(Child(ipath, "weight"), std::to_string(ref.weight),
                             "must be non-negative (0 means the default weight)"));
      }
      out->push_back(std::move(ref));
    }
  }

  void PluginSetField(const YAML::Node& n, const std::string& path, PluginSet* out) {
    if (!Map(n, path)) return;
    KnownFields(n, path, {"enabled", "disabled"});
    PluginList(n["enabled"], Child(path, "enabled"), true, &out->enabled);
    PluginList(n["disabled"], Child(path, "disabled"), false, &out->disabled);
  }

  void PluginsField(const YAML::Node& n, const std::string& path, Plugins* out) {
    if (!Map(n, path)) return;
    // v1beta2 has no multiPoint field: there it is an unknown field, an error.
    if (version_ == ApiVersion::kV1beta2) {
      KnownFields(n, path,
                  {"preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore",
                   "score", "reserve", "permit", "preBind", "bind", "postBind"});
    } else {
      KnownFields(n, path,
                  {"multiPoint", "preEnqueue", "queueSort", "preFilter", "filter", "postFilter",
                   "preScore", "score", "reserve", "permit", "preBind", "bind", "postBind"});
    }
    if (version_ != ApiVersion::kV1beta2) {
      PluginSetField(n["multiPoint"], Child(path, "multiPoint"), &out->multi_point);
    }
    PluginSetField(n["preEnqueue"], Child(path, "preEnqueue"), &out->pre_enqueue);
    PluginSetField(n["queueSort"], Child(path, "queueSort"), &out->queue_sort);
    PluginSetField(n["preFilter"], Child(path, "preFilter"), &out->pre_filter);
    PluginSetField(n["filter"], Child(path, "filter"), &out->filter);
    PluginSetField(n["postFilter"], Child(path, "postFilter"), &out->post_filter);
    PluginSetField(n["preScore"], Child(path, "preScore"), &out->pre_score);
    PluginSetField(n["score"], Child(path, "score"), &out->score);
    PluginSetField(n["reserve"], Child(path, "reserve"), &out->reserve);
    PluginSetField(n["permit"], Child(path, "permit"), &out->permit);
    PluginSetField(n["preBind"], Child(path, "preBind"), &out->pre_bind);
    PluginSetField(n["bind"], Child(path, "bind"), &out->bind);
    PluginSetField(n["postBind"], Child(path, "postBind"), &out->post_bind);
  }

  // Upstream PluginConfig.decodeNestedObjects: args of in-tree plugins with a typed args
  // struct must be an object of kind "<Name>Args" in group kubescheduler.config.k8s.io
  // (apiVersion and kind may be omitted). Others are kept as given.
  void PluginConfigItem(const YAML::Node& item, const std::string& path, PluginConfig* out) {
    KnownFields(item, path, {"name", "args"});
    String(item["name"], Child(path, "name"), &out->name);
    const YAML::Node args = item["args"];
    const std::string args_path = Child(path, "args");
    if (Absent(args)) {
      out->args = std::make_shared<const YAML::Node>(YAML::Node(YAML::NodeType::Map));
      return;
    }
    if (HasTypedArgs(out->name)) {
      if (!args.IsMap()) {
        Fail(args, Invalid(args_path, Render(args),
                           "args for plugin " + out->name + " must be an object"));
        return;
      }
      const YAML::Node kind = args["kind"];
      const std::string want_kind = out->name + "Args";
      if (!Absent(kind) && (!kind.IsScalar() || kind.Scalar() != want_kind)) {
        Fail(kind, Invalid(Child(args_path, "kind"), Render(kind),
                           "args for plugin " + out->name + " were not of type " + want_kind + "." +
                               std::string(kGroup)));
      }
      const YAML::Node api_version = args["apiVersion"];
      if (!Absent(api_version)) {
        const std::string prefix = std::string(kGroup) + "/";
        if (!api_version.IsScalar() || api_version.Scalar().rfind(prefix, 0) != 0) {
          Fail(api_version, Invalid(Child(args_path, "apiVersion"), Render(api_version),
                                    "args for plugin " + out->name + " were not of group " +
                                        std::string(kGroup)));
        }
      }
    }
    out->args = std::make_shared<const YAML::Node>(YAML::Clone(args));
  }

  void ProfileItem(const YAML::Node& n, const std::string& path, Profile* out, bool* name_set) {
    out->scheduler_name.clear();
    *name_set = false;
    const YAML::Node name = n["schedulerName"];
    if (!Absent(name)) {
      *name_set = true;
      String(name, Child(path, "schedulerName"), &out->scheduler_name);
    }
    // Per-profile percentageOfNodesToScore exists in v1 and v1beta3 only.
    if (version_ == ApiVersion::kV1beta2) {
      KnownFields(n, path, {"schedulerName", "plugins", "pluginConfig"});
    } else {
      KnownFields(n, path,
                  {"schedulerName", "percentageOfNodesToScore", "plugins", "pluginConfig"});
      OptInt32(n["percentageOfNodesToScore"], Child(path, "percentageOfNodesToScore"),
               &out->percentage_of_nodes_to_score);
    }
    PluginsField(n["plugins"], Child(path, "plugins"), &out->plugins);
    const YAML::Node pcs = n["pluginConfig"];
    const std::string pcs_path = Child(path, "pluginConfig");
    if (Seq(pcs, pcs_path)) {
      for (size_t j = 0; j < pcs.size(); ++j) {
        const std::string ppath = Idx(pcs_path, j);
        const YAML::Node item = pcs[j];
        if (!Map(item, ppath)) {
          if (Absent(item)) Fail(pcs, Invalid(ppath, "null", "must be an object"));
          continue;
        }
        PluginConfig pc;
        PluginConfigItem(item, ppath, &pc);
        out->plugin_config.push_back(std::move(pc));
      }
    }
  }

  // Upstream decodes the file strictly (a field outside the version's
  // KubeSchedulerConfiguration is `strict decoding error: unknown field "..."`,
  // k8s.io/kube-scheduler/config/v1 types.go; DebuggingConfiguration is inlined).
  // healthzBindAddress / metricsBindAddress left the API in v1beta2 (kubernetes#96345).
  void Root(const YAML::Node& root, Decoded* d) {
    KubeSchedulerConfiguration& c = d->cfg;
    KnownFields(root, "",
                {"apiVersion", "kind", "parallelism", "leaderElection", "clientConnection",
                 "enableProfiling", "enableContentionProfiling", "percentageOfNodesToScore",
                 "podInitialBackoffSeconds", "podMaxBackoffSeconds", "profiles", "extenders",
                 "delayCacheUntilActive"});
    Int32(root["parallelism"], "parallelism", &c.parallelism);
    Int32(root["percentageOfNodesToScore"], "percentageOfNodesToScore",
          &c.percentage_of_nodes_to_score);
    Int64(root["podInitialBackoffSeconds"], "podInitialBackoffSeconds",
          &c.pod_initial_backoff_seconds);
    Int64(root["podMaxBackoffSeconds"], "podMaxBackoffSeconds", &c.pod_max_backoff_seconds);

    const YAML::Node cc = root["clientConnection"];
    if (Map(cc, "clientConnection")) {
      KnownFields(cc, "clientConnection",
                  {"kubeconfig", "acceptContentTypes", "contentType", "qps", "burst"});
      ClientConnection& o = c.client_connection;
      String(cc["kubeconfig"], "clientConnection.kubeconfig", &o.kubeconfig);
      String(cc["acceptContentTypes"], "clientConnection.acceptContentTypes",
             &o.accept_content_types);
      String(cc["contentType"], "clientConnection.contentType", &o.content_type);
      Float(cc["qps"], "clientConnection.qps", &o.qps);
      Int32(cc["burst"], "clientConnection.burst", &o.burst);
    }

    const YAML::Node le = root["leaderElection"];
    if (Map(le, "leaderElection")) {
      KnownFields(le, "leaderElection",
                  {"leaderElect", "leaseDuration", "renewDeadline", "retryPeriod", "resourceLock",
                   "resourceName", "resourceNamespace"});
      LeaderElection& o = c.leader_election;
      Bool(le["leaderElect"], "leaderElection.leaderElect", &o.leader_elect);
      Seconds(le["leaseDuration"], "leaderElection.leaseDuration", &o.lease_duration_seconds);
      Seconds(le["renewDeadline"], "leaderElection.renewDeadline", &o.renew_deadline_seconds);
      Seconds(le["retryPeriod"], "leaderElection.retryPeriod", &o.retry_period_seconds);
      String(le["resourceLock"], "leaderElection.resourceLock", &o.resource_lock);
      String(le["resourceName"], "leaderElection.resourceName", &o.resource_name);
      String(le["resourceNamespace"], "leaderElection.resourceNamespace", &o.resource_namespace);
    }

    const YAML::Node profiles = root["profiles"];
    if (Seq(profiles, "profiles")) {
      for (size_t i = 0; i < profiles.size(); ++i) {
        const std::string path = Idx("profiles", i);
        const YAML::Node item = profiles[i];
        Profile p;
        bool name_set = false;
        if (Absent(item)) {
          // A null list item decodes to a zero profile.
          p.scheduler_name.clear();
        } else if (!Map(item, path)) {
          continue;
        } else {
          ProfileItem(item, path, &p, &name_set);
        }
        c.profiles.push_back(std::move(p));
        d->scheduler_name_set.push_back(name_set);
      }
    }

    const YAML::Node extenders = root["extenders"];
    if (Seq(extenders, "extenders")) {
      for (size_t i = 0; i < extenders.size(); ++i) {
        const std::string path = Idx("extenders", i);
        if (!Map(extenders[i], path)) {
          if (Absent(extenders[i])) Fail(extenders, Invalid(path, "null", "must be an object"));
          continue;
        }
        Extender e;
        ExtenderItem(extenders[i], path, &e);
        c.extenders.push_back(std::move(e));
      }
    }
  }

 private:
  ApiVersion version_;
  FieldErrors* errors_;
};

}  // namespace

bool Decode(std::string_view text, Decoded* out, FieldErrors* errors) {
  try {
    YAML::Node root;
    try {
      root = YAML::Load(std::string(text));
    } catch (const YAML::Exception& e) {
      // yaml-cpp stops at 500 levels of nesting with the text "bad file": say what it means.
      const auto* deep = dynamic_cast<const YAML::DeepRecursion*>(&e);
      FieldError fe = FieldError::Message(
          "", deep ? "nesting deeper than " + std::to_string(deep->depth()) + " levels" : e.msg);
      if (e.mark.line >= 0) {
        fe.line = e.mark.line + 1;
        fe.column = e.mark.column + 1;
      }
      errors->push_back(std::move(fe));
      return false;
    }
    *out = Decoded{};
    const YAML::Node& croot = root;  // const access never inserts keys
    Decoder dec(ApiVersion::kV1, errors);
    if (!Absent(root) && !root.IsMap()) {
      dec.Fail(root, Invalid("", Render(root), "a KubeSchedulerConfiguration must be an object"));
      return false;
    }
    const YAML::Node api_version = Absent(croot) ? YAML::Node() : croot["apiVersion"];
    const YAML::Node kind = Absent(croot) ? YAML::Node() : croot["kind"];
    const size_t before = errors->size();
    if (Absent(api_version) || (api_version.IsScalar() && api_version.Scalar().empty())) {
      errors->push_back(Required("apiVersion"));
    } else if (!api_version.IsScalar()) {
      dec.Fail(api_version, Invalid("apiVersion", Render(api_version), "must be a string"));
    } else if (api_version.Scalar() == kV1) {
      out->version = ApiVersion::kV1;
    } else if (api_version.Scalar() == kV1beta3) {
      out->version = ApiVersion::kV1beta3;
    } else if (api_version.Scalar() == kV1beta2) {
      out->version = ApiVersion::kV1beta2;
    } else {
      dec.Fail(api_version, NotSupported("apiVersion", GoQuote(api_version.Scalar()),
                                         {kV1, kV1beta3, kV1beta2}));
    }
    if (Absent(kind) || (kind.IsScalar() && kind.Scalar().empty())) {
      errors->push_back(Required("kind"));
    } else if (!kind.IsScalar() || kind.Scalar() != kKind) {
      dec.Fail(kind, NotSupported("kind", Render(kind), {kKind}));
    }
    if (errors->size() != before) return false;

    switch (out->version) {
      case ApiVersion::kV1:
        out->cfg.api_version = std::string(kV1);
        break;
      case ApiVersion::kV1beta3:
        out->cfg.api_version = std::string(kV1beta3);
        break;
      case ApiVersion::kV1beta2:
        out->cfg.api_version = std::string(kV1beta2);
        break;
    }
    Decoder fields(out->version, errors);
    fields.Root(croot, out);
    return errors->size() == before;
  } catch (const std::exception& e) {
    errors->push_back(
        FieldError::Message("", std::string("internal error while decoding: ") + e.what()));
    return false;
  } catch (...) {
    errors->push_back(FieldError::Message("", "internal error while decoding"));
    return false;
  }
}

void SetDefaults(Decoded* d) {
  KubeSchedulerConfiguration& c = d->cfg;
  if (c.profiles.empty()) {
    Profile p;
    p.scheduler_name.clear();
    c.profiles.push_back(std::move(p));
    d->scheduler_name_set.assign(1, false);
  }
  d->scheduler_name_set.resize(c.profiles.size(), false);
  // Only a lone profile gets the default name; validation requires names otherwise.
  if (c.profiles.size() == 1 && !d->scheduler_name_set[0]) {
    c.profiles[0].scheduler_name = "default-scheduler";
  }
  const Plugins defaults = DefaultPlugins(d->version);
  // v1beta2's mergePluginSet returned the enabled list only.
  const bool keep_disabled = d->version != ApiVersion::kV1beta2;
  for (Profile& p : c.profiles) {
    p.plugins = MergePlugins(defaults, p.plugins, keep_disabled);
    for (PluginConfig& pc : p.plugin_config) {
      if (!pc.args) pc.args = std::make_shared<const YAML::Node>(YAML::Node(YAML::NodeType::Map));
    }
  }

  ClientConnection& cc = c.client_connection;
  if (cc.content_type.empty()) cc.content_type = "application/vnd.kubernetes.protobuf";
  if (cc.qps == 0.0f) cc.qps = 50;
  if (cc.burst == 0) cc.burst = 100;

  LeaderElection& le = c.leader_election;
  if (le.resource_lock.empty()) le.resource_lock = "leases";
  if (le.resource_namespace.empty()) le.resource_namespace = "kube-system";
  if (le.resource_name.empty()) le.resource_name = "kube-scheduler";
  // component-base RecommendedDefaultLeaderElectionConfiguration.
  if (le.lease_duration_seconds == 0) le.lease_duration_seconds = 15;
  if (le.renew_deadline_seconds == 0) le.renew_deadline_seconds = 10;
  if (le.retry_period_seconds == 0) le.retry_period_seconds = 2;
}

}  // namespace phalanx::config::internal
