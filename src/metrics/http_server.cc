#include "metrics/http_server.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace phalanx::metrics {

namespace {

const char* StatusText(int code) {
  switch (code) {
    case 200: return "OK";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    default: return "Unknown";
  }
}

bool SendAll(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
    if (n <= 0) {
      if (n < 0 && errno == EINTR) continue;
      return false;
    }
    off += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

HttpServer::~HttpServer() { Stop(); }

api::Status HttpServer::Start(const std::string& address, HttpHandler handler) {
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
  std::string req;
  char buf[4096];
  // Read the request head (bounded size and time). The deadline is for the whole head, not
  // per read: a client trickling one byte at a time must not hold this single-connection
  // server (and so the kubelet's /healthz probe) for hours.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (req.find("\r\n\r\n") == std::string::npos && req.size() < 16384) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return;
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return;
    req.append(buf, static_cast<size_t>(n));
  }
  const auto line_end = req.find("\r\n");
  const std::string line = req.substr(0, line_end);
  const auto sp1 = line.find(' ');
  const auto sp2 = line.find(' ', sp1 + 1);
  if (sp1 == std::string::npos || sp2 == std::string::npos) return;
  const std::string method = line.substr(0, sp1);
  std::string path = line.substr(sp1 + 1, sp2 - sp1 - 1);
  if (auto q = path.find('?'); q != std::string::npos) path.resize(q);
  HttpResponse resp;
  if (method != "GET" && method != "HEAD") {
    resp.status = 405;
    resp.body = "method not allowed\n";
  } else {
    try {
      resp = handler_(method, path);
    } catch (const std::exception& e) {
      resp.status = 500;
      resp.body = std::string("internal error: ") + e.what() + "\n";
    }
  }
  std::string head = "HTTP/1.1 " + std::to_string(resp.status) + " " + StatusText(resp.status) +
                     "\r\nContent-Type: " + resp.content_type +
                     "\r\nContent-Length: " + std::to_string(resp.body.size()) +
                     "\r\nConnection: close\r\n\r\n";
  if (!SendAll(fd, head)) return;
  if (method != "HEAD") SendAll(fd, resp.body);
}

}  // namespace phalanx::metrics
