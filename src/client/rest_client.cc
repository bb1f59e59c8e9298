#include "client/rest_client.h"

#include <curl/curl.h>
#include <simdjson.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

namespace phalanx::client {

namespace {

struct GlobalInit {
  GlobalInit() { curl_global_init(CURL_GLOBAL_DEFAULT); }
};

void EnsureCurl() { static GlobalInit init; }

size_t CollectBody(char* ptr, size_t size, size_t nmemb, void* userdata) {
  static_cast<std::string*>(userdata)->append(ptr, size * nmemb);
  return size * nmemb;
}

struct StreamCtx {
  CURL* h = nullptr;
  const std::function<bool(std::string_view)>* on_line = nullptr;
  const std::atomic<bool>* cancel = nullptr;
  std::string buf;       // partial line
  std::string err_body;  // body of a non-200 response
  bool stopped = false;
};

size_t StreamWrite(char* ptr, size_t size, size_t nmemb, void* userdata) {
  auto* c = static_cast<StreamCtx*>(userdata);
  const size_t n = size * nmemb;
  long code = 0;
  curl_easy_getinfo(c->h, CURLINFO_RESPONSE_CODE, &code);
  if (code != 200) {
    if (c->err_body.size() < (1 << 20)) c->err_body.append(ptr, n);
    return n;
  }
  c->buf.append(ptr, n);
  size_t start = 0;
  for (;;) {
    const size_t nl = c->buf.find('\n', start);
    if (nl == std::string::npos) break;
    std::string_view line(c->buf.data() + start, nl - start);
    start = nl + 1;
    if (line.empty()) continue;
    if (!(*c->on_line)(line)) {
      c->stopped = true;
      return 0;  // aborts the transfer (CURLE_WRITE_ERROR)
    }
  }
  c->buf.erase(0, start);
  return n;
}

int StreamProgress(void* userdata, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* c = static_cast<StreamCtx*>(userdata);
  if (c->cancel && c->cancel->load()) {
    c->stopped = true;
    return 1;  // aborts (CURLE_ABORTED_BY_CALLBACK)
  }
  return 0;
}

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  while (!out->empty() && (out->back() == '\n' || out->back() == '\r' || out->back() == ' '))
    out->pop_back();
  return true;
}

const char* ReasonPhrase(long code) {
  switch (code) {
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 409:
      return "Conflict";
    case 410:
      return "Gone";
    case 415:
      return "Unsupported Media Type";
    case 422:
      return "Unprocessable Entity";
    case 429:
      return "Too Many Requests";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    default:
      return "";
  }
}

}  // namespace

bool Response::tls_error() const {
  switch (curl_code) {
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
      return true;
    default:
      return false;
  }
}

std::string StatusMessage(std::string_view body, std::string* reason) {
  if (body.empty() || body.front() != '{') return "";
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(body.data(), body.size()).get(doc)) return "";
  std::string_view kind, msg, rsn;
  if (doc["kind"].get(kind) || kind != "Status") return "";
  if (doc["message"].get(msg)) msg = {};
  if (reason != nullptr && !doc["reason"].get(rsn)) *reason = std::string(rsn);
  return std::string(msg);
}

std::string UrlEncode(std::string_view s) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

RestClient::RestClient(RestConfig cfg)
    : cfg_(std::move(cfg)), limiter_(cfg_.qps, cfg_.burst), token_(cfg_.token) {
  EnsureCurl();
}

RestClient::~RestClient() {
  for (void* h : pool_) curl_easy_cleanup(static_cast<CURL*>(h));
}

std::string RestClient::Token() const {
  absl::MutexLock l(&token_mu_);
  return token_;
}

void RestClient::ReloadToken() {
  std::string t;
  if (cfg_.token_file.empty() || !ReadFile(cfg_.token_file, &t)) return;
  absl::MutexLock l(&token_mu_);
  token_ = t;
}

void* RestClient::Acquire() {
  {
    absl::MutexLock l(&pool_mu_);
    if (!pool_.empty()) {
      void* h = pool_.back();
      pool_.pop_back();
      return h;
    }
  }
  CURL* h = curl_easy_init();
  return h;
}

void RestClient::Release(void* h) {
  absl::MutexLock l(&pool_mu_);
  pool_.push_back(h);
}

