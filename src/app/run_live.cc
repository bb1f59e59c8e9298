#include "app/run_live.h"

#include <pthread.h>
#include <signal.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <random>
#include <thread>

#include "client/cluster_client.h"
#include "client/credential_files.h"
#include "client/informer.h"
#include "client/leader_election.h"
#include "client/rest_client.h"
#include "client/rest_config.h"
#include "config/config.h"
#include "framework/clock.h"
#include "gang/manager.h"
#include "metrics/http_server.h"
#include "metrics/metrics.h"
#include "metrics/scheduler_metrics.h"
#include "quota/queue_metrics.h"
#include "scheduler/scheduler.h"

namespace phalanx::app {

namespace {

int Fail(const std::string& msg) {
  std::fprintf(stderr, "phalanx: error: %s\n", msg.c_str());
  return 1;
}

std::string DefaultIdentity() {
  char host[256] = {0};
  if (gethostname(host, sizeof host - 1) != 0) std::snprintf(host, sizeof host, "phalanx");
  std::random_device rd;
  char suffix[32];
  std::snprintf(suffix, sizeof suffix, "_%08x%08x", rd(), rd());
  return std::string(host) + suffix;
}

// Shutdown coordination between the signal thread and the main thread.
struct Shutdown {
  std::atomic<bool> requested{false};
  std::atomic<bool> done{false};
  std::mutex mu;
  std::condition_variable cv;
  void Request() {
    requested = true;
    cv.notify_all();
  }
  void Wait() {
    std::unique_lock<std::mutex> l(mu);
    cv.wait(l, [&] { return requested.load(); });
  }
};

thread_local std::string tl_failure_result;   // set by on_failure on the scheduling thread
thread_local std::string tl_failure_profile;

}  // namespace

int RunLive(const LiveOptions& o, framework::Registry registry) {
  auto logger = spdlog::get("phalanx");
  if (!logger) logger = spdlog::stderr_color_mt("phalanx");
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::from_str(o.log_level));
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%L%$ %v");

  // ---- configuration ----
  config::KubeSchedulerConfiguration cfg;
  std::string err;
  if (o.config_path.empty()) {
    cfg = config::DefaultConfiguration();
  } else if (!api::MoveOrMessage(config::LoadConfiguration(o.config_path), &cfg, &err)) {
    return Fail(err);
  }
  if (o.binding_workers < 1) return Fail("--binding-workers must be >= 1");
  client::RestConfig rc;
  rc.qps = cfg.client_connection.qps;
  rc.burst = cfg.client_connection.burst;
  if (!api::OkOrMessage(
          client::ResolveRestConfig(o.kubeconfig, cfg.client_connection.kubeconfig, o.context, &rc),
          &err)) {
    return Fail(err);
  }
  spdlog::info("phalanx run: API server {} ({}), qps {} burst {}", rc.server, rc.source, rc.qps,
               rc.burst);
  // Group/world-readable key or token files: warn (docs/security.md explains why not refuse).
  for (const std::string& w : client::CredentialFileWarnings(rc)) spdlog::warn("{}", w);

