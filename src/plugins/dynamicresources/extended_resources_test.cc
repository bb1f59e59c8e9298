// The requests and container mappings of the claim for a pod's extended resources backed by
// DRA, against the expectations of upstream's table
// (pkg/scheduler/framework/plugins/dynamicresources/extendeddynamicresources_test.go
// Test_createRequestsAndMappings_requests / _mappings; pods built as its st.MakePod does:
// Res adds container "con<i>", InitReq "init-con<i>", SidecarReq "sidecar-con<i>" with
// restartPolicy Always, i counting the list it joins).
#include "plugins/dynamicresources/extended_resources.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

namespace phalanx::plugins::dynamicresources {
namespace {

const std::string kExt = "example.com/gpu";
const std::string kImplicitInit = std::string(dra::kImplicitExtendedResourcePrefix) + "classInit";

api::ResourceList Res(const std::vector<std::pair<std::string, std::string>>& r) {
  api::ResourceList out;
  for (const auto& [k, v] : r) out[k] = *api::Quantity::Parse(v);
  return out;
}

struct PodBuilder {
  api::Pod pod;
  PodBuilder() {
    pod.metadata.name = "pod";
    pod.metadata.namespace_ = "ns";
    pod.metadata.uid = "pod-uid";
  }
  PodBuilder& Container(const std::vector<std::pair<std::string, std::string>>& r) {
    api::Container c;
    c.name = "con" + std::to_string(pod.spec.containers.size());
    c.resources.requests = Res(r);
    pod.spec.containers.push_back(c);
    return *this;
  }
  PodBuilder& Init(const std::vector<std::pair<std::string, std::string>>& r,
                   bool sidecar = false) {
    api::Container c;
    c.name =
        (sidecar ? "sidecar-con" : "init-con") + std::to_string(pod.spec.init_containers.size());
    c.resources.requests = Res(r);
    if (sidecar) c.restart_policy = "Always";
    pod.spec.init_containers.push_back(c);
    return *this;
  }
};

using Req = std::tuple<std::string, std::string, int64_t>;  // name, class, count

std::vector<Req> Requests(const api::Pod& pod, const std::vector<ExtendedResourceClass>& rc) {
  std::vector<dra::DeviceRequest> reqs;
  std::vector<api::ContainerExtendedResourceRequest> maps;
  ExtendedResourceRequests(pod, rc, &reqs, &maps);
  std::vector<Req> out;
  for (const auto& r : reqs) {
    EXPECT_TRUE(r.exactly.has_value());
    EXPECT_TRUE(r.first_available.empty());
    EXPECT_EQ(r.exactly->name, r.name);
    EXPECT_FALSE(r.exactly->all);
    out.emplace_back(r.name, r.exactly->device_class_name, r.exactly->count);
  }
  return out;
}

TEST(ExtendedResourceRequestsTest, UpstreamRequestTable) {
  const api::Pod pod1 = PodBuilder().Container({{kExt, "1"}, {kExt + "1", "2"}}).pod;
  const api::Pod pod2 = PodBuilder().Container({{kExt, "1"}}).Container({{kExt + "1", "2"}}).pod;
  const api::Pod pod_init = PodBuilder().Container({{kExt, "1"}}).Init({{kExt + "init", "2"}}).pod;
  const api::Pod pod_init2 = PodBuilder()
                                 .Container({{kExt, "1"}})
                                 .Init({{kExt + "init", "1"}})
                                 .Init({{kExt + "init", "2"}})
                                 .pod;
  const api::Pod pod_init3 = PodBuilder()
                                 .Container({{kExt, "1"}})
                                 .Init({{kExt + "init", "1"}})
                                 .Init({{kExt + "init", "1"}}, /*sidecar=*/true)
                                 .Init({{kExt + "init", "2"}})
                                 .pod;
  const ExtendedResourceClass ext{kExt, "class"}, ext1{kExt + "1", "class1"},
      init{kExt + "init", "classInit"};
  // "nil": no resource maps to a class.
  EXPECT_TRUE(Requests(pod1, {}).empty());
  // "one resource match" / "one resource match, one resource not match".
  EXPECT_EQ(Requests(pod1, {ext}), (std::vector<Req>{{"container-0-request-0", "class", 1}}));
  // "two resources match".
  EXPECT_EQ(Requests(pod1, {ext, ext1}),
            (std::vector<Req>{{"container-0-request-0", "class", 1},
                              {"container-0-request-1", "class1", 2}}));
  // "two containers match".
  EXPECT_EQ(Requests(pod2, {ext1, ext}),
            (std::vector<Req>{{"container-0-request-0", "class", 1},
                              {"container-1-request-0", "class1", 2}}));
  // "one init container, one regular container": the init container cannot reuse the
  // regular container's request of another resource.
  EXPECT_EQ(Requests(pod_init, {ext, init}),
            (std::vector<Req>{{"container-0-request-0", "classInit", 2},
                              {"container-1-request-0", "class", 1}}));
  // "two init containers, one regular container": only the larger init request is kept.
  EXPECT_EQ(Requests(pod_init2, {ext, init}),
            (std::vector<Req>{{"container-1-request-0", "classInit", 2},
                              {"container-2-request-0", "class", 1}}));
  // "three init containers, one sidecar, one regular container": init-con0 reuses the
  // sidecar's request, init-con2 asks for its own.
  EXPECT_EQ(Requests(pod_init3, {ext, init}),
            (std::vector<Req>{{"container-1-request-0", "classInit", 1},
                              {"container-2-request-0", "classInit", 2},
                              {"container-3-request-0", "class", 1}}));
}

TEST(ExtendedResourceRequestsTest, UpstreamMappingTable) {
  using M = api::ContainerExtendedResourceRequest;
  // As upstream's test compares them: sorted by request name, then container name.
  auto maps = [](const api::Pod& pod, const std::vector<ExtendedResourceClass>& rc) {
    std::vector<dra::DeviceRequest> reqs;
    std::vector<M> out;
    ExtendedResourceRequests(pod, rc, &reqs, &out);
    std::sort(out.begin(), out.end(), [](const M& a, const M& b) {
      return std::tie(a.request_name, a.container_name) <
             std::tie(b.request_name, b.container_name);
    });
    return out;
  };
  const ExtendedResourceClass ext{kExt, "class"}, ext1{kExt + "1", "class1"},
      init{kExt + "init", "classInit"}, implicit{kImplicitInit, "classInit"};
  // "one container, two requests".
  EXPECT_EQ(maps(PodBuilder().Container({{kExt, "1"}, {kExt + "1", "2"}}).pod, {ext, ext1}),
            (std::vector<M>{{"con0", kExt, "container-0-request-0"},
                            {"con0", kExt + "1", "container-0-request-1"}}));
  // "one container, one explicit and one implicit request".
  EXPECT_EQ(maps(PodBuilder().Init({{kExt + "init", "1"}, {kImplicitInit, "2"}}).pod,
                 {ext, init, implicit}),
            (std::vector<M>{{"init-con0", kImplicitInit, "container-0-request-0"},
                            {"init-con0", kExt + "init", "container-0-request-1"}}));
  // "two containers, two requests".
  EXPECT_EQ(
      maps(PodBuilder().Container({{kExt, "1"}}).Container({{kExt + "1", "2"}}).pod, {ext, ext1}),
      (std::vector<M>{{"con0", kExt, "container-0-request-0"},
                      {"con1", kExt + "1", "container-1-request-0"}}));
  // "one init container, one regular container, one request".
  EXPECT_EQ(
      maps(PodBuilder().Container({{kExt, "1"}}).Init({{kExt + "init", "2"}}).pod, {ext, init}),
      (std::vector<M>{{"init-con0", kExt + "init", "container-0-request-0"},
                      {"con0", kExt, "container-1-request-0"}}));
  // "three containers (two are init container), two requests".
  EXPECT_EQ(maps(PodBuilder()
                     .Container({{kExt, "1"}})
                     .Init({{kExt + "init", "1"}})
                     .Init({{kExt + "init", "2"}})
                     .pod,
                 {ext, init}),
            (std::vector<M>{{"init-con0", kExt + "init", "container-1-request-0"},
                            {"init-con1", kExt + "init", "container-1-request-0"},
                            {"con0", kExt, "container-2-request-0"}}));
  // "three containers (two are init container), both explicit and implicit resources".
  EXPECT_EQ(maps(PodBuilder()
                     .Container({{kExt, "1"}})
                     .Init({{kExt + "init", "1"}})
                     .Init({{kImplicitInit, "2"}})
                     .pod,
                 {ext, init, implicit}),
            (std::vector<M>{{"init-con0", kExt + "init", "container-0-request-0"},
                            {"init-con1", kImplicitInit, "container-1-request-0"},
                            {"con0", kExt, "container-2-request-0"}}));
  // "four containers (two are init container, one sidecar), three requests".
  EXPECT_EQ(maps(PodBuilder()
                     .Container({{kExt, "1"}})
                     .Init({{kExt + "init", "1"}})
                     .Init({{kExt + "init", "1"}}, /*sidecar=*/true)
                     .Init({{kExt + "init", "2"}})
                     .pod,
                 {ext, init}),
            (std::vector<M>{{"init-con0", kExt + "init", "container-1-request-0"},
                            {"sidecar-con1", kExt + "init", "container-1-request-0"},
                            {"init-con2", kExt + "init", "container-2-request-0"},
                            {"con0", kExt, "container-3-request-0"}}));
}

TEST(ExtendedResourceRequestsTest, ClaimObjectIsOwnedAnnotatedAndGenerated) {
  const api::Pod pod = PodBuilder().Container({{kExt, "2"}}).pod;
  std::vector<dra::DeviceRequest> reqs;
  std::vector<api::ContainerExtendedResourceRequest> maps;
  ExtendedResourceRequests(pod, {{kExt, "gpu.example.com"}}, &reqs, &maps);
  const api::Unstructured obj = ExtendedResourceClaimObject(pod, reqs);
  const YAML::Node& doc = *obj.object;
  EXPECT_EQ(doc["apiVersion"].Scalar(), "resource.k8s.io/v1");
  EXPECT_EQ(doc["metadata"]["generateName"].Scalar(), "pod-extended-resources-");
  EXPECT_FALSE(doc["metadata"]["name"]);
  EXPECT_EQ(doc["metadata"]["annotations"]["resource.kubernetes.io/extended-resource-claim"].Tag(),
            "!");  // a string, not a JSON boolean
  EXPECT_EQ(doc["metadata"]["ownerReferences"][0]["uid"].Scalar(), "pod-uid");
  EXPECT_TRUE(doc["metadata"]["ownerReferences"][0]["controller"].as<bool>());
  EXPECT_EQ(doc["spec"]["devices"]["requests"][0]["exactly"]["count"].as<int>(), 2);
  EXPECT_EQ(doc["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"].Scalar(),
            "gpu.example.com");
  EXPECT_TRUE(dra::IsExtendedResourceClaimOf(obj.metadata, "pod", "pod-uid"));
  EXPECT_FALSE(dra::IsExtendedResourceClaimOf(obj.metadata, "pod", "other"));
}

}  // namespace
}  // namespace phalanx::plugins::dynamicresources
