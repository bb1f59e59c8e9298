// LiveClusterClient against a fake API server on loopback (plain HTTP): PodGroup status
// writes are coalesced and skipped when unchanged, fall back to the main resource when the
// CRD has no status subresource, and events on a PodGroup name it with its uid.
#include "client/cluster_client.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "client/delegated_auth.h"
#include "client/informer.h"
#include "client/leader_election.h"
#include "client/objects.h"
#include "dra/model.h"
#include "framework/clock.h"

namespace phalanx::client {
namespace {

// One request at a time, "Connection: close" after each response. `status_for(method,
// path)` picks the HTTP status. While `hold` is set, requests wait (after being recorded)
// until Release(), so that a test can queue work behind an in-flight write.
class FakeApiServer {
 public:
  struct Request {
    std::string method, path, body;
  };
  explicit FakeApiServer(std::function<int(const std::string&, const std::string&)> status_for)
      : status_for_(std::move(status_for)) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    EXPECT_EQ(listen(fd_, 16), 0);
    socklen_t len = sizeof a;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~FakeApiServer() {
    Release();
    stop_ = true;
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // The response body for (method, path) instead of "{}"; set before the first request.
  void SetBody(std::function<std::string(const std::string&, const std::string&)> body_for) {
    body_for_ = std::move(body_for);
  }
  void Hold() {
    std::lock_guard<std::mutex> l(mu_);
    hold_ = true;
  }
  void Release() {
    {
      std::lock_guard<std::mutex> l(mu_);
      hold_ = false;
    }
    cv_.notify_all();
  }
  // Waits until `n` requests were recorded.
  void WaitFor(size_t n) {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait_for(l, std::chrono::seconds(10), [&] { return requests_.size() >= n; });
  }
  std::vector<Request> requests() {
    std::lock_guard<std::mutex> l(mu_);
    return requests_;
  }

 private:
  void Serve() {
    while (!stop_) {
      int c = accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      std::string in;
      char buf[4096];
      size_t header_end = std::string::npos, want = 0;
      for (;;) {
        ssize_t n = read(c, buf, sizeof buf);
        if (n <= 0) break;
        in.append(buf, static_cast<size_t>(n));
        if (header_end == std::string::npos) {
          header_end = in.find("\r\n\r\n");
          if (header_end == std::string::npos) continue;
          auto cl = in.find("Content-Length: ");
          if (cl == std::string::npos) cl = in.find("content-length: ");
          want = cl != std::string::npos && cl < header_end ? std::stoul(in.substr(cl + 16)) : 0;
        }
        if (in.size() >= header_end + 4 + want) break;
      }
      Request r;
      const auto sp1 = in.find(' '), sp2 = in.find(' ', sp1 + 1);
      r.method = in.substr(0, sp1);
      r.path = in.substr(sp1 + 1, sp2 - sp1 - 1);
      if (header_end != std::string::npos) r.body = in.substr(header_end + 4);
      const int status = status_for_(r.method, r.path);
      {
        std::unique_lock<std::mutex> l(mu_);
        requests_.push_back(r);
        cv_.notify_all();
        cv_.wait(l, [&] { return !hold_; });
      }
      const std::string body = body_for_ ? body_for_(r.method, r.path) : "{}";
      const std::string resp =
          "HTTP/1.1 " + std::to_string(status) +
          " X\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
          "\r\nConnection: close\r\n\r\n" + body;
      (void)!write(c, resp.data(), resp.size());
      close(c);
    }
  }

  std::function<int(const std::string&, const std::string&)> status_for_;
  std::function<std::string(const std::string&, const std::string&)> body_for_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool hold_ = false;
  std::vector<Request> requests_;
};

RestConfig Config(const std::string& url) {
  RestConfig c;
  c.server = url;
  c.qps = 0;
  return c;
}

cluster::ClusterClient::PodGroupStatus Status(const std::string& phase, int32_t running) {
  cluster::ClusterClient::PodGroupStatus s;
  s.phase = phase;
  s.running = running;
  return s;
}

constexpr const char* kCosched = "scheduling.x-k8s.io/v1alpha1";

TEST(LiveClusterClientFake, PodGroupStatusIsCoalescedAndSkippedWhenUnchanged) {
  FakeApiServer server([](const std::string&, const std::string&) { return 200; });
  RestClient api(Config(server.url())), events(Config(server.url()));
  framework::VirtualClock clock(1);
  LiveClusterClient c(api, events, clock);
  server.Hold();
  c.UpdatePodGroupStatus(kCosched, "PodGroup", "ml", "g", Status("Scheduling", 0));
  server.WaitFor(1);  // the first write is in flight and held
  for (int i = 1; i <= 4; ++i) {
    c.UpdatePodGroupStatus(kCosched, "PodGroup", "ml", "g", Status("Scheduling", i));
  }
  server.Release();
  server.WaitFor(2);
  c.Flush(std::chrono::seconds(10));
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 2u);  // the first, then only the latest of the four queued
  EXPECT_EQ(reqs[0].method, "PATCH");
  EXPECT_EQ(reqs[0].path, "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/ml/podgroups/g/status");
  EXPECT_EQ(reqs[1].body,
            "{\"status\":{\"phase\":\"Scheduling\",\"running\":4,\"succeeded\":0,\"failed\":0}}");
  EXPECT_EQ(c.counters().podgroup_status_writes, 2);
}

TEST(LiveClusterClientFake, UnchangedStatusIsNotWrittenAgain) {
  FakeApiServer server([](const std::string&, const std::string&) { return 200; });
  RestClient api(Config(server.url())), events(Config(server.url()));
  framework::VirtualClock clock(1);
  LiveClusterClient c(api, events, clock);
  server.Hold();
  c.UpdatePodGroupStatus(kCosched, "PodGroup", "ml", "g", Status("Scheduled", 2));
  server.WaitFor(1);
  // Queued while the same status is in flight: once that write succeeded, this one
  // changes nothing and is dropped at send time.
  c.UpdatePodGroupStatus(kCosched, "PodGroup", "ml", "g", Status("Scheduled", 2));
  server.Release();
  c.Flush(std::chrono::seconds(10));
  EXPECT_EQ(server.requests().size(), 1u);
  EXPECT_EQ(c.counters().podgroup_status_writes, 1);
  EXPECT_EQ(c.counters().podgroup_status_skipped, 1);
}

// A condition's lastTransitionTime moves only when its type, status or reason changes
// (metav1.Condition), not when counts or the message do.
TEST(LiveClusterClientFake, ConditionTimeMovesOnlyOnTransitions) {
  FakeApiServer server([](const std::string&, const std::string&) { return 200; });
  RestClient api(Config(server.url())), events(Config(server.url()));
  framework::VirtualClock clock(100 * api::kNanosPerSecond);
  LiveClusterClient c(api, events, clock);
  const char* kai = "scheduling.run.ai/v2alpha2";
  cluster::ClusterClient::PodGroupStatus st;
  st.pending = 2;
  st.condition_type = "UnschedulableOnNodePool";
  st.condition_reason = "Unschedulable";
  st.condition_message = "1 of 2 pending members fit";
  c.UpdatePodGroupStatus(kai, "PodGroup", "ml", "g", st);
  server.WaitFor(1);
  clock.Advance(30 * api::kNanosPerSecond);
  st.pending = 3;
  st.condition_message = "1 of 3 pending members fit";
  c.UpdatePodGroupStatus(kai, "PodGroup", "ml", "g", st);
  server.WaitFor(2);
  clock.Advance(30 * api::kNanosPerSecond);
  st.condition_reason = "OverLimit";
  c.UpdatePodGroupStatus(kai, "PodGroup", "ml", "g", st);
  server.WaitFor(3);
  c.Flush(std::chrono::seconds(10));
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 3u);
  EXPECT_NE(reqs[0].body.find("\"lastTransitionTime\":\"1970-01-01T00:01:40Z\""), std::string::npos)
      << reqs[0].body;
  EXPECT_NE(reqs[1].body.find("\"lastTransitionTime\":\"1970-01-01T00:01:40Z\""), std::string::npos)
      << reqs[1].body;  // message and count changed: same transition
  EXPECT_NE(reqs[2].body.find("\"lastTransitionTime\":\"1970-01-01T00:02:40Z\""), std::string::npos)
      << reqs[2].body;  // reason changed
}

TEST(LiveClusterClientFake, NoStatusSubresourceFallsBackToTheMainResourceOnce) {
  FakeApiServer server([](const std::string&, const std::string& path) {
    return path.size() > 7 && path.compare(path.size() - 7, 7, "/status") == 0 ? 404 : 200;
  });
  RestClient api(Config(server.url())), events(Config(server.url()));
  framework::VirtualClock clock(1);
  LiveClusterClient c(api, events, clock);
  const char* volcano = "scheduling.volcano.sh/v1beta1";
  auto st = Status("Running", 2);
  st.condition_type = "Scheduled";
  st.condition_reason = "Scheduled";
  c.UpdatePodGroupStatus(volcano, "PodGroup", "ml", "a", st);
  server.WaitFor(2);
  c.UpdatePodGroupStatus(volcano, "PodGroup", "ml", "b", st);
  server.WaitFor(3);
  c.Flush(std::chrono::seconds(10));
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 3u);
  EXPECT_EQ(reqs[0].path, "/apis/scheduling.volcano.sh/v1beta1/namespaces/ml/podgroups/a/status");
  EXPECT_EQ(reqs[1].path, "/apis/scheduling.volcano.sh/v1beta1/namespaces/ml/podgroups/a");
  // Remembered: the next object of that group goes to the main resource directly.
  EXPECT_EQ(reqs[2].path, "/apis/scheduling.volcano.sh/v1beta1/namespaces/ml/podgroups/b");
  EXPECT_NE(reqs[2].body.find("\"conditions\":[{\"type\":\"Scheduled\""), std::string::npos)
      << reqs[2].body;
  EXPECT_EQ(c.counters().podgroup_status_writes, 2);
  EXPECT_EQ(c.counters().podgroup_status_errors, 0);
}

