// HTTPExtender against a fake transport (the wire format, result handling and upstream's
// error texts) and against a refused loopback port (libcurl, Go's wording).
#include "extender/http_extender.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "api/decode.h"
#include "extender/wire.h"
#include "framework/handle.h"
#include "testing/builders.h"

namespace phalanx::extender {
namespace {

using nlohmann::json;
using testing::NodeBuilder;
using testing::PodBuilder;

// Records the requests and answers with a canned response.
class FakeTransport : public Transport {
 public:
  explicit FakeTransport(HttpResponse r) : response(std::move(r)) {}
  HttpResponse Post(const std::string& url, const std::string& body) override {
    urls.push_back(url);
    bodies.push_back(json::parse(body));
    return response;
  }
  HttpResponse response;
  std::vector<std::string> urls;
  std::vector<json> bodies;
};

class Lister : public framework::NodeInfoLister {
 public:
  explicit Lister(std::vector<const framework::NodeInfo*> n) : nodes_(std::move(n)) {}
  const std::vector<const framework::NodeInfo*>& List() const override { return nodes_; }
  const std::vector<const framework::NodeInfo*>& HavePodsWithAffinityList() const override {
    return empty_;
  }
  const std::vector<const framework::NodeInfo*>& HavePodsWithRequiredAntiAffinityList()
      const override {
    return empty_;
  }
  const framework::NodeInfo* Get(std::string_view name) const override {
    for (const auto* n : nodes_) {
      if (n->name() == name) return n;
    }
    return nullptr;
  }

