// The reflector/informer against a scripted fake API server (plain HTTP on loopback):
// paged LIST, WATCH from the list's resourceVersion, bookmarks, relist on 410 Gone with
// the relist diffed into adds/updates/deletes, and handler registration replaying the cache.
#include "client/informer.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace phalanx::client {
namespace {

std::string PodJson(const std::string& name, const std::string& rv) {
  return R"({"metadata":{"name":")" + name + R"(","namespace":"ns","uid":")" + name +
         R"(","resourceVersion":")" + rv +
         R"("},"spec":{"containers":[{"name":"c","image":"i"}]}})";
}

// Serves one resource set; each connection gets a thread. Requests are recorded.
class FakeApiServer {
 public:
  FakeApiServer() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(fd_, 64);
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    accept_ = std::thread([this] { Accept(); });
  }
  ~FakeApiServer() {
    stop_ = true;
    accept_.join();
    for (auto& t : conns_) t.join();
    ::close(fd_);
  }
  int port() const { return port_; }
  std::vector<std::string> requests() {
    std::lock_guard<std::mutex> l(mu_);
    return requests_;
  }
  int pod_lists() const { return pod_lists_.load(); }

 private:
  void Accept() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) continue;
      conns_.emplace_back([this, c] {
        Serve(c);
        ::close(c);
      });
    }
  }
  static void Send(int c, const std::string& s) {
    (void)!::send(c, s.data(), s.size(), MSG_NOSIGNAL);
  }
  static void Json(int c, const std::string& body) {
    Send(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body);
  }
  void Hold(int c) {
    Send(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n");
    while (!stop_) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  void Serve(int c) {
    std::string req;
    char buf[4096];
    while (req.find("\r\n\r\n") == std::string::npos) {
      ssize_t n = ::recv(c, buf, sizeof buf, 0);
      if (n <= 0) return;
      req.append(buf, static_cast<size_t>(n));
    }
    const std::string line = req.substr(0, req.find("\r\n"));
    const std::string target =
        line.substr(line.find(' ') + 1, line.rfind(' ') - line.find(' ') - 1);
    {
      std::lock_guard<std::mutex> l(mu_);
      requests_.push_back(target);
    }
    const bool watch = target.find("watch=1") != std::string::npos;
    if (target == "/apis") return Json(c, R"({"kind":"APIGroupList","groups":[]})");
    if (target.rfind("/api/v1/pods", 0) != 0) {
      if (watch) return Hold(c);
      return Json(c, R"({"metadata":{"resourceVersion":"1"},"items":[]})");
    }
    // The terminal-pod watch (Succeeded / Failed): one finished pod, then nothing.
    if (target.find("fieldSelector=status.phase%21%3DPending") != std::string::npos) {
      if (watch) return Hold(c);
      return Json(
          c, R"({"metadata":{"resourceVersion":"10"},"items":[)" + PodJson("done", "8") + "]}");
    }
    if (!watch) {
      if (target.find("continue=c1") != std::string::npos) {
        return Json(c,
                    R"({"metadata":{"resourceVersion":"10"},"items":[)" + PodJson("b", "9") + "]}");
      }
      if (pod_lists_++ == 0) {
        // First page of the first list.
        return Json(c, R"({"metadata":{"resourceVersion":"10","continue":"c1"},"items":[)" +
                           PodJson("a", "5") + "]}");
      }
      // The relist after 410: a is gone, b unchanged, c modified.
      return Json(c, R"({"metadata":{"resourceVersion":"20"},"items":[)" + PodJson("b", "9") + "," +
                         PodJson("c", "15") + "]}");
    }
    if (target.find("resourceVersion=10&") != std::string::npos) {
      Send(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n");
      Send(c, R"({"type":"ADDED","object":)" + PodJson("c", "11") + "}\n");
      Send(
          c,
          R"({"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"12"}}})"
          "\n");
      Send(
          c,
          R"({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","code":410,"reason":"Expired","message":"too old resource version"}})"
          "\n");
      return;
    }
    Hold(c);  // the watch from the relist's resourceVersion
  }

  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> pod_lists_{0};
  std::thread accept_;
  std::vector<std::thread> conns_;
  std::mutex mu_;
  std::vector<std::string> requests_;
};