void RestClient::Configure(void* vh) {
  CURL* h = static_cast<CURL*>(vh);
  curl_easy_reset(h);  // keeps the live connection and TLS session of this handle
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_USERAGENT, cfg_.user_agent.c_str());
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
  curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(h, CURLOPT_TCP_KEEPIDLE, 30L);
  curl_easy_setopt(h, CURLOPT_TCP_KEEPINTVL, 15L);
  curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");  // gzip if the server offers it
  if (cfg_.insecure) {
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
  } else {
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
  }
  if (!cfg_.ca_pem.empty()) {
    curl_blob blob{const_cast<char*>(cfg_.ca_pem.data()), cfg_.ca_pem.size(), CURL_BLOB_COPY};
    curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &blob);
  } else if (!cfg_.ca_file.empty()) {
    curl_easy_setopt(h, CURLOPT_CAINFO, cfg_.ca_file.c_str());
  }
  if (!cfg_.client_cert_pem.empty()) {
    curl_blob cert{const_cast<char*>(cfg_.client_cert_pem.data()), cfg_.client_cert_pem.size(),
                   CURL_BLOB_COPY};
    curl_easy_setopt(h, CURLOPT_SSLCERT_BLOB, &cert);
    curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
  } else if (!cfg_.client_cert_file.empty()) {
    curl_easy_setopt(h, CURLOPT_SSLCERT, cfg_.client_cert_file.c_str());
  }
  if (!cfg_.client_key_pem.empty()) {
    curl_blob key{const_cast<char*>(cfg_.client_key_pem.data()), cfg_.client_key_pem.size(),
                  CURL_BLOB_COPY};
    curl_easy_setopt(h, CURLOPT_SSLKEY_BLOB, &key);
    curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
  } else if (!cfg_.client_key_file.empty()) {
    curl_easy_setopt(h, CURLOPT_SSLKEY, cfg_.client_key_file.c_str());
  }
}

Response RestClient::Do(std::string_view method, const std::string& path, const std::string& body,
                        std::string_view content_type) {
  limiter_.Wait();
  Response r;
  int retry_after_waits = 0;
  curl_off_t retry_after_waited_s = 0;
  for (int attempt = 0; attempt < 2; ++attempt) {
    r = Response{};
    curl_off_t retry_after = 0;
    CURL* h = static_cast<CURL*>(Acquire());
    if (h == nullptr) {
      r.curl_code = CURLE_OUT_OF_MEMORY;
      r.curl_error = "curl_easy_init failed";
      return r;
    }
    Configure(h);
    const std::string url = cfg_.server + path;
    const std::string m(method);
    char errbuf[CURL_ERROR_SIZE] = {0};
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(h, CURLOPT_URL, url.c_str());
    curl_easy_setopt(h, CURLOPT_TIMEOUT, 120L);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, CollectBody);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &r.body);
    if (m == "GET") {
      curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
    } else if (m == "POST") {
      curl_easy_setopt(h, CURLOPT_POST, 1L);
    } else {
      curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, m.c_str());
    }
    if (!body.empty() || m == "POST" || m == "PUT" || m == "PATCH") {
      curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.data());
      curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
    }
    curl_slist* headers = nullptr;
    headers = curl_slist_append(headers, "Accept: application/json");
    const std::string ct = "Content-Type: " + std::string(content_type);
    if (!body.empty()) headers = curl_slist_append(headers, ct.c_str());
    const std::string tok = Token();
    const std::string auth = "Authorization: Bearer " + tok;
    if (!tok.empty()) headers = curl_slist_append(headers, auth.c_str());
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    ++requests_;
    CURLcode rc = curl_easy_perform(h);
    curl_slist_free_all(headers);
    r.curl_code = rc;
    if (rc != CURLE_OK) {
      r.curl_error = errbuf[0] ? errbuf : curl_easy_strerror(rc);
      curl_easy_cleanup(h);  // its connection may be broken: do not reuse
    } else {
      curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r.status);
      curl_easy_getinfo(h, CURLINFO_RETRY_AFTER, &retry_after);
      Release(h);
    }
    // 429 or 5xx with Retry-After: wait that long and send the request again, up to 10
    // times (client-go rest.Request: checkWait, maxRetries 10), at most 20 s of waiting in
    // all so that shutdown is not held up; "Retry-After: 0" is not retried (libcurl reports
    // it as no header). Not for the Lease: upstream bounds those retries by the renew
    // deadline (context), here LeaderElector retries every retryPeriod itself.
    const curl_off_t wait_s = std::min<curl_off_t>(retry_after, 10);
    if ((r.status == 429 || r.status >= 500) && retry_after > 0 && retry_after_waits < 10 &&
        retry_after_waited_s + wait_s <= 20 &&
        path.find("/apis/coordination.k8s.io/") == std::string::npos) {
      ++retry_after_waits;
      retry_after_waited_s += wait_s;
      --attempt;
      std::this_thread::sleep_for(std::chrono::seconds(wait_s));
      limiter_.Wait();
      continue;
    }
    if (r.status == 401 && attempt == 0 && !cfg_.token_file.empty()) {
      const std::string before = Token();
      ReloadToken();
      if (Token() != before) continue;
    }
    break;
  }
  return r;
}

