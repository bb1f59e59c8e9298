#include "metrics/http_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <utility>

namespace phalanx::metrics {

namespace {

const char* StatusText(int code) {
  switch (code) {
    case 200:
      return "OK";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    default:
      return "Unknown";
  }
}

using Clock = std::chrono::steady_clock;

int MillisLeft(Clock::time_point deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(left);
}

// OpenSSL's queued errors as one line ("" when none), clearing the queue.
std::string SslErrors() {
  std::string out;
  while (unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out;
}

// One accepted connection, plain or TLS, with deadlines instead of blocking forever.
class Conn {
 public:
  Conn(int fd, SSL_CTX* ctx) : fd_(fd) {
    if (ctx) {
      ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) | O_NONBLOCK);
      ssl_ = SSL_new(ctx);
      if (ssl_) SSL_set_fd(ssl_, fd_);
    }
  }
  ~Conn() {
    if (ssl_) {
      SSL_shutdown(ssl_);
      SSL_free(ssl_);
    }
    ERR_clear_error();
  }
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;

  bool tls() const { return ssl_ != nullptr; }
  // The TLS handshake, within `deadline`.
  bool Handshake(Clock::time_point deadline) {
    if (!ssl_) return false;
    for (;;) {
      const int r = SSL_accept(ssl_);
      if (r == 1) return true;
      if (!Wait(SSL_get_error(ssl_, r), deadline)) return false;
    }
  }
  // Up to `n` bytes; <= 0 on end, error or deadline.
  ssize_t Read(char* buf, size_t n, Clock::time_point deadline) {
    if (!ssl_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, MillisLeft(deadline)) <= 0) return -1;
      return ::recv(fd_, buf, n, 0);
    }
    for (;;) {
      const int r = SSL_read(ssl_, buf, static_cast<int>(n));
      if (r > 0) return r;
      if (!Wait(SSL_get_error(ssl_, r), deadline)) return -1;
    }
  }
  bool WriteAll(const std::string& s, Clock::time_point deadline) {
    size_t off = 0;
    while (off < s.size()) {
      if (!ssl_) {
        ssize_t n = ::send(fd_, s.data() + off, s.size() - off, MSG_NOSIGNAL);
        if (n <= 0) {
          if (n < 0 && errno == EINTR) continue;
          return false;
        }
        off += static_cast<size_t>(n);
        continue;
      }
      const int r = SSL_write(ssl_, s.data() + off, static_cast<int>(s.size() - off));
      if (r > 0) {
        off += static_cast<size_t>(r);
        continue;
      }
      if (!Wait(SSL_get_error(ssl_, r), deadline)) return false;
    }
    return true;
  }

 private:
  // Waits for the socket as OpenSSL asks; false on other errors or at the deadline.
  bool Wait(int ssl_error, Clock::time_point deadline) {
    short events = 0;
    if (ssl_error == SSL_ERROR_WANT_READ) events = POLLIN;
    if (ssl_error == SSL_ERROR_WANT_WRITE) events = POLLOUT;
    if (events == 0) return false;
    const int left = MillisLeft(deadline);
    if (left == 0) return false;
    pollfd p{fd_, events, 0};
    return ::poll(&p, 1, left) > 0;
  }

  int fd_;
  SSL* ssl_ = nullptr;
};

}  // namespace

struct HttpServer::Tls {
  SSL_CTX* ctx = nullptr;
  ~Tls() {
    if (ctx) SSL_CTX_free(ctx);
  }
};

HttpServer::HttpServer() = default;
HttpServer::~HttpServer() { Stop(); }

api::Status HttpServer::Start(const std::string& address, HttpHandler handler) {
  RequestHandler h;
  if (handler) {
    h = [handler = std::move(handler)](const HttpRequest& r) { return handler(r.method, r.path); };
  }
  return Start(address, std::move(h), nullptr);
}

namespace {

// An SSL_CTX serving `cfg` (TLS 1.2 or later), or InvalidArgument naming the problem.
api::Status NewServerContext(const TlsConfig& cfg, SSL_CTX** out) {
  ERR_clear_error();
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (!ctx) return absl::InternalError("TLS: SSL_CTX_new: " + SslErrors());
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  auto fail = [&](const std::string& what) {
    SSL_CTX_free(ctx);
    return absl::InvalidArgumentError("TLS serving certificate: " + what + ": " + SslErrors());
  };
  BIO* cb = BIO_new_mem_buf(cfg.cert_pem.data(), static_cast<int>(cfg.cert_pem.size()));
  X509* leaf = cb ? PEM_read_bio_X509(cb, nullptr, nullptr, nullptr) : nullptr;
  if (!leaf) {
    if (cb) BIO_free(cb);
    return fail("no PEM certificate");
  }
  const bool used = SSL_CTX_use_certificate(ctx, leaf) == 1;
  X509_free(leaf);
  if (!used) {
    BIO_free(cb);
    return fail("certificate not usable");
  }
  while (X509* extra = PEM_read_bio_X509(cb, nullptr, nullptr, nullptr)) {
    if (SSL_CTX_add_extra_chain_cert(ctx, extra) != 1) {  // takes ownership on success
      X509_free(extra);
      BIO_free(cb);
      return fail("chain certificate not usable");
    }
  }
  BIO_free(cb);
  ERR_clear_error();  // the end of the chain reads as an error
  BIO* kb = BIO_new_mem_buf(cfg.key_pem.data(), static_cast<int>(cfg.key_pem.size()));
  EVP_PKEY* key = kb ? PEM_read_bio_PrivateKey(kb, nullptr, nullptr, nullptr) : nullptr;
  if (kb) BIO_free(kb);
  if (!key) return fail("no PEM private key");
  const bool key_used = SSL_CTX_use_PrivateKey(ctx, key) == 1;
  EVP_PKEY_free(key);
  if (!key_used) return fail("private key not usable (does it match the certificate?)");
  if (SSL_CTX_check_private_key(ctx) != 1)
    return fail("private key does not match the certificate");
  *out = ctx;
  return absl::OkStatus();
}

}  // namespace