TEST(LiveClusterClientFake, PodAnnotationsArePatchedWithTheUidAndNotFoundIsReported) {
  FakeApiServer server([](const std::string&, const std::string& path) {
    return path.find("/pods/gone") != std::string::npos ? 404 : 200;
  });
  RestClient api(Config(server.url())), events(Config(server.url()));
  framework::VirtualClock clock(1);
  LiveClusterClient c(api, events, clock);
  api::Pod p;
  p.metadata.namespace_ = "ml";
  p.metadata.name = "w";
  p.metadata.uid = "u-1";
  const std::map<std::string, std::string> ann = {{"alibabacloud.com/gpu-index", "2"},
                                                  {"ALIYUN_COM_GPU_MEM_IDX", "2"}};
  ASSERT_TRUE(c.PatchPodAnnotations(p, ann).ok());
  api::Pod gone = p;
  gone.metadata.name = "gone";
  api::Status s = c.PatchPodAnnotations(gone, ann);
  EXPECT_TRUE(absl::IsNotFound(s)) << s;
  EXPECT_NE(std::string(s.message()).find("ml/gone"), std::string::npos) << s;
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[0].method, "PATCH");
  EXPECT_EQ(reqs[0].path, "/api/v1/namespaces/ml/pods/w");
  EXPECT_EQ(reqs[0].body,
            "{\"metadata\":{\"uid\":\"u-1\",\"annotations\":{\"ALIYUN_COM_GPU_MEM_IDX\":\"2\","
            "\"alibabacloud.com/gpu-index\":\"2\"}}}");
  EXPECT_EQ(c.counters().annotation_patches, 1);
  EXPECT_EQ(c.counters().annotation_patch_errors, 1);
}

