// Unit tests of the API client pieces that need no server: kubeconfig loading, the rate
// limiter, JSON decoding of lists and watch events, error descriptions.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "client/cluster_client.h"
#include "client/objects.h"
#include "client/rate_limiter.h"
#include "client/rest_client.h"
#include "client/rest_config.h"

namespace phalanx::client {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/phalanx-client-test.XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string Write(const std::string& name, const std::string& text) const {
    const std::string p = path_ + "/" + name;
    std::ofstream(p) << text;
    return p;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

const char* kKubeconfig = R"(apiVersion: v1
kind: Config
clusters:
- name: a
  cluster:
    server: https://10.0.0.1:6443/
    certificate-authority: ca.crt
- name: b
  cluster:
    server: https://b.example:443
    insecure-skip-tls-verify: true
    certificate-authority-data: aGVsbG8=
users:
- name: alice
  user:
    token: secret-token
- name: bob
  user:
    tokenFile: token.txt
- name: carol
  user:
    client-certificate-data: Y2VydA==
    client-key-data: a2V5
contexts:
- name: ctx-a
  context: {cluster: a, user: alice}
- name: ctx-b
  context: {cluster: b, user: bob}
- name: ctx-c
  context: {cluster: b, user: carol}
- name: ctx-missing
  context: {cluster: nope, user: alice}
current-context: ctx-a
)";

TEST(Kubeconfig, CurrentContextAndRelativePaths) {
  TempDir d;
  d.Write("ca.crt", "PEM");
  d.Write("token.txt", "file-token\n");
  const std::string kc = d.Write("config", kKubeconfig);
  RestConfig c;
  std::string err;
  ASSERT_TRUE(api::OkOrMessage(LoadKubeconfig(kc, "", &c), &err)) << err;
  EXPECT_EQ(c.server, "https://10.0.0.1:6443");
  EXPECT_EQ(c.ca_file, d.path() + "/ca.crt");
  EXPECT_EQ(c.token, "secret-token");
  EXPECT_FALSE(c.insecure);
  EXPECT_EQ(c.source_file, kc);
}

TEST(Kubeconfig, ExplicitContextTokenFileInsecureAndData) {
  TempDir d;
  d.Write("ca.crt", "PEM");
  d.Write("token.txt", "file-token\n");
  const std::string kc = d.Write("config", kKubeconfig);
  RestConfig c;
  std::string err;
  ASSERT_TRUE(api::OkOrMessage(LoadKubeconfig(kc, "ctx-b", &c), &err)) << err;
  EXPECT_EQ(c.server, "https://b.example:443");
  EXPECT_TRUE(c.insecure);
  EXPECT_EQ(c.ca_pem, "hello");
  EXPECT_EQ(c.token, "file-token");
  EXPECT_EQ(c.token_file, d.path() + "/token.txt");
  ASSERT_TRUE(api::OkOrMessage(LoadKubeconfig(kc, "ctx-c", &c), &err)) << err;
  EXPECT_EQ(c.client_cert_pem, "cert");
  EXPECT_EQ(c.client_key_pem, "key");
}

TEST(Kubeconfig, ErrorsNameFileAndField) {
  TempDir d;
  const std::string kc = d.Write("config", kKubeconfig);
  RestConfig c;
  std::string err;
  EXPECT_FALSE(api::OkOrMessage(LoadKubeconfig(kc, "nope", &c), &err));
  EXPECT_NE(
      err.find(kc + ": context \"nope\" not found (contexts: ctx-a, ctx-b, ctx-c, ctx-missing)"),
      std::string::npos)
      << err;
  EXPECT_FALSE(api::OkOrMessage(LoadKubeconfig(kc, "ctx-missing", &c), &err));
  EXPECT_NE(err.find("cluster \"nope\" not found"), std::string::npos) << err;
  // ctx-a's certificate-authority file does not exist in this directory.
  EXPECT_FALSE(api::OkOrMessage(LoadKubeconfig(kc, "ctx-a", &c), &err));
  EXPECT_NE(err.find("certificate-authority: " + d.path() + "/ca.crt: no such file"),
            std::string::npos)
      << err;
  EXPECT_FALSE(api::OkOrMessage(LoadKubeconfig(d.path() + "/absent", "", &c), &err));
  EXPECT_NE(err.find("absent: cannot read"), std::string::npos) << err;
  const std::string bad = d.Write("bad", "clusters: [");
  EXPECT_FALSE(api::OkOrMessage(LoadKubeconfig(bad, "", &c), &err));
  EXPECT_NE(err.find("malformed YAML"), std::string::npos) << err;
  const std::string exec = d.Write("exec", R"(clusters: [{name: a, cluster: {server: "https://x"}}]
users: [{name: u, user: {exec: {command: aws}}}]
contexts: [{name: c, context: {cluster: a, user: u}}]
current-context: c
)");
  EXPECT_FALSE(api::OkOrMessage(LoadKubeconfig(exec, "", &c), &err));
  EXPECT_NE(err.find("exec credential plugins are not supported"), std::string::npos) << err;
}

TEST(Kubeconfig, InClusterNeedsEnvironment) {
  unsetenv("KUBERNETES_SERVICE_HOST");
  RestConfig c;
  std::string err;
  EXPECT_FALSE(api::OkOrMessage(InClusterConfig(&c), &err));
  EXPECT_NE(err.find("KUBERNETES_SERVICE_HOST"), std::string::npos);
  TempDir d;
  d.Write("token", "sa-token\n");
  d.Write("ca.crt", "PEM");
  setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
  setenv("KUBERNETES_SERVICE_PORT", "443", 1);
  ASSERT_TRUE(api::OkOrMessage(InClusterConfig(&c, d.path()), &err)) << err;
  EXPECT_EQ(c.server, "https://10.96.0.1:443");
  EXPECT_EQ(c.token, "sa-token");
  EXPECT_EQ(c.ca_file, d.path() + "/ca.crt");
  unsetenv("KUBERNETES_SERVICE_HOST");
  unsetenv("KUBERNETES_SERVICE_PORT");
}

TEST(RestClient, ResponseCodesMirrorKubernetesStatuses) {
  struct Case {
    long status;
    const char* reason;
    absl::StatusCode want;
  };
  const Case cases[] = {
      {200, "", absl::StatusCode::kOk},
      {201, "", absl::StatusCode::kOk},
      {400, "", absl::StatusCode::kInvalidArgument},
      {401, "", absl::StatusCode::kUnauthenticated},
      {403, "", absl::StatusCode::kPermissionDenied},
      {404, "", absl::StatusCode::kNotFound},
      {409, "AlreadyExists", absl::StatusCode::kAlreadyExists},
      {409, "Conflict", absl::StatusCode::kAborted},
      {410, "Expired", absl::StatusCode::kOutOfRange},
      {422, "Invalid", absl::StatusCode::kInvalidArgument},
      {429, "", absl::StatusCode::kResourceExhausted},
      {500, "", absl::StatusCode::kUnavailable},
      {503, "", absl::StatusCode::kUnavailable},
      {418, "", absl::StatusCode::kFailedPrecondition},
  };
  for (const Case& c : cases) {
    Response r;
    r.status = c.status;
    EXPECT_EQ(ResponseCode(r, c.reason), c.want) << c.status << " " << c.reason;
  }
  Response refused;
  refused.curl_code = 7;  // CURLE_COULDNT_CONNECT
  EXPECT_EQ(ResponseCode(refused, ""), absl::StatusCode::kUnavailable);
  refused.cancelled = true;
  EXPECT_EQ(ResponseCode(refused, ""), absl::StatusCode::kCancelled);
}

TEST(Base64, DecodesAndRejects) {
  std::string out;
  ASSERT_TRUE(Base64Decode("aGVsbG8gd29ybGQ=", &out));
  EXPECT_EQ(out, "hello world");
  ASSERT_TRUE(Base64Decode("YQ", &out));
  EXPECT_EQ(out, "a");
  EXPECT_FALSE(Base64Decode("a$b=", &out));
}

TEST(TokenBucket, BurstThenRate) {
  TokenBucket b(10, 3);  // 10 qps, burst 3
  auto t = TokenBucket::Clock::now();
  EXPECT_TRUE(b.TryAccept(t));
  EXPECT_TRUE(b.TryAccept(t));
  EXPECT_TRUE(b.TryAccept(t));
  EXPECT_FALSE(b.TryAccept(t));
  EXPECT_FALSE(b.TryAccept(t + std::chrono::milliseconds(50)));
  EXPECT_TRUE(b.TryAccept(t + std::chrono::milliseconds(110)));
  // Reservations queue: each waits 100 ms more than the previous.
  TokenBucket q(10, 1);
  auto t2 = TokenBucket::Clock::now();
  EXPECT_EQ(q.Reserve(t2).count(), 0);
  EXPECT_NEAR(std::chrono::duration<double>(q.Reserve(t2)).count(), 0.1, 0.01);
  EXPECT_NEAR(std::chrono::duration<double>(q.Reserve(t2)).count(), 0.2, 0.01);
  TokenBucket unlimited(0, 1);
  for (int i = 0; i < 1000; ++i) EXPECT_TRUE(unlimited.TryAccept());
}

ResourceType Pods() { return {"", "v1", "pods", "Pod", Target::kPod, ""}; }

TEST(Objects, DecodesPodListWithoutKinds) {
  // List items carry no kind/apiVersion; managedFields are dropped.
  const std::string list = R"({"kind":"PodList","apiVersion":"v1",
    "metadata":{"resourceVersion":"42","continue":"tok"},
    "items":[{"metadata":{"name":"a","namespace":"ns","uid":"u1","resourceVersion":"40",
               "labels":{"app":"x"},"managedFields":[{"manager":"kubectl"}],
               "creationTimestamp":"2024-05-01T10:00:00Z"},
              "spec":{"schedulerName":"phalanx","containers":[{"name":"c","image":"i",
                      "resources":{"requests":{"cpu":"500m","memory":"1Gi"}}}]},
              "status":{"phase":"Pending"}},
             {"metadata":{"name":"bad","namespace":"ns"},
              "spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"lots"}}}]}}]})";
  ListPage page;
  std::string err;
  ASSERT_TRUE(api::OkOrMessage(DecodeList(list, Pods(), &page), &err)) << err;
  EXPECT_EQ(page.resource_version, "42");
  EXPECT_EQ(page.continue_token, "tok");
  ASSERT_EQ(page.items.size(), 1u);
  ASSERT_EQ(page.skipped.size(), 1u);
  EXPECT_NE(page.skipped[0].find("Pod ns/bad"), std::string::npos) << page.skipped[0];
  EXPECT_NE(page.skipped[0].find("requests.cpu"), std::string::npos) << page.skipped[0];
  const auto& o = page.items[0];
  EXPECT_EQ(o.key, "ns/a");
  EXPECT_EQ(o.resource_version, "40");
  auto pod = std::static_pointer_cast<const api::Pod>(o.ptr);
  EXPECT_EQ(pod->metadata.uid, "u1");
  EXPECT_EQ(pod->spec.scheduler_name, "phalanx");
  EXPECT_EQ(pod->metadata.labels.at("app"), "x");
  EXPECT_EQ(pod->spec.containers[0].resources.requests.at("cpu").MilliValue(), 500);
}

TEST(Objects, DecodesWatchEvents) {
  WatchEvent ev;
  std::string err;
  ASSERT_TRUE(api::OkOrMessage(
      DecodeWatchEvent(
          R"({"type":"MODIFIED","object":{"kind":"Node","apiVersion":"v1","metadata":{"name":"n1","resourceVersion":"7"},"status":{"allocatable":{"cpu":"4"}}}})",
          {"", "v1", "nodes", "Node", Target::kNode, ""}, &ev),
      &err))
      << err;
  EXPECT_EQ(ev.type, "MODIFIED");
  EXPECT_EQ(ev.resource_version, "7");
  EXPECT_EQ(ev.object.key, "n1");
  auto node = std::static_pointer_cast<const api::Node>(ev.object.ptr);
  EXPECT_EQ(node->status.allocatable.at("cpu").MilliValue(), 4000);

  ASSERT_TRUE(api::OkOrMessage(
      DecodeWatchEvent(
          R"({"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"99"}}})",
          Pods(), &ev),
      &err));
  EXPECT_EQ(ev.type, "BOOKMARK");
  EXPECT_EQ(ev.resource_version, "99");

  ASSERT_TRUE(api::OkOrMessage(
      DecodeWatchEvent(
          R"j({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","message":"too old resource version: 1 (5)","reason":"Expired","code":410}})j",
          Pods(), &ev),
      &err));
  EXPECT_EQ(ev.error_code, 410);
  EXPECT_NE(ev.error_message.find("too old"), std::string::npos);

  EXPECT_FALSE(api::OkOrMessage(DecodeWatchEvent("{not json", Pods(), &ev), &err));
  EXPECT_NE(err.find("malformed JSON"), std::string::npos);
}

