#include "conformance/recording_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>

namespace phalanx::conformance {

namespace {

// The value of header `name` (case-insensitive) in `head`, "" when absent.
std::string Header(const std::string& head, const std::string& name) {
  std::string lower = head;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  const std::string key = "\r\n" + name + ":";
  const auto at = lower.find(key);
  if (at == std::string::npos) return "";
  auto v = at + key.size();
  while (v < head.size() && head[v] == ' ') ++v;
  const auto end = head.find("\r\n", v);
  return head.substr(v, end == std::string::npos ? std::string::npos : end - v);
}

}  // namespace

RecordingServer::RecordingServer() {
  fd_ = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  if (bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 && listen(fd_, 64) == 0) {
    socklen_t len = sizeof a;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
  }
  thread_ = std::thread([this] { Serve(); });
}

RecordingServer::~RecordingServer() {
  stop_ = true;
  shutdown(fd_, SHUT_RDWR);
  close(fd_);
  thread_.join();
}

void RecordingServer::SetResponder(Responder r) {
  std::lock_guard<std::mutex> l(mu_);
  responder_ = std::move(r);
}

std::vector<RecordedRequest> RecordingServer::requests() const {
  std::lock_guard<std::mutex> l(mu_);
  return requests_;
}

void RecordingServer::Serve() {
  while (!stop_) {
    const int c = accept(fd_, nullptr, nullptr);
    if (c < 0) return;
    std::string in;
    char buf[8192];
    size_t header_end = std::string::npos, want = 0;
    for (;;) {
      const ssize_t n = read(c, buf, sizeof buf);
      if (n <= 0) break;
      in.append(buf, static_cast<size_t>(n));
      if (header_end == std::string::npos) {
        header_end = in.find("\r\n\r\n");
        if (header_end == std::string::npos) continue;
        const std::string len = Header(in.substr(0, header_end + 2), "content-length");
        want = len.empty() ? 0 : std::stoul(len);
      }
      if (in.size() >= header_end + 4 + want) break;
    }
    RecordedRequest r;
    const auto sp1 = in.find(' '), sp2 = in.find(' ', sp1 + 1);
    if (sp1 != std::string::npos && sp2 != std::string::npos) {
      r.method = in.substr(0, sp1);
      r.path = in.substr(sp1 + 1, sp2 - sp1 - 1);
    }
    if (header_end != std::string::npos) {
      r.content_type = Header(in.substr(0, header_end + 2), "content-type");
      r.body = in.substr(header_end + 4, want);
    }
    std::pair<int, std::string> answer{r.method == "GET"    ? 404
                                       : r.method == "POST" ? 201
                                                            : 200,
                                       "{}"};
    {
      std::lock_guard<std::mutex> l(mu_);
      if (responder_) answer = responder_(r);
      requests_.push_back(r);
    }
    const std::string resp = "HTTP/1.1 " + std::to_string(answer.first) +
                             " X\r\nContent-Type: application/json\r\nContent-Length: " +
                             std::to_string(answer.second.size()) +
                             "\r\nConnection: close\r\n\r\n" + answer.second;
    (void)!write(c, resp.data(), resp.size());
    close(c);
  }
}

}  // namespace phalanx::conformance
