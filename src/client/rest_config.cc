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
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ' || s.back() == '\t'))
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
bool FindNamed(const YAML::Node& root, const char* list, const char* field,
               const std::string& name, YAML::Node* out, std::string* names) {
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
bool LoadKubeconfigUnchecked(const std::string& path, const std::string& context,
                             RestConfig* out, std::string* err);
}  // namespace

// yaml-cpp throws on some malformed documents after parsing (e.g. a list entry that is not a
// map); no exception leaves this function.
bool LoadKubeconfig(const std::string& path, const std::string& context, RestConfig* out,
                    std::string* err) {
  try {
    return LoadKubeconfigUnchecked(path, context, out, err);
  } catch (const std::exception& e) {
    *err = "kubeconfig " + path + ": malformed: " + e.what();
    return false;
  }
}

namespace {
bool LoadKubeconfigUnchecked(const std::string& path, const std::string& context,
                             RestConfig* out, std::string* err) {
  std::string text;
  if (!ReadWholeFile(path, &text)) {
    *err = "kubeconfig " + path + ": cannot read: " + std::strerror(errno);
    return false;
  }
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    // yaml-cpp stops at 500 levels of nesting with the text "bad file": say what it means.
    const auto* deep = dynamic_cast<const YAML::DeepRecursion*>(&e);
    *err = "kubeconfig " + path + ": malformed YAML at line " + std::to_string(e.mark.line + 1) +
           ": " + (deep ? "nesting deeper than " + std::to_string(deep->depth()) + " levels" : e.msg);
    return false;
  }
  if (!root.IsMap()) {
    *err = "kubeconfig " + path + ": expected a kubeconfig object (apiVersion: v1, kind: Config)";
    return false;
  }
  const std::string base_dir = fs::path(path).parent_path().string();
  std::string ctx_name = context.empty() ? Scalar(root, "current-context") : context;
  if (ctx_name.empty()) {
    *err = "kubeconfig " + path + ": no current-context set and no --context given";
    return false;
  }
  YAML::Node ctx, cluster, user;
  std::string names;
  if (!FindNamed(root, "contexts", "context", ctx_name, &ctx, &names)) {
    *err = "kubeconfig " + path + ": context \"" + ctx_name + "\" not found (contexts: " +
           (names.empty() ? "none" : names) + ")";
    return false;
  }
  const std::string cluster_name = Scalar(ctx, "cluster");
  const std::string user_name = Scalar(ctx, "user");
  names.clear();
  if (!FindNamed(root, "clusters", "cluster", cluster_name, &cluster, &names)) {
    *err = "kubeconfig " + path + ": context \"" + ctx_name + "\": cluster \"" + cluster_name +
           "\" not found (clusters: " + (names.empty() ? "none" : names) + ")";
    return false;
  }
  names.clear();
  if (!user_name.empty() && !FindNamed(root, "users", "user", user_name, &user, &names)) {
    *err = "kubeconfig " + path + ": context \"" + ctx_name + "\": user \"" + user_name +
           "\" not found (users: " + (names.empty() ? "none" : names) + ")";
    return false;
  }
  RestConfig c;
  c.qps = out->qps;
  c.burst = out->burst;
  c.user_agent = out->user_agent;
  c.source = "kubeconfig " + path + " (context " + ctx_name + ")";
  c.source_file = path;
  const std::string where = "kubeconfig " + path + ": cluster \"" + cluster_name + "\": ";
  c.server = Scalar(cluster, "server");
  if (c.server.empty()) {
    *err = where + "server: required";
    return false;
  }
  while (!c.server.empty() && c.server.back() == '/') c.server.pop_back();
  if (c.server.rfind("https://", 0) != 0 && c.server.rfind("http://", 0) != 0) {
    *err = where + "server: \"" + c.server + "\" must start with https:// or http://";
    return false;
  }
  c.ca_file = Resolve(base_dir, Scalar(cluster, "certificate-authority"));
  const std::string ca_data = Scalar(cluster, "certificate-authority-data");
  if (!ca_data.empty() && !Base64Decode(ca_data, &c.ca_pem)) {
    *err = where + "certificate-authority-data: not valid base64";
    return false;
  }
  const std::string insecure = Scalar(cluster, "insecure-skip-tls-verify");
  c.insecure = insecure == "true" || insecure == "True";
  c.tls_server_name = Scalar(cluster, "tls-server-name");
  if (!c.ca_file.empty() && !fs::exists(c.ca_file)) {
    *err = where + "certificate-authority: " + c.ca_file + ": no such file";
    return false;
  }