Response RestClient::Stream(const std::string& path,
                            const std::function<bool(std::string_view)>& on_line,
                            const std::atomic<bool>* cancel, long timeout_seconds) {
  limiter_.Wait();
  Response r;
  CURL* h = static_cast<CURL*>(Acquire());
  if (h == nullptr) {
    r.curl_code = CURLE_OUT_OF_MEMORY;
    r.curl_error = "curl_easy_init failed";
    return r;
  }
  Configure(h);
  const std::string url = cfg_.server + path;
  char errbuf[CURL_ERROR_SIZE] = {0};
  StreamCtx ctx;
  ctx.h = h;
  ctx.on_line = &on_line;
  ctx.cancel = cancel;
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
  curl_easy_setopt(h, CURLOPT_TIMEOUT, timeout_seconds);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, StreamWrite);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &ctx);
  curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, StreamProgress);
  curl_easy_setopt(h, CURLOPT_XFERINFODATA, &ctx);
  curl_slist* headers = nullptr;
  headers = curl_slist_append(headers, "Accept: application/json");
  const std::string tok = Token();
  const std::string auth = "Authorization: Bearer " + tok;
  if (!tok.empty()) headers = curl_slist_append(headers, auth.c_str());
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  ++requests_;
  CURLcode rc = curl_easy_perform(h);
  curl_slist_free_all(headers);
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r.status);
  r.body = std::move(ctx.err_body);
  r.cancelled = ctx.stopped;
  r.curl_code = rc;
  if (rc != CURLE_OK) {
    r.curl_error = errbuf[0] ? errbuf : curl_easy_strerror(rc);
    if (r.cancelled) r.curl_code = 0;
    curl_easy_cleanup(h);
  } else {
    // A watch the server ended normally: the connection can be reused.
    Release(h);
  }
  if (r.status == 401) ReloadToken();
  return r;
}

absl::StatusCode ResponseCode(const Response& r, std::string_view reason) {
  if (r.ok()) return absl::StatusCode::kOk;
  if (r.status == 0 || r.curl_code != 0) {
    return r.cancelled ? absl::StatusCode::kCancelled : absl::StatusCode::kUnavailable;
  }
  switch (r.status) {
    case 400:
    case 422:
      return absl::StatusCode::kInvalidArgument;
    case 401:
      return absl::StatusCode::kUnauthenticated;
    case 403:
      return absl::StatusCode::kPermissionDenied;
    case 404:
      return absl::StatusCode::kNotFound;
    case 409:
      return reason == "AlreadyExists" ? absl::StatusCode::kAlreadyExists
                                       : absl::StatusCode::kAborted;
    case 410:
      return absl::StatusCode::kOutOfRange;
    case 429:
      return absl::StatusCode::kResourceExhausted;
    default:
      break;
  }
  if (r.status >= 500) return absl::StatusCode::kUnavailable;
  return absl::StatusCode::kFailedPrecondition;
}

api::Status RestClient::ToStatus(std::string_view method, const std::string& path,
                                 const Response& r) const {
  if (r.ok()) return absl::OkStatus();
  std::string reason;
  StatusMessage(r.body, &reason);
  return api::Status(ResponseCode(r, reason), Describe(method, path, r));
}

std::string RestClient::Describe(std::string_view method, const std::string& path,
                                 const Response& r) const {
  std::string url = cfg_.server + path;
  if (auto q = url.find('?'); q != std::string::npos) url.resize(q);
  const std::string req = std::string(method) + " " + url;
  if (r.curl_code != 0) {
    if (r.tls_error()) {
      std::string ca;
      if (!cfg_.ca_pem.empty()) {
        ca = "certificate-authority-data in " + cfg_.source_file;
      } else if (!cfg_.ca_file.empty()) {
        ca = "certificate-authority " + cfg_.ca_file;
      } else {
        ca = "system trust store; no certificate-authority configured";
      }
      if (r.curl_code == CURLE_SSL_CONNECT_ERROR) {
        return "TLS handshake with " + cfg_.server + " failed: " + r.curl_error + " (" + ca + ")";
      }
      if (r.curl_code == CURLE_SSL_CERTPROBLEM) {
        return "TLS client certificate rejected for " + cfg_.server + ": " + r.curl_error + " (" +
               cfg_.source + ")";
      }
      return "TLS verification failed for " + cfg_.server + ": " + r.curl_error + " (" + ca + ")";
    }
    return "cannot connect to " + cfg_.server + ": " + r.curl_error + " (" + req + ")";
  }
  std::string reason;
  std::string msg = StatusMessage(r.body, &reason);
  if (r.status == 401) {
    std::string what;
    if (!cfg_.token.empty() || !cfg_.token_file.empty()) {
      if (cfg_.source_file.empty()) {
        what = "check the token " + cfg_.token_file;
      } else {
        what = "check the token in " + cfg_.source_file;
      }
    } else if (!cfg_.client_cert_file.empty() || !cfg_.client_cert_pem.empty()) {
      what = "check the client certificate in " + cfg_.source_file;
    } else {
      what = "no credentials configured in " +
             (cfg_.source_file.empty() ? cfg_.source : cfg_.source_file);
    }
    return "Unauthorized: " + what + " (" + req + ": HTTP 401)";
  }
  if (r.status == 403) {
    return "Forbidden: " + (msg.empty() ? std::string("access denied") : msg) + " (" + req + ")";
  }
  std::string out = req + ": HTTP " + std::to_string(r.status);
  if (const char* phrase = ReasonPhrase(r.status); *phrase) out += std::string(" ") + phrase;
  if (!msg.empty()) {
    out += ": " + msg;
  } else if (!r.body.empty()) {
    out += ": " + r.body.substr(0, 200);
  }
  return out;
}

}  // namespace phalanx::client