TEST(Objects, DecodesCustomObjectsAsUnstructured) {
  ResourceType pg{"scheduling.x-k8s.io", "v1alpha1", "podgroups", "PodGroup", Target::kObject, ""};
  Object o;
  std::string err;
  ASSERT_TRUE(api::MoveOrMessage(
      DecodeObjectJson(
          R"({"metadata":{"name":"g","namespace":"ns","uid":"u","resourceVersion":"3"},"spec":{"minMember":3}})",
          pg),
      &o, &err))
      << err;
  auto u = std::static_pointer_cast<const api::Unstructured>(o.ptr);
  EXPECT_EQ(u->kind, "PodGroup");
  EXPECT_EQ(u->api_version, "scheduling.x-k8s.io/v1alpha1");
  EXPECT_EQ(o.key, "ns/g");
  EXPECT_EQ((*u->object)["spec"]["minMember"].as<int>(), 3);
}

// PodDisruptionBudgets as the server sends them (JSON: intstr as number or string), from
// policy/v1 and from the policy/v1beta1 of servers before 1.21; errors name the object.
TEST(Objects, DecodesPodDisruptionBudgets) {
  for (const char* version : {"v1", "v1beta1"}) {
    SCOPED_TRACE(version);
    ResourceType rt{"policy",
                    version,
                    "poddisruptionbudgets",
                    "PodDisruptionBudget",
                    Target::kPodDisruptionBudget,
                    ""};
    ListPage page;
    std::string err;
    ASSERT_TRUE(api::OkOrMessage(
        DecodeList(
            R"({"metadata":{"resourceVersion":"7"},"items":[{"metadata":{"name":"db","namespace":"prod","resourceVersion":"6"},)"
            R"("spec":{"maxUnavailable":"25%","selector":{"matchLabels":{"app":"db"}}},)"
            R"("status":{"disruptionsAllowed":1,"currentHealthy":4,"desiredHealthy":3,"expectedPods":4,)"
            R"("disruptedPods":{"db-0":"2024-05-01T10:00:00Z"}}},)"
            R"({"metadata":{"name":"bad","namespace":"prod"},"spec":{"minAvailable":-1}}]})",
            rt, &page),
        &err))
        << err;
    ASSERT_EQ(page.items.size(), 1u);
    EXPECT_EQ(page.items[0].key, "prod/db");
    EXPECT_EQ(page.items[0].resource_version, "6");
    auto pdb = std::static_pointer_cast<const api::PodDisruptionBudget>(page.items[0].ptr);
    EXPECT_EQ(pdb->api_version, std::string("policy/") + version);
    ASSERT_TRUE(pdb->spec.max_unavailable);
    EXPECT_EQ(pdb->spec.max_unavailable->str_value, "25%");
    EXPECT_EQ(pdb->status.disruptions_allowed, 1);
    EXPECT_EQ(pdb->status.disrupted_pods.count("db-0"), 1u);
    ASSERT_EQ(page.skipped.size(), 1u);
    EXPECT_NE(
        page.skipped[0].find("PodDisruptionBudget prod/bad: spec.minAvailable: Invalid value"),
        std::string::npos)
        << page.skipped[0];
  }
}

