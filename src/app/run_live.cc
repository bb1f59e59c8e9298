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
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "app/app.h"
#include "app/live_checks.h"
#include "app/live_metrics.h"
#include "app/queue_status_sink.h"
#include "client/cluster_client.h"
#include "client/credential_files.h"
#include "client/informer.h"
#include "client/leader_election.h"
#include "client/rest_client.h"
#include "client/rest_config.h"
#include "config/config.h"
#include "framework/clock.h"
#include "gang/default_podgroup_manager.h"
#include "metrics/http_server.h"
#include "metrics/metrics.h"
#include "metrics/scheduler_metrics.h"
#include "quota/queue_metrics.h"
#include "quota/queue_status.h"
#include "scheduler/scheduler.h"

namespace phalanx::app {

namespace {

std::string DefaultIdentity() {
  char host[256] = {0};
  if (gethostname(host, sizeof host - 1) != 0) std::snprintf(host, sizeof host, "phalanx");
  std::random_device rd;
  char suffix[32];
  std::snprintf(suffix, sizeof suffix, "_%08x%08x", rd(), rd());
  return std::string(host) + suffix;
}

// Shutdown coordination between the signal thread and the main thread.
// `requested` is atomic so that loops can poll it; it is set under `mu` so that Wait, which
// checks it under `mu`, cannot miss the change.
struct Shutdown {
  std::atomic<bool> requested{false};
  std::atomic<bool> done{false};
  absl::Mutex mu;
  void Request() ABSL_LOCKS_EXCLUDED(mu) {
    absl::MutexLock l(&mu);
    requested = true;
  }
  void Wait() ABSL_LOCKS_EXCLUDED(mu) {
    absl::MutexLock l(&mu);
    mu.Await(absl::Condition(
        +[](std::atomic<bool>* r) { return r->load(); }, &requested));
  }
};

// Joins `t` on destruction after `before` (e.g. asking the thread to stop).
struct JoinOnExit {
  std::thread& t;
  std::function<void()> before;
  ~JoinOnExit() {
    before();
    if (t.joinable()) t.join();
  }
};

// One `phalanx run`, phase by phase. Members are declared in the order the phases create
// them, so that they are torn down in reverse: the leader-election waker first, the
// signal thread last.
class LiveRun {
 public:
  LiveRun(const LiveOptions& o, framework::Registry registry)
      : o_(o), registry_(std::move(registry)) {}

  int Run() {
    if (int code = Configure(); code != 0) return code;
    StartSignalThread();
    api_ = std::make_unique<client::RestClient>(rc_);
    events_api_ = std::make_unique<client::RestClient>(rc_);
    // Discovery: fails fast on TLS / auth / connection errors.
    informers_ = std::make_unique<client::LiveInformerFactory>(*api_);
    if (auto s = informers_->Discover(); !s.ok()) return Fail(std::string(s.message()));
    std::string list;
    for (const auto& r : informers_->Resources()) list += (list.empty() ? "" : ", ") + r;
    spdlog::info("watching {}", list);
    if (int code = NewScheduler(); code != 0) return code;
    RegisterMetrics();
    RegisterGangMetrics();
    if (int code = StartHealthServer(); code != 0) return code;
    InstallCallbacks();
    bool stop = false;
    if (int code = SyncInformers(&stop); code != 0 || stop) return code;
    if (int code = CampaignForLeadership(&stop); code != 0 || stop) return code;
    StartScheduling();
    return WaitAndShutdown();
  }

