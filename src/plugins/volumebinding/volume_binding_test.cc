#include "plugins/volumebinding/volume_binding.h"

#include <gtest/gtest.h>

#include "plugins/testing_fake_handle.h"
#include "testing/builders.h"

namespace phalanx::plugins::volumebinding {
namespace {

TEST(VolumeBindingTest, PodsWithClaimsAreRejectedWithTheClaimNamedOthersSkip) {
  struct Case {
    std::string name;
    std::vector<api::Volume> volumes;
    framework::Code want;
    std::string want_substr;
  } cases[] = {
      {"no volumes", {}, framework::Code::kSkip, ""},
      {"emptyDir only", {{"scratch", ""}}, framework::Code::kSkip, ""},
      {"a claim", {{"scratch", ""}, {"data", "train-data"}},
       framework::Code::kUnschedulableAndUnresolvable, "PersistentVolumeClaim \"train-data\""},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    api::Pod p = testing::PodBuilder("p").Req("cpu", "1").Obj();
    p.spec.volumes = c.volumes;
    auto info = framework::PodInfo::Make(std::make_shared<api::Pod>(p));
    VolumeBinding pl;
    framework::CycleState state;
    framework::PreFilterResult r;
    framework::Status s = pl.PreFilter(state, *info, &r);
    EXPECT_EQ(s.code(), c.want) << s.ToString();
    if (!c.want_substr.empty()) EXPECT_NE(s.Message().find(c.want_substr), std::string::npos) << s.Message();
  }
}

}  // namespace
}  // namespace phalanx::plugins::volumebinding