api::Status HttpServer::Start(const std::string& address, RequestHandler handler,
                              const TlsConfig* tls) {
  if (tls) {
    auto t = std::make_unique<Tls>();
    if (auto s = NewServerContext(*tls, &t->ctx); !s.ok()) return s;
    tls_ = std::move(t);
  }
  std::string host, port;
  if (!address.empty() && address.front() == '[') {
    auto close = address.find(']');
    if (close == std::string::npos || close + 1 >= address.size() || address[close + 1] != ':') {
      return absl::InvalidArgumentError("bind address \"" + address + "\": expected [IPv6]:port");
    }
    host = address.substr(1, close - 1);
    port = address.substr(close + 2);
  } else {
    auto colon = address.rfind(':');
    if (colon == std::string::npos) {
      return absl::InvalidArgumentError("bind address \"" + address + "\": expected host:port");
    }
    host = address.substr(0, colon);
    port = address.substr(colon + 1);
  }
  if (port.empty() || port.find_first_not_of("0123456789") != std::string::npos) {
    return absl::InvalidArgumentError("bind address \"" + address + "\": bad port \"" + port +
                                      "\"");
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  int rc = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), port.c_str(), &hints, &res);
  if (rc != 0) {
    return absl::InvalidArgumentError("bind address \"" + address + "\": " + gai_strerror(rc));
  }
  int fd = -1;
  std::string last;
  int last_errno = 0;
  for (addrinfo* a = res; a; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 16) == 0) break;
    last_errno = errno;
    last = std::strerror(last_errno);
    ::close(fd);
    fd = -1;
  }
  ::freeaddrinfo(res);
  if (fd < 0) {
    return api::Status(
        last_errno != 0 ? absl::ErrnoToStatusCode(last_errno) : absl::StatusCode::kUnavailable,
        "bind address " + address + ": " + (last.empty() ? "cannot listen" : last));
  }
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len);
  port_ = ss.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port)
                                   : ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
  listen_fd_ = fd;
  handler_ = std::move(handler);
  thread_ = std::thread([this] { Loop(); });
  return absl::OkStatus();
}

void HttpServer::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  if (listen_fd_ >= 0) {
    ::close(listen_fd_);
    listen_fd_ = -1;
  }
}

void HttpServer::Loop() {
  while (!stop_.load()) {
    pollfd p{listen_fd_, POLLIN, 0};
    int n = ::poll(&p, 1, 200);
    if (n <= 0) continue;
    int c = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) continue;
    Serve(c);
    ::close(c);
  }
}