 private:
  // Logging, the KubeSchedulerConfiguration and the API server's address and credentials.
  int Configure() {
    auto logger = spdlog::get("phalanx");
    if (!logger) logger = spdlog::stderr_color_mt("phalanx");
    spdlog::set_default_logger(logger);
    spdlog::set_level(spdlog::level::from_str(o_.log_level));
    spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%L%$ %v");
    if (auto s = LoadConfigOrDefault(o_.config_path, &cfg_); !s.ok()) {
      return Fail(std::string(s.message()));
    }
    if (o_.binding_workers < 1) return Fail("--binding-workers must be >= 1");
    rc_.qps = cfg_.client_connection.qps;
    rc_.burst = cfg_.client_connection.burst;
    if (auto s = client::ResolveRestConfig(o_.kubeconfig, cfg_.client_connection.kubeconfig,
                                           o_.context, &rc_);
        !s.ok()) {
      return Fail(std::string(s.message()));
    }
    spdlog::info("phalanx run: API server {} ({}), qps {} burst {}", rc_.server, rc_.source,
                 rc_.qps, rc_.burst);
    // Group/world-readable key or token files: warn (docs/security.md explains why not refuse).
    for (const std::string& w : client::CredentialFileWarnings(rc_)) spdlog::warn("{}", w);
    return 0;
  }

  // SIGTERM / SIGINT are handled by one thread (blocked everywhere else; threads created
  // from here on inherit the mask).
  void StartSignalThread() {
    sigemptyset(&sigs_);
    sigaddset(&sigs_, SIGTERM);
    sigaddset(&sigs_, SIGINT);
    pthread_sigmask(SIG_BLOCK, &sigs_, nullptr);
    signal_thread_ = std::thread([this] {
      timespec ts{0, 200 * 1000 * 1000};
      while (!shutdown_.done.load()) {
        int s = sigtimedwait(&sigs_, nullptr, &ts);
        if (s == SIGTERM || s == SIGINT) {
          spdlog::info("received {}: shutting down", s == SIGTERM ? "SIGTERM" : "SIGINT");
          shutdown_.Request();
        }
      }
    });
  }

  int NewScheduler() {
    cluster_ = std::make_unique<client::LiveClusterClient>(*api_, *events_api_, clock_);
    scheduler::SchedulerOptions so;
    so.config = cfg_;
    so.registry = std::move(registry_);
    so.clock = &clock_;
    so.client = cluster_.get();
    so.binding_workers = o_.binding_workers;
    so.seed = std::random_device{}();
    auto made = scheduler::Scheduler::New(std::move(so));
    if (!made.ok()) {
      return Fail((o_.config_path.empty() ? std::string() : o_.config_path + ": ") +
                  made.status().Message());
    }
    sched_ = std::move(made).value();
    if (api::Status e = LiveProfileError(*sched_, cfg_); !e.ok()) {
      return Fail((o_.config_path.empty() ? std::string() : o_.config_path + ": ") +
                  std::string(e.message()));
    }
    for (const std::string& w : LiveProfileWarnings(*sched_, cfg_, informers_->Resources())) {
      spdlog::warn("{}", w);
    }
    return 0;
  }

  void RegisterMetrics() {
    // kube-scheduler's families (app/live_metrics.h), then Phalanx's own.
    live_metrics_ = std::make_unique<LiveMetrics>(reg_, *sched_, clock_);
    sm_ = &live_metrics_->scheduler_metrics();
    quota::RegisterQueueMetrics(reg_, sched_->queue_manager());  // phalanx_queue_* (docs/queues.md)
    reg_.GaugeFunc("phalanx_informer_synced", "1 when the informer of a resource has synced",
                   {"resource"}, [this] {
                     std::vector<std::pair<metrics::Labels, double>> v;
                     for (const auto& s : informers_->Status()) {
                       v.push_back({{s.resource}, s.synced ? 1.0 : 0.0});
                     }
                     return v;
                   });
    reg_.GaugeFunc("rest_client_requests", "Requests sent to the API server", {"client"}, [this] {
      return std::vector<std::pair<metrics::Labels, double>>{
          {{"api"}, double(api_->requests())}, {{"events"}, double(events_api_->requests())}};
    });
  }

