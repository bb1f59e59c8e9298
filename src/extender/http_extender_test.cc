// HTTPExtender against a fake transport (the wire format, result handling and upstream's
// error texts) and against a refused loopback port (libcurl, Go's wording).
#include "extender/http_extender.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

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
  const std::vector<const framework::NodeInfo*>& HavePodsWithAffinityList() const override { return empty_; }
  const std::vector<const framework::NodeInfo*>& HavePodsWithRequiredAntiAffinityList() const override {
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
  EXPECT_EQ(body, json({{"PodName", "p"}, {"PodNamespace", "ns1"}, {"PodUID", "u-1"}, {"Node", "node-a"}}));
  f.transport->response = Ok(R"({"Error":"no quota"})");
  EXPECT_EQ(f.ext->Bind(pod, "node-a").message(), "no quota");
}

TEST(HTTPExtender, ProcessPreemptionResolvesVictimsByUID) {
  Fixture f(Cfg(), Ok(R"({"NodeNameToMetaVictims":{"node-b":{"Pods":[{"UID":"uid-v"}],"NumPDBViolations":1}}})"));
  framework::ExtenderVictimsMap in, out;
  in["node-b"].pods = f.b.pods();
  Lister lister(f.nodes);
  ASSERT_TRUE(f.ext->ProcessPreemption(PodBuilder("p").Obj(), in, lister, &out).ok());
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out["node-b"].pods.size(), 1u);
  EXPECT_EQ(out["node-b"].pods[0]->pod->metadata.name, "victim");
  EXPECT_EQ(out["node-b"].num_pdb_violations, 1);
  EXPECT_EQ(f.transport->bodies[0]["NodeNameToVictims"]["node-b"]["Pods"][0]["metadata"]["uid"], "uid-v");
  f.transport->response =
      Ok(R"({"NodeNameToMetaVictims":{"node-b":{"Pods":[{"UID":"nope"}]}}})");
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
  EXPECT_EQ(ext.Filter(PodBuilder("p").Obj(), {&a}, &r).message(),
            "Post \"http://127.0.0.1:1/filter\": dial tcp 127.0.0.1:1: connect: connection refused");
}

}  // namespace
}  // namespace phalanx::extender
