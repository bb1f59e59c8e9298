#include "client/rest_config.h"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

namespace phalanx::client {

namespace {

namespace fs = std::filesystem;

bool ReadWholeFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return !in.bad();
}

std::string Trim(std::string s) {
  while (!s.empty() &&
         (s.back() == '\n' || s.back() == '\r' || s.back() == ' ' || s.back() == '\t'))
    s.pop_back();
  size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n')) ++i;
  return s.substr(i);
}

std::string Scalar(const YAML::Node& map, const char* key) {
  if (!map || !map.IsMap()) return "";
  YAML::Node n = map[key];
  if (!n || !n.IsScalar()) return "";
  return n.Scalar();
}

// Finds the entry named `name` in a kubeconfig list (clusters, users, contexts) and
// returns its `field` map (cluster, user, context).
bool FindNamed(const YAML::Node& root, const char* list, const char* field, const std::string& name,
               YAML::Node* out, std::string* names) {
  YAML::Node seq = root[list];
  if (!seq || !seq.IsSequence()) return false;
  for (const auto& e : seq) {
    const std::string n = Scalar(e, "name");
    if (!names->empty()) *names += ", ";
    *names += n;
    if (n == name) {
      // An entry without the field (or not a map) leaves *out undefined; assigning the
      // invalid node yaml-cpp returns for a missing key would throw (found by
      // fuzz/fuzz_kubeconfig.cc).
      if (e.IsMap() && e[field]) *out = e[field];
      return true;
    }
  }
  return false;
}

std::string Resolve(const std::string& base_dir, const std::string& p) {
  if (p.empty() || fs::path(p).is_absolute()) return p;
  if (p.rfind("~/", 0) == 0) {
    const char* home = std::getenv("HOME");
    if (home) return std::string(home) + p.substr(1);
  }
  return (fs::path(base_dir) / p).lexically_normal().string();
}

}  // namespace

bool Base64Decode(const std::string& in, std::string* out) {
  static const auto kTable = [] {
    std::vector<int> t(256, -1);
    const char* a = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (int i = 0; i < 64; ++i) t[static_cast<unsigned char>(a[i])] = i;
    return t;
  }();
  out->clear();
  uint32_t acc = 0;
  int bits = 0;
  bool padding = false;
  for (unsigned char c : in) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    if (c == '=') {
      padding = true;
      continue;
    }
    if (padding) return false;  // data after padding
    int v = kTable[c];
    if (v < 0) return false;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out->push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  return bits < 6;  // a lone 6-bit group cannot end valid base64
}

namespace {

api::Status Invalid(const std::string& msg) { return absl::InvalidArgumentError(msg); }

// The kubeconfig's YAML root (a map).
api::StatusOr<YAML::Node> ReadKubeconfig(const std::string& path) {
  std::string text;
  if (!ReadWholeFile(path, &text)) {
    const int e = errno;
    return api::Status(absl::ErrnoToStatusCode(e),
                       "kubeconfig " + path + ": cannot read: " + std::strerror(e));
  }
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    // yaml-cpp stops at 500 levels of nesting with the text "bad file": say what it means.
    const auto* deep = dynamic_cast<const YAML::DeepRecursion*>(&e);
    return Invalid(
        "kubeconfig " + path + ": malformed YAML at line " + std::to_string(e.mark.line + 1) +
        ": " + (deep ? "nesting deeper than " + std::to_string(deep->depth()) + " levels" : e.msg));
  }
  if (!root.IsMap()) {
    return Invalid("kubeconfig " + path +
                   ": expected a kubeconfig object (apiVersion: v1, kind: Config)");
  }
  return root;
}

// The context picked from a kubeconfig, with its cluster and user entries.
struct Selected {
  std::string context, cluster_name, user_name;
  YAML::Node cluster, user;
};

