// The HTTPS side of HttpServer: a self-signed certificate, the TLS handshake, request
// headers reaching the handler, and a rejected certificate.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "metrics/http_server.h"

namespace phalanx::metrics {
namespace {

// GETs `path` over TLS, verifying the server against `ca_pem` for host "localhost";
// returns the whole response, or "" when the handshake or the verification failed.
std::string HttpsGet(int port, const std::string& ca_pem, const std::string& path,
                     const std::string& extra_headers) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  BIO* b = BIO_new_mem_buf(ca_pem.data(), static_cast<int>(ca_pem.size()));
  X509* ca = PEM_read_bio_X509(b, nullptr, nullptr, nullptr);
  BIO_free(b);
  X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx), ca);
  X509_free(ca);
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string out;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
    SSL* ssl = SSL_new(ctx);
    SSL_set_fd(ssl, fd);
    SSL_set1_host(ssl, "localhost");
    if (SSL_connect(ssl) == 1) {
      const std::string req =
          "GET " + path + " HTTP/1.1\r\nHost: localhost\r\n" + extra_headers + "\r\n";
      SSL_write(ssl, req.data(), static_cast<int>(req.size()));
      char buf[4096];
      int n;
      while ((n = SSL_read(ssl, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
    }
    SSL_free(ssl);
  }
  ::close(fd);
  SSL_CTX_free(ctx);
  ERR_clear_error();
  return out;
}

TEST(HttpsServer, ServesOverTlsWithASelfSignedCertificateAndPassesHeaders) {
  TlsConfig tls;
  ASSERT_TRUE(GenerateSelfSignedCert("", &tls).ok());
  EXPECT_NE(tls.cert_pem.find("BEGIN CERTIFICATE"), std::string::npos);
  HttpServer s;
  std::string seen_auth;
  std::string err;
  ASSERT_TRUE(api::OkOrMessage(s.Start(
                                   "127.0.0.1:0",
                                   [&](const HttpRequest& r) {
                                     auto it = r.headers.find("authorization");
                                     seen_auth = it == r.headers.end() ? "-" : it->second;
                                     HttpResponse resp;
                                     if (r.path != "/metrics") {
                                       resp.status = 403;
                                       resp.body = "forbidden\n";
                                     } else {
                                       resp.body = "m 1\n";
                                     }
                                     return resp;
                                   },
                                   &tls),
                               &err))
      << err;
  std::string r = HttpsGet(s.port(), tls.cert_pem, "/metrics", "Authorization: Bearer abc\r\n");
  EXPECT_EQ(r.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << r;
  EXPECT_NE(r.find("\r\n\r\nm 1\n"), std::string::npos) << r;
  EXPECT_EQ(seen_auth, "Bearer abc");
  r = HttpsGet(s.port(), tls.cert_pem, "/other", "");
  EXPECT_EQ(r.rfind("HTTP/1.1 403 Forbidden\r\n", 0), 0u) << r;
  EXPECT_EQ(seen_auth, "-");
  // A client that does not trust the certificate gets nothing.
  TlsConfig other;
  ASSERT_TRUE(GenerateSelfSignedCert("", &other).ok());
  EXPECT_EQ(HttpsGet(s.port(), other.cert_pem, "/metrics", ""), "");
  // A plain-HTTP client on the TLS port gets no HTTP answer; the server keeps serving.
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(s.port()));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  const std::string plain = "GET /metrics HTTP/1.1\r\n\r\n";
  ::send(fd, plain.data(), plain.size(), MSG_NOSIGNAL);
  timeval tv{3, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  char buf[256];
  const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
  EXPECT_TRUE(n <= 0 || std::string(buf, static_cast<size_t>(n)).rfind("HTTP/1.1 200", 0) != 0);
  ::close(fd);
  EXPECT_EQ(HttpsGet(s.port(), tls.cert_pem, "/metrics", "").rfind("HTTP/1.1 200 OK", 0), 0u);
}

TEST(HttpsServer, SilentClientDoesNotHoldTheServerPastTheHandshakeDeadline) {
  TlsConfig tls;
  ASSERT_TRUE(GenerateSelfSignedCert("", &tls).ok());
  HttpServer s;
  ASSERT_TRUE(s.Start(
                   "127.0.0.1:0",
                   [](const HttpRequest&) {
                     return HttpResponse{200, "text/plain", "ok\n"};
                   },
                   &tls)
                  .ok());
  // A client that connects and never starts the handshake (the single-connection server
  // must drop it at the 2 s deadline, not wait for it).
  int idle = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(s.port()));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(idle, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  const auto t0 = std::chrono::steady_clock::now();
  const std::string r = HttpsGet(s.port(), tls.cert_pem, "/healthz", "");
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ::close(idle);
  EXPECT_EQ(r.rfind("HTTP/1.1 200 OK", 0), 0u) << r;
  EXPECT_LT(waited, 5.0);
}

TEST(HttpsServer, RejectsAKeyThatDoesNotMatchTheCertificate) {
  TlsConfig a, b;
  ASSERT_TRUE(GenerateSelfSignedCert("", &a).ok());
  ASSERT_TRUE(GenerateSelfSignedCert("10.0.0.1", &b).ok());
  TlsConfig mixed{a.cert_pem, b.key_pem};
  HttpServer s;
  std::string err;
  EXPECT_FALSE(api::OkOrMessage(s.Start("127.0.0.1:0", RequestHandler(), &mixed), &err));
  EXPECT_NE(
      err.find("TLS serving certificate: private key not usable (does it match the certificate?)"),
      std::string::npos)
      << err;
  TlsConfig garbage{"not a certificate", "nor a key"};
  EXPECT_FALSE(api::OkOrMessage(s.Start("127.0.0.1:0", RequestHandler(), &garbage), &err));
  EXPECT_NE(err.find("TLS serving certificate: no PEM certificate"), std::string::npos) << err;
}

}  // namespace
}  // namespace phalanx::metrics