TEST(LiveClusterClientFake, EventOnPodGroupNamesItWithItsUid) {
  FakeApiServer server([](const std::string&, const std::string&) { return 201; });
  RestClient api(Config(server.url())), events(Config(server.url()));
  framework::VirtualClock clock(5 * api::kNanosPerSecond);
  LiveClusterClient c(api, events, clock);
  api::Unstructured pg;
  pg.api_version = kCosched;
  pg.kind = "PodGroup";
  pg.metadata.namespace_ = "ml";
  pg.metadata.name = "g";
  pg.metadata.uid = "uid-123";
  c.ObserveObject(pg, false);
  c.RecordObjectEvent(kCosched, "PodGroup", "ml", "g", "Warning", "FailedScheduling",
                      "gang ml/g: 1 of 3 pending members fit, 3 needed");
  server.WaitFor(1);
  c.Flush(std::chrono::seconds(10));
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0].method, "POST");
  EXPECT_EQ(reqs[0].path, "/api/v1/namespaces/ml/events");
  EXPECT_NE(reqs[0].body.find("\"involvedObject\":{\"apiVersion\":\"scheduling.x-k8s.io/v1alpha1\","
                              "\"kind\":\"PodGroup\",\"namespace\":\"ml\",\"name\":\"g\","
                              "\"uid\":\"uid-123\"}"),
            std::string::npos)
      << reqs[0].body;
  EXPECT_NE(reqs[0].body.find("\"type\":\"Warning\""), std::string::npos);
}

// A cluster-scoped object (a KAI / Volcano Queue): the Event goes to namespace "default"
// (client-go's recorder does the same), involvedObject has no namespace and the uid
// learned from the informer even when the decoder defaulted a namespace on the Queue.
TEST(LiveClusterClientFake, EventOnClusterScopedQueueGoesToDefault) {
  FakeApiServer server([](const std::string&, const std::string&) { return 201; });
  RestClient api(Config(server.url())), events(Config(server.url()));
  framework::VirtualClock clock(5 * api::kNanosPerSecond);
  LiveClusterClient c(api, events, clock);
  api::Unstructured q;
  q.api_version = "scheduling.volcano.sh/v1beta1";
  q.kind = "Queue";
  q.metadata.namespace_ = "default";
  q.metadata.name = "cyc-a";
  q.metadata.uid = "uid-q";
  c.ObserveObject(q, false);
  c.RecordObjectEvent("scheduling.volcano.sh/v1beta1", "Queue", "", "cyc-a", "Warning",
                      "InvalidQueue", "Queue cyc-a: spec.parent: cycle in the queue tree");
  server.WaitFor(1);
  c.Flush(std::chrono::seconds(10));
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0].path, "/api/v1/namespaces/default/events");
  EXPECT_NE(
      reqs[0].body.find("\"involvedObject\":{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\","
                        "\"kind\":\"Queue\",\"namespace\":\"\",\"name\":\"cyc-a\","
                        "\"uid\":\"uid-q\"}"),
      std::string::npos)
      << reqs[0].body;
  EXPECT_NE(reqs[0].body.find("\"metadata\":{\"name\":\"cyc-a."), std::string::npos)
      << reqs[0].body;
  EXPECT_NE(reqs[0].body.find("\"namespace\":\"default\"}"), std::string::npos) << reqs[0].body;
}

// ---- DRA and storage objects through the live client -----------------
// The v1.20 test API server cannot store resource.k8s.io objects, so these tests feed the
// real decoding and writing code the JSON the API server sends and expects, in the shape of
// the resource.k8s.io/v1 API reference (ResourceClaim, ResourceSlice, DeviceClass) and
// core/v1 (PersistentVolume): LIST items decode into the objects the scheduler reads, and a
// PUT sends the object back with strings still strings (resourceVersion "123", a pool
// named "7") and numbers still numbers.