 private:
  std::vector<const framework::NodeInfo*> nodes_, empty_;
};

struct Fixture {
  explicit Fixture(config::Extender c, HttpResponse r) {
    auto t = std::make_unique<FakeTransport>(std::move(r));
    transport = t.get();
    ext = std::make_unique<HTTPExtender>(c, std::move(t));
    a = testing::MakeNodeInfo(NodeBuilder("node-a").Capacity({{"cpu", "4"}}).Obj());
    b = testing::MakeNodeInfo(NodeBuilder("node-b").Capacity({{"cpu", "4"}}).Obj(),
                              {PodBuilder("victim").UID("uid-v").NodeName("node-b").Obj()});
    nodes = {&a, &b};
  }
  FakeTransport* transport;
  std::unique_ptr<HTTPExtender> ext;
  framework::NodeInfo a, b;
  std::vector<const framework::NodeInfo*> nodes;
};

config::Extender Cfg() {
  config::Extender c;
  c.url_prefix = "http://ext:8888/scheduler/";
  c.filter_verb = "filter";
  c.prioritize_verb = "prioritize";
  c.preempt_verb = "preempt";
  c.bind_verb = "bind";
  c.weight = 2;
  return c;
}

HttpResponse Ok(const std::string& body) { return HttpResponse{200, body, ""}; }

TEST(HTTPExtender, FilterSendsPodAndNodesAndKeepsTheReturnedNodes) {
  Fixture f(Cfg(), Ok(R"({"Nodes":{"items":[{"metadata":{"name":"node-b"}}]},
                          "FailedNodes":{"node-a":"no gpu"},"Error":""})"));
  framework::ExtenderFilterResult r;
  const api::Pod pod = PodBuilder("p").Req("cpu", "1500m").Obj();
  ASSERT_TRUE(f.ext->Filter(pod, f.nodes, &r).ok());
  ASSERT_EQ(r.nodes.size(), 1u);
  EXPECT_EQ(r.nodes[0]->name(), "node-b");
  EXPECT_EQ(r.failed.at("node-a"), "no gpu");
  ASSERT_EQ(f.transport->urls.size(), 1u);
  EXPECT_EQ(f.transport->urls[0], "http://ext:8888/scheduler/filter");
  const json& body = f.transport->bodies[0];
  EXPECT_EQ(body["Pod"]["metadata"]["name"], "p");
  EXPECT_EQ(body["Pod"]["spec"]["containers"][0]["resources"]["requests"]["cpu"], "1500m");
  ASSERT_EQ(body["Nodes"]["items"].size(), 2u);
  EXPECT_EQ(body["Nodes"]["items"][1]["metadata"]["name"], "node-b");
  EXPECT_EQ(body["Nodes"]["items"][1]["status"]["capacity"]["cpu"], "4");
  EXPECT_TRUE(body["NodeNames"].is_null());
}

TEST(HTTPExtender, NodeCacheCapableSendsAndReadsNodeNames) {
  config::Extender c = Cfg();
  c.node_cache_capable = true;
  Fixture f(c, Ok(R"({"nodenames":["node-a"],"FailedAndUnresolvableNodes":{"node-b":"gone"}})"));
  framework::ExtenderFilterResult r;
  ASSERT_TRUE(f.ext->Filter(PodBuilder("p").Obj(), f.nodes, &r).ok());
  ASSERT_EQ(r.nodes.size(), 1u);
  EXPECT_EQ(r.nodes[0]->name(), "node-a");
  EXPECT_EQ(r.unresolvable.at("node-b"), "gone");
  const json& body = f.transport->bodies[0];
  EXPECT_EQ(body["NodeNames"], json::array({"node-a", "node-b"}));
  EXPECT_TRUE(body["Nodes"].is_null());
}

TEST(HTTPExtender, FilterErrors) {
  {
    Fixture f(Cfg(), Ok(R"({"Error":"extender broke"})"));
    framework::ExtenderFilterResult r;
    EXPECT_EQ(f.ext->Filter(PodBuilder("p").Obj(), f.nodes, &r).message(), "extender broke");
  }
  {
    Fixture f(Cfg(), HttpResponse{500, "oops", ""});
    framework::ExtenderFilterResult r;
    EXPECT_EQ(f.ext->Filter(PodBuilder("p").Obj(), f.nodes, &r).message(),
              "failed filter with extender at URL http://ext:8888/scheduler/filter, code 500");
  }
  {
    Fixture f(Cfg(), HttpResponse{0, "", "dial tcp 10.0.0.1:8888: connect: connection refused"});
    framework::ExtenderFilterResult r;
    EXPECT_EQ(f.ext->Filter(PodBuilder("p").Obj(), f.nodes, &r).message(),
              "Post \"http://ext:8888/scheduler/filter\": dial tcp 10.0.0.1:8888: connect: "
              "connection refused");
  }
  {
    config::Extender c = Cfg();
    c.node_cache_capable = true;
    Fixture f(c, Ok(R"({"NodeNames":["node-z"]})"));
    framework::ExtenderFilterResult r;
    EXPECT_EQ(f.ext->Filter(PodBuilder("p").Obj(), f.nodes, &r).message(),
              "extender \"http://ext:8888/scheduler/\" claims a filtered node \"node-z\" which is "
              "not found in the input node list");
  }
  {
    Fixture f(Cfg(), Ok("not json"));
    framework::ExtenderFilterResult r;
    EXPECT_FALSE(f.ext->Filter(PodBuilder("p").Obj(), f.nodes, &r).ok());
  }
}

TEST(HTTPExtender, NoFilterVerbKeepsEveryNodeWithoutACall) {
  config::Extender c = Cfg();
  c.filter_verb.clear();
  Fixture f(c, Ok("{}"));
  framework::ExtenderFilterResult r;
  ASSERT_TRUE(f.ext->Filter(PodBuilder("p").Obj(), f.nodes, &r).ok());
  EXPECT_EQ(r.nodes.size(), 2u);
  EXPECT_TRUE(f.transport->urls.empty());
}

TEST(HTTPExtender, PrioritizeReturnsScoresAndWeight) {
  Fixture f(Cfg(), Ok(R"([{"Host":"node-a","Score":3},{"host":"node-b","score":9}])"));
  std::map<std::string, int64_t> scores;
  int64_t weight = 0;
  ASSERT_TRUE(f.ext->Prioritize(PodBuilder("p").Obj(), f.nodes, &scores, &weight).ok());
  EXPECT_EQ(scores.at("node-a"), 3);
  EXPECT_EQ(scores.at("node-b"), 9);
  EXPECT_EQ(weight, 2);
  EXPECT_EQ(f.transport->urls[0], "http://ext:8888/scheduler/prioritize");
}

TEST(HTTPExtender, BindSendsBindingArgs) {
  Fixture f(Cfg(), Ok(R"({"Error":""})"));
  const api::Pod pod = PodBuilder("p", "ns1").UID("u-1").Obj();
  ASSERT_TRUE(f.ext->Bind(pod, "node-a").ok());
  const json& body = f.transport->bodies[0];
  EXPECT_EQ(
      body,
      json({{"PodName", "p"}, {"PodNamespace", "ns1"}, {"PodUID", "u-1"}, {"Node", "node-a"}}));
  f.transport->response = Ok(R"({"Error":"no quota"})");
  EXPECT_EQ(f.ext->Bind(pod, "node-a").message(), "no quota");
}

TEST(HTTPExtender, ProcessPreemptionResolvesVictimsByUID) {
  Fixture f(
      Cfg(),
      Ok(R"({"NodeNameToMetaVictims":{"node-b":{"Pods":[{"UID":"uid-v"}],"NumPDBViolations":1}}})"));
  framework::ExtenderVictimsMap in, out;
  in["node-b"].pods = f.b.pods();
  Lister lister(f.nodes);
  ASSERT_TRUE(f.ext->ProcessPreemption(PodBuilder("p").Obj(), in, lister, &out).ok());
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out["node-b"].pods.size(), 1u);
  EXPECT_EQ(out["node-b"].pods[0]->pod->metadata.name, "victim");
  EXPECT_EQ(out["node-b"].num_pdb_violations, 1);
  EXPECT_EQ(f.transport->bodies[0]["NodeNameToVictims"]["node-b"]["Pods"][0]["metadata"]["uid"],
            "uid-v");
  f.transport->response = Ok(R"({"NodeNameToMetaVictims":{"node-b":{"Pods":[{"UID":"nope"}]}}})");
  EXPECT_EQ(f.ext->ProcessPreemption(PodBuilder("p").Obj(), in, lister, &out).message(),
            "extender: http://ext:8888/scheduler/ claims to preempt pod (UID: &{nope}) on node: "
            "node-b, but the pod is not found on that node");
}

TEST(HTTPExtender, IsInterestedInManagedResourcesOnly) {
  config::Extender c = Cfg();
  c.managed_resources = {{"example.com/foo", false}};
  Fixture f(c, Ok("{}"));
  EXPECT_FALSE(f.ext->IsInterested(PodBuilder("p").Req("cpu", "1").Obj()));
  EXPECT_TRUE(f.ext->IsInterested(PodBuilder("p").Req("example.com/foo", "1").Obj()));
  EXPECT_TRUE(f.ext->IsInterested(PodBuilder("p").InitContainer({{"example.com/foo", "1"}}).Obj()));
  c.managed_resources.clear();
  Fixture all(c, Ok("{}"));
  EXPECT_TRUE(all.ext->IsInterested(PodBuilder("p").Obj()));
}

TEST(HTTPExtender, BuildOrdersIgnorableLast) {
  config::Extender a = Cfg(), b = Cfg(), c = Cfg();
  a.url_prefix = "http://a";
  a.ignorable = true;
  b.url_prefix = "http://b";
  c.url_prefix = "http://c";
  auto built = BuildExtenders({a, b, c});
  ASSERT_TRUE(built.ok());
  ASSERT_EQ(built->size(), 3u);
  EXPECT_EQ((*built)[0]->Name(), "http://b");
  EXPECT_EQ((*built)[1]->Name(), "http://c");
  EXPECT_EQ((*built)[2]->Name(), "http://a");
}

// A real POST to a closed loopback port: Go's net/http wording.
TEST(HTTPExtender, RefusedConnectionGivesUpstreamsMessage) {
  config::Extender c = Cfg();
  c.url_prefix = "http://127.0.0.1:1";
  auto t = NewCurlTransport(c);
  ASSERT_TRUE(t.ok());
  HTTPExtender ext(c, std::move(t).value());
  auto a = testing::MakeNodeInfo(NodeBuilder("node-a").Obj());
  framework::ExtenderFilterResult r;
  EXPECT_EQ(
      ext.Filter(PodBuilder("p").Obj(), {&a}, &r).message(),
      "Post \"http://127.0.0.1:1/filter\": dial tcp 127.0.0.1:1: connect: connection refused");
}

}  // namespace