  // Per-gang state at scrape time (gangs the scheduler knows: they disappear with their
  // last member). Labels: gang = the gang key ("namespace/name", Workload gangs
  // "namespace/workload/podGroup"), dialect. At most kMaxGangSeries gangs are exported,
  // in key order, to bound the scrape size.
  void RegisterGangMetrics() {
    constexpr size_t kMaxGangSeries = 2000;
    using GangRows = std::vector<std::pair<metrics::Labels, double>>;
    scheduler::Scheduler* sched = sched_.get();
    auto per_gang = [sched](const std::function<void(const gang::GangInfo&, GangRows*)>& fn) {
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
    reg_.GaugeFunc("phalanx_gang_pods", "Member pods of a gang by state (pending, assumed, bound)",
                   {"gang", "dialect", "state"}, [=] {
                     return per_gang([&](const gang::GangInfo& g, auto* v) {
                       v->push_back({{g.key, dialect(g), "pending"}, double(g.counts.pending)});
                       v->push_back({{g.key, dialect(g), "assumed"}, double(g.counts.assumed)});
                       v->push_back({{g.key, dialect(g), "bound"}, double(g.counts.bound)});
                     });
                   });
    reg_.GaugeFunc("phalanx_gang_min_member", "A gang's quorum (minMember / minCount)",
                   {"gang", "dialect"}, [=] {
                     return per_gang([&](const gang::GangInfo& g, auto* v) {
                       if (g.spec) v->push_back({{g.key, dialect(g)}, double(g.spec->min_member)});
                     });
                   });
    reg_.GaugeFunc("phalanx_gang_scheduling_attempts",
                   "PodGroup cycles (or Permit rounds) a gang went through", {"gang", "dialect"},
                   [=] {
                     return per_gang([&](const gang::GangInfo& g, auto* v) {
                       v->push_back({{g.key, dialect(g)}, double(g.attempts)});
                     });
                   });
    const framework::Clock* clock = &clock_;
    reg_.GaugeFunc("phalanx_gang_wait_seconds",
                   "Seconds from a gang's quorum (minMember pods exist) to minMember bound, or "
                   "to now while it is not yet running",
                   {"gang", "dialect"}, [=] {
                     const api::Timestamp now = clock->Now();
                     return per_gang([&](const gang::GangInfo& g, auto* v) {
                       if (!g.has_quorum) return;
                       const api::Timestamp end = g.running ? g.running_time : now;
                       v->push_back({{g.key, dialect(g)},
                                     double(end - g.quorum_time) / double(api::kNanosPerSecond)});
                     });
                   });
    // Gang reservations (GangReservation plugin, gang/reservation.h).
    reg_.GaugeFunc("phalanx_gang_reservations",
                   "Gang reservations since start, by outcome (made; started, expired, gone: "
                   "released; not_made: failed cycles over the threshold that got none; evictions, "
                   "evicted_pods: starvation evictions of preemptAfterSeconds and their victims)",
                   {"outcome"}, [sched] {
                     const gang::ReservationCounters c = sched->reservations().Counters();
                     return GangRows{{{"made"}, double(c.made)},
                                     {{"started"}, double(c.released_bound)},
                                     {{"expired"}, double(c.expired)},
                                     {{"gone"}, double(c.released_gone)},
                                     {{"not_made"}, double(c.not_made)},
                                     {{"evictions"}, double(c.evictions)},
                                     {{"evicted_pods"}, double(c.evicted_pods)}};
                   });
    reg_.GaugeFunc("phalanx_gang_reservation_forecast_start_seconds",
                   "Forecast start (Unix seconds) of each active gang reservation",
                   {"gang", "nodes"}, [sched] {
                     GangRows v;
                     if (auto view = sched->reservations().View()) {
                       for (const auto& r : view->reservations) {
                         v.push_back({{r.gang, std::to_string(r.nodes.size())},
                                      double(r.forecast_start) / double(api::kNanosPerSecond)});
                       }
                     }
                     return v;
                   });
  }

  // /healthz, /livez, /readyz and /metrics (app/serving.h: HTTPS with delegated auth on
  // --bind-address:--secure-port, or plain HTTP on a host:port --bind-address).
  int StartHealthServer() {
    auto handler = [this](const std::string& path) {
      metrics::HttpResponse r;
      if (path == "/healthz" || path == "/livez") {
        r.status = lost_.load() ? 500 : 200;
        r.body = lost_.load() ? "leader election lost\n" : "ok\n";
      } else if (path == "/readyz") {
        const bool ok = ready_.load() && !shutdown_.requested.load();
        r.status = ok ? 200 : 503;
        r.body =
            ok ? "ok\n"
               : (shutdown_.requested.load() ? "shutting down\n" : "informer caches not synced\n");
      } else if (path == "/metrics") {
        r.content_type = "text/plain; version=0.0.4; charset=utf-8";
        r.body = reg_.Render();
      } else {
        r.status = 404;
        r.body = "not found\n";
      }
      return r;
    };
    // TokenReviews and SubjectAccessReviews get their own connection and rate limiter, as
    // upstream's delegated authn/authz clients do.
    auth_api_ = std::make_unique<client::RestClient>(rc_);
    if (auto s = http_.Start(o_.serving, auth_api_.get(), handler); !s.ok()) {
      return Fail(std::string(s.message()));
    }
    if (!http_.plan().plain_address.empty()) {
      spdlog::info("serving /healthz, /readyz and /metrics over plain HTTP on {}",
                   http_.plan().plain_address);
    }
    if (!http_.plan().secure_address.empty()) {
      spdlog::info(
          "serving /healthz, /readyz and /metrics over HTTPS on {} ({}; delegated "
          "authentication and authorization)",
          http_.plan().secure_address,
          o_.serving.tls_cert_file.empty() ? "self-signed certificate" : o_.serving.tls_cert_file);
    }
    return 0;
  }

  void InstallCallbacks() {
    sched_->on_bound = [this](const api::Pod& pod, const std::string& node) {
      live_metrics_->OnBound(pod);
      spdlog::debug("bound {} to {}", pod.Key(), node);
    };
    sched_->on_failure = [this](const framework::QueuedPodInfo& qp, const framework::Status& st,
                                scheduler::Scheduler::FailurePhase phase) {
      live_metrics_->OnFailure(qp, st, phase);
      spdlog::debug("could not schedule {}: {}", qp.Pod().Key(), st.Message());
    };
    // Gang objects' uids for the events recorded on them (registered first, so that the
    // uid is known before the scheduler reacts to the object).
    client::LiveClusterClient* cluster = cluster_.get();
    informers_->AddObjectHandlers(
        {[cluster](const api::UnstructuredPtr& o) { cluster->ObserveObject(*o, false); },
         [cluster](const api::UnstructuredPtr&, const api::UnstructuredPtr& o) {
           cluster->ObserveObject(*o, false);
         },
         [cluster](const api::UnstructuredPtr& o) { cluster->ObserveObject(*o, true); }});
    sched_->AddEventHandlers(live_metrics_->TimedInformers(*informers_));
  }

  // Starts the informers and waits for their caches; *stop when a shutdown came first.
  int SyncInformers(bool* stop) {
    informers_->Start();
    if (auto s = informers_->WaitForCacheSync(std::chrono::seconds(o_.sync_timeout_seconds),
                                              &shutdown_.requested);
        !s.ok()) {
      informers_->Stop();
      cluster_->Flush(std::chrono::milliseconds(0));
      *stop = true;
      if (shutdown_.requested.load()) return 0;
      return Fail(std::string(s.message()));
    }
    ready_ = true;
    spdlog::info("informer caches synced");
    return 0;
  }

  // Campaigns for the Lease unless leaderElect is false; *stop when a shutdown came first.
  int CampaignForLeadership(bool* stop) {
    const auto& le = cfg_.leader_election;
    if (!le.leader_elect) return 0;
    client::LeaderElectionConfig lc;
    lc.lease_namespace = le.resource_namespace;
    lc.lease_name = le.resource_name;
    lc.identity = o_.identity.empty() ? DefaultIdentity() : o_.identity;
    lc.lease_duration = std::chrono::seconds(le.lease_duration_seconds);
    lc.renew_deadline = std::chrono::seconds(le.renew_deadline_seconds);
    lc.retry_period = std::chrono::seconds(le.retry_period_seconds);
    elector_ = std::make_unique<client::LeaderElector>(*api_, lc, clock_);
    sm_->SetLeader(lc.lease_name, false);
    spdlog::info("leader election: {} campaigning for lease {}/{}", lc.identity, lc.lease_namespace,
                 lc.lease_name);
    waker_ = std::thread([this] {  // wakes the elector when a shutdown is requested
      shutdown_.Wait();
      elector_->Wake();
    });
    if (!elector_->Acquire(shutdown_.requested)) {
      informers_->Stop();
      cluster_->Flush(std::chrono::milliseconds(0));
      http_.Stop();
      *stop = true;
      return 0;
    }
    sm_->SetLeader(lc.lease_name, true);
    return 0;
  }

  // The ticker (periodic queue work) and the scheduling loop, each on its own thread.
  void StartScheduling() {
    ticker_ = std::thread([this] {
      while (!loop_stop_.load()) {
        sched_->Tick();
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    });
    loop_ = std::thread([this] {
      while (!loop_stop_.load()) {
        if (!live_metrics_->ScheduleOne(/*blocking=*/true)) break;
      }
    });
    // Queue status (quota/queue_status.h): written by the leader only, at most once a
    // second, and only for queues whose figures changed; invalid queue objects are reported
    // as Events on them.
    queue_sink_ = std::make_unique<LiveQueueStatusSink>(*api_, *cluster_);
    queue_status_ =
        std::make_unique<quota::QueueStatusWriter>(sched_->queue_manager(), *queue_sink_);
    queue_status_thread_ = std::thread([this] {
      while (!loop_stop_.load()) {
        queue_status_->Sync(clock_.Now());
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
      }
    });
    spdlog::info("scheduling (binding workers: {})", o_.binding_workers);
  }

  // Leads (renewing the Lease) or waits until shutdown; then stops popping, finishes
  // in-flight bindings and flushes writes.
  int WaitAndShutdown() {
    const auto& le = cfg_.leader_election;
    int code = 0;
    if (elector_) {
      if (!elector_->Renew(shutdown_.requested)) {
        lost_ = true;
        code = Fail("leader election lost: lease " + le.resource_namespace + "/" +
                    le.resource_name + ": " + std::string(elector_->last_error().message()));
      }
      sm_->SetLeader(le.resource_name, false);
    } else {
      shutdown_.Wait();
    }
    spdlog::info("stopping: finishing in-flight binding cycles");
    loop_stop_ = true;
    sched_->Stop();  // closes the queue (Pop returns) and waits for binding cycles
    loop_.join();
    ticker_.join();
    queue_status_thread_.join();
    cluster_->Flush(std::chrono::seconds(5));
    if (elector_ && !lost_.load()) elector_->Release();
    informers_->Stop();
    http_.Stop();
    const auto st = sched_->stats();
    const auto cc = cluster_->counters();
    const auto qc = queue_status_->counters();
    spdlog::info(
        "stopped: {} attempts, {} scheduled, {} unschedulable, {} errors, {} binds, "
        "{} events, {} PodGroup status writes ({} skipped as unchanged), "
        "{} queue status writes ({} errors)",
        st.attempts, st.scheduled, st.unschedulable, st.errors, cc.binds, cc.events,
        cc.podgroup_status_writes, cc.podgroup_status_skipped, qc.writes, qc.errors);
    return code;
  }

  const LiveOptions& o_;
  framework::Registry registry_;
  config::KubeSchedulerConfiguration cfg_;
  client::RestConfig rc_;
  sigset_t sigs_;
  Shutdown shutdown_;
  std::thread signal_thread_;
  JoinOnExit signal_join_{signal_thread_, [this] { shutdown_.done = true; }};
  std::unique_ptr<client::RestClient> api_, events_api_, auth_api_;
  std::unique_ptr<client::LiveInformerFactory> informers_;
  framework::RealClock clock_;
  std::unique_ptr<client::LiveClusterClient> cluster_;
  // Declared before sched_, which reports to them until its binding pool has stopped.
  metrics::Registry reg_;
  std::unique_ptr<LiveMetrics> live_metrics_;  // installed on sched_: must outlive it
  metrics::SchedulerMetrics* sm_ = nullptr;    // live_metrics_'s
  std::unique_ptr<scheduler::Scheduler> sched_;
  std::atomic<bool> ready_{false};
  std::atomic<bool> lost_{false};
  Serving http_;
  std::unique_ptr<client::LeaderElector> elector_;
  std::thread waker_;
  JoinOnExit waker_join_{waker_, [this] { shutdown_.Request(); }};
  std::atomic<bool> loop_stop_{false};
  std::thread ticker_, loop_;
  std::unique_ptr<LiveQueueStatusSink> queue_sink_;
  std::unique_ptr<quota::QueueStatusWriter> queue_status_;
  std::thread queue_status_thread_;
};

}  // namespace

int RunLive(const LiveOptions& o, framework::Registry registry) {
  LiveRun run(o, std::move(registry));
  return run.Run();
}

namespace {

class RunCommand : public Command {
 public:
  CLI::App* Declare(CLI::App& app) override {
    auto* c = app.add_subcommand("run", "Schedule pods of a real cluster (kube-apiserver)");
    c->add_option("--config", o_.config_path, "KubeSchedulerConfiguration file");
    c->add_option("--kubeconfig", o_.kubeconfig,
                  "kubeconfig (default: clientConnection.kubeconfig, $KUBECONFIG, "
                  "in-cluster, ~/.kube/config)");
    c->add_option("--context", o_.context, "kubeconfig context (default: current-context)");
    c->add_option("--bind-address", o_.serving.bind_address,
                  "IP address for the HTTPS endpoint (/healthz, /readyz, /livez, /metrics) on "
                  "--secure-port; host:port serves them over plain HTTP instead (\"\": none)");
    secure_port_ = c->add_option("--secure-port", o_.serving.secure_port,
                                 "HTTPS port with delegated authentication and authorization "
                                 "(0: none)");
    c->add_option("--tls-cert-file", o_.serving.tls_cert_file,
                  "PEM serving certificate (default: a self-signed one made at start)");
    c->add_option("--tls-private-key-file", o_.serving.tls_private_key_file,
                  "PEM private key of --tls-cert-file");
    c->add_option("--authorization-always-allow-paths", o_.serving.always_allow_paths,
                  "Paths served without authorization on the HTTPS endpoint")
        ->delimiter(',');
    c->add_option("--binding-workers", o_.binding_workers, "Concurrent binding cycles");
    c->add_option("--sync-timeout", o_.sync_timeout_seconds,
                  "Seconds to wait for the informer caches");
    c->add_option("--identity", o_.identity, "Leader election identity (default: hostname_random)");
    c->add_option("--log-level", o_.log_level, "trace, debug, info, warn, error")
        ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}));
    return c;
  }
  int Run(framework::Registry registry) override {
    o_.serving.secure_port_set = secure_port_ && secure_port_->count() > 0;
    return RunLive(o_, std::move(registry));
  }

 private:
  LiveOptions o_;
  CLI::Option* secure_port_ = nullptr;
};

}  // namespace

std::unique_ptr<Command> NewRunCommand() { return std::make_unique<RunCommand>(); }

}  // namespace phalanx::app