constexpr const char* kClaimJson = R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim",
"metadata":{"name":"gpus","namespace":"ml","uid":"c-1","resourceVersion":"123",
 "annotations":{"note":"42"}},
"spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.example.com",
 "allocationMode":"ExactCount","count":2,
 "selectors":[{"cel":{"expression":"device.capacity['gpu.example.com'].memory.compareTo(quantity('80Gi')) >= 0"}}]}}],
 "constraints":[{"requests":["gpu"],"matchAttribute":"gpu.example.com/nvlinkDomain"}]}},
"status":{"allocation":{"devices":{"results":[
 {"request":"gpu","driver":"gpu.example.com","pool":"7","device":"gpu-1"},
 {"request":"gpu","driver":"gpu.example.com","pool":"7","device":"gpu-2"}]},
 "nodeSelector":{"nodeSelectorTerms":[{"matchFields":[{"key":"metadata.name","operator":"In","values":["node-b"]}]}]}},
 "reservedFor":[{"resource":"pods","name":"trainer","uid":"p-1"}]}})";

constexpr const char* kSliceJson = R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice",
"metadata":{"name":"node-b-gpus","resourceVersion":"9"},
"spec":{"driver":"gpu.example.com","nodeName":"node-b",
 "pool":{"name":"7","generation":1,"resourceSliceCount":1},
 "devices":[{"name":"gpu-1","attributes":{"model":{"string":"H100"},"index":{"int":0},
   "nvlinkDomain":{"string":"d0"},"driverVersion":{"version":"1.2.3"},"mig":{"bool":false}},
  "capacity":{"memory":{"value":"80Gi"}}}]}})";

api::Unstructured DecodeUnstructured(const char* json, const ResourceType& rt) {
  api::StatusOr<Object> o = DecodeObjectJson(json, rt);
  EXPECT_TRUE(o.ok()) << o.status();
  if (!o.ok()) return {};
  return *std::static_pointer_cast<const api::Unstructured>(o->ptr);
}

TEST(LiveObjects, DraObjectsFromApiJsonDecodeIntoTheSchedulersModel) {
  const ResourceType claims{"resource.k8s.io", "v1", "resourceclaims", "ResourceClaim",
                            Target::kObject,   ""};
  const ResourceType slices{"resource.k8s.io", "v1", "resourceslices", "ResourceSlice",
                            Target::kObject,   ""};
  const api::Unstructured c = DecodeUnstructured(kClaimJson, claims);
  api::StatusOr<dra::ResourceClaim> claim = dra::ParseResourceClaim(c);
  ASSERT_TRUE(claim.ok()) << claim.status();
  ASSERT_EQ(claim->spec.requests.size(), 1u);
  ASSERT_TRUE(claim->spec.requests[0].exactly.has_value());
  EXPECT_EQ(claim->spec.requests[0].exactly->count, 2);
  EXPECT_EQ(claim->spec.constraints.at(0).match_attribute, "gpu.example.com/nvlinkDomain");
  ASSERT_TRUE(claim->allocation.has_value());
  ASSERT_EQ(claim->allocation->devices.size(), 2u);
  EXPECT_EQ(claim->allocation->devices[0].pool, "7");  // a numeric-looking string stays one
  EXPECT_EQ(claim->allocation->devices[1].device, "gpu-2");
  ASSERT_EQ(claim->reserved_for.size(), 1u);
  EXPECT_EQ(claim->reserved_for[0].uid, "p-1");
  api::StatusOr<dra::ResourceSlice> slice =
      dra::ParseResourceSlice(DecodeUnstructured(kSliceJson, slices));
  ASSERT_TRUE(slice.ok()) << slice.status();
  EXPECT_EQ(slice->pool, "7");
  EXPECT_EQ(slice->node_name, "node-b");
  ASSERT_EQ(slice->devices.size(), 1u);
  EXPECT_EQ(slice->devices[0].name, "gpu-1");
}

