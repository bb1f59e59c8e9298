// PodRequests / PodNonZeroRequests / ResourceListToResource, with cases taken from
// upstream component-helpers/resource/helpers_test.go (sidecar ordering per KEP-753) and
// pkg/scheduler/util non-zero defaults.
#include "api/pod_resources.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

namespace phalanx::api {

// Found by ADL, so that failures print the vector rather than bytes.
static void PrintTo(const Resource& r, std::ostream* os) {
  *os << "{cpu=" << r.milli_cpu << "m mem=" << r.memory << " eph=" << r.ephemeral_storage
      << " pods=" << r.allowed_pod_number << " scalar=[";
  for (const auto& [id, v] : r.scalar) *os << ScalarResourceName(id) << ":" << v << " ";
  *os << "]}";
}

namespace {

Quantity Q(const std::string& s) {
  Quantity q;
  std::string err;
  EXPECT_TRUE(MoveOrMessage(Quantity::Parse(s), &q, &err)) << s << ": " << err;
  return q;
}

ResourceList RL(const std::map<std::string, std::string>& m) {
  ResourceList out;
  for (const auto& [k, v] : m) out[k] = Q(v);
  return out;
}

Container C(const std::map<std::string, std::string>& requests, bool sidecar = false) {
  Container c;
  c.resources.requests = RL(requests);
  if (sidecar) c.restart_policy = "Always";
  return c;
}

Pod MakePod(std::vector<Container> containers, std::vector<Container> init = {},
            const std::map<std::string, std::string>& overhead = {}) {
  Pod p;
  p.spec.containers = std::move(containers);
  p.spec.init_containers = std::move(init);
  p.spec.overhead = RL(overhead);
  return p;
}

Resource R(int64_t milli_cpu, int64_t memory, int64_t eph = 0) {
  Resource r;
  r.milli_cpu = milli_cpu;
  r.memory = memory;
  r.ephemeral_storage = eph;
  return r;
}

struct RequestCase {
  std::string name;
  Pod pod;
  Resource want;
};

TEST(PodRequestsTest, Table) {
  const std::vector<RequestCase> cases = {
      {"no containers", MakePod({}), R(0, 0)},
      {"sum of containers",
       MakePod({C({{"cpu", "1"}, {"memory", "5"}}), C({{"cpu", "4"}, {"memory", "12"}})}),
       R(5000, 17)},
      {"overhead is added",
       MakePod({C({{"cpu", "1"}, {"memory", "10"}})}, {}, {{"cpu", "5"}, {"memory", "5"}}),
       R(6000, 15)},
      {"just overhead", MakePod({}, {}, {{"cpu", "5"}, {"memory", "5"}}), R(5000, 5)},
      {"larger init container wins", MakePod({C({{"cpu", "1"}})}, {C({{"cpu", "4"}})}), R(4000, 0)},
      {"larger containers win",
       MakePod({C({{"cpu", "2"}}), C({{"cpu", "3"}})}, {C({{"cpu", "2"}})}), R(5000, 0)},
      {"max is per resource",
       MakePod({C({{"cpu", "1"}, {"memory", "1Gi"}})}, {C({{"cpu", "2"}, {"memory", "1Mi"}})}),
       R(2000, 1 << 30)},
      {"massive init with overhead: max(init) + overhead",
       MakePod({C({{"cpu", "1"}, {"memory", "5"}}), C({{"cpu", "4"}, {"memory", "12"}})},
               {C({{"cpu", "1"}, {"memory", "5"}}), C({{"cpu", "40"}, {"memory", "120"}})},
               {{"cpu", "3"}, {"memory", "8"}}),
       R(43000, 128)},
      {"restartable init container adds to containers",
       MakePod({C({{"cpu", "1"}})}, {C({{"cpu", "1"}}, true)}), R(2000, 0)},
      // max(5, sidecars(1+2+3) + regular(1)) = 7
      {"multiple restartable init containers",
       MakePod({C({{"cpu", "1"}})}, {C({{"cpu", "5"}}), C({{"cpu", "1"}}, true),
                                     C({{"cpu", "2"}}, true), C({{"cpu", "3"}}, true)}),
       R(7000, 0)},
      // KEP-753 example: init-2 needs 5 + sidecars started before it (1+2) = 8; the sidecar
      // started after it does not count.
      {"multiple restartable and regular init containers",
       MakePod({C({{"cpu", "1"}})},
               {C({{"cpu", "5"}}), C({{"cpu", "1"}}, true), C({{"cpu", "2"}}, true),
                C({{"cpu", "5"}}), C({{"cpu", "3"}}, true)}),
       R(8000, 0)},
      {"restartable-init, init and regular",
       MakePod({C({{"cpu", "100"}})}, {C({{"cpu", "10"}}, true), C({{"cpu", "200"}})}),
       R(210000, 0)},
      {"sidecar ordering matters: same containers, sidecar after the big init",
       MakePod({C({{"cpu", "100"}})}, {C({{"cpu", "200"}}), C({{"cpu", "10"}}, true)}),
       R(200000, 0)},
      {"ephemeral storage and exact sums before rounding",
       // Two containers of 1.1Gi: exact sum 2362232012.8 -> 2362232013 (not 2 * 1181116007).
       MakePod({C({{"memory", "1.1Gi"}, {"ephemeral-storage", "1Gi"}}),
                C({{"memory", "1.1Gi"}, {"cpu", "0.5m"}}), C({{"cpu", "0.5m"}})}),
       R(1, 2362232013, 1 << 30)},
  };
  for (const RequestCase& c : cases) {
    EXPECT_EQ(PodRequests(c.pod), c.want) << c.name;
  }
}

TEST(PodRequestsTest, ScalarResourcesAreInterned) {
  const ResourceId gpu = InternScalarResource(kResourceNvidiaGPU);
  const ResourceId huge = InternScalarResource("hugepages-2Mi");
  Pod pod = MakePod(
      {C({{"nvidia.com/gpu", "2"}, {"hugepages-2Mi", "4Mi"}}), C({{"nvidia.com/gpu", "1"}})},
      {C({{"nvidia.com/gpu", "4"}})});
  const Resource r = PodRequests(pod);
  EXPECT_EQ(r.Scalar(gpu), 4);
  EXPECT_EQ(r.Scalar(huge), 4 << 20);
  EXPECT_EQ(r.Get("nvidia.com/gpu"), 4);
  EXPECT_EQ(r.Get("hugepages-2Mi"), 4 << 20);
  EXPECT_TRUE(std::is_sorted(r.scalar.begin(), r.scalar.end()));
  EXPECT_EQ(r.allowed_pod_number, 0);
}

TEST(PodNonZeroRequestsTest, Table) {
  constexpr int64_t kCPU = kDefaultMilliCPURequest;
  constexpr int64_t kMem = kDefaultMemoryRequest;
  const std::vector<RequestCase> cases = {
      {"no requests: defaults", MakePod({C({})}), R(kCPU, kMem)},
      {"defaults per container", MakePod({C({}), C({})}), R(2 * kCPU, 2 * kMem)},
      {"explicit requests kept", MakePod({C({{"cpu", "250m"}, {"memory", "1Gi"}})}),
       R(250, 1 << 30)},
      {"only cpu set: memory defaulted", MakePod({C({{"cpu", "1"}})}), R(1000, kMem)},
      // GetNonzeroRequestForResource: "Override if un-set, but not if explicitly set to zero".
      {"explicit zero stays zero", MakePod({C({{"cpu", "0"}, {"memory", "0"}})}), R(0, 0)},
      {"init containers get defaults too (max)", MakePod({C({{"cpu", "50m"}})}, {C({})}),
       R(kCPU, kMem)},
      {"sidecar defaults add to containers", MakePod({C({})}, {C({}, true)}),
       R(2 * kCPU, 2 * kMem)},
      {"overhead added after defaults", MakePod({C({})}, {}, {{"cpu", "10m"}, {"memory", "1Mi"}}),
       R(kCPU + 10, kMem + (1 << 20))},
      {"no containers: nothing", MakePod({}), R(0, 0)},
  };
  for (const RequestCase& c : cases) {
    EXPECT_EQ(PodNonZeroRequests(c.pod), c.want) << c.name;
  }
  // Without defaults the same pods request nothing.
  EXPECT_EQ(PodRequests(MakePod({C({}), C({})})), R(0, 0));
}

TEST(ResourceListToResourceTest, Converts) {
  const ResourceId gpu = InternScalarResource(kResourceNvidiaGPU);
  Resource r = ResourceListToResource(RL({{"cpu", "3500m"},
                                          {"memory", "1.5Gi"},
                                          {"ephemeral-storage", "10G"},
                                          {"pods", "110"},
                                          {"nvidia.com/gpu", "8"}}));
  EXPECT_EQ(r.milli_cpu, 3500);
  EXPECT_EQ(r.memory, 1610612736);
  EXPECT_EQ(r.ephemeral_storage, 10'000'000'000);
  EXPECT_EQ(r.allowed_pod_number, 110);
  EXPECT_EQ(r.Scalar(gpu), 8);
  EXPECT_EQ(r.Get("cpu"), 3500);
  EXPECT_EQ(r.Get("pods"), 110);
  EXPECT_EQ(r.Get("example.com/never-interned"), 0);
  // Value() rounds up: 100m of memory is one byte.
  EXPECT_EQ(ResourceListToResource(RL({{"memory", "100m"}})).memory, 1);
}

TEST(ResourceTest, Arithmetic) {
  const ResourceId a = InternScalarResource("example.com/a");
  const ResourceId b = InternScalarResource("example.com/b");
  ASSERT_LT(a, b);
  Resource x = R(1000, 10);
  x.SetScalar(b, 2);
  Resource y = R(500, 20, 7);
  y.allowed_pod_number = 1;
  y.SetScalar(a, 3);
  y.SetScalar(b, 1);

  Resource sum = x;
  sum.Add(y);
  EXPECT_EQ(sum.milli_cpu, 1500);
  EXPECT_EQ(sum.memory, 30);
  EXPECT_EQ(sum.ephemeral_storage, 7);
  EXPECT_EQ(sum.allowed_pod_number, 1);
  EXPECT_EQ(sum.Scalar(a), 3);
  EXPECT_EQ(sum.Scalar(b), 3);
  ASSERT_EQ(sum.scalar.size(), 2u);
  EXPECT_EQ(sum.scalar[0].first, a) << "scalars stay sorted by id";

  Resource diff = sum;
  diff.Subtract(y);
  EXPECT_EQ(diff.milli_cpu, x.milli_cpu);
  EXPECT_EQ(diff.Scalar(a), 0);
  EXPECT_EQ(diff.Scalar(b), 2);

  Resource mx = x;
  mx.SetMax(y);
  EXPECT_EQ(mx.milli_cpu, 1000);
  EXPECT_EQ(mx.memory, 20);
  EXPECT_EQ(mx.Scalar(a), 3);
  EXPECT_EQ(mx.Scalar(b), 2);

  Resource z;
  EXPECT_TRUE(z.IsZero());
  z.SetScalar(a, 0);
  EXPECT_TRUE(z.IsZero());
  z.AddScalar(a, 1);
  EXPECT_FALSE(z.IsZero());
  EXPECT_EQ(z.Scalar(a), 1);
}

TEST(ResourceTest, ScalarNames) {
  for (const char* s : {"nvidia.com/gpu", "hugepages-2Mi", "attachable-volumes-aws-ebs",
                        "example.com/foo", "storage"}) {
    EXPECT_TRUE(IsScalarResourceName(s)) << s;
  }
  for (const char* s : {"cpu", "memory", "ephemeral-storage", "pods", ""}) {
    EXPECT_FALSE(IsScalarResourceName(s)) << s;
  }
}

TEST(ResourceTest, InternIsStableAndThreadSafe) {
  const ResourceId id = InternScalarResource("example.com/stable");
  EXPECT_EQ(InternScalarResource("example.com/stable"), id);
  EXPECT_EQ(ScalarResourceName(id), "example.com/stable");

  constexpr int kThreads = 4;
  constexpr int kNames = 200;
  std::vector<std::vector<ResourceId>> ids(kThreads, std::vector<ResourceId>(kNames));
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &ids] {
      for (int i = 0; i < kNames; ++i) {
        ids[t][i] = InternScalarResource("example.com/r" + std::to_string(i));
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int i = 0; i < kNames; ++i) {
    for (int t = 1; t < kThreads; ++t) EXPECT_EQ(ids[t][i], ids[0][i]);
    EXPECT_EQ(ScalarResourceName(ids[0][i]), "example.com/r" + std::to_string(i));
  }
}

// ---- Pod-level resources and in-place resize, ported from upstream
// staging/src/k8s.io/component-helpers/resource/helpers_test.go ----------------------

// Expected requests as upstream writes them (a v1.ResourceList), converted once.
Resource Want(const std::map<std::string, std::string>& list) {
  return ResourceListToResource(RL(list));
}

Pod PodLevel(const std::map<std::string, std::string>& pod_requests,
             std::vector<Container> containers, std::vector<Container> init = {}) {
  Pod p = MakePod(std::move(containers), std::move(init));
  p.spec.resources = ResourceRequirements{};
  p.spec.resources->requests = RL(pod_requests);
  return p;
}

Container Named(const std::string& name, const std::map<std::string, std::string>& requests,
                bool sidecar = false) {
  Container c = C(requests, sidecar);
  c.name = name;
  return c;
}

// status.containerStatuses[] entry; an empty map argument means the field is absent (nil).
ContainerStatus Status(const std::string& name, const std::map<std::string, std::string>& allocated,
                       const std::map<std::string, std::string>& actuated) {
  ContainerStatus cs;
  cs.name = name;
  if (!allocated.empty()) cs.allocated_resources = RL(allocated);
  if (!actuated.empty()) cs.resources_requests = RL(actuated);
  return cs;
}

void MarkInfeasible(Pod* p) {
  p->status.conditions.push_back(PodCondition{"PodResizePending", "True", "Infeasible", ""});
}

// TestPodLevelResourceRequests, the SkipPodLevelResources=false cases (the scheduler's
// options with PodLevelResources on).
TEST(PodRequestsTest, PodLevelResourcesUpstreamTable) {
  const auto both = [](const char* mem, const char* cpu) {
    return std::map<std::string, std::string>{{"memory", mem}, {"cpu", cpu}};
  };
  const std::vector<RequestCase> cases = {
      {"nil", MakePod({}), Want({})},
      {"pod level memory resource", PodLevel({{"memory", "2Mi"}}, {}), Want({{"memory", "2Mi"}})},
      {"pod level memory and container level cpu resources",
       PodLevel({{"memory", "2Mi"}}, {C({{"cpu", "2m"}})}),
       Want({{"memory", "2Mi"}, {"cpu", "2m"}})},
      {"pod level unsupported resources set at both pod-level and container-level",
       PodLevel({{"storage", "2Mi"}}, {C({{"storage", "3Mi"}})}), Want({{"storage", "3Mi"}})},
      {"pod level unsupported resources set at pod-level",
       PodLevel({{"storage", "2Mi"}}, {C({{"memory", "3Mi"}})}), Want({{"memory", "3Mi"}})},
      {"only container level resources set", MakePod({C(both("3Mi", "2m"))}),
       Want(both("3Mi", "2m"))},
      {"both container-level and pod-level resources set",
       PodLevel(both("6Mi", "8m"), {C(both("3Mi", "2m"))}), Want(both("6Mi", "8m"))},
      {"container-level resources and init container set",
       MakePod({C(both("3Mi", "2m"))}, {C(both("5Mi", "4m"))}), Want(both("5Mi", "4m"))},
      {"container-level resources and sidecar container set",
       MakePod({C(both("3Mi", "2m"))}, {C(both("5Mi", "4m"), /*sidecar=*/true)}),
       Want(both("8Mi", "6m"))},
      {"container-level resources, init and sidecar container set",
       MakePod({C(both("3Mi", "2m"))},
               {C(both("5Mi", "4m"), /*sidecar=*/true), C(both("6Mi", "8m"))}),
       Want(both("11Mi", "12m"))},
      {"pod-level resources, container-level resources, init and sidecar container set",
       PodLevel(both("15Mi", "18m"), {C(both("3Mi", "2m"))},
                {C(both("5Mi", "4m"), /*sidecar=*/true), C(both("6Mi", "8m"))}),
       Want(both("15Mi", "18m"))},
      {"pod-level resources, hugepage request/limit single page size",
       PodLevel({{"memory", "10Mi"}, {"hugepages-2Mi", "2Mi"}}, {}),
       Want({{"memory", "10Mi"}, {"hugepages-2Mi", "2Mi"}})},
      {"pod-level resources, hugepage request/limit multiple page sizes",
       PodLevel({{"cpu", "1"}, {"hugepages-2Mi", "2Mi"}, {"hugepages-1Gi", "1Gi"}}, {}),
       Want({{"cpu", "1"}, {"hugepages-2Mi", "2Mi"}, {"hugepages-1Gi", "1Gi"}})},
      {"pod-level resources, container-level resources, hugepage single page size",
       PodLevel({{"cpu", "1"}, {"hugepages-2Mi", "10Mi"}}, {C({{"hugepages-2Mi", "6Mi"}})}),
       Want({{"cpu", "1"}, {"hugepages-2Mi", "10Mi"}})},
      {"pod-level resources, container-level resources, hugepage multiple page sizes",
       PodLevel({{"cpu", "1"}, {"hugepages-2Mi", "10Mi"}, {"hugepages-1Gi", "2Gi"}},
                {C({{"cpu", "1"}, {"hugepages-1Gi", "2Gi"}})}),
       Want({{"cpu", "1"}, {"hugepages-2Mi", "10Mi"}, {"hugepages-1Gi", "2Gi"}})},
      {"hugepage page sizes split between pod-level and container-level",
       PodLevel({{"cpu", "1"}, {"hugepages-2Mi", "10Mi"}},
                {C({{"memory", "4Mi"}, {"hugepages-1Gi", "1Gi"}})}),
       Want(
           {{"cpu", "1"}, {"memory", "4Mi"}, {"hugepages-2Mi", "10Mi"}, {"hugepages-1Gi", "1Gi"}})},
      // Not in upstream's table: overhead is added on top of the pod-level figure.
      {"pod-level cpu with overhead",
       [] {
         Pod p = PodLevel({{"cpu", "2"}}, {C({{"cpu", "1"}})});
         p.spec.overhead = RL({{"cpu", "250m"}});
         return p;
       }(),
       Want({{"cpu", "2250m"}})},
  };
  for (const auto& c : cases) EXPECT_EQ(PodRequests(c.pod), c.want) << c.name;
}

// TestPodResourceRequests, the UseStatusResources=true (in-place resize) cases and the
// sidecar cases; the scheduler always reads status resources (InPlacePodVerticalScaling).
TEST(PodRequestsTest, InPlaceResizeUpstreamTable) {
  std::vector<RequestCase> cases;
  {
    Pod p = MakePod({Named("container-1", {{"cpu", "4"}})});
    p.status.container_statuses = {Status("container-1", {}, {{"cpu", "2"}})};
    MarkInfeasible(&p);
    cases.push_back({"resized, infeasible", p, Want({{"cpu", "2"}})});
  }
  {
    Pod p = MakePod({Named("container-1", {{"cpu", "6"}})});
    p.status.container_statuses = {Status("container-1", {{"cpu", "4"}}, {{"cpu", "2"}})};
    MarkInfeasible(&p);
    cases.push_back({"resized, infeasible & in-progress", p, Want({{"cpu", "4"}})});
  }
  {
    Pod p = MakePod({Named("container-1", {{"cpu", "4"}})});
    p.status.container_statuses = {Status("container-1", {}, {{"cpu", "2"}})};
    cases.push_back({"resized, no resize status", p, Want({{"cpu", "4"}})});
  }
  {
    Pod p = MakePod(
        {Named("container-1", {{"cpu", "30m"}, {"memory", "20M"}, {"ephemeral-storage", "10G"}})});
    p.status.container_statuses = {
        Status("container-1", {{"cpu", "20m"}, {"memory", "10M"}, {"ephemeral-storage", "30G"}},
               {{"cpu", "10m"}, {"memory", "30M"}, {"ephemeral-storage", "20G"}})};
    cases.push_back({"resized: per-resource 3-way maximum", p,
                     Want({{"cpu", "30m"}, {"memory", "30M"}, {"ephemeral-storage", "30G"}})});
  }
  {
    Pod p = MakePod({}, {Named("restartable-init-1", {{"cpu", "4"}}, /*sidecar=*/true)});
    p.status.init_container_statuses = {Status("restartable-init-1", {}, {{"cpu", "2"}})};
    Pod no_status = p;
    MarkInfeasible(&p);
    cases.push_back({"resized, restartable init container, infeasible", p, Want({{"cpu", "2"}})});
    cases.push_back(
        {"resized, restartable init container, no resize status", no_status, Want({{"cpu", "4"}})});
  }
  cases.push_back({"restartable init container",
                   MakePod({Named("container-1", {{"cpu", "1"}})},
                           {Named("restartable-init-1", {{"cpu", "1"}}, true)}),
                   Want({{"cpu", "2"}})});
  cases.push_back(
      {"multiple restartable init containers",
       MakePod({Named("container-1", {{"cpu", "1"}})},
               {Named("init-1", {{"cpu", "5"}}), Named("restartable-init-1", {{"cpu", "1"}}, true),
                Named("restartable-init-2", {{"cpu", "2"}}, true),
                Named("restartable-init-3", {{"cpu", "3"}}, true)}),
       Want({{"cpu", "7"}})});
  cases.push_back(
      {"multiple restartable and regular init containers",
       MakePod({Named("container-1", {{"cpu", "1"}})},
               {Named("init-1", {{"cpu", "5"}}), Named("restartable-init-1", {{"cpu", "1"}}, true),
                Named("restartable-init-2", {{"cpu", "2"}}, true), Named("init-2", {{"cpu", "5"}}),
                Named("restartable-init-3", {{"cpu", "3"}}, true)}),
       Want({{"cpu", "8"}})});
  cases.push_back({"restartable-init, init and regular",
                   MakePod({Named("container-1", {{"cpu", "100"}})},
                           {Named("restartable-init-1", {{"cpu", "10"}}, true),
                            Named("init-1", {{"cpu", "200"}})}),
                   Want({{"cpu", "210"}})});
  {
    Pod p = MakePod({Named("c1", {{"cpu", "1"}}), Named("c2", {{"cpu", "2"}})});
    p.status.container_statuses = {Status("c1", {{"cpu", "2"}}, {}),
                                   Status("c2", {{"cpu", "1"}}, {})};
    cases.push_back({"aggregate request resolves max of sums instead of sum of maxes", p,
                     Want({{"cpu", "3"}})});
  }
  for (const auto& c : cases) EXPECT_EQ(PodRequests(c.pod), c.want) << c.name;
}

// pkg/scheduler/framework/types.go calculateResource with pod-level requests: only a
// resource missing from the pod's requests altogether gets the non-zero default.
TEST(PodNonZeroRequestsTest, PodLevelResources) {
  EXPECT_EQ(PodNonZeroRequests(PodLevel({{"cpu", "2"}}, {C({})})), R(2000, kDefaultMemoryRequest));
  EXPECT_EQ(PodNonZeroRequests(PodLevel({{"cpu", "2"}, {"memory", "1Gi"}}, {C({}), C({})})),
            R(2000, int64_t{1} << 30));
  // A container memory request is present: no memory default for the other container.
  EXPECT_EQ(PodNonZeroRequests(PodLevel({{"cpu", "2"}}, {C({{"memory", "1Mi"}}), C({})})),
            R(2000, int64_t{1} << 20));
  // The scorers' figure defaults every container (resource_allocation.go).
  EXPECT_EQ(PodScoringNonZeroRequests(PodLevel({{"cpu", "2"}}, {C({{"memory", "1Mi"}}), C({})})),
            R(2000, (int64_t{1} << 20) + kDefaultMemoryRequest));
  EXPECT_TRUE(IsSupportedPodLevelResource("hugepages-1Gi"));
  EXPECT_FALSE(IsSupportedPodLevelResource("ephemeral-storage"));
  EXPECT_FALSE(IsPodLevelRequestsSet(PodLevel({{"storage", "1Mi"}}, {})));
}

}  // namespace
}  // namespace phalanx::api
