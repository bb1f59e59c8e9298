#include "app/live_load.h"

#include <simdjson.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "app/app.h"
#include "client/objects.h"
#include "client/rest_client.h"
#include "client/rest_config.h"

namespace phalanx::app {

namespace {

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string Name(const char* prefix, int i) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s-%05d", prefix, i);
  return buf;
}

// scheduler_perf config/node-default.yaml.
std::string NodeJson(const std::string& name) {
  return "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"" + name +
         "\",\"labels\":{\"kubernetes.io/hostname\":\"" + name +
         "\"}},\"spec\":{},\"status\":{\"capacity\":{\"pods\":\"110\",\"cpu\":\"4\",\"memory\":"
         "\"32Gi\"},\"allocatable\":{\"pods\":\"110\",\"cpu\":\"4\",\"memory\":\"32Gi\"},"
         "\"conditions\":[{\"status\":\"True\",\"type\":\"Ready\"}],\"phase\":\"Running\"}}";
}

// scheduler_perf config/pod-default.yaml.
std::string PodJson(const std::string& ns, const std::string& name) {
  return "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"" + name +
         "\",\"namespace\":\"" + ns +
         "\"},\"spec\":{\"containers\":[{\"image\":\"k8s.gcr.io/pause:3.2\",\"name\":\"pause\","
         "\"ports\":[{\"containerPort\":80}],\"resources\":{\"limits\":{\"cpu\":\"100m\","
         "\"memory\":\"500Mi\"},\"requests\":{\"cpu\":\"100m\",\"memory\":\"500Mi\"}}}]}}";
}

// Runs fn(i) for i in [0, n) on `workers` threads; stops at the first error (returned;
// OK when every call was).
api::Status ParallelFor(int n, int workers, const std::function<api::Status(int)>& fn) {
  std::atomic<int> next{0};
  absl::Mutex mu;
  api::Status first_err;  // guarded by mu
  std::vector<std::thread> ts;
  for (int w = 0; w < std::max(1, workers); ++w) {
    ts.emplace_back([&] {
      for (;;) {
        {
          absl::MutexLock l(&mu);
          if (!first_err.ok()) return;
        }
        const int i = next.fetch_add(1);
        if (i >= n) return;
        api::Status err = fn(i);
        if (!err.ok()) {
          absl::MutexLock l(&mu);
          if (first_err.ok()) first_err = std::move(err);
          return;
        }
      }
    });
  }
  for (auto& t : ts) t.join();
  return first_err;
}

int Create(const LoadOptions& o, client::RestClient& api) {
  const std::string ns = o.namespace_;
  {
    client::Response r = api.Do("POST", "/api/v1/namespaces",
                                "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{"
                                "\"name\":\"" +
                                    ns + "\"}}");
    if (!r.ok() && r.status != 409) {
      return Fail(api.Describe("POST", "/api/v1/namespaces", r));
    }
  }
  auto create = [&](const std::string& path, const std::string& body) -> api::Status {
    client::Response r = api.Do("POST", path, body);
    if (r.ok() || r.status == 409) return absl::OkStatus();
    return api.ToStatus("POST", path, r);
  };
  auto t0 = std::chrono::steady_clock::now();
  api::Status err = ParallelFor(o.nodes, o.workers, [&](int i) {
    return create("/api/v1/nodes", NodeJson(Name("node", i)));
  });
  if (!err.ok()) return Fail(std::string(err.message()));
  auto t1 = std::chrono::steady_clock::now();
  const std::string pods_path = "/api/v1/namespaces/" + ns + "/pods";
  err = ParallelFor(o.pods, o.workers,
                    [&](int i) { return create(pods_path, PodJson(ns, Name("pod", i))); });
  if (!err.ok()) return Fail(std::string(err.message()));
  auto t2 = std::chrono::steady_clock::now();
  const double dn = std::chrono::duration<double>(t1 - t0).count();
  const double dp = std::chrono::duration<double>(t2 - t1).count();
  std::printf("created %d nodes in %.1f s (%.0f/s), %d pods in %.1f s (%.0f/s), %d workers\n",
              o.nodes, dn, dn > 0 ? o.nodes / dn : 0.0, o.pods, dp, dp > 0 ? o.pods / dp : 0.0,
              o.workers);
  return 0;
}

// GET a list and calls fn(item) for each element of .items; returns the list's
// resourceVersion through *rv. Pages of 5000. OK, or the failed request's status
// (RestClient::ToStatus), or DataLoss "GET <path>: malformed JSON".
api::Status ListItems(client::RestClient& api, const std::string& path,
                      const std::function<void(simdjson::dom::element)>& fn, std::string* rv) {
  simdjson::dom::parser parser;
  std::string cont;
  for (;;) {
    std::string p = path + (path.find('?') == std::string::npos ? "?" : "&") + "limit=5000";
    if (!cont.empty()) p += "&continue=" + client::UrlEncode(cont);
    client::Response r = api.Do("GET", p);
    if (!r.ok()) return api.ToStatus("GET", p, r);
    simdjson::dom::element doc;
    if (parser.parse(r.body).get(doc)) return absl::DataLossError("GET " + p + ": malformed JSON");
    simdjson::dom::array items;
    if (!doc["items"].get(items)) {
      for (auto it : items) fn(it);
    }
    std::string_view v;
    if (rv && !doc["metadata"]["resourceVersion"].get(v)) *rv = std::string(v);
    std::string_view c;
    if (doc["metadata"]["continue"].get(c) || c.empty()) return absl::OkStatus();
    cont = std::string(c);
  }
}

int Bind(const LoadOptions& o, client::RestClient& api) {
  std::vector<std::string> nodes, pods;
  api::Status err = ListItems(
      api, "/api/v1/nodes",
      [&](simdjson::dom::element n) {
        std::string_view name;
        if (!n["metadata"]["name"].get(name)) nodes.emplace_back(name);
      },
      nullptr);
  if (!err.ok()) return Fail(std::string(err.message()));
  if (nodes.empty()) return Fail("bind: no nodes");
  err = ListItems(
      api, "/api/v1/namespaces/" + o.namespace_ + "/pods?fieldSelector=spec.nodeName%3D",
      [&](simdjson::dom::element p) {
        std::string_view name;
        if (!p["metadata"]["name"].get(name)) pods.emplace_back(name);
      },
      nullptr);
  if (!err.ok()) return Fail(std::string(err.message()));
  auto t0 = std::chrono::steady_clock::now();
  std::atomic<int> conflicts{0};
  err = ParallelFor(static_cast<int>(pods.size()), o.workers, [&](int i) -> api::Status {
    const std::string& pod = pods[i];
    const std::string& node = nodes[i % nodes.size()];
    const std::string path = "/api/v1/namespaces/" + o.namespace_ + "/pods/" + pod + "/binding";
    const std::string body = "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":" +
                             client::JsonString(pod) +
                             "},\"target\":{\"apiVersion\":\"v1\","
                             "\"kind\":\"Node\",\"name\":" +
                             client::JsonString(node) + "}}";
    client::Response r = api.Do("POST", path, body);
    if (r.ok()) return absl::OkStatus();
    if (r.status == 409) {
      ++conflicts;
      return absl::OkStatus();
    }
    return api.ToStatus("POST", path, r);
  });
  if (!err.ok()) return Fail(std::string(err.message()));
  const double d = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("bound %zu pods onto %zu nodes in %.2f s (%.0f binds/s, %d conflicts), %d workers\n",
              pods.size(), nodes.size(), d, d > 0 ? pods.size() / d : 0.0, conflicts.load(),
              o.workers);
  return 0;
}

int Watch(const LoadOptions& o, client::RestClient& api) {
  const int expect = o.expect > 0 ? o.expect : o.pods;
  const std::string base = "/api/v1/namespaces/" + o.namespace_ + "/pods";
  std::unordered_set<std::string> bound;
  int64_t first_ms = 0, last_ms = 0;
  auto saw_bound = [&](std::string_view name) {
    if (!bound.insert(std::string(name)).second) return;
    last_ms = NowMs();
    if (first_ms == 0) first_ms = last_ms;
  };
  std::string rv;
  api::Status err = ListItems(
      api, base,
      [&](simdjson::dom::element p) {
        std::string_view name, node;
        if (!p["metadata"]["name"].get(name) && !p["spec"]["nodeName"].get(node) && !node.empty()) {
          saw_bound(name);
        }
      },
      &rv);
  if (!err.ok()) return Fail(std::string(err.message()));
  if (!o.ready_file.empty()) std::ofstream(o.ready_file) << "watching\n";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(o.timeout_seconds);
  simdjson::dom::parser parser;
  std::atomic<bool> cancel{false};
  while (static_cast<int>(bound.size()) < expect && std::chrono::steady_clock::now() < deadline) {
    const long left = static_cast<long>(std::chrono::duration_cast<std::chrono::seconds>(
                                            deadline - std::chrono::steady_clock::now())
                                            .count()) +
                      1;
    const std::string path =
        base + "?watch=1&allowWatchBookmarks=true&resourceVersion=" + client::UrlEncode(rv) +
        "&timeoutSeconds=" + std::to_string(left);
    bool gone = false;
    client::Response r = api.Stream(
        path,
        [&](std::string_view line) {
          simdjson::dom::element ev;
          if (parser.parse(line.data(), line.size()).get(ev)) return true;
          std::string_view type;
          if (ev["type"].get(type)) return true;
          if (type == "ERROR") {
            int64_t code = 0;
            if (!ev["object"]["code"].get(code) && code == 410) gone = true;
            return false;
          }
          std::string_view v;
          if (!ev["object"]["metadata"]["resourceVersion"].get(v)) rv = std::string(v);
          if (type == "ADDED" || type == "MODIFIED") {
            std::string_view name, node;
            if (!ev["object"]["metadata"]["name"].get(name) &&
                !ev["object"]["spec"]["nodeName"].get(node) && !node.empty()) {
              saw_bound(name);
            }
          }
          return static_cast<int>(bound.size()) < expect;
        },
        &cancel, left);
    if (gone) {
      // Relist (keeps the times already recorded).
      rv.clear();
      err = ListItems(
          api, base,
          [&](simdjson::dom::element p) {
            std::string_view name, node;
            if (!p["metadata"]["name"].get(name) && !p["spec"]["nodeName"].get(node) &&
                !node.empty()) {
              saw_bound(name);
            }
          },
          &rv);
      if (!err.ok()) return Fail(std::string(err.message()));
    } else if (!r.ok() && !r.cancelled && r.status != 0) {
      return Fail(api.Describe("GET", path, r));
    } else if (r.transport_error()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  }
  std::printf("{\"bound\":%zu,\"expected\":%d,\"first_ms\":%lld,\"last_ms\":%lld}\n", bound.size(),
              expect, static_cast<long long>(first_ms), static_cast<long long>(last_ms));
  std::fflush(stdout);
  return static_cast<int>(bound.size()) >= expect ? 0 : 1;
}

}  // namespace

int RunLoad(const LoadOptions& o) {
  client::RestConfig rc;
  std::string err;
  if (!api::OkOrMessage(client::ResolveRestConfig(o.kubeconfig, "", o.context, &rc), &err)) {
    return Fail(err);
  }
  rc.qps = o.mode == "bind" ? o.qps : 0;  // create / watch: no client-side limit
  rc.burst = o.mode == "bind" ? o.burst : 0;
  rc.user_agent = "phalanx-load/" + o.mode;
  client::RestClient api(rc);
  if (o.mode == "create") return Create(o, api);
  if (o.mode == "bind") return Bind(o, api);
  if (o.mode == "watch") return Watch(o, api);
  return Fail("load: unknown mode \"" + o.mode + "\" (create, bind, watch)");
}

namespace {

class LoadCommand : public Command {
 public:
  CLI::App* Declare(CLI::App& app) override {
    auto* c = app.add_subcommand("load",
                                 "Create objects, bind-only client, or watch binds "
                                 "against a kube-apiserver (live benchmarks)");
    c->add_option("mode", o_.mode, "create | bind | watch")->required();
    c->add_option("--kubeconfig", o_.kubeconfig, "kubeconfig");
    c->add_option("--context", o_.context, "kubeconfig context");
    c->add_option("--namespace", o_.namespace_, "Namespace of the pods");
    c->add_option("--nodes", o_.nodes, "create: nodes");
    c->add_option("--pods", o_.pods, "create: pods; watch: default --expect");
    c->add_option("--workers", o_.workers, "Concurrent requests");
    c->add_option("--qps", o_.qps, "bind: client QPS");
    c->add_option("--burst", o_.burst, "bind: client burst");
    c->add_option("--expect", o_.expect, "watch: bound pods to wait for");
    c->add_option("--timeout", o_.timeout_seconds, "watch: seconds");
    c->add_option("--ready-file", o_.ready_file, "watch: touched once watching");
    return c;
  }
  bool Schedules() const override { return false; }
  int Run(framework::Registry) override { return RunLoad(o_); }

 private:
  LoadOptions o_;
};

}  // namespace

std::unique_ptr<Command> NewLoadCommand() { return std::make_unique<LoadCommand>(); }

}  // namespace phalanx::app