// Device taints (KEP-5055) and PodGroup-owned claims (KEP-5729) in the JSON shape of the API
// reference: resource.k8s.io/v1 devices[].taints[] and request tolerations[], a v1beta2
// DeviceTaintRule (cluster-scoped), a claim reserved for a PodGroup, and the
// scheduling.k8s.io PodGroup's spec.resourceClaims / status.resourceClaimStatuses.
TEST(LiveObjects, DeviceTaintsAndPodGroupClaimsDecodeIntoTheSchedulersModel) {
  const ResourceType slices{"resource.k8s.io", "v1", "resourceslices", "ResourceSlice",
                            Target::kObject,   ""};
  const ResourceType rules{"resource.k8s.io", "v1beta2",       "devicetaintrules",
                           "DeviceTaintRule", Target::kObject, ""};
  const ResourceType claims{"resource.k8s.io", "v1", "resourceclaims", "ResourceClaim",
                            Target::kObject,   ""};
  const ResourceType pgs{"scheduling.k8s.io", "v1alpha2",      "podgroups",
                         "PodGroup",          Target::kObject, ""};
  auto slice = dra::ParseResourceSlice(DecodeUnstructured(R"({"apiVersion":"resource.k8s.io/v1",
"kind":"ResourceSlice","metadata":{"name":"node-b-gpus"},
"spec":{"driver":"gpu.example.com","nodeName":"node-b","pool":{"name":"node-b","generation":3,
 "resourceSliceCount":1},"devices":[{"name":"gpu-0","taints":[{"key":"gpu.example.com/unhealthy",
 "value":"ecc","effect":"NoSchedule","timeAdded":"2025-09-01T10:00:00Z"}]}]}})",
                                                          slices));
  ASSERT_TRUE(slice.ok()) << slice.status();
  ASSERT_EQ(slice->devices[0].taints.size(), 1u);
  EXPECT_EQ(slice->devices[0].taints[0], (dra::DeviceTaint{"gpu.example.com/unhealthy", "ecc",
                                                           "NoSchedule", "2025-09-01T10:00:00Z"}));
  const api::Unstructured rule_obj = DecodeUnstructured(R"({"apiVersion":"resource.k8s.io/v1beta2",
"kind":"DeviceTaintRule","metadata":{"name":"drain-node-b","resourceVersion":"5"},
"spec":{"deviceSelector":{"driver":"gpu.example.com","pool":"node-b"},
 "taint":{"key":"example.com/maintenance","value":"true","effect":"NoExecute"}}})",
                                                        rules);
  EXPECT_EQ(rule_obj.metadata.namespace_, "");  // cluster-scoped
  auto rule = dra::ParseDeviceTaintRule(rule_obj);
  ASSERT_TRUE(rule.ok()) << rule.status();
  EXPECT_TRUE(rule->Matches("gpu.example.com", "node-b", "gpu-0"));
  EXPECT_FALSE(rule->Matches("gpu.example.com", "node-c", "gpu-0"));
  EXPECT_EQ(rule->taint.effect, "NoExecute");
  auto claim = dra::ParseResourceClaim(DecodeUnstructured(R"({"apiVersion":"resource.k8s.io/v1",
"kind":"ResourceClaim","metadata":{"name":"train-gpus-x7k2q","namespace":"ml","uid":"c-2",
 "ownerReferences":[{"apiVersion":"scheduling.k8s.io/v1alpha2","kind":"PodGroup","name":"train",
  "uid":"pg-1","controller":true}]},
"spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.example.com",
 "tolerations":[{"key":"gpu.example.com/unhealthy","operator":"Exists","effect":"NoSchedule"},
  {"key":"example.com/maintenance","operator":"Equal","value":"true","effect":"NoExecute",
   "tolerationSeconds":300}]}}]}},
"status":{"allocation":{"devices":{"results":[{"request":"gpu","driver":"gpu.example.com",
 "pool":"node-b","device":"gpu-0"}]}},
 "reservedFor":[{"apiGroup":"scheduling.k8s.io","resource":"podgroups","name":"train","uid":"pg-1"}]}})",
                                                          claims));
  ASSERT_TRUE(claim.ok()) << claim.status();
  const auto& tol = claim->spec.requests[0].exactly->tolerations;
  ASSERT_EQ(tol.size(), 2u);
  EXPECT_EQ(tol[1].toleration_seconds, 300);
  std::vector<dra::DeviceTaint> taints = slice->devices[0].taints;
  taints.push_back(rule->taint);
  EXPECT_TRUE(dra::AllTaintsTolerated(taints, tol));
  EXPECT_EQ(claim->reserved_for.at(0),
            (dra::ConsumerReference{"scheduling.k8s.io", "podgroups", "train", "pg-1"}));
  auto pg =
      dra::ParsePodGroupClaims(DecodeUnstructured(R"({"apiVersion":"scheduling.k8s.io/v1alpha2",
"kind":"PodGroup","metadata":{"name":"train","namespace":"ml","uid":"pg-1"},
"spec":{"schedulingPolicy":{"gang":{"minCount":4}},
 "resourceClaims":[{"name":"gpus","resourceClaimTemplateName":"pair"}]},
"status":{"resourceClaimStatuses":[{"name":"gpus","resourceClaimName":"train-gpus-x7k2q"}]}})",
                                                  pgs));
  ASSERT_TRUE(pg.ok()) << pg.status();
  EXPECT_EQ(pg->statuses.at("gpus"), "train-gpus-x7k2q");
  ASSERT_NE(pg->Match(api::PodResourceClaim{"gpus", "", "pair"}), nullptr);
  EXPECT_EQ(pg->Match(api::PodResourceClaim{"gpus", "", "other"}), nullptr);
  EXPECT_EQ(pg->Consumer(), claim->reserved_for.at(0));
}

