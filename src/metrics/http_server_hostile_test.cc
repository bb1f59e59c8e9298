// Hostile clients of the /healthz /readyz /metrics server. The server handles one
// connection at a time, so a client that trickles its request must not keep it (and the
// kubelet's liveness probe) waiting; oversized and garbage requests are dropped.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "metrics/http_server.h"

namespace phalanx::metrics {
namespace {

int Connect(int port, int recv_timeout_s) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  timeval tv{recv_timeout_s, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Sends `req` and reads the reply; gives up after `timeout_s` without data.
std::string Exchange(int port, const std::string& req, int timeout_s) {
  const int fd = Connect(port, timeout_s);
  if (fd < 0) return "";
  ::send(fd, req.data(), req.size(), MSG_NOSIGNAL);
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;)
    out.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return out;
}

class HttpServerHostileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string err;
    ASSERT_TRUE(api::OkOrMessage(server_.Start("127.0.0.1:0",
                                               [](const std::string&, const std::string& path) {
                                                 HttpResponse r;
                                                 r.body = path == "/healthz" ? "ok\n" : "";
                                                 if (path != "/healthz") r.status = 404;
                                                 return r;
                                               }),
                                 &err))
        << err;
  }
  void TearDown() override { server_.Stop(); }
  HttpServer server_;
};

TEST_F(HttpServerHostileTest, TricklingClientDoesNotBlockTheProbe) {
  std::atomic<bool> done{false};
  std::atomic<bool> connected{false};
  // A slowloris client: one byte of a never-finished request head every 200 ms, for up to
  // 20 s. Before the whole-head deadline it held the server for all of that.
  std::thread slow([&] {
    const int fd = Connect(server_.port(), 1);
    connected = fd >= 0;
    const std::string head = "GET /healthz HTTP/1.1\r\nX-Slow: " + std::string(200, 'a');
    for (size_t i = 0; i < head.size() && !done; ++i) {
      if (::send(fd, &head[i], 1, MSG_NOSIGNAL) <= 0) break;
      pollfd p{fd, POLLIN, 0};
      ::poll(&p, 1, 200);  // paces the bytes; returns early when the server closes
      if (p.revents & (POLLIN | POLLHUP)) break;
    }
    ::close(fd);
  });
  while (!connected && slow.joinable()) std::this_thread::yield();
  const auto t0 = std::chrono::steady_clock::now();
  const std::string r = Exchange(server_.port(), "GET /healthz HTTP/1.1\r\n\r\n", 10);
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  done = true;
  slow.join();
  EXPECT_EQ(r.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << "waited " << waited << " s: " << r;
}

TEST_F(HttpServerHostileTest, OversizedAndGarbageRequestsAreDropped) {
  // 1 MB of header: the server stops reading at 16 KiB and answers or closes.
  const std::string big =
      "GET /healthz HTTP/1.1\r\nX-Big: " + std::string(1 << 20, 'b') + "\r\n\r\n";
  (void)Exchange(server_.port(), big, 5);
  EXPECT_EQ(Exchange(server_.port(), std::string("\x00\xff\r\n\r\n", 6), 5), "");
  EXPECT_EQ(Exchange(server_.port(), "POST /healthz HTTP/1.1\r\n\r\n", 5).rfind("HTTP/1.1 405", 0),
            0u);
  // Still serving.
  EXPECT_EQ(Exchange(server_.port(), "GET /healthz HTTP/1.1\r\n\r\n", 5).rfind("HTTP/1.1 200", 0),
            0u);
}

}  // namespace
}  // namespace phalanx::metrics