TEST(Informer, ListWatchBookmarkRelistOn410) {
  FakeApiServer server;
  RestConfig cfg;
  cfg.server = "http://127.0.0.1:" + std::to_string(server.port());
  cfg.qps = 0;  // unlimited
  RestClient rc(cfg);
  InformerOptions opts;
  opts.page_size = 1;
  opts.initial_backoff = std::chrono::milliseconds(10);
  LiveInformerFactory inf(rc, opts);
  std::string err;
  ASSERT_TRUE(api::OkOrMessage(inf.Discover(), &err)) << err;

  std::mutex mu;
  std::vector<std::string> events;
  auto record = [&](const std::string& e) {
    std::lock_guard<std::mutex> l(mu);
    events.push_back(e);
  };
  inf.AddPodHandlers({[&](const api::PodPtr& p) { record("add " + p->metadata.name); },
                      [&](const api::PodPtr& o, const api::PodPtr& n) {
                        record("update " + n->metadata.name + " " + o->metadata.resource_version +
                               "->" + n->metadata.resource_version);
                      },
                      [&](const api::PodPtr& p) { record("delete " + p->metadata.name); }});
  inf.Start();
  ASSERT_TRUE(api::OkOrMessage(inf.WaitForCacheSync(std::chrono::seconds(10), nullptr), &err))
      << err;
  const std::vector<std::string> want = {"add a", "add b", "add c", "delete a", "update c 11->15"};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (;;) {
    {
      std::lock_guard<std::mutex> l(mu);
      if (events.size() >= want.size()) break;
    }
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "events so far: " << events.size();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  {
    std::lock_guard<std::mutex> l(mu);
    EXPECT_EQ(events, want);
  }
  EXPECT_EQ(server.pod_lists(), 2);  // the initial list (2 pages) and one relist

  // Terminal pods come from their own watch, to their own handlers only.
  std::vector<std::string> terminal;
  inf.AddTerminalPodHandlers(
      {[&](const api::PodPtr& p) { terminal.push_back(p->metadata.name); }, {}, {}});
  EXPECT_EQ(terminal, (std::vector<std::string>{"done"}));

  // A late registration replays the cache (b and c) as adds.
  std::vector<std::string> replay;
  inf.AddPodHandlers({[&](const api::PodPtr& p) { replay.push_back(p->metadata.name); }, {}, {}});
  std::sort(replay.begin(), replay.end());
  EXPECT_EQ(replay, (std::vector<std::string>{"b", "c"}));

  bool saw_paged = false, saw_watch = false;
  for (const auto& r : server.requests()) {
    if (r.find("/api/v1/pods?limit=1&fieldSelector=status.phase%21%3DSucceeded") == 0 &&
        r.find("continue=c1") != std::string::npos) {
      saw_paged = true;
    }
    if (r.find("/api/v1/pods?watch=1&allowWatchBookmarks=true&resourceVersion=10&") == 0) {
      saw_watch = true;
    }
  }
  EXPECT_TRUE(saw_paged);
  EXPECT_TRUE(saw_watch);
  const auto t0 = std::chrono::steady_clock::now();
  inf.Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(3));
}

TEST(Informer, SyncTimeoutNamesTheFailingResource) {
  RestConfig cfg;
  cfg.server = "http://127.0.0.1:1";
  RestClient rc(cfg);
  InformerOptions opts;
  opts.initial_backoff = std::chrono::milliseconds(50);
  LiveInformerFactory inf(rc, opts);
  std::string err;
  EXPECT_FALSE(api::OkOrMessage(inf.Discover(), &err));
  EXPECT_NE(err.find("cannot connect to http://127.0.0.1:1"), std::string::npos) << err;
  inf.Start();
  EXPECT_FALSE(
      api::OkOrMessage(inf.WaitForCacheSync(std::chrono::milliseconds(500), nullptr), &err));
  EXPECT_NE(err.find("pods: cannot connect"), std::string::npos) << err;
  inf.Stop();
}

}  // namespace
}  // namespace phalanx::client