TEST(LiveObjects, ClaimStatusAndPvAreWrittenBackAsTheApiServerSentThem) {
  FakeApiServer server([](const std::string&, const std::string& path) {
    return path.find("/conflict") != std::string::npos ? 409 : 200;
  });
  RestClient api(Config(server.url())), events(Config(server.url()));
  framework::VirtualClock clock(1);
  LiveClusterClient c(api, events, clock);
  const ResourceType claims{"resource.k8s.io", "v1", "resourceclaims", "ResourceClaim",
                            Target::kObject,   ""};
  ASSERT_TRUE(c.UpdateResourceClaimStatus(DecodeUnstructured(kClaimJson, claims)).ok());
  const ResourceType pvs{"", "v1", "persistentvolumes", "PersistentVolume", Target::kObject, ""};
  const char* pv_json = R"({"apiVersion":"v1","kind":"PersistentVolume",
"metadata":{"name":"local-a","resourceVersion":"55"},
"spec":{"capacity":{"storage":"10Gi"},"accessModes":["ReadWriteOnce"],
 "storageClassName":"local","local":{"path":"/mnt/disk"},
 "claimRef":{"kind":"PersistentVolumeClaim","namespace":"db","name":"data-db-0","uid":"u-9"},
 "nodeAffinity":{"required":{"nodeSelectorTerms":[{"matchExpressions":[
  {"key":"kubernetes.io/hostname","operator":"In","values":["node-a"]}]}]}}},
"status":{"phase":"Available"}})";
  ASSERT_TRUE(c.PutObject(DecodeUnstructured(pv_json, pvs)).ok());
  std::string conflict_json = pv_json;
  conflict_json.replace(conflict_json.find("local-a"), 7, "conflict");
  api::Status s = c.PutObject(DecodeUnstructured(conflict_json.c_str(), pvs));
  EXPECT_TRUE(absl::IsAborted(s)) << s;
  EXPECT_NE(std::string(s.message()).find("PersistentVolume conflict"), std::string::npos) << s;

  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 3u);
  EXPECT_EQ(reqs[0].method, "PUT");
  EXPECT_EQ(reqs[0].path, "/apis/resource.k8s.io/v1/namespaces/ml/resourceclaims/gpus/status");
  EXPECT_EQ(reqs[1].path, "/api/v1/persistentvolumes/local-a");
  // The bodies are the objects as sent (an independent JSON parser compares them).
  EXPECT_EQ(nlohmann::json::parse(reqs[0].body), nlohmann::json::parse(kClaimJson));
  EXPECT_EQ(nlohmann::json::parse(reqs[1].body), nlohmann::json::parse(pv_json));
  EXPECT_EQ(nlohmann::json::parse(reqs[0].body)["metadata"]["resourceVersion"], "123");
  EXPECT_EQ(
      nlohmann::json::parse(reqs[0].body)["status"]["allocation"]["devices"]["results"][0]["pool"],
      "7");
}

TEST(LiveObjects, UnknownKindHasNoPath) {
  FakeApiServer server([](const std::string&, const std::string&) { return 200; });
  RestClient api(Config(server.url())), events(Config(server.url()));
  framework::VirtualClock clock(1);
  LiveClusterClient c(api, events, clock);
  api::Unstructured u;
  u.api_version = "example.com/v1";
  u.kind = "Widget";
  u.metadata.name = "w";
  u.object = std::make_shared<const YAML::Node>(YAML::Load("{kind: Widget}"));
  api::Status s = c.PutObject(u);
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_TRUE(server.requests().empty());
}

}  // namespace
}  // namespace phalanx::client