// Finds `context` (empty: current-context), its cluster and user. NotFound names the
// entries that exist.
api::StatusOr<Selected> SelectContext(const YAML::Node& root, const std::string& path,
                                      const std::string& context) {
  Selected s;
  s.context = context.empty() ? Scalar(root, "current-context") : context;
  if (s.context.empty()) {
    return Invalid("kubeconfig " + path + ": no current-context set and no --context given");
  }
  YAML::Node ctx;
  std::string names;
  if (!FindNamed(root, "contexts", "context", s.context, &ctx, &names)) {
    return absl::NotFoundError("kubeconfig " + path + ": context \"" + s.context +
                               "\" not found (contexts: " + (names.empty() ? "none" : names) + ")");
  }
  s.cluster_name = Scalar(ctx, "cluster");
  s.user_name = Scalar(ctx, "user");
  names.clear();
  if (!FindNamed(root, "clusters", "cluster", s.cluster_name, &s.cluster, &names)) {
    return absl::NotFoundError("kubeconfig " + path + ": context \"" + s.context +
                               "\": cluster \"" + s.cluster_name +
                               "\" not found (clusters: " + (names.empty() ? "none" : names) + ")");
  }
  names.clear();
  if (!s.user_name.empty() && !FindNamed(root, "users", "user", s.user_name, &s.user, &names)) {
    return absl::NotFoundError("kubeconfig " + path + ": context \"" + s.context + "\": user \"" +
                               s.user_name +
                               "\" not found (users: " + (names.empty() ? "none" : names) + ")");
  }
  return s;
}

// The cluster entry: server, CA, TLS options. `where` prefixes messages.
api::Status ApplyCluster(const YAML::Node& cluster, const std::string& where,
                         const std::string& base_dir, RestConfig* c) {
  c->server = Scalar(cluster, "server");
  if (c->server.empty()) return Invalid(where + "server: required");
  while (!c->server.empty() && c->server.back() == '/') c->server.pop_back();
  if (c->server.rfind("https://", 0) != 0 && c->server.rfind("http://", 0) != 0) {
    return Invalid(where + "server: \"" + c->server + "\" must start with https:// or http://");
  }
  c->ca_file = Resolve(base_dir, Scalar(cluster, "certificate-authority"));
  const std::string ca_data = Scalar(cluster, "certificate-authority-data");
  if (!ca_data.empty() && !Base64Decode(ca_data, &c->ca_pem)) {
    return Invalid(where + "certificate-authority-data: not valid base64");
  }
  const std::string insecure = Scalar(cluster, "insecure-skip-tls-verify");
  c->insecure = insecure == "true" || insecure == "True";
  c->tls_server_name = Scalar(cluster, "tls-server-name");
  if (!c->ca_file.empty() && !fs::exists(c->ca_file)) {
    return absl::NotFoundError(where + "certificate-authority: " + c->ca_file + ": no such file");
  }
  return absl::OkStatus();
}

// The user entry: token, tokenFile, client certificate and key. `uwhere` prefixes messages.
api::Status ApplyUser(const YAML::Node& user, const std::string& uwhere,
                      const std::string& base_dir, RestConfig* c) {
  if (user["exec"] || user["auth-provider"]) {
    return absl::UnimplementedError(uwhere + (user["exec"] ? "exec" : "auth-provider") +
                                    " credential plugins are not supported; use a token, "
                                    "tokenFile or client certificate");
  }
  c->token = Scalar(user, "token");
  c->token_file = Resolve(base_dir, Scalar(user, "tokenFile"));
  c->client_cert_file = Resolve(base_dir, Scalar(user, "client-certificate"));
  c->client_key_file = Resolve(base_dir, Scalar(user, "client-key"));
  const std::string cert_data = Scalar(user, "client-certificate-data");
  const std::string key_data = Scalar(user, "client-key-data");
  if (!cert_data.empty() && !Base64Decode(cert_data, &c->client_cert_pem)) {
    return Invalid(uwhere + "client-certificate-data: not valid base64");
  }
  if (!key_data.empty() && !Base64Decode(key_data, &c->client_key_pem)) {
    return Invalid(uwhere + "client-key-data: not valid base64");
  }
  for (const auto* f : {&c->token_file, &c->client_cert_file, &c->client_key_file}) {
    if (!f->empty() && !fs::exists(*f)) return absl::NotFoundError(uwhere + *f + ": no such file");
  }
  if (c->token.empty() && !c->token_file.empty()) {
    if (!ReadWholeFile(c->token_file, &c->token)) {
      return absl::PermissionDeniedError(uwhere + "tokenFile " + c->token_file + ": cannot read");
    }
    c->token = Trim(c->token);
  }
  const bool has_cert = !c->client_cert_file.empty() || !c->client_cert_pem.empty();
  const bool has_key = !c->client_key_file.empty() || !c->client_key_pem.empty();
  if (has_cert != has_key) {
    return Invalid(uwhere + (has_cert ? "client-certificate given without client-key"
                                      : "client-key given without client-certificate"));
  }
  return absl::OkStatus();
}

