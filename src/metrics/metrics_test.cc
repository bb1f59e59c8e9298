#include "metrics/metrics.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include "metrics/http_server.h"
#include "metrics/scheduler_metrics.h"

namespace phalanx::metrics {
namespace {

TEST(Registry, RendersCountersGaugesHistograms) {
  Registry reg;
  auto& c = reg.Counter("requests_total", "Requests.", {"code"});
  c.With({"200"}).Inc();
  c.With({"200"}).Inc(2);
  c.With({"a\"b"}).Inc();
  auto& g = reg.Gauge("temperature", "Temp.");
  g.With({}).Set(1.5);
  auto& h = reg.Histogram("latency_seconds", "Latency.", {"op"}, {0.1, 1});
  h.With({"x"}).Observe(0.05);
  h.With({"x"}).Observe(0.5);
  h.With({"x"}).Observe(5);
  reg.GaugeFunc("queue", "Queue.", {"q"}, [] {
    return std::vector<std::pair<Labels, double>>{{{"active"}, 3}};
  });
  const std::string text = reg.Render();
  EXPECT_NE(text.find("# TYPE requests_total counter\n"), std::string::npos) << text;
  EXPECT_NE(text.find("requests_total{code=\"200\"} 3\n"), std::string::npos) << text;
  EXPECT_NE(text.find("requests_total{code=\"a\\\"b\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("temperature 1.5\n"), std::string::npos) << text;
  EXPECT_NE(text.find("latency_seconds_bucket{op=\"x\",le=\"0.1\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("latency_seconds_bucket{op=\"x\",le=\"1\"} 2\n"), std::string::npos);
  EXPECT_NE(text.find("latency_seconds_bucket{op=\"x\",le=\"+Inf\"} 3\n"), std::string::npos);
  EXPECT_NE(text.find("latency_seconds_sum{op=\"x\"} 5.55\n"), std::string::npos) << text;
  EXPECT_NE(text.find("latency_seconds_count{op=\"x\"} 3\n"), std::string::npos);
  EXPECT_NE(text.find("queue{q=\"active\"} 3\n"), std::string::npos);
  EXPECT_THROW(c.With({}), std::invalid_argument);
}

TEST(SchedulerMetrics, UpstreamNames) {
  Registry reg;
  SchedulerMetrics sm(reg, [] { return PendingPods{1, 2, 3, 4}; });
  sm.Attempt("scheduled", "default-scheduler");
  sm.AttemptDuration("scheduled", "default-scheduler", 0.003);
  const std::string text = reg.Render();
  EXPECT_NE(text.find("scheduler_schedule_attempts_total{result=\"scheduled\",profile=\"default-"
                      "scheduler\"} 1"),
            std::string::npos);
  EXPECT_NE(text.find("scheduler_pending_pods{queue=\"unschedulable\"} 3"), std::string::npos);
  EXPECT_NE(text.find("scheduler_scheduling_attempt_duration_seconds_bucket{result=\"scheduled\","
                      "profile=\"default-scheduler\",le=\"0.004\"} 1"),
            std::string::npos)
      << text;
}

TEST(SchedulerMetrics, PreemptionFamiliesUseUpstreamNamesAndPluginLabels) {
  Registry reg;
  SchedulerMetrics sm(reg, nullptr);
  sm.PreemptionAttempt("DefaultPreemption", "Success");
  sm.PreemptionVictims("DefaultPreemption", 3, 1);
  sm.PreemptionAttempt("GangPreemption", "Unschedulable");
  sm.PreemptionAttempt("GangPreemption", "Success");
  sm.PreemptionVictims("GangPreemption", 18, 0);
  sm.PreemptionWorkDone("error", 0.05);
  const std::string text = reg.Render();
  for (const char* want : {
           "scheduler_preemption_attempts_total 1",
           "scheduler_preemption_victims_bucket{le=\"4\"} 1",
           "scheduler_preemption_victims_bucket{le=\"2\"} 0",
           "scheduler_workload_preemption_attempts_total{result=\"Unschedulable\"} 1",
           "scheduler_workload_preemption_attempts_total{result=\"Success\"} 1",
           "scheduler_workload_preemption_victims_bucket{le=\"32\"} 1",
           "scheduler_workload_preemption_victims_bucket{le=\"16\"} 0",
           "phalanx_preemption_attempts_total{plugin=\"GangPreemption\",result=\"Success\"} 1",
           "phalanx_preemption_victims_total{plugin=\"GangPreemption\"} 18",
           "phalanx_preemption_victims_total{plugin=\"DefaultPreemption\"} 3",
           "phalanx_preemption_pdb_violations_total{plugin=\"DefaultPreemption\"} 1",
           "scheduler_preemption_goroutines_execution_total{result=\"error\"} 1",
           "scheduler_preemption_goroutines_duration_seconds_bucket{result=\"error\",le=\"0.08\"} "
           "1",
       }) {
    EXPECT_NE(text.find(want), std::string::npos) << want << "\n" << text;
  }
}

std::string Get(int port, const std::string& path) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return "";
  }
  const std::string req = "GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n";
  (void)!::write(fd, req.data(), req.size());
  std::string out;
  char buf[1024];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return out;
}

TEST(HttpServer, ServesAndRejectsBadAddresses) {
  HttpServer s;
  std::string err;
  ASSERT_TRUE(api::OkOrMessage(s.Start("127.0.0.1:0",
                                       [](const std::string&, const std::string& path) {
                                         HttpResponse r;
                                         if (path == "/healthz") {
                                           r.body = "ok\n";
                                         } else {
                                           r.status = 404;
                                         }
                                         return r;
                                       }),
                               &err))
      << err;
  ASSERT_GT(s.port(), 0);
  const std::string ok = Get(s.port(), "/healthz?verbose");
  EXPECT_EQ(ok.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << ok;
  EXPECT_NE(ok.find("\r\n\r\nok\n"), std::string::npos);
  EXPECT_EQ(Get(s.port(), "/nope").rfind("HTTP/1.1 404", 0), 0u);
  HttpServer dup;
  EXPECT_FALSE(api::OkOrMessage(dup.Start("127.0.0.1:" + std::to_string(s.port()), nullptr), &err));
  EXPECT_NE(err.find("Address already in use"), std::string::npos) << err;
  EXPECT_FALSE(api::OkOrMessage(dup.Start("localhost", nullptr), &err));
  EXPECT_NE(err.find("expected host:port"), std::string::npos) << err;
  s.Stop();
}

}  // namespace
}  // namespace phalanx::metrics