TEST(Objects, TimeRoundTrip) {
  api::Timestamp t = 0;
  ASSERT_TRUE(ParseTime("2024-05-01T10:00:00.123456Z", &t));
  EXPECT_EQ(FormatTime(t, true), "2024-05-01T10:00:00.123456Z");
  EXPECT_EQ(FormatTime(t), "2024-05-01T10:00:00Z");
  api::Timestamp t2 = 0;
  ASSERT_TRUE(ParseTime("2024-05-01T12:00:00+02:00", &t2));
  EXPECT_EQ(t2, t - 123456000);
  EXPECT_FALSE(ParseTime("yesterday", &t));
  EXPECT_EQ(JsonString("a\"b\\c\n"), "\"a\\\"b\\\\c\\n\"");
}

TEST(RestClient, DescribesErrors) {
  RestConfig c;
  c.server = "https://127.0.0.1:6443";
  c.token = "t";
  c.source_file = "/k/config";
  c.ca_file = "/k/ca.crt";
  RestClient rc(c);
  Response r;
  r.status = 401;
  EXPECT_EQ(
      rc.Describe("GET", "/apis?x=1", r),
      "Unauthorized: check the token in /k/config (GET https://127.0.0.1:6443/apis: HTTP 401)");
  r.status = 403;
  r.body = R"({"kind":"Status","message":"pods is forbidden: User \"u\" cannot list","code":403})";
  EXPECT_EQ(rc.Describe("GET", "/api/v1/pods", r),
            "Forbidden: pods is forbidden: User \"u\" cannot list (GET "
            "https://127.0.0.1:6443/api/v1/pods)");
  r = Response{};
  r.curl_code = 60;  // CURLE_PEER_FAILED_VERIFICATION
  r.curl_error = "SSL certificate problem: self-signed certificate";
  EXPECT_EQ(rc.Describe("GET", "/apis", r),
            "TLS verification failed for https://127.0.0.1:6443: SSL certificate problem: "
            "self-signed certificate (certificate-authority /k/ca.crt)");
  r = Response{};
  r.status = 409;
  r.body = R"({"kind":"Status","message":"pod p is already assigned to node n","code":409})";
  EXPECT_EQ(rc.Describe("POST", "/api/v1/namespaces/d/pods/p/binding", r),
            "POST https://127.0.0.1:6443/api/v1/namespaces/d/pods/p/binding: HTTP 409 Conflict: "
            "pod p is already assigned to node n");
}

