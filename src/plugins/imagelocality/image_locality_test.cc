// Ported from upstream imagelocality/image_locality_test.go (TestImageLocalityPriority with
// the per-container max threshold, TestNormalizedImageName).
#include "plugins/imagelocality/image_locality.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "plugins/testing_fake_handle.h"
#include "testing/builders.h"

namespace phalanx::plugins::imagelocality {
namespace {

using phalanx::testing::MakeNodeInfo;
using phalanx::testing::NodeBuilder;
using phalanx::testing::PodBuilder;

api::Node ImageNode(const std::string& name, std::vector<api::ContainerImage> images) {
  api::Node n = NodeBuilder(name).Obj();
  n.status.images = std::move(images);
  return n;
}

api::Pod ImagePod(const std::vector<std::string>& images,
                  const std::vector<std::string>& init_images = {}) {
  api::Pod p = PodBuilder("pod").Obj();
  for (const auto& i : images) {
    api::Container c;
    c.image = i;
    p.spec.containers.push_back(c);
  }
  for (const auto& i : init_images) {
    api::Container c;
    c.image = i;
    p.spec.init_containers.push_back(c);
  }
  return p;
}

// An ImageLocality plugin on a fake snapshot of `nodes`.
struct Fixture {
  explicit Fixture(const std::vector<api::Node>& nodes) {
    std::vector<framework::NodeInfo> infos;
    for (const auto& n : nodes) infos.push_back(MakeNodeInfo(n));
    h.SetNodes(infos);
    auto pl = ImageLocality::New(nullptr, h);
    EXPECT_TRUE(pl.ok());
    if (pl.ok()) plugin = std::move(pl).value();
  }
  framework::PreScorePlugin* pre_score() const {
    return dynamic_cast<framework::PreScorePlugin*>(plugin.get());
  }
  framework::ScorePlugin* score() const {
    return dynamic_cast<framework::ScorePlugin*>(plugin.get());
  }
  const std::vector<const framework::NodeInfo*>& nodes() const {
    return h.SnapshotSharedLister().List();
  }
  fake::FakeHandle h;
  std::unique_ptr<framework::Plugin> plugin;
};

TEST(ImageLocalityTest, Priority) {
  const std::vector<api::ContainerImage> node403002000 = {
      {{"gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"}, 40 * kMB},
      {{"gcr.io/300:latest", "gcr.io/300:v1"}, 300 * kMB},
      {{"gcr.io/2000:latest"}, 2000 * kMB},
  };
  const std::vector<api::ContainerImage> node25010 = {
      {{"gcr.io/250:latest"}, 250 * kMB},
      {{"gcr.io/10:latest", "gcr.io/10:v1"}, 10 * kMB},
  };
  const std::vector<api::ContainerImage> node300 = {{{"gcr.io/300:latest"}, 300 * kMB}};
  struct Case {
    const char* name;
    api::Pod pod;
    std::vector<api::Node> nodes;
    std::vector<int64_t> want;
  };
  const Case cases[] = {
      // node1: 40M/2 = 20M < 23M min -> 0; node2: 100 * (250M/2 - 23M) / (2000M - 23M) = 5.
      {"two images spread on two nodes, prefer the larger image one",
       ImagePod({"gcr.io/40", "gcr.io/250"}),
       {ImageNode("machine1", node403002000), ImageNode("machine2", node25010)},
       {0, 5}},
      // node1: 100 * ((40M + 300M)/2 - 23M) / (2000M - 23M) = 7.
      {"two images on one node, prefer this node",
       ImagePod({"gcr.io/40", "gcr.io/300"}),
       {ImageNode("machine1", node403002000), ImageNode("machine2", node25010)},
       {7, 0}},
      // node1: 100 * (2000M/2 - 23M) / (2000M - 23M) = 49; node2: 10M/2 < 23M -> 0.
      {"if exceed limit, use limit",
       ImagePod({"gcr.io/2000", "gcr.io/10"}),
       {ImageNode("machine1", node403002000), ImageNode("machine2", node25010)},
       {49, 0}},
      // node1: 100 * (2000M/3 - 23M) / (2000M - 23M) = 32.
      {"if exceed limit, use limit (with node which has no images present)",
       ImagePod({"gcr.io/2000", "gcr.io/10"}),
       {ImageNode("machine1", node403002000), ImageNode("machine2", node25010),
        ImageNode("machine3", {})},
       {32, 0, 0}},
      // Spread 2/2: 100 * (300M - 23M) / (1000M - 23M) = 28 on both nodes.
      {"an image on every node is not scaled down",
       ImagePod({"gcr.io/300:latest"}),
       {ImageNode("machine1", node403002000), ImageNode("machine2", node300)},
       {28, 28}},
      // Init containers count like app containers: (300M + 40M)/2 over two containers.
      {"init container images count",
       ImagePod({"gcr.io/40"}, {"gcr.io/300"}),
       {ImageNode("machine1", node403002000), ImageNode("machine2", node25010)},
       {7, 0}},
      {"a tag that is not on the node does not match",
       ImagePod({"gcr.io/2000:v2"}),
       {ImageNode("machine1", node403002000)},
       {0}},
      {"a single huge image on the only node reaches the maximum",
       ImagePod({"gcr.io/2000"}),
       {ImageNode("machine1", node403002000)},
       {100}},
  };
  for (const auto& c : cases) {
    for (bool run_prescore : {true, false}) {
      Fixture f(c.nodes);
      ASSERT_NE(f.plugin, nullptr);
      auto* ps = f.pre_score();
      auto* sp = f.score();
      framework::CycleState state;
      auto pi = framework::PodInfo::Make(std::make_shared<api::Pod>(c.pod));
      const auto& list = f.nodes();
      if (run_prescore) {
        framework::Status st = ps->PreScore(state, *pi, list);
        if (st.code() == framework::Code::kSkip) {
          // Skipped only when every node would score 0 (no node has any of the images).
          EXPECT_EQ(std::count(c.want.begin(), c.want.end(), 0),
                    static_cast<std::ptrdiff_t>(c.want.size()))
              << c.name;
          continue;
        }
        ASSERT_TRUE(st.IsSuccess()) << c.name;
      }
      std::vector<int64_t> got;
      for (const auto* n : list) {
        int64_t s = -1;
        ASSERT_TRUE(sp->Score(state, *pi, *n, &s).IsSuccess()) << c.name;
        got.push_back(s);
      }
      EXPECT_EQ(got, c.want) << c.name << (run_prescore ? "" : " if PreScore is not called");
    }
  }
}

// PreScore skips Score exactly when no node has any of the pod's images (every score
// would be the minimum, 0); one node with one of them is enough to score.
TEST(ImageLocalityTest, PreScoreSkipsWhenNoNodeHasTheImages) {
  const std::vector<api::ContainerImage> has300 = {{{"gcr.io/300:latest"}, 300 * kMB}};
  struct Case {
    const char* name;
    api::Pod pod;
    std::vector<api::Node> nodes;
    bool skip;
  };
  const Case cases[] = {
      {"nodes without images",
       ImagePod({"gcr.io/300"}),
       {ImageNode("machine1", {}), ImageNode("machine2", {})},
       true},
      {"other images only", ImagePod({"gcr.io/40"}), {ImageNode("machine1", has300)}, true},
      {"one of two images on one node",
       ImagePod({"gcr.io/40", "gcr.io/300"}),
       {ImageNode("machine1", {}), ImageNode("machine2", has300)},
       false},
      {"an init container's image",
       ImagePod({"gcr.io/40"}, {"gcr.io/300"}),
       {ImageNode("machine1", has300)},
       false},
  };
  for (const auto& c : cases) {
    Fixture f(c.nodes);
    ASSERT_NE(f.plugin, nullptr);
    framework::CycleState state;
    auto pi = framework::PodInfo::Make(std::make_shared<api::Pod>(c.pod));
    framework::Status st = f.pre_score()->PreScore(state, *pi, f.nodes());
    EXPECT_EQ(st.code() == framework::Code::kSkip, c.skip) << c.name << ": " << st.Message();
  }
}

TEST(ImageLocalityTest, NormalizedImageName) {
  const std::string digest =
      "sha256:4813494d137e1631bba301d5acab6e7bb7aa74ce1185d456565ef51d737677b2";
  struct Case {
    const char* name;
    std::string input, output;
  };
  const Case cases[] = {
      {"add :latest postfix 1", "root", "root:latest"},
      {"add :latest postfix 2", "gcr.io:5000/root", "gcr.io:5000/root:latest"},
      {"keep it as is 1", "root:tag", "root:tag"},
      {"keep it as is 2", "root@" + digest, "root@" + digest},
      {"registries are not normalized", "nginx", "nginx:latest"},
      {"empty name", "", ":latest"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(NormalizedImageName(c.input), c.output) << c.name;
  }
}

TEST(ImageLocalityTest, Helpers) {
  EXPECT_EQ(ScaledImageScore(100, 1, 4), 25);
  EXPECT_EQ(ScaledImageScore(100, 1, 0), 0);
  EXPECT_EQ(CalculatePriority(0, 1), 0);
  EXPECT_EQ(CalculatePriority(5000 * kMB, 1), 100);
  EXPECT_EQ(CalculatePriority(0, 0), 0);  // no containers: no division by zero
}

}  // namespace
}  // namespace phalanx::plugins::imagelocality