void HttpServer::Serve(int fd) {
  Conn conn(fd, tls_ ? tls_->ctx : nullptr);
  std::string req;
  char buf[4096];
  // Read the request head (bounded size and time; for TLS the handshake too). The deadline
  // is for the whole head, not per read: a client trickling one byte at a time must not
  // hold this single-connection server (and so the kubelet's /healthz probe) for hours.
  const auto deadline = Clock::now() + std::chrono::seconds(2);
  if (tls_ && !conn.Handshake(deadline)) return;
  while (req.find("\r\n\r\n") == std::string::npos && req.size() < 16384) {
    ssize_t n = conn.Read(buf, sizeof buf, deadline);
    if (n <= 0) return;
    req.append(buf, static_cast<size_t>(n));
  }
  const auto line_end = req.find("\r\n");
  const std::string line = req.substr(0, line_end);
  const auto sp1 = line.find(' ');
  const auto sp2 = line.find(' ', sp1 + 1);
  if (sp1 == std::string::npos || sp2 == std::string::npos) return;
  HttpRequest request;
  request.method = line.substr(0, sp1);
  request.path = line.substr(sp1 + 1, sp2 - sp1 - 1);
  if (auto q = request.path.find('?'); q != std::string::npos) request.path.resize(q);
  // Header lines up to the blank line: "Name: value".
  // (A head cut at the size limit has no blank line: its headers end where it was cut.)
  const size_t head_end = std::min(req.find("\r\n\r\n"), req.size());
  for (size_t at = line_end + 2; at < head_end;) {
    auto eol = req.find("\r\n", at);
    if (eol == std::string::npos || eol > head_end) eol = head_end;
    const std::string h = req.substr(at, eol - at);
    at = eol + 2;
    const auto colon = h.find(':');
    if (colon == std::string::npos) continue;
    std::string name = h.substr(0, colon);
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    size_t v = colon + 1;
    while (v < h.size() && (h[v] == ' ' || h[v] == '\t')) ++v;
    request.headers[name] = h.substr(v);
  }
  const std::string& method = request.method;
  HttpResponse resp;
  if (method != "GET" && method != "HEAD") {
    resp.status = 405;
    resp.body = "method not allowed\n";
  } else {
    try {
      resp = handler_(request);
    } catch (const std::exception& e) {
      resp.status = 500;
      resp.body = std::string("internal error: ") + e.what() + "\n";
    }
  }
  std::string head = "HTTP/1.1 " + std::to_string(resp.status) + " " + StatusText(resp.status) +
                     "\r\nContent-Type: " + resp.content_type +
                     "\r\nContent-Length: " + std::to_string(resp.body.size()) +
                     "\r\nConnection: close\r\n\r\n";
  const auto write_deadline = Clock::now() + std::chrono::seconds(10);
  if (!conn.WriteAll(head, write_deadline)) return;
  if (method != "HEAD") conn.WriteAll(resp.body, write_deadline);
}

api::Status GenerateSelfSignedCert(const std::string& host, TlsConfig* out) {
  ERR_clear_error();
  EVP_PKEY* key = EVP_EC_gen("P-256");
  if (!key) return absl::InternalError("self-signed certificate: key: " + SslErrors());
  X509* x = X509_new();
  auto fail = [&](const char* what) {
    X509_free(x);
    EVP_PKEY_free(key);
    return absl::InternalError(std::string("self-signed certificate: ") + what + ": " +
                               SslErrors());
  };
  if (!x) return fail("X509_new");
  const long now = static_cast<long>(std::time(nullptr));
  X509_set_version(x, 2);
  // A random serial, as client-go's cert helper (big random serials).
  BIGNUM* bn = BN_new();
  if (!bn || BN_rand(bn, 120, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) != 1) {
    if (bn) BN_free(bn);
    return fail("serial");
  }
  BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x));
  BN_free(bn);
  X509_gmtime_adj(X509_getm_notBefore(x), -3600);  // an hour back for clock skew
  X509_gmtime_adj(X509_getm_notAfter(x), 365L * 24 * 3600);
  X509_set_pubkey(x, key);
  X509_NAME* name = X509_get_subject_name(x);
  const std::string cn = "localhost@" + std::to_string(now);  // upstream's "host@timestamp"
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  X509_set_issuer_name(x, name);
  std::string san = "DNS:localhost,IP:127.0.0.1";
  if (!host.empty() && host != "localhost" && host != "127.0.0.1") {
    unsigned char ip[16];
    const bool is_ip =
        inet_pton(AF_INET, host.c_str(), ip) == 1 || inet_pton(AF_INET6, host.c_str(), ip) == 1;
    san += (is_ip ? ",IP:" : ",DNS:") + host;
  }
  X509V3_CTX v3;
  X509V3_set_ctx_nodb(&v3);
  X509V3_set_ctx(&v3, x, x, nullptr, nullptr, 0);
  for (const auto& [nid, value] : {std::pair<int, std::string>{NID_subject_alt_name, san},
                                   {NID_key_usage, "critical,digitalSignature,keyEncipherment"},
                                   {NID_ext_key_usage, "serverAuth"},
                                   {NID_basic_constraints, "critical,CA:FALSE"}}) {
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &v3, nid, value.c_str());
    if (!ext) return fail("extension");
    X509_add_ext(x, ext, -1);
    X509_EXTENSION_free(ext);
  }
  if (X509_sign(x, key, EVP_sha256()) <= 0) return fail("sign");
  auto pem = [](auto write) {
    BIO* b = BIO_new(BIO_s_mem());
    std::string s;
    if (b && write(b)) {
      char* data = nullptr;
      const long n = BIO_get_mem_data(b, &data);
      s.assign(data, static_cast<size_t>(n));
    }
    if (b) BIO_free(b);
    return s;
  };
  out->cert_pem = pem([&](BIO* b) { return PEM_write_bio_X509(b, x) == 1; });
  out->key_pem = pem([&](BIO* b) {
    return PEM_write_bio_PrivateKey(b, key, nullptr, nullptr, 0, nullptr, nullptr) == 1;
  });
  X509_free(x);
  EVP_PKEY_free(key);
  if (out->cert_pem.empty() || out->key_pem.empty()) {
    return absl::InternalError("self-signed certificate: PEM encoding: " + SslErrors());
  }
  return absl::OkStatus();
}

}  // namespace phalanx::metrics