  // SIGTERM / SIGINT are handled by one thread (blocked everywhere else; threads created
  // from here on inherit the mask).
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGTERM);
  sigaddset(&sigs, SIGINT);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);
  Shutdown shutdown;
  std::thread signal_thread([&] {
    timespec ts{0, 200 * 1000 * 1000};
    while (!shutdown.done.load()) {
      int s = sigtimedwait(&sigs, nullptr, &ts);
      if (s == SIGTERM || s == SIGINT) {
        spdlog::info("received {}: shutting down", s == SIGTERM ? "SIGTERM" : "SIGINT");
        shutdown.Request();
      }
    }
  });
  struct Joiner {
    Shutdown& s;
    std::thread& t;
    ~Joiner() {
      s.done = true;
      if (t.joinable()) t.join();
    }
  } joiner{shutdown, signal_thread};

  client::RestClient api(rc);
  client::RestClient events_api(rc);

  // ---- discovery: fails fast on TLS / auth / connection errors ----
  client::LiveInformerFactory informers(api);
  if (!api::OkOrMessage(informers.Discover(), &err)) return Fail(err);
  {
    std::string list;
    for (const auto& r : informers.Resources()) list += (list.empty() ? "" : ", ") + r;
    spdlog::info("watching {}", list);
  }

  // ---- scheduler ----
  framework::RealClock clock;
  client::LiveClusterClient cluster(api, events_api, clock);
  scheduler::SchedulerOptions so;
  so.config = cfg;
  so.registry = std::move(registry);
  so.clock = &clock;
  so.client = &cluster;
  so.binding_workers = o.binding_workers;
  so.seed = std::random_device{}();
  auto made = scheduler::Scheduler::New(std::move(so));
  if (!made.ok()) {
    return Fail((o.config_path.empty() ? std::string() : o.config_path + ": ") +
                made.status().Message());
  }
  std::unique_ptr<scheduler::Scheduler> sched = std::move(made).value();
  const std::string sole_profile =
      cfg.profiles.size() == 1 ? cfg.profiles[0].scheduler_name : std::string();

  // ---- metrics and health ----
  metrics::Registry reg;
  metrics::SchedulerMetrics sm(reg, [&] {
    auto c = sched->queue().Counts();
    return metrics::PendingPods{double(c.active), double(c.backoff), double(c.unschedulable),
                                double(c.gated)};
  });
  quota::RegisterQueueMetrics(reg, sched->queues());  // phalanx_queue_* (docs/queues.md)
  reg.GaugeFunc("phalanx_informer_synced", "1 when the informer of a resource has synced",
                {"resource"}, [&] {
                  std::vector<std::pair<metrics::Labels, double>> v;
                  for (const auto& s : informers.Status()) {
                    v.push_back({{s.resource}, s.synced ? 1.0 : 0.0});
                  }
                  return v;
                });
  reg.GaugeFunc("rest_client_requests", "Requests sent to the API server", {"client"}, [&] {
    return std::vector<std::pair<metrics::Labels, double>>{
        {{"api"}, double(api.requests())}, {{"events"}, double(events_api.requests())}};
  });
  // Per-gang state at scrape time (gangs the scheduler knows: they disappear with their
  // last member). Labels: gang = the gang key ("namespace/name", Workload gangs
  // "namespace/workload/podGroup"), dialect. At most kMaxGangSeries gangs are exported,
  // in key order, to bound the scrape size.
  constexpr size_t kMaxGangSeries = 2000;
  using GangRows = std::vector<std::pair<metrics::Labels, double>>;
  auto per_gang = [&sched](const std::function<void(const gang::GangInfo&, GangRows*)>& fn) {
    GangRows v;
    auto keys = sched->gangs().GangKeys();
    if (keys.size() > kMaxGangSeries) keys.resize(kMaxGangSeries);
    for (const auto& k : keys) {
      auto info = sched->gangs().Info(k, /*with_members=*/false);
      if (info) fn(*info, &v);
    }
    return v;
  };
  auto dialect = [](const gang::GangInfo& g) {
    return std::string(gang::DialectName(g.spec ? g.spec->dialect : g.ref.dialect));
  };
  reg.GaugeFunc("phalanx_gang_pods", "Member pods of a gang by state (pending, assumed, bound)",
                {"gang", "dialect", "state"}, [=] {
                  return per_gang([&](const gang::GangInfo& g, auto* v) {
                    v->push_back({{g.key, dialect(g), "pending"}, double(g.counts.pending)});
                    v->push_back({{g.key, dialect(g), "assumed"}, double(g.counts.assumed)});
                    v->push_back({{g.key, dialect(g), "bound"}, double(g.counts.bound)});
                  });
                });
  reg.GaugeFunc("phalanx_gang_min_member", "A gang's quorum (minMember / minCount)",
                {"gang", "dialect"}, [=] {
                  return per_gang([&](const gang::GangInfo& g, auto* v) {
                    if (g.spec) v->push_back({{g.key, dialect(g)}, double(g.spec->min_member)});
                  });
                });
  reg.GaugeFunc("phalanx_gang_scheduling_attempts",
                "PodGroup cycles (or Permit rounds) a gang went through", {"gang", "dialect"},
                [=] {
                  return per_gang([&](const gang::GangInfo& g, auto* v) {
                    v->push_back({{g.key, dialect(g)}, double(g.attempts)});
                  });
                });
  reg.GaugeFunc("phalanx_gang_wait_seconds",
                "Seconds from a gang's quorum (minMember pods exist) to minMember bound, or "
                "to now while it is not yet running",
                {"gang", "dialect"}, [=, &clock] {
                  const api::Timestamp now = clock.Now();
                  return per_gang([&](const gang::GangInfo& g, auto* v) {
                    if (!g.has_quorum) return;
                    const api::Timestamp end = g.running ? g.running_time : now;
                    v->push_back({{g.key, dialect(g)},
                                  double(end - g.quorum_time) / double(api::kNanosPerSecond)});
                  });
                });
  std::atomic<bool> ready{false};
  std::atomic<bool> lost{false};
  metrics::HttpServer http;
  if (!o.bind_address.empty()) {
    auto handler = [&](const std::string&, const std::string& path) {
      metrics::HttpResponse r;
      if (path == "/healthz" || path == "/livez") {
        r.status = lost.load() ? 500 : 200;
        r.body = lost.load() ? "leader election lost\n" : "ok\n";
      } else if (path == "/readyz") {
        const bool ok = ready.load() && !shutdown.requested.load();
        r.status = ok ? 200 : 503;
        r.body = ok ? "ok\n" : (shutdown.requested.load() ? "shutting down\n"
                                                          : "informer caches not synced\n");
      } else if (path == "/metrics") {
        r.content_type = "text/plain; version=0.0.4; charset=utf-8";
        r.body = reg.Render();
      } else {
        r.status = 404;
        r.body = "not found\n";
      }
      return r;
    };
    if (!api::OkOrMessage(http.Start(o.bind_address, handler), &err)) {
      return Fail("--bind-address: " + err);
    }
    spdlog::info("serving /healthz, /readyz and /metrics on {}", o.bind_address);
  }

  std::atomic<std::thread::id> sched_thread_id{};
  sched->on_bound = [&](const api::Pod& pod, const std::string& node) {
    sm.Attempt("scheduled", pod.spec.scheduler_name);
    spdlog::debug("bound {} to {}", pod.Key(), node);
  };
  sched->on_failure = [&](const framework::QueuedPodInfo& qp, const framework::Status& st) {
    const std::string result = st.IsRejected() ? "unschedulable" : "error";
    sm.Attempt(result, qp.Pod().spec.scheduler_name);
    if (std::this_thread::get_id() == sched_thread_id.load()) {
      tl_failure_result = result;
      tl_failure_profile = qp.Pod().spec.scheduler_name;
    } else {
      sm.BindingFailure();
    }
    spdlog::debug("could not schedule {}: {}", qp.Pod().Key(), st.Message());
  };

  // ---- informers ----
  // Gang objects' uids for the events recorded on them (registered first, so that the
  // uid is known before the scheduler reacts to the object).
  informers.AddObjectHandlers(
      {[&](const api::UnstructuredPtr& o) { cluster.ObserveObject(*o, false); },
       [&](const api::UnstructuredPtr&, const api::UnstructuredPtr& o) {
         cluster.ObserveObject(*o, false);
       },
       [&](const api::UnstructuredPtr& o) { cluster.ObserveObject(*o, true); }});
  sched->AddEventHandlers(informers);
  informers.Start();
  if (!api::OkOrMessage(informers.WaitForCacheSync(std::chrono::seconds(o.sync_timeout_seconds),
                                                   &shutdown.requested),
                        &err)) {
    informers.Stop();
    cluster.Flush(std::chrono::milliseconds(0));
    if (shutdown.requested.load()) return 0;
    return Fail(err);
  }
  ready = true;
  spdlog::info("informer caches synced");

  // ---- leader election ----
  std::unique_ptr<client::LeaderElector> elector;
  std::thread waker;  // wakes the elector when a shutdown is requested
  struct WakerJoin {
    Shutdown& s;
    std::thread& t;
    ~WakerJoin() {
      s.Request();
      if (t.joinable()) t.join();
    }
  } waker_join{shutdown, waker};
  const auto& le = cfg.leader_election;
  if (le.leader_elect) {
    client::LeaderElectionConfig lc;
    lc.lease_namespace = le.resource_namespace;
    lc.lease_name = le.resource_name;
    lc.identity = o.identity.empty() ? DefaultIdentity() : o.identity;
    lc.lease_duration = std::chrono::seconds(le.lease_duration_seconds);
    lc.renew_deadline = std::chrono::seconds(le.renew_deadline_seconds);
    lc.retry_period = std::chrono::seconds(le.retry_period_seconds);
    elector = std::make_unique<client::LeaderElector>(api, lc, clock);
    sm.SetLeader(lc.lease_name, false);
    spdlog::info("leader election: {} campaigning for lease {}/{}", lc.identity,
                 lc.lease_namespace, lc.lease_name);
    waker = std::thread([&] {
      shutdown.Wait();
      elector->Wake();
    });
    const bool acquired = elector->Acquire(shutdown.requested);
    if (!acquired) {
      informers.Stop();
      cluster.Flush(std::chrono::milliseconds(0));
      http.Stop();
      return 0;
    }
    sm.SetLeader(lc.lease_name, true);
  }

  // ---- scheduling ----
  std::atomic<bool> loop_stop{false};
  std::thread ticker([&] {
    while (!loop_stop.load()) {
      sched->Tick();
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  std::thread loop([&] {
    sched_thread_id = std::this_thread::get_id();
    while (!loop_stop.load()) {
      const int64_t before = sched->stats().attempts;
      tl_failure_result.clear();
      const auto t0 = std::chrono::steady_clock::now();
      if (!sched->ScheduleOne(/*blocking=*/true)) break;
      if (sched->stats().attempts == before) continue;  // skipped (deleted, assumed)
      const double secs =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (!tl_failure_result.empty()) {
        sm.AttemptDuration(tl_failure_result, tl_failure_profile, secs);
      } else {
        sm.AttemptDuration("scheduled", sole_profile, secs);
      }
    }
  });
  spdlog::info("scheduling (binding workers: {})", o.binding_workers);

  int code = 0;
  if (elector) {
    // Renew until shutdown or until the Lease is lost.
    if (!elector->Renew(shutdown.requested)) {
      lost = true;
      code = Fail("leader election lost: lease " + le.resource_namespace + "/" + le.resource_name +
                  ": " + elector->last_error());
    }
    sm.SetLeader(le.resource_name, false);
  } else {
    shutdown.Wait();
  }

  // ---- shutdown: stop popping, finish in-flight bindings, flush writes ----
  spdlog::info("stopping: finishing in-flight binding cycles");
  loop_stop = true;
  sched->Stop();  // closes the queue (Pop returns) and waits for binding cycles
  loop.join();
  ticker.join();
  cluster.Flush(std::chrono::seconds(5));
  if (elector && !lost.load()) elector->Release();
  informers.Stop();
  http.Stop();
  const auto st = sched->stats();
  const auto cc = cluster.counters();
  spdlog::info("stopped: {} attempts, {} scheduled, {} unschedulable, {} errors, {} binds, "
               "{} events, {} PodGroup status writes ({} skipped as unchanged)",
               st.attempts, st.scheduled, st.unschedulable, st.errors, cc.binds, cc.events,
               cc.podgroup_status_writes, cc.podgroup_status_skipped);
  return code;
}

}  // namespace phalanx::app