TEST(RestClient, ConnectionRefusedNamesServer) {
  RestConfig c;
  c.server = "http://127.0.0.1:1";  // nothing listens on port 1
  RestClient rc(c);
  Response r = rc.Do("GET", "/version");
  EXPECT_FALSE(r.ok());
  const std::string d = rc.Describe("GET", "/version", r);
  EXPECT_EQ(d.rfind("cannot connect to http://127.0.0.1:1: ", 0), 0u) << d;
}

TEST(LiveClusterClient, PodGroupStatusJsonPerDialect) {
  cluster::ClusterClient::PodGroupStatus st;
  st.phase = "Scheduled";
  st.scheduled = 4;
  st.running = 3;
  st.succeeded = 1;
  st.pending = 0;
  st.schedule_start_time = 1000 * api::kNanosPerSecond;
  st.occupied_by = "ml/train-job";
  st.condition_type = "Scheduled";
  st.condition_reason = "Scheduled";
  st.condition_message = "4/4 members bound";
  // Coscheduling (scheduler-plugins v1alpha1): counts, no conditions field, and no
  // scheduled count (its CRD dropped the field; the older group's CRD keeps it, below).
  EXPECT_EQ(LiveClusterClient::PodGroupStatusJson("scheduling.x-k8s.io", st, 0),
            "{\"phase\":\"Scheduled\",\"running\":3,\"succeeded\":1,"
            "\"failed\":0,\"scheduleStartTime\":\"1970-01-01T00:16:40Z\",\"occupiedBy\":"
            "\"ml/train-job\"}");
  // Unknown start time and owner are omitted, so a merge patch keeps what is there.
  st.schedule_start_time = 0;
  st.occupied_by.clear();
  EXPECT_EQ(LiveClusterClient::PodGroupStatusJson("scheduling.sigs.k8s.io", st, 0),
            "{\"phase\":\"Scheduled\",\"scheduled\":4,\"running\":3,\"succeeded\":1,"
            "\"failed\":0}");
  // Volcano v1beta1: phase + conditions + counts, no scheduled count.
  st.phase = "Running";
  EXPECT_EQ(LiveClusterClient::PodGroupStatusJson("scheduling.volcano.sh", st,
                                                  2000 * api::kNanosPerSecond),
            "{\"phase\":\"Running\",\"conditions\":[{\"type\":\"Scheduled\",\"status\":\"True\","
            "\"reason\":\"Scheduled\",\"message\":\"4/4 members bound\","
            "\"lastTransitionTime\":\"1970-01-01T00:33:20Z\"}],\"running\":3,\"succeeded\":1,"
            "\"failed\":0}");
  // KAI v2alpha2: counts and schedulingConditions (with nodePool and reasons); [] clears it.
  cluster::ClusterClient::PodGroupStatus kai;
  kai.pending = 2;
  kai.condition_type = "UnschedulableOnNodePool";
  kai.condition_reason = "Unschedulable";
  kai.condition_message = "1 of 2 pending members fit";
  EXPECT_EQ(LiveClusterClient::PodGroupStatusJson("scheduling.run.ai", kai, 0),
            "{\"pending\":2,\"running\":0,\"succeeded\":0,\"failed\":0,\"schedulingConditions\":"
            "[{\"type\":\"UnschedulableOnNodePool\",\"status\":\"True\",\"reason\":"
            "\"Unschedulable\",\"message\":\"1 of 2 pending members fit\",\"lastTransitionTime\":"
            "\"1970-01-01T00:00:00Z\",\"nodePool\":\"default\",\"reasons\":[{\"reason\":"
            "\"Unschedulable\",\"message\":\"1 of 2 pending members fit\"}]}]}");
  kai.condition_type.clear();
  EXPECT_EQ(LiveClusterClient::PodGroupStatusJson("scheduling.run.ai", kai, 0),
            "{\"pending\":2,\"running\":0,\"succeeded\":0,\"failed\":0,"
            "\"schedulingConditions\":[]}");
  // scheduling.k8s.io PodGroup (KEP-5832): the PodGroupScheduled condition only.
  cluster::ClusterClient::PodGroupStatus up;
  up.condition_type = "PodGroupScheduled";
  up.condition_status = "False";
  up.condition_reason = "Unschedulable";
  up.condition_message = "no fit";
  EXPECT_EQ(LiveClusterClient::PodGroupStatusJson("scheduling.k8s.io", up, 0),
            "{\"conditions\":[{\"type\":\"PodGroupScheduled\",\"status\":\"False\",\"reason\":"
            "\"Unschedulable\",\"message\":\"no fit\",\"lastTransitionTime\":"
            "\"1970-01-01T00:00:00Z\"}]}");
}

}  // namespace
}  // namespace phalanx::client