namespace phalanx::client {
namespace {

// One authorization check the API server makes for a request: verb, API group, resource
// (with "/subresource").
struct Access {
  std::string verb, group, resource;
  bool operator<(const Access& o) const {
    return std::tie(verb, group, resource) < std::tie(o.verb, o.group, o.resource);
  }
};

// The checks for one recorded request (method, path, body), as a 1.36 API server makes
// them: the path's group and resource (namespaced or cluster-scoped, with subresource), the
// method's verb, and — DRAResourceClaimGranularStatusAuthorization, beta and on by default
// in 1.36 (kubernetes/kubernetes#134947) — for a ResourceClaim status write that sets
// status.allocation or status.reservedFor also that verb on resourceclaims/binding.
std::vector<Access> ChecksFor(const std::string& method, const std::string& raw_path,
                              const std::string& body) {
  static const std::map<std::string, std::string> kVerbs = {{"GET", "get"},
                                                            {"POST", "create"},
                                                            {"PUT", "update"},
                                                            {"PATCH", "patch"},
                                                            {"DELETE", "delete"}};
  const std::string path = raw_path.substr(0, raw_path.find('?'));
  std::vector<std::string> parts;
  for (size_t i = 1, j; i <= path.size(); i = j + 1) {
    j = path.find('/', i);
    if (j == std::string::npos) j = path.size();
    parts.push_back(path.substr(i, j - i));
  }
  Access a;
  a.verb = kVerbs.at(method);
  size_t at = 0;
  if (parts.at(0) == "api") {
    at = 2;  // api, v1
  } else {
    a.group = parts.at(1);
    at = 3;  // apis, group, version
  }
  if (at < parts.size() && parts[at] == "namespaces" && at + 2 < parts.size()) at += 2;
  a.resource = parts.at(at);
  if (at + 2 < parts.size()) a.resource += "/" + parts[at + 2];
  std::vector<Access> out{a};
  if (a.group == "resource.k8s.io" && a.resource == "resourceclaims/status") {
    const auto status = nlohmann::json::parse(body).value("status", nlohmann::json::object());
    if (status.contains("allocation") || status.contains("reservedFor")) {
      out.push_back({a.verb, a.group, "resourceclaims/binding"});
    }
  }
  return out;
}

// What a ClusterRole's rules grant ("*" verbs, groups and resources included).
bool Granted(const YAML::Node& rules, const Access& a) {
  auto has = [](const YAML::Node& list, const std::string& v) {
    for (const auto& x : list) {
      if (x.as<std::string>() == v || x.as<std::string>() == "*") return true;
    }
    return false;
  };
  for (const auto& r : rules) {
    if (has(r["verbs"], a.verb) && has(r["apiGroups"], a.group) &&
        has(r["resources"], a.resource)) {
      return true;
    }
  }
  return false;
}

// deploy/rbac.yaml's ClusterRole (PHALANX_RBAC_FILE overrides the file, to check another).
YAML::Node DeployedRole() {
  const char* over = std::getenv("PHALANX_RBAC_FILE");
  const std::string file = over ? over : std::string(PHALANX_SOURCE_DIR) + "/deploy/rbac.yaml";
  for (const auto& doc : YAML::LoadAllFromFile(file)) {
    if (doc["kind"] && doc["kind"].as<std::string>() == "ClusterRole") return doc;
  }
  ADD_FAILURE() << file << ": no ClusterRole";
  return YAML::Node();
}

// Every request the live client code makes, recorded by a fake API server — the informers'
// LIST and WATCH of every resource they know (CoreResources, OptionalObjectResources),
// every write of LiveClusterClient (bind, delete, the pod's annotations and status, a PV
// and a PVC, a ResourceClaim's allocation, the PodTemplates and ProvisioningRequests of
// the scale-up plugin, Events and their repeats, the status of every
// PodGroup kind the informers watch, Events on every gang and queue kind) — is authorized
// plus the metrics endpoint's TokenReview and SubjectAccessReview and leader election's
// Lease (created, then taken over and released) — is authorized by deploy/rbac.yaml's
// ClusterRole as a 1.36 API server checks it (ChecksFor). Not covered here: the queue
// status writes (app/queue_status_sink.cc) and the main-resource fallback of a PodGroup
// CRD without a status subresource.
TEST(Rbac, DeployedRoleGrantsEveryRequestTheClientMakes) {
  std::vector<std::pair<std::string, std::string>> list_watch;  // (method, path)
  std::vector<ResourceType> types = CoreResources();
  for (const auto& t : OptionalObjectResources()) types.push_back(t);
  std::vector<Access> needed;
  for (const auto& t : types) {
    for (const Access& a : ChecksFor("GET", t.ListPath(500, ""), "")) {
      needed.push_back({"list", a.group, a.resource});
      needed.push_back({"watch", a.group, a.resource});
    }
  }
  FakeApiServer server([](const std::string&, const std::string&) { return 200; });
  RestClient api(Config(server.url())), events(Config(server.url()));
  framework::VirtualClock clock(1);
  {
    LiveClusterClient c(api, events, clock);
    auto pod = std::make_shared<api::Pod>();
    pod->metadata.namespace_ = "ml";
    pod->metadata.name = "p";
    pod->metadata.uid = "u-1";
    (void)c.Bind(*pod, "n1");
    (void)c.DeletePod(*pod);
    (void)c.PatchPodAnnotations(*pod, {{"alibabacloud.com/gpu-index", "0"}});
    const api::PodCondition cond{"PodScheduled", "False", "Unschedulable", "no"};
    const std::string nominated = "n2";
    (void)c.UpdatePodStatus(*pod, &cond, &nominated);
    const ResourceType claims{"resource.k8s.io", "v1", "resourceclaims", "ResourceClaim",
                              Target::kObject,   ""};
    (void)c.UpdateResourceClaimStatus(DecodeUnstructured(kClaimJson, claims));
    // The claim of a pod's extended resources backed by DRA: created, deleted on
    // Unreserve, and named in the pod's status.
    (void)c.CreateResourceClaim(DecodeUnstructured(kClaimJson, claims));
    (void)c.DeleteResourceClaim(DecodeUnstructured(kClaimJson, claims));
    (void)c.PatchPodExtendedResourceClaimStatus(
        *pod, api::PodExtendedResourceClaimStatus{
                  {{"c", "example.com/gpu", "container-0-request-0"}}, "p-extended-resources-x"});
    const ResourceType pvs{"", "v1", "persistentvolumes", "PersistentVolume", Target::kObject, ""};
    (void)c.PutObject(DecodeUnstructured(
        R"({"apiVersion":"v1","kind":"PersistentVolume","metadata":{"name":"pv-a"}})", pvs));
    const ResourceType pvcs{
        "", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", Target::kObject, ""};
    (void)c.PutObject(DecodeUnstructured(
        R"({"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"c","namespace":"ml"}})",
        pvcs));
    // The ProvisioningRequest plugin's scale-up: a PodTemplate and a request, created and
    // deleted.
    const ResourceType templates{"", "v1", "podtemplates", "PodTemplate", Target::kObject, ""};
    const ResourceType requests{"autoscaling.x-k8s.io", "v1",
                                "provisioningrequests", "ProvisioningRequest",
                                Target::kObject,        ""};
    for (
        const auto& [json, type] :
        {std::pair{
             std::string(
                 R"({"apiVersion":"v1","kind":"PodTemplate","metadata":{"name":"t","namespace":"ml"}})"),
             templates},
         std::pair{
             std::string(
                 R"({"apiVersion":"autoscaling.x-k8s.io/v1","kind":"ProvisioningRequest","metadata":{"name":"r","namespace":"ml"}})"),
             requests}}) {
      (void)c.PostObject(DecodeUnstructured(json.c_str(), type));
      (void)c.DeleteObject(DecodeUnstructured(json.c_str(), type));
    }
    c.RecordEvent(*pod, "Warning", "FailedScheduling", "0/1 nodes are available");
    c.RecordEvent(*pod, "Warning", "FailedScheduling", "0/1 nodes are available");
    // Events go to every gang and queue kind; a status of ours only to PodGroups
    // (gang/podgroup_status.cc: a Workload's pod groups have none).
    for (const auto& t : types) {
      if (t.kind != "PodGroup" && t.kind != "Queue" && t.kind != "ElasticQuota" &&
          t.kind != "Workload") {
        continue;
      }
      c.RecordObjectEvent(t.ApiVersion(), t.kind, "ml", "g", "Warning", "FailedScheduling", "x");
      if (t.kind == "PodGroup") {
        c.UpdatePodGroupStatus(t.ApiVersion(), t.kind, "ml", "g", Status("Scheduling", 0));
      }
    }
    c.Flush(std::chrono::seconds(10));
  }
  // The metrics endpoint's delegated authentication and authorization: a TokenReview that
  // authenticates, then a SubjectAccessReview.
  server.SetBody([](const std::string&, const std::string& path) -> std::string {
    if (path.find("tokenreviews") != std::string::npos)
      return R"({"status":{"authenticated":true,"user":{"username":"prom","groups":["g"]}}})";
    if (path.find("subjectaccessreviews") != std::string::npos)
      return R"({"status":{"allowed":true}})";
    return "{}";
  });
  {
    DelegatedAuth auth(RestReviewPoster(api), DelegatedAuthOptions{});
    (void)auth.Check("Bearer t0ken", "GET", "/metrics");
  }
  // Leader election: the Lease created (the server has none), then taken over and renewed.
  auto lease_requests = [&](bool exists) {
    FakeApiServer leases([exists](const std::string& method, const std::string&) {
      return !exists && method == "GET" ? 404 : 200;
    });
    leases.SetBody([](const std::string&, const std::string&) {
      return std::string(R"({"metadata":{"resourceVersion":"1"},"spec":{}})");
    });
    RestClient lc(Config(leases.url()));
    LeaderElectionConfig cfg;
    cfg.identity = "phalanx-0";
    cfg.retry_period = std::chrono::milliseconds(10);
    LeaderElector e(lc, cfg, clock);
    std::atomic<bool> stop{false};
    std::atomic<bool> done{false};
    std::thread watchdog([&] {
      for (int i = 0; i < 500 && !done; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      stop = true;
    });
    EXPECT_TRUE(e.Acquire(stop)) << "exists " << exists;
    e.Release();
    done = true;
    watchdog.join();
    return leases.requests();
  };
  std::vector<FakeApiServer::Request> reqs = server.requests();
  for (const bool exists : {false, true}) {
    for (auto& r : lease_requests(exists)) reqs.push_back(std::move(r));
  }
  EXPECT_GT(reqs.size(), 10u);
  for (const auto& r : reqs) {
    for (const Access& a : ChecksFor(r.method, r.path, r.body)) needed.push_back(a);
  }
  const YAML::Node role = DeployedRole();
  std::set<Access> missing;
  for (const Access& a : needed) {
    if (!Granted(role["rules"], a)) missing.insert(a);
  }
  std::string text;
  for (const Access& a : missing) {
    text += "\n  " + a.verb + " " + (a.group.empty() ? "\"\"" : a.group) + " " + a.resource;
  }
  EXPECT_TRUE(missing.empty())
      << "the ClusterRole (deploy/rbac.yaml, or PHALANX_RBAC_FILE) does not grant:" << text;
  // What each exercised path must have asked for (the 1.36 rule among them).
  const std::set<Access> asked(needed.begin(), needed.end());
  for (const Access& a :
       {Access{"update", "resource.k8s.io", "resourceclaims/binding"},
        Access{"create", "resource.k8s.io", "resourceclaims"},
        Access{"delete", "resource.k8s.io", "resourceclaims"}, Access{"create", "", "pods/binding"},
        Access{"patch", "", "pods/status"}, Access{"create", "coordination.k8s.io", "leases"},
        Access{"update", "coordination.k8s.io", "leases"},
        Access{"create", "authentication.k8s.io", "tokenreviews"},
        Access{"create", "authorization.k8s.io", "subjectaccessreviews"}}) {
    EXPECT_TRUE(asked.count(a)) << a.verb << " " << a.group << " " << a.resource;
  }
}

}  // namespace
}  // namespace phalanx::client
