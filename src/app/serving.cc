#include "app/serving.h"

#include <arpa/inet.h>

#include <fstream>
#include <sstream>
#include <utility>

#include "client/rest_client.h"

namespace phalanx::app {

namespace {

bool IsIp(const std::string& s) {
  unsigned char buf[16];
  return inet_pton(AF_INET, s.c_str(), buf) == 1 || inet_pton(AF_INET6, s.c_str(), buf) == 1;
}

// "IP:port", bracketing an IPv6 address.
std::string HostPort(const std::string& ip, int port) {
  const bool v6 = ip.find(':') != std::string::npos;
  return (v6 ? "[" + ip + "]" : ip) + ":" + std::to_string(port);
}

api::Status ReadFile(const std::string& flag, const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InvalidArgumentError(flag + ": cannot read " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return absl::OkStatus();
}

metrics::HttpResponse Refusal(int status, const std::string& message) {
  metrics::HttpResponse r;
  r.status = status;
  r.body = message + "\n";
  return r;
}

}  // namespace

api::StatusOr<ServingPlan> PlanServing(const ServingOptions& o) {
  if (o.secure_port < 0 || o.secure_port > 65535) {
    return absl::InvalidArgumentError("--secure-port: " + std::to_string(o.secure_port) +
                                      " is not in [0, 65535]");
  }
  if (o.tls_cert_file.empty() != o.tls_private_key_file.empty()) {
    return absl::InvalidArgumentError(
        "--tls-cert-file and --tls-private-key-file: give both or neither");
  }
  ServingPlan p;
  const std::string& b = o.bind_address;
  if (b.empty()) {
    if (o.secure_port_set && o.secure_port > 0)
      p.secure_address = HostPort("0.0.0.0", o.secure_port);
    return p;
  }
  if (IsIp(b)) {  // upstream's form
    if (o.secure_port > 0) p.secure_address = HostPort(b, o.secure_port);
    return p;
  }
  // Phalanx's plain-HTTP form, host:port (HttpServer checks it when it binds).
  p.plain_address = b;
  if (o.secure_port_set && o.secure_port > 0) {
    std::string host;
    if (b.front() == '[') {
      host = b.substr(1, b.find(']') == std::string::npos ? 0 : b.find(']') - 1);
    } else if (b.rfind(':') != std::string::npos) {
      host = b.substr(0, b.rfind(':'));
    }
    p.secure_address = HostPort(IsIp(host) ? host : "0.0.0.0", o.secure_port);
  }
  return p;
}

api::Status Serving::Start(const ServingOptions& o, client::RestClient* api,
                           std::function<metrics::HttpResponse(const std::string& path)> content) {
  auto plan = PlanServing(o);
  if (!plan.ok()) return plan.status();
  plan_ = *plan;
  if (!plan_.plain_address.empty()) {
    auto plain = [content](const metrics::HttpRequest& r) { return content(r.path); };
    if (auto s = plain_.Start(plan_.plain_address, plain, nullptr); !s.ok()) {
      return api::Status(s.code(), "--bind-address: " + std::string(s.message()));
    }
  }
  if (plan_.secure_address.empty()) return absl::OkStatus();
  metrics::TlsConfig tls;
  if (!o.tls_cert_file.empty()) {
    if (auto s = ReadFile("--tls-cert-file", o.tls_cert_file, &tls.cert_pem); !s.ok()) return s;
    if (auto s = ReadFile("--tls-private-key-file", o.tls_private_key_file, &tls.key_pem);
        !s.ok()) {
      return s;
    }
  } else {
    const std::string host = plan_.secure_address.substr(0, plan_.secure_address.rfind(':'));
    const bool any = host == "0.0.0.0" || host == "[::]";
    if (auto s = metrics::GenerateSelfSignedCert(any ? "" : host, &tls); !s.ok()) return s;
  }
  client::DelegatedAuthOptions ao;
  ao.always_allow_paths = o.always_allow_paths;
  client::ReviewPoster post;
  if (api) {
    post = client::RestReviewPoster(*api);
  } else {
    post = [](const std::string&, const std::string&, std::string*) { return 0; };
  }
  auth_ = std::make_unique<client::DelegatedAuth>(std::move(post), std::move(ao));
  client::DelegatedAuth* auth = auth_.get();
  auto secure = [auth, content](const metrics::HttpRequest& r) {
    auto it = r.headers.find("authorization");
    const client::AuthDecision d =
        auth->Check(it == r.headers.end() ? "" : it->second, r.method, r.path);
    if (!d.allowed) return Refusal(d.status, d.message);
    return content(r.path);
  };
  if (auto s = secure_.Start(plan_.secure_address, secure, &tls); !s.ok()) {
    const std::string flag = o.tls_cert_file.empty() ? "--secure-port" : "--tls-cert-file";
    return api::Status(s.code(), flag + ": " + std::string(s.message()));
  }
  return absl::OkStatus();
}

void Serving::Stop() {
  plain_.Stop();
  secure_.Stop();
}

}  // namespace phalanx::app