  if (user && user.IsMap()) {
    const std::string uwhere = "kubeconfig " + path + ": user \"" + user_name + "\": ";
    if (user["exec"] || user["auth-provider"]) {
      *err = uwhere + (user["exec"] ? "exec" : "auth-provider") +
             " credential plugins are not supported; use a token, tokenFile or client "
             "certificate";
      return false;
    }
    c.token = Scalar(user, "token");
    c.token_file = Resolve(base_dir, Scalar(user, "tokenFile"));
    c.client_cert_file = Resolve(base_dir, Scalar(user, "client-certificate"));
    c.client_key_file = Resolve(base_dir, Scalar(user, "client-key"));
    const std::string cert_data = Scalar(user, "client-certificate-data");
    const std::string key_data = Scalar(user, "client-key-data");
    if (!cert_data.empty() && !Base64Decode(cert_data, &c.client_cert_pem)) {
      *err = uwhere + "client-certificate-data: not valid base64";
      return false;
    }
    if (!key_data.empty() && !Base64Decode(key_data, &c.client_key_pem)) {
      *err = uwhere + "client-key-data: not valid base64";
      return false;
    }
    for (const auto* f : {&c.token_file, &c.client_cert_file, &c.client_key_file}) {
      if (!f->empty() && !fs::exists(*f)) {
        *err = uwhere + *f + ": no such file";
        return false;
      }
    }
    if (c.token.empty() && !c.token_file.empty()) {
      if (!ReadWholeFile(c.token_file, &c.token)) {
        *err = uwhere + "tokenFile " + c.token_file + ": cannot read";
        return false;
      }
      c.token = Trim(c.token);
    }
    const bool has_cert = !c.client_cert_file.empty() || !c.client_cert_pem.empty();
    const bool has_key = !c.client_key_file.empty() || !c.client_key_pem.empty();
    if (has_cert != has_key) {
      *err = uwhere + (has_cert ? "client-certificate given without client-key"
                                : "client-key given without client-certificate");
      return false;
    }
  }
  *out = std::move(c);
  return true;
}
}  // namespace

bool InClusterConfig(RestConfig* out, std::string* err, const std::string& sa_dir) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (!host || !*host || !port || !*port) {
    *err = "in-cluster config: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set";
    return false;
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
    *err = "in-cluster config: cannot read the service account token " + c.token_file;
    return false;
  }
  c.token = Trim(c.token);
  if (!fs::exists(c.ca_file)) {
    *err = "in-cluster config: service account CA " + c.ca_file + " not found";
    return false;
  }
  c.source = "in-cluster config (service account token " + c.token_file + ")";
  *out = std::move(c);
  return true;
}

bool ResolveRestConfig(const std::string& flag_path, const std::string& config_path,
                       const std::string& context, RestConfig* out, std::string* err) {
  if (!flag_path.empty()) return LoadKubeconfig(flag_path, context, out, err);
  if (!config_path.empty()) return LoadKubeconfig(config_path, context, out, err);
  if (const char* env = std::getenv("KUBECONFIG"); env && *env) {
    std::string first = env;
    first = first.substr(0, first.find(':'));  // the first file of a list
    return LoadKubeconfig(first, context, out, err);
  }
  if (const char* host = std::getenv("KUBERNETES_SERVICE_HOST"); host && *host) {
    return InClusterConfig(out, err);
  }
  if (const char* home = std::getenv("HOME"); home && *home) {
    const std::string p = std::string(home) + "/.kube/config";
    if (fs::exists(p)) return LoadKubeconfig(p, context, out, err);
  }
  *err =
      "no API server configured: pass --kubeconfig, set clientConnection.kubeconfig or "
      "$KUBECONFIG, or run in a cluster";
  return false;
}

}  // namespace phalanx::client