api::Status LoadKubeconfigUnchecked(const std::string& path, const std::string& context,
                                    RestConfig* out) {
  api::StatusOr<YAML::Node> root = ReadKubeconfig(path);
  if (!root.ok()) return root.status();
  api::StatusOr<Selected> sel = SelectContext(*root, path, context);
  if (!sel.ok()) return sel.status();
  const std::string base_dir = fs::path(path).parent_path().string();
  RestConfig c;
  c.qps = out->qps;
  c.burst = out->burst;
  c.user_agent = out->user_agent;
  c.source = "kubeconfig " + path + " (context " + sel->context + ")";
  c.source_file = path;
  const std::string where = "kubeconfig " + path + ": cluster \"" + sel->cluster_name + "\": ";
  if (api::Status s = ApplyCluster(sel->cluster, where, base_dir, &c); !s.ok()) return s;
  if (sel->user && sel->user.IsMap()) {
    const std::string uwhere = "kubeconfig " + path + ": user \"" + sel->user_name + "\": ";
    if (api::Status s = ApplyUser(sel->user, uwhere, base_dir, &c); !s.ok()) return s;
  }
  *out = std::move(c);
  return absl::OkStatus();
}

}  // namespace

// yaml-cpp throws on some malformed documents after parsing (e.g. a list entry that is not a
// map); no exception leaves this function.
api::Status LoadKubeconfig(const std::string& path, const std::string& context, RestConfig* out) {
  try {
    return LoadKubeconfigUnchecked(path, context, out);
  } catch (const std::exception& e) {
    return Invalid("kubeconfig " + path + ": malformed: " + e.what());
  }
}

api::Status InClusterConfig(RestConfig* out, const std::string& sa_dir) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (!host || !*host || !port || !*port) {
    return absl::FailedPreconditionError(
        "in-cluster config: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set");
  }
  RestConfig c;
  c.qps = out->qps;
  c.burst = out->burst;
  c.user_agent = out->user_agent;
  std::string h = host;
  if (h.find(':') != std::string::npos) h = "[" + h + "]";  // IPv6
  c.server = "https://" + h + ":" + port;
  c.token_file = sa_dir + "/token";
  c.ca_file = sa_dir + "/ca.crt";
  if (!ReadWholeFile(c.token_file, &c.token)) {
    return absl::FailedPreconditionError(
        "in-cluster config: cannot read the service account token " + c.token_file);
  }
  c.token = Trim(c.token);
  if (!fs::exists(c.ca_file)) {
    return absl::FailedPreconditionError("in-cluster config: service account CA " + c.ca_file +
                                         " not found");
  }
  c.source = "in-cluster config (service account token " + c.token_file + ")";
  *out = std::move(c);
  return absl::OkStatus();
}

api::Status ResolveRestConfig(const std::string& flag_path, const std::string& config_path,
                              const std::string& context, RestConfig* out) {
  if (!flag_path.empty()) return LoadKubeconfig(flag_path, context, out);
  if (!config_path.empty()) return LoadKubeconfig(config_path, context, out);
  if (const char* env = std::getenv("KUBECONFIG"); env && *env) {
    std::string first = env;
    first = first.substr(0, first.find(':'));  // the first file of a list
    return LoadKubeconfig(first, context, out);
  }
  if (const char* host = std::getenv("KUBERNETES_SERVICE_HOST"); host && *host) {
    return InClusterConfig(out);
  }
  if (const char* home = std::getenv("HOME"); home && *home) {
    const std::string p = std::string(home) + "/.kube/config";
    if (fs::exists(p)) return LoadKubeconfig(p, context, out);
  }
  return absl::FailedPreconditionError(
      "no API server configured: pass --kubeconfig, set clientConnection.kubeconfig or "
      "$KUBECONFIG, or run in a cluster");
}

}  // namespace phalanx::client