// The pod an extender gets carries every scheduling field the model keeps. Oracle: the
// project's manifest decoder (api/decode.cc, separate code) reads the sent JSON back, and
// the fields must equal those decoded from the original manifest, named as core/v1 names them.
TEST(ExtenderWire, PodJsonCarriesTheWorkloadFieldsExtendersRead) {
  const std::string manifest = R"(
apiVersion: v1
kind: Pod
metadata: {name: web-0, namespace: shop, labels: {app: web}}
spec:
  hostNetwork: true
  activeDeadlineSeconds: 3600
  schedulingGates: [{name: example.com/wait}]
  resources: {requests: {cpu: "2", memory: 1Gi}, limits: {cpu: "2", memory: 1Gi}}
  affinity:
    podAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 30
        podAffinityTerm:
          topologyKey: topology.kubernetes.io/zone
          labelSelector: {matchLabels: {app: cache}}
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - topologyKey: kubernetes.io/hostname
        labelSelector:
          matchExpressions: [{key: app, operator: In, values: [web]}]
        namespaces: [shop]
  topologySpreadConstraints:
  - maxSkew: 2
    topologyKey: topology.kubernetes.io/zone
    whenUnsatisfiable: DoNotSchedule
    labelSelector: {matchLabels: {app: web}}
    minDomains: 3
    nodeTaintsPolicy: Honor
  resourceClaims:
  - {name: gpu, resourceClaimTemplateName: one-gpu}
  volumes:
  - name: data
    persistentVolumeClaim: {claimName: data-web-0}
  - name: scratch
    ephemeral:
      volumeClaimTemplate:
        spec:
          accessModes: [ReadWriteOnce]
          resources: {requests: {storage: 5Gi}}
  - name: disk
    gcePersistentDisk: {pdName: pd-1, readOnly: true}
  - name: config
    configMap: {name: settings}
  containers:
  - name: web
    image: nginx
    ports: [{containerPort: 8080}]
    resources:
      requests: {cpu: 500m}
      claims: [{name: gpu}]
)";
  const auto milli = [](const api::ResourceList& rl) {
    std::map<std::string, int64_t> m;
    for (const auto& [k, q] : rl) m[k] = q.MilliValue();
    return m;
  };
  api::Manifests in;
  const auto in_st = api::DecodeManifests(manifest, "pod.yaml", &in);
  ASSERT_TRUE(in_st.ok()) << in_st.ToString();
  ASSERT_EQ(in.pods.size(), 1u);
  const json sent = PodJson(in.pods[0]);
  EXPECT_EQ(sent["spec"]["affinity"]["podAntiAffinity"]
                ["requiredDuringSchedulingIgnoredDuringExecution"][0]["topologyKey"],
            "kubernetes.io/hostname");
  EXPECT_EQ(sent["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"], "data-web-0");
  EXPECT_EQ(sent["spec"]["volumes"][1]["ephemeral"]["volumeClaimTemplate"]["spec"]["resources"]
                ["requests"]["storage"],
            "5Gi");
  EXPECT_EQ(sent["spec"]["volumes"][3],
            json({{"name", "config"}}));  // a source the model does not keep

  api::Manifests back;
  const auto st = api::DecodeManifests(sent.dump(), "sent.json", &back);
  ASSERT_TRUE(st.ok()) << st.ToString();
  ASSERT_EQ(back.pods.size(), 1u);
  const api::PodSpec& a = in.pods[0].spec;
  const api::PodSpec& b = back.pods[0].spec;
  EXPECT_EQ(b.host_network, a.host_network);
  EXPECT_EQ(b.active_deadline_seconds, a.active_deadline_seconds);
  ASSERT_EQ(b.scheduling_gates.size(), 1u);
  EXPECT_EQ(b.scheduling_gates[0].name, "example.com/wait");
  ASSERT_TRUE(b.resources.has_value());
  EXPECT_EQ(milli(b.resources->requests), milli(a.resources->requests));
  EXPECT_EQ(milli(b.resources->limits), milli(a.resources->limits));
  ASSERT_TRUE(b.affinity && b.affinity->pod_affinity && b.affinity->pod_anti_affinity);
  const auto& pref = b.affinity->pod_affinity->preferred;
  ASSERT_EQ(pref.size(), 1u);
  EXPECT_EQ(pref[0].weight, 30);
  EXPECT_EQ(pref[0].pod_affinity_term.topology_key, "topology.kubernetes.io/zone");
  EXPECT_EQ(pref[0].pod_affinity_term.label_selector->match_labels,
            (std::map<std::string, std::string>{{"app", "cache"}}));
  const auto& anti = b.affinity->pod_anti_affinity->required;
  ASSERT_EQ(anti.size(), 1u);
  EXPECT_EQ(anti[0].namespaces, std::vector<std::string>{"shop"});
  ASSERT_EQ(anti[0].label_selector->match_expressions.size(), 1u);
  EXPECT_EQ(anti[0].label_selector->match_expressions[0].values, std::vector<std::string>{"web"});
  ASSERT_EQ(b.topology_spread_constraints.size(), 1u);
  const auto& tsc = b.topology_spread_constraints[0];
  EXPECT_EQ(tsc.max_skew, 2);
  EXPECT_EQ(tsc.when_unsatisfiable, "DoNotSchedule");
  EXPECT_EQ(tsc.min_domains, std::optional<int32_t>(3));
  EXPECT_EQ(tsc.node_taints_policy, "Honor");
  ASSERT_EQ(b.resource_claims.size(), 1u);
  EXPECT_EQ(b.resource_claims[0].resource_claim_template_name, "one-gpu");
  ASSERT_EQ(b.containers.size(), 1u);
  EXPECT_EQ(b.containers[0].resource_claims, std::vector<std::string>{"gpu"});
  EXPECT_EQ(milli(b.containers[0].resources.requests), milli(a.containers[0].resources.requests));
  EXPECT_EQ(milli(b.containers[0].resources.requests).at("cpu"), 500);
  ASSERT_EQ(b.volumes.size(), 4u);
  EXPECT_EQ(b.volumes[0].persistent_volume_claim, "data-web-0");
  ASSERT_TRUE(b.volumes[1].ephemeral_claim_template);
  EXPECT_EQ((*b.volumes[1].ephemeral_claim_template)["spec"]["resources"]["requests"]["storage"]
                .as<std::string>(),
            "5Gi");
  EXPECT_EQ(b.volumes[2].source.type, api::VolumeSource::Type::kGCEPersistentDisk);
  EXPECT_EQ(b.volumes[2].source.id, "pd-1");
  EXPECT_TRUE(b.volumes[2].source.read_only);
  EXPECT_EQ(b.volumes[3].name, "config");
}

}  // namespace phalanx::extender
