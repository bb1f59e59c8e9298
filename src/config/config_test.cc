// Tests of KubeSchedulerConfiguration decode, conversion, defaulting and validation.
#include "config/config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdint>
#include <ostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "config/default_plugins.h"
#include "config/internal.h"

namespace phalanx::config {
namespace {

using internal::ApiVersion;
using ::testing::HasSubstr;
using ::testing::StartsWith;

using Flat = std::vector<std::pair<std::string, int32_t>>;

Flat Flatten(const std::vector<PluginRef>& refs) {
  Flat out;
  for (const PluginRef& r : refs) out.emplace_back(r.name, r.weight);
  return out;
}

Flat Sorted(Flat f) {
  std::sort(f.begin(), f.end());
  return f;
}

constexpr char kV1Header[] =
    "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n";
constexpr char kV1beta3Header[] =
    "apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n";
constexpr char kV1beta2Header[] =
    "apiVersion: kubescheduler.config.k8s.io/v1beta2\nkind: KubeSchedulerConfiguration\n";

// Keeps the entries of a full upstream list that this build implements, so that the
// expectations below are written as upstream's lists and stay right as plugins land.
Flat Impl(const Flat& full) {
  Flat out;
  for (const auto& e : full) {
    if (ImplementedInTreePlugins().count(e.first) != 0) out.push_back(e);
  }
  return out;
}

// Upstream v1 default multiPoint list (plus GangScheduling, and the PodGroup cycle's
// TopologyPlacement and PlacementBinPacking, which Phalanx enables)
// filtered by ImplementedInTreePlugins().
const Flat kV1Full = {
    {"SchedulingGates", 0},      {"PrioritySort", 0},
    {"NodeUnschedulable", 0},    {"NodeName", 0},
    {"NodeDeclaredFeatures", 0}, {"TaintToleration", 3},
    {"NodeAffinity", 2},         {"NodePorts", 0},
    {"NodeResourcesFit", 1},     {"VolumeRestrictions", 0},
    {"NodeVolumeLimits", 0},     {"VolumeBinding", 0},
    {"VolumeZone", 0},           {"PodTopologySpread", 2},
    {"InterPodAffinity", 2},     {"DynamicResources", 0},
    {"DefaultPreemption", 0},    {"NodeResourcesBalancedAllocation", 1},
    {"ImageLocality", 1},        {"DefaultBinder", 0},
    {"GangScheduling", 0},       {"TopologyPlacement", 0},
    {"PlacementBinPacking", 0},
};
// Phalanx appends GpuShareGuard to every default profile (GPU shares are never placed by a
// profile without GpuShare; plugins/gpushare/guard.h).
Flat WithGuard(Flat defaults) {
  defaults.emplace_back("GpuShareGuard", 0);
  return defaults;
}
const Flat kV1Defaults = WithGuard(Impl(kV1Full));

KubeSchedulerConfiguration MustDecode(const std::string& text) {
  KubeSchedulerConfiguration cfg;
  std::string error;
  EXPECT_TRUE(api::MoveOrMessage(DecodeConfiguration(text, "sched.yaml"), &cfg, &error))
      << error << "\n"
      << text;
  return cfg;
}

std::string DecodeError(const std::string& text) {
  KubeSchedulerConfiguration cfg;
  std::string error;
  EXPECT_FALSE(api::MoveOrMessage(DecodeConfiguration(text, "sched.yaml"), &cfg, &error)) << text;
  return error;
}

bool AllEmptyExceptMultiPoint(const Plugins& p) {
  for (const PluginSet* s :
       {&p.pre_enqueue, &p.queue_sort, &p.pre_filter, &p.filter, &p.post_filter, &p.pre_score,
        &p.score, &p.reserve, &p.permit, &p.pre_bind, &p.bind, &p.post_bind}) {
    if (!s->enabled.empty() || !s->disabled.empty()) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------
// Default plugin sets.

TEST(DefaultPluginsTest, ImplementedSet) {
  EXPECT_EQ(ImplementedInTreePlugins(),
            (std::set<std::string>{
                "SchedulingGates",    "PrioritySort",        "NodeUnschedulable",
                "NodeName",           "TaintToleration",     "NodeAffinity",
                "NodePorts",          "NodeResourcesFit",    "NodeResourcesBalancedAllocation",
                "ImageLocality",      "DefaultBinder",       "GangScheduling",
                "PodTopologySpread",  "InterPodAffinity",    "DynamicResources",
                "DefaultPreemption",  "VolumeBinding",       "VolumeZone",
                "VolumeRestrictions", "NodeVolumeLimits",    "NodeDeclaredFeatures",
                "TopologyPlacement",  "PlacementBinPacking", "PodGroupPodsCount"}));
}

TEST(DefaultPluginsTest, UpstreamV1List) {
  const Flat want = {
      {"SchedulingGates", 0},      {"PrioritySort", 0},
      {"NodeUnschedulable", 0},    {"NodeName", 0},
      {"NodeDeclaredFeatures", 0}, {"TaintToleration", 3},
      {"NodeAffinity", 2},         {"NodePorts", 0},
      {"NodeResourcesFit", 1},     {"VolumeRestrictions", 0},
      {"NodeVolumeLimits", 0},     {"VolumeBinding", 0},
      {"VolumeZone", 0},           {"PodTopologySpread", 2},
      {"InterPodAffinity", 2},     {"DynamicResources", 0},
      {"DefaultPreemption", 0},    {"NodeResourcesBalancedAllocation", 1},
      {"ImageLocality", 1},        {"DefaultBinder", 0},
      {"GangScheduling", 0},       {"TopologyPlacement", 0},
      {"PlacementBinPacking", 0},
  };
  const Plugins p = internal::UpstreamDefaultPlugins(ApiVersion::kV1);
  EXPECT_EQ(Flatten(p.multi_point.enabled), want);
  EXPECT_TRUE(AllEmptyExceptMultiPoint(p));
}

TEST(DefaultPluginsTest, DefaultMultiPointIsUpstreamFilteredByImplemented) {
  EXPECT_EQ(Flatten(DefaultMultiPointPlugins()), kV1Defaults);
  Flat filtered;
  for (const PluginRef& r : internal::UpstreamDefaultPlugins(ApiVersion::kV1).multi_point.enabled) {
    if (ImplementedInTreePlugins().count(r.name) != 0) filtered.emplace_back(r.name, r.weight);
  }
  EXPECT_EQ(Flatten(DefaultMultiPointPlugins()), WithGuard(filtered));
}

TEST(DefaultPluginsTest, UpstreamV1beta2Score) {
  const Plugins p = internal::UpstreamDefaultPlugins(ApiVersion::kV1beta2);
  EXPECT_EQ(Flatten(p.score.enabled), (Flat{{"NodeResourcesBalancedAllocation", 1},
                                            {"ImageLocality", 1},
                                            {"InterPodAffinity", 1},
                                            {"NodeResourcesFit", 1},
                                            {"NodeAffinity", 1},
                                            {"PodTopologySpread", 2},
                                            {"TaintToleration", 1}}));
  EXPECT_TRUE(p.multi_point.enabled.empty());
}

// ---------------------------------------------------------------------------------------
// mergePluginSet semantics (upstream default_plugins_test TestMergePlugins cases).

struct MergeCase {
  std::string name;
  PluginSet defaults;
  PluginSet custom;
  bool keep_disabled;
  Flat want_enabled;
  std::vector<std::string> want_disabled;
};

void PrintTo(const MergeCase& c, std::ostream* os) { *os << c.name; }

class MergePluginSetTest : public ::testing::TestWithParam<MergeCase> {};

TEST_P(MergePluginSetTest, Merge) {
  const MergeCase& c = GetParam();
  const PluginSet got = internal::MergePluginSet(c.defaults, c.custom, c.keep_disabled);
  EXPECT_EQ(Flatten(got.enabled), c.want_enabled);
  std::vector<std::string> disabled;
  for (const PluginRef& r : got.disabled) disabled.push_back(r.name);
  EXPECT_EQ(disabled, c.want_disabled);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, MergePluginSetTest,
    ::testing::Values(MergeCase{"AppendCustomPlugin",
                                {{{"D1", 0}, {"D2", 0}}, {}},
                                {{{"C", 0}}, {}},
                                true,
                                {{"D1", 0}, {"D2", 0}, {"C", 0}},
                                {}},
                      MergeCase{"DisableAll",
                                {{{"D1", 0}, {"D2", 0}}, {}},
                                {{{"C", 4}}, {{"*", 0}}},
                                true,
                                {{"C", 4}},
                                {"*"}},
                      MergeCase{"DisableOne",
                                {{{"D1", 0}, {"D2", 0}, {"D3", 0}}, {}},
                                {{}, {{"D2", 0}}},
                                true,
                                {{"D1", 0}, {"D3", 0}},
                                {"D2"}},
                      MergeCase{"ReplaceDefaultKeepsPositionAndCustomWeight",
                                {{{"P1", 1}, {"P2", 2}, {"P3", 3}}, {}},
                                {{{"P3", 30}, {"P1", 10}}, {}},
                                true,
                                {{"P1", 10}, {"P2", 2}, {"P3", 30}},
                                {}},
                      MergeCase{"DisabledThenReEnabledMovesToEnd",
                                {{{"D1", 0}, {"D2", 0}}, {}},
                                {{{"C", 0}, {"D2", 0}}, {{"D2", 0}}},
                                true,
                                {{"D1", 0}, {"C", 0}, {"D2", 0}},
                                {"D2"}},
                      MergeCase{"ReorderWithStar",
                                {{{"D1", 0}, {"D2", 0}}, {}},
                                {{{"D2", 0}, {"D1", 0}}, {{"*", 0}}},
                                true,
                                {{"D2", 0}, {"D1", 0}},
                                {"*"}},
                      MergeCase{"RepeatedCustomPluginLastReplaces",
                                {{{"P1", 0}, {"P2", 0}, {"P3", 0}}, {}},
                                {{{"P1", 0}, {"P2", 2}, {"P3", 0}, {"P2", 4}}, {}},
                                true,
                                {{"P1", 0}, {"P2", 4}, {"P3", 0}, {"P2", 2}},
                                {}},
                      MergeCase{"DefaultDisabledCarriedAfterCustom",
                                {{{"D1", 0}}, {{"X", 0}}},
                                {{}, {{"Y", 0}}},
                                true,
                                {{"D1", 0}},
                                {"Y", "X"}},
                      MergeCase{"V1beta2DropsDisabled",
                                {{{"D1", 0}, {"D2", 0}}, {}},
                                {{{"C", 0}}, {{"D1", 0}}},
                                false,
                                {{"D2", 0}, {"C", 0}},
                                {}}),
    [](const ::testing::TestParamInfo<MergeCase>& info) { return info.param.name; });

// ---------------------------------------------------------------------------------------
// Defaults.

TEST(DefaultsTest, EmptyV1File) {
  const KubeSchedulerConfiguration cfg = MustDecode(kV1Header);
  EXPECT_EQ(cfg.api_version, "kubescheduler.config.k8s.io/v1");
  EXPECT_EQ(cfg.parallelism, 16);
  EXPECT_EQ(cfg.percentage_of_nodes_to_score, 0);
  EXPECT_EQ(cfg.pod_initial_backoff_seconds, 1);
  EXPECT_EQ(cfg.pod_max_backoff_seconds, 10);
  EXPECT_EQ(cfg.client_connection.qps, 50.0f);
  EXPECT_EQ(cfg.client_connection.burst, 100);
  EXPECT_EQ(cfg.client_connection.content_type, "application/vnd.kubernetes.protobuf");
  EXPECT_EQ(cfg.client_connection.kubeconfig, "");
  EXPECT_EQ(cfg.client_connection.accept_content_types, "");
  EXPECT_TRUE(cfg.leader_election.leader_elect);
  EXPECT_EQ(cfg.leader_election.lease_duration_seconds, 15);
  EXPECT_EQ(cfg.leader_election.renew_deadline_seconds, 10);
  EXPECT_EQ(cfg.leader_election.retry_period_seconds, 2);
  EXPECT_EQ(cfg.leader_election.resource_lock, "leases");
  EXPECT_EQ(cfg.leader_election.resource_name, "kube-scheduler");
  EXPECT_EQ(cfg.leader_election.resource_namespace, "kube-system");
  ASSERT_EQ(cfg.profiles.size(), 1u);
  const Profile& p = cfg.profiles[0];
  EXPECT_EQ(p.scheduler_name, "default-scheduler");
  EXPECT_FALSE(p.percentage_of_nodes_to_score.has_value());
  EXPECT_EQ(Flatten(p.plugins.multi_point.enabled), kV1Defaults);
  EXPECT_TRUE(p.plugins.multi_point.disabled.empty());
  EXPECT_TRUE(AllEmptyExceptMultiPoint(p.plugins));
  EXPECT_TRUE(p.plugin_config.empty());  // no invented args
}

TEST(DefaultsTest, DefaultConfigurationEqualsEmptyV1File) {
  const KubeSchedulerConfiguration got = DefaultConfiguration();
  const KubeSchedulerConfiguration want = MustDecode(kV1Header);
  EXPECT_EQ(got.api_version, want.api_version);
  EXPECT_EQ(got.parallelism, want.parallelism);
  EXPECT_EQ(got.leader_election.resource_lock, want.leader_election.resource_lock);
  ASSERT_EQ(got.profiles.size(), 1u);
  EXPECT_EQ(got.profiles[0].scheduler_name, "default-scheduler");
  EXPECT_EQ(Flatten(got.profiles[0].plugins.multi_point.enabled), kV1Defaults);
  EXPECT_TRUE(AllEmptyExceptMultiPoint(got.profiles[0].plugins));
}

TEST(DefaultsTest, ZeroValuesAreDefaultedLikeUpstream) {
  // Upstream defaults these non-pointer fields when zero; pointer fields keep an explicit 0.
  const KubeSchedulerConfiguration cfg = MustDecode(std::string(kV1Header) +
                                                    "clientConnection: {qps: 0, burst: 0, "
                                                    "contentType: \"\"}\n"
                                                    "leaderElection:\n"
                                                    "  leaseDuration: 0s\n"
                                                    "  renewDeadline: \"0\"\n"
                                                    "  retryPeriod: 0s\n"
                                                    "  resourceLock: \"\"\n"
                                                    "  resourceName: \"\"\n"
                                                    "  resourceNamespace: \"\"\n"
                                                    "percentageOfNodesToScore: null\n");
  EXPECT_EQ(cfg.client_connection.qps, 50.0f);
  EXPECT_EQ(cfg.client_connection.burst, 100);
  EXPECT_EQ(cfg.client_connection.content_type, "application/vnd.kubernetes.protobuf");
  EXPECT_EQ(cfg.leader_election.lease_duration_seconds, 15);
  EXPECT_EQ(cfg.leader_election.renew_deadline_seconds, 10);
  EXPECT_EQ(cfg.leader_election.retry_period_seconds, 2);
  EXPECT_EQ(cfg.leader_election.resource_lock, "leases");
  EXPECT_EQ(cfg.leader_election.resource_name, "kube-scheduler");
  EXPECT_EQ(cfg.leader_election.resource_namespace, "kube-system");
  EXPECT_EQ(cfg.percentage_of_nodes_to_score, 0);
}

TEST(DefaultsTest, LoneUnnamedProfileGetsDefaultName) {
  const KubeSchedulerConfiguration cfg =
      MustDecode(std::string(kV1Header) + "profiles:\n  - plugins: {}\n");
  ASSERT_EQ(cfg.profiles.size(), 1u);
  EXPECT_EQ(cfg.profiles[0].scheduler_name, "default-scheduler");
  EXPECT_EQ(Flatten(cfg.profiles[0].plugins.multi_point.enabled), kV1Defaults);
}

TEST(DefaultsTest, EveryProfileGetsDefaultsMerged) {
  const KubeSchedulerConfiguration cfg = MustDecode(std::string(kV1Header) +
                                                    "profiles:\n"
                                                    "  - schedulerName: a\n"
                                                    "  - schedulerName: b\n"
                                                    "    percentageOfNodesToScore: 30\n");
  ASSERT_EQ(cfg.profiles.size(), 2u);
  for (const Profile& p : cfg.profiles) {
    EXPECT_EQ(Flatten(p.plugins.multi_point.enabled), kV1Defaults) << p.scheduler_name;
  }
  EXPECT_EQ(cfg.profiles[1].percentage_of_nodes_to_score, 30);
}

// ---------------------------------------------------------------------------------------
// Profile plugin merge through decode (v1).

struct ProfileMergeCase {
  std::string name;
  std::string plugins_yaml;  // the value of profiles[0].plugins, flow style
  Flat want_multi_point;
  std::vector<std::string> want_multi_point_disabled;
  Flat want_score;
  std::vector<std::string> want_score_disabled;
};

void PrintTo(const ProfileMergeCase& c, std::ostream* os) { *os << c.name; }

class ProfileMergeTest : public ::testing::TestWithParam<ProfileMergeCase> {};

TEST_P(ProfileMergeTest, Merge) {
  const ProfileMergeCase& c = GetParam();
  const KubeSchedulerConfiguration cfg =
      MustDecode(std::string(kV1Header) + "profiles:\n  - plugins: " + c.plugins_yaml + "\n");
  ASSERT_EQ(cfg.profiles.size(), 1u);
  const Plugins& p = cfg.profiles[0].plugins;
  EXPECT_EQ(Flatten(p.multi_point.enabled), c.want_multi_point);
  std::vector<std::string> disabled;
  for (const PluginRef& r : p.multi_point.disabled) disabled.push_back(r.name);
  EXPECT_EQ(disabled, c.want_multi_point_disabled);
  EXPECT_EQ(Flatten(p.score.enabled), c.want_score);
  disabled.clear();
  for (const PluginRef& r : p.score.disabled) disabled.push_back(r.name);
  EXPECT_EQ(disabled, c.want_score_disabled);
}

Flat V1DefaultsWith(const std::string& name, int32_t weight) {
  Flat out = kV1Defaults;
  for (auto& e : out) {
    if (e.first == name) e.second = weight;
  }
  return out;
}

Flat V1DefaultsWithout(const std::string& name) {
  Flat out;
  for (const auto& e : kV1Defaults) {
    if (e.first != name) out.push_back(e);
  }
  return out;
}

Flat V1DefaultsPlus(const Flat& extra) {
  Flat out = kV1Defaults;
  out.insert(out.end(), extra.begin(), extra.end());
  return out;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ProfileMergeTest,
    ::testing::Values(
        ProfileMergeCase{"DisableAllMultiPoint",
                         "{multiPoint: {disabled: [{name: '*'}], enabled: [{name: Foo, "
                         "weight: 5}, {name: PrioritySort}, {name: DefaultBinder}]}}",
                         {{"Foo", 5}, {"PrioritySort", 0}, {"DefaultBinder", 0}},
                         {"*"},
                         {},
                         {}},
        ProfileMergeCase{"DisableOneDefault",
                         "{multiPoint: {disabled: [{name: NodePorts}]}}",
                         V1DefaultsWithout("NodePorts"),
                         {"NodePorts"},
                         {},
                         {}},
        ProfileMergeCase{"ReplaceDefaultWithNewWeight",
                         "{multiPoint: {enabled: [{name: TaintToleration, weight: 7}]}}",
                         V1DefaultsWith("TaintToleration", 7),
                         {},
                         {},
                         {}},
        ProfileMergeCase{"ReplaceDefaultWithoutWeightDropsDefaultWeight",
                         "{multiPoint: {enabled: [{name: NodeAffinity}]}}",
                         V1DefaultsWith("NodeAffinity", 0),
                         {},
                         {},
                         {}},
        ProfileMergeCase{"AppendCustom",
                         "{multiPoint: {enabled: [{name: MyPlugin, weight: 2}, {name: "
                         "Other}]}}",
                         V1DefaultsPlus({{"MyPlugin", 2}, {"Other", 0}}),
                         {},
                         {},
                         {}},
        ProfileMergeCase{"ScorePointHasNoDefaultsInV1",
                         "{score: {disabled: [{name: '*'}], enabled: [{name: ImageLocality, "
                         "weight: 9}]}}",
                         kV1Defaults,
                         {},
                         {{"ImageLocality", 9}},
                         {"*"}}),
    [](const ::testing::TestParamInfo<ProfileMergeCase>& info) { return info.param.name; });

// ---------------------------------------------------------------------------------------
// Conversions from v1beta3 and v1beta2.

TEST(ConversionTest, V1beta3DefaultsMatchUpstream) {
  const KubeSchedulerConfiguration cfg = MustDecode(kV1beta3Header);
  EXPECT_EQ(cfg.api_version, "kubescheduler.config.k8s.io/v1beta3");
  ASSERT_EQ(cfg.profiles.size(), 1u);
  const Plugins& p = cfg.profiles[0].plugins;
  // v1beta3 appended SchedulingGates (PodSchedulingReadiness) at the end.
  EXPECT_EQ(Flatten(p.multi_point.enabled),
            WithGuard(Impl({{"PrioritySort", 0},      {"NodeUnschedulable", 0},
                            {"NodeName", 0},          {"TaintToleration", 3},
                            {"NodeAffinity", 2},      {"NodePorts", 0},
                            {"NodeResourcesFit", 1},  {"VolumeRestrictions", 0},
                            {"EBSLimits", 0},         {"GCEPDLimits", 0},
                            {"NodeVolumeLimits", 0},  {"AzureDiskLimits", 0},
                            {"VolumeBinding", 0},     {"VolumeZone", 0},
                            {"PodTopologySpread", 2}, {"InterPodAffinity", 2},
                            {"DefaultPreemption", 0}, {"NodeResourcesBalancedAllocation", 1},
                            {"ImageLocality", 1},     {"DefaultBinder", 0},
                            {"SchedulingGates", 0}})));
  EXPECT_TRUE(AllEmptyExceptMultiPoint(p));
  // Same effective plugins and weights as v1 (which also enables GangScheduling,
  // NodeDeclaredFeatures, GA after v1beta3 was removed, and DynamicResources: its feature
  // gate was off by default while v1beta3 was served).
  Flat v1_without_gang;
  for (const auto& e : kV1Defaults) {
    if (e.first != "GangScheduling" && e.first != "NodeDeclaredFeatures" &&
        e.first != "DynamicResources" && e.first != "TopologyPlacement" &&
        e.first != "PlacementBinPacking") {
      v1_without_gang.push_back(e);
    }
  }
  EXPECT_EQ(Sorted(Flatten(p.multi_point.enabled)), Sorted(v1_without_gang));
}

TEST(ConversionTest, V1beta3UserPluginsMerged) {
  const KubeSchedulerConfiguration cfg =
      MustDecode(std::string(kV1beta3Header) +
                 "profiles:\n"
                 "  - schedulerName: s\n"
                 "    percentageOfNodesToScore: 10\n"
                 "    plugins:\n"
                 "      multiPoint:\n"
                 "        enabled: [{name: ImageLocality, weight: 4}]\n"
                 "        disabled: [{name: NodePorts}]\n");
  const Plugins& p = cfg.profiles[0].plugins;
  EXPECT_EQ(Flatten(p.multi_point.enabled), WithGuard(Impl({{"PrioritySort", 0},
                                                            {"NodeUnschedulable", 0},
                                                            {"NodeName", 0},
                                                            {"TaintToleration", 3},
                                                            {"NodeAffinity", 2},
                                                            {"NodeResourcesFit", 1},
                                                            {"VolumeRestrictions", 0},
                                                            {"NodeVolumeLimits", 0},
                                                            {"VolumeBinding", 0},
                                                            {"VolumeZone", 0},
                                                            {"PodTopologySpread", 2},
                                                            {"InterPodAffinity", 2},
                                                            {"DefaultPreemption", 0},
                                                            {"NodeResourcesBalancedAllocation", 1},
                                                            {"ImageLocality", 4},
                                                            {"DefaultBinder", 0},
                                                            {"SchedulingGates", 0}})));
  ASSERT_EQ(p.multi_point.disabled.size(), 1u);
  EXPECT_EQ(p.multi_point.disabled[0].name, "NodePorts");
  EXPECT_EQ(cfg.profiles[0].percentage_of_nodes_to_score, 10);
}

TEST(ConversionTest, V1beta2DefaultsArePerExtensionPoint) {
  const KubeSchedulerConfiguration cfg = MustDecode(kV1beta2Header);
  EXPECT_EQ(cfg.api_version, "kubescheduler.config.k8s.io/v1beta2");
  ASSERT_EQ(cfg.profiles.size(), 1u);
  const Plugins& p = cfg.profiles[0].plugins;
  EXPECT_EQ(Flatten(p.multi_point.enabled), (Flat{{"GpuShareGuard", 0}}));
  EXPECT_EQ(Flatten(p.pre_enqueue.enabled), (Flat{{"SchedulingGates", 0}}));
  EXPECT_EQ(Flatten(p.queue_sort.enabled), (Flat{{"PrioritySort", 0}}));
  EXPECT_EQ(Flatten(p.pre_filter.enabled), Impl({{"NodeResourcesFit", 0},
                                                 {"NodePorts", 0},
                                                 {"VolumeRestrictions", 0},
                                                 {"PodTopologySpread", 0},
                                                 {"InterPodAffinity", 0},
                                                 {"VolumeBinding", 0},
                                                 {"VolumeZone", 0},
                                                 {"NodeAffinity", 0},
                                                 {"TaintToleration", 0}}));
  EXPECT_EQ(Flatten(p.filter.enabled), Impl({{"NodeUnschedulable", 0},
                                             {"NodeName", 0},
                                             {"TaintToleration", 0},
                                             {"NodeAffinity", 0},
                                             {"NodePorts", 0},
                                             {"NodeResourcesFit", 0},
                                             {"VolumeRestrictions", 0},
                                             {"EBSLimits", 0},
                                             {"GCEPDLimits", 0},
                                             {"NodeVolumeLimits", 0},
                                             {"AzureDiskLimits", 0},
                                             {"VolumeBinding", 0},
                                             {"VolumeZone", 0},
                                             {"PodTopologySpread", 0},
                                             {"InterPodAffinity", 0}}));
  EXPECT_EQ(Flatten(p.post_filter.enabled), Impl({{"DefaultPreemption", 0}}));
  EXPECT_EQ(Flatten(p.pre_score.enabled), Impl({{"InterPodAffinity", 0},
                                                {"PodTopologySpread", 0},
                                                {"TaintToleration", 0},
                                                {"NodeAffinity", 0}}));
  // v1beta2 weights: all 1 (PodTopologySpread 2) — not v1's 3/2.
  EXPECT_EQ(Flatten(p.score.enabled), Impl({{"NodeResourcesBalancedAllocation", 1},
                                            {"ImageLocality", 1},
                                            {"InterPodAffinity", 1},
                                            {"NodeResourcesFit", 1},
                                            {"NodeAffinity", 1},
                                            {"PodTopologySpread", 2},
                                            {"TaintToleration", 1}}));
  EXPECT_EQ(Flatten(p.reserve.enabled), Impl({{"VolumeBinding", 0}}));
  EXPECT_TRUE(p.permit.enabled.empty());
  EXPECT_EQ(Flatten(p.pre_bind.enabled), Impl({{"VolumeBinding", 0}}));
  EXPECT_EQ(Flatten(p.bind.enabled), (Flat{{"DefaultBinder", 0}}));
  EXPECT_TRUE(p.post_bind.enabled.empty());
}

TEST(ConversionTest, V1beta2UserPluginsMergedAndDisabledDropped) {
  const KubeSchedulerConfiguration cfg =
      MustDecode(std::string(kV1beta2Header) +
                 "profiles:\n"
                 "  - schedulerName: s\n"
                 "    plugins:\n"
                 "      score:\n"
                 "        disabled: [{name: '*'}]\n"
                 "        enabled: [{name: Custom, weight: 2}, {name: ImageLocality, weight: 3}]\n"
                 "      filter:\n"
                 "        disabled: [{name: NodePorts}]\n"
                 "      preFilter:\n"
                 "        enabled: [{name: NodePorts}, {name: Custom}]\n");
  const Plugins& p = cfg.profiles[0].plugins;
  EXPECT_EQ(Flatten(p.multi_point.enabled), (Flat{{"GpuShareGuard", 0}}));
  EXPECT_FALSE(cfg.profiles[0].percentage_of_nodes_to_score.has_value());
  EXPECT_EQ(Flatten(p.score.enabled), (Flat{{"Custom", 2}, {"ImageLocality", 3}}));
  EXPECT_TRUE(p.score.disabled.empty());
  EXPECT_EQ(Flatten(p.filter.enabled), Impl({{"NodeUnschedulable", 0},
                                             {"NodeName", 0},
                                             {"TaintToleration", 0},
                                             {"NodeAffinity", 0},
                                             {"NodeResourcesFit", 0},
                                             {"VolumeRestrictions", 0},
                                             {"EBSLimits", 0},
                                             {"GCEPDLimits", 0},
                                             {"NodeVolumeLimits", 0},
                                             {"AzureDiskLimits", 0},
                                             {"VolumeBinding", 0},
                                             {"VolumeZone", 0},
                                             {"PodTopologySpread", 0},
                                             {"InterPodAffinity", 0}}));
  EXPECT_TRUE(p.filter.disabled.empty());
  Flat pre_filter = Impl({{"NodeResourcesFit", 0},
                          {"NodePorts", 0},
                          {"VolumeRestrictions", 0},
                          {"PodTopologySpread", 0},
                          {"InterPodAffinity", 0},
                          {"VolumeBinding", 0},
                          {"VolumeZone", 0},
                          {"NodeAffinity", 0},
                          {"TaintToleration", 0}});
  pre_filter.emplace_back("Custom", 0);
  EXPECT_EQ(Flatten(p.pre_filter.enabled), pre_filter);
}

// ---------------------------------------------------------------------------------------
// Decoding of fields, JSON, files.

TEST(DecodeTest, AllFieldsFromFile) {
  KubeSchedulerConfiguration cfg;
  std::string error;
  ASSERT_TRUE(api::MoveOrMessage(
      LoadConfiguration(PHALANX_SOURCE_DIR "/src/config/testdata/full_v1.yaml"), &cfg, &error))
      << error;
  EXPECT_EQ(cfg.parallelism, 8);
  EXPECT_EQ(cfg.percentage_of_nodes_to_score, 40);
  EXPECT_EQ(cfg.pod_initial_backoff_seconds, 2);
  EXPECT_EQ(cfg.pod_max_backoff_seconds, 20);
  EXPECT_EQ(cfg.client_connection.kubeconfig, "/etc/kubernetes/scheduler.conf");
  EXPECT_FLOAT_EQ(cfg.client_connection.qps, 12.5f);
  EXPECT_EQ(cfg.client_connection.burst, 30);
  EXPECT_EQ(cfg.client_connection.content_type, "application/json");
  EXPECT_EQ(cfg.client_connection.accept_content_types,
            "application/json,application/vnd.kubernetes.protobuf");
  EXPECT_TRUE(cfg.leader_election.leader_elect);
  EXPECT_EQ(cfg.leader_election.lease_duration_seconds, 90);
  EXPECT_EQ(cfg.leader_election.renew_deadline_seconds, 60);
  EXPECT_EQ(cfg.leader_election.retry_period_seconds, 5);
  EXPECT_EQ(cfg.leader_election.resource_name, "phalanx");
  EXPECT_EQ(cfg.leader_election.resource_namespace, "phalanx-system");
  ASSERT_EQ(cfg.profiles.size(), 2u);
  EXPECT_EQ(cfg.profiles[0].scheduler_name, "default-scheduler");
  EXPECT_EQ(cfg.profiles[0].percentage_of_nodes_to_score, 25);
  EXPECT_EQ(Flatten(cfg.profiles[0].plugins.score.enabled), (Flat{{"ImageLocality", 5}}));
  EXPECT_EQ(cfg.profiles[1].scheduler_name, "no-scoring");
  ASSERT_EQ(cfg.profiles[1].plugins.pre_score.disabled.size(), 1u);
  EXPECT_EQ(cfg.profiles[1].plugins.pre_score.disabled[0].name, "*");
  const YAML::Node* args = cfg.profiles[0].ArgsFor("NodeResourcesFit");
  ASSERT_NE(args, nullptr);
  EXPECT_EQ((*args)["scoringStrategy"]["type"].as<std::string>(), "MostAllocated");
}

TEST(DecodeTest, MissingFile) {
  KubeSchedulerConfiguration cfg;
  std::string error;
  EXPECT_FALSE(api::MoveOrMessage(LoadConfiguration("/nonexistent/sched.yaml"), &cfg, &error));
  EXPECT_EQ(error, "/nonexistent/sched.yaml: cannot open file: No such file or directory");
  EXPECT_FALSE(api::MoveOrMessage(LoadConfiguration(PHALANX_SOURCE_DIR "/src/config/testdata"),
                                  &cfg, &error));
  EXPECT_EQ(error, PHALANX_SOURCE_DIR "/src/config/testdata: cannot read file: is a directory");
}

TEST(DecodeTest, Json) {
  const KubeSchedulerConfiguration cfg = MustDecode(
      R"({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
          "parallelism": 4, "leaderElection": {"leaderElect": false},
          "profiles": [{"schedulerName": "json-sched",
                        "plugins": {"multiPoint": {"disabled": [{"name": "ImageLocality"}]}},
                        "pluginConfig": [{"name": "Custom", "args": {"k": [1, 2]}}]}]})");
  EXPECT_EQ(cfg.parallelism, 4);
  EXPECT_FALSE(cfg.leader_election.leader_elect);
  ASSERT_EQ(cfg.profiles.size(), 1u);
  EXPECT_EQ(cfg.profiles[0].scheduler_name, "json-sched");
  EXPECT_EQ(Flatten(cfg.profiles[0].plugins.multi_point.enabled),
            V1DefaultsWithout("ImageLocality"));
  const YAML::Node* args = cfg.profiles[0].ArgsFor("Custom");
  ASSERT_NE(args, nullptr);
  EXPECT_EQ((*args)["k"][1].as<int>(), 2);
}

TEST(DecodeTest, ArgsKept) {
  const KubeSchedulerConfiguration cfg =
      MustDecode(std::string(kV1Header) +
                 "profiles:\n"
                 "  - pluginConfig:\n"
                 "      - name: NodeResourcesFit\n"
                 "        args:\n"
                 "          apiVersion: kubescheduler.config.k8s.io/v1\n"
                 "          kind: NodeResourcesFitArgs\n"
                 "          scoringStrategy: {type: RequestedToCapacityRatio, resources: "
                 "[{name: cpu, weight: 3}]}\n"
                 "      - name: NoArgs\n"
                 "      - name: NullArgs\n"
                 "        args: null\n"
                 "      - name: OutOfTree\n"
                 "        args: {kind: Whatever, list: [a, b]}\n");
  const Profile& p = cfg.profiles[0];
  ASSERT_EQ(p.plugin_config.size(), 4u);
  for (const PluginConfig& pc : p.plugin_config) ASSERT_TRUE(pc.args) << pc.name;

  const YAML::Node* fit = p.ArgsFor("NodeResourcesFit");
  ASSERT_NE(fit, nullptr);
  const YAML::Node want = YAML::Load(
      "{apiVersion: kubescheduler.config.k8s.io/v1, kind: NodeResourcesFitArgs, "
      "scoringStrategy: {type: RequestedToCapacityRatio, resources: [{name: cpu, weight: 3}]}}");
  EXPECT_TRUE(internal::YamlEqual(*fit, want));
  EXPECT_EQ((*fit)["scoringStrategy"]["resources"][0]["weight"].as<int>(), 3);

  for (const char* name : {"NoArgs", "NullArgs"}) {
    const YAML::Node* a = p.ArgsFor(name);
    ASSERT_NE(a, nullptr) << name;
    EXPECT_TRUE(a->IsMap()) << name;
    EXPECT_EQ(a->size(), 0u) << name;
  }
  const YAML::Node* oot = p.ArgsFor("OutOfTree");
  ASSERT_NE(oot, nullptr);
  EXPECT_EQ((*oot)["kind"].as<std::string>(), "Whatever");
  EXPECT_EQ(p.ArgsFor("Missing"), nullptr);
}

TEST(DecodeTest, ArgsAreIndependentCopies) {
  const std::string text =
      std::string(kV1Header) + "profiles:\n  - pluginConfig: [{name: A, args: {x: 1}}]\n";
  const KubeSchedulerConfiguration a = MustDecode(text);
  const KubeSchedulerConfiguration b = MustDecode(text);
  EXPECT_NE(a.profiles[0].ArgsFor("A"), b.profiles[0].ArgsFor("A"));
  EXPECT_TRUE(internal::YamlEqual(*a.profiles[0].ArgsFor("A"), *b.profiles[0].ArgsFor("A")));
}

TEST(DecodeTest, NoExceptionsOnHostileInput) {
  const std::vector<std::string> inputs = {
      std::string("\0\xff\xfe", 3),
      std::string(2000, '['),
      std::string(kV1Header) + "profiles: [[[[]]]]\n",
      std::string(kV1Header) + "profiles: [{plugins: {score: {enabled: [[x]]}}}]\n",
      std::string(kV1Header) + "profiles: [{pluginConfig: [{name: [x]}]}]\n",
      std::string(kV1Header) + "leaderElection: {leaseDuration: 99999999999999999999h}\n",
      "*alias\n",
  };
  for (const std::string& in : inputs) {
    KubeSchedulerConfiguration cfg;
    std::string error;
    bool ok = true;
    EXPECT_NO_THROW(ok = api::MoveOrMessage(DecodeConfiguration(in, "x.yaml"), &cfg, &error));
    EXPECT_FALSE(ok) << in;
    EXPECT_THAT(error, StartsWith("x.yaml")) << in;
  }
}

// ---------------------------------------------------------------------------------------
// Every error message.

struct ErrorCase {
  std::string name;
  std::string text;
  std::string want;
};

void PrintTo(const ErrorCase& c, std::ostream* os) { *os << c.name; }

class ErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ErrorTest, Message) {
  const ErrorCase& c = GetParam();
  EXPECT_EQ(DecodeError(c.text), c.want);
}

std::string V1(const std::string& body) { return std::string(kV1Header) + body; }

INSTANTIATE_TEST_SUITE_P(
    Header, ErrorTest,
    ::testing::Values(
        ErrorCase{"Empty", "",
                  "sched.yaml: apiVersion: Required value\nsched.yaml: kind: Required value"},
        ErrorCase{"MissingApiVersion", "kind: KubeSchedulerConfiguration\n",
                  "sched.yaml: apiVersion: Required value"},
        ErrorCase{"MissingKind", "apiVersion: kubescheduler.config.k8s.io/v1\n",
                  "sched.yaml: kind: Required value"},
        ErrorCase{"WrongApiVersion",
                  "apiVersion: kubescheduler.config.k8s.io/v1alpha1\nkind: "
                  "KubeSchedulerConfiguration\n",
                  "sched.yaml:1:13: apiVersion: Unsupported value: "
                  "\"kubescheduler.config.k8s.io/v1alpha1\": supported values: "
                  "\"kubescheduler.config.k8s.io/v1\", \"kubescheduler.config.k8s.io/v1beta3\", "
                  "\"kubescheduler.config.k8s.io/v1beta2\""},
        ErrorCase{"WrongKind",
                  "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeProxyConfiguration\n",
                  "sched.yaml:2:7: kind: Unsupported value: \"KubeProxyConfiguration\": "
                  "supported values: \"KubeSchedulerConfiguration\""},
        ErrorCase{"NotAnObject", "- a\n- b\n",
                  "sched.yaml:1:1: Invalid value: array: a KubeSchedulerConfiguration must be "
                  "an object"}),
    [](const ::testing::TestParamInfo<ErrorCase>& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(
    Syntax, ErrorTest,
    ::testing::Values(ErrorCase{"UnclosedFlowSequence", V1("profiles: [a, b\n"),
                                "sched.yaml:4:1: end of sequence flow not found"},
                      ErrorCase{"BadIndentation",
                                V1("leaderElection:\n  leaderElect: true\n bad: 1\n"),
                                "sched.yaml:5:2: end of map not found"}),
    [](const ::testing::TestParamInfo<ErrorCase>& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(
    FieldTypes, ErrorTest,
    ::testing::Values(
        ErrorCase{"IntNotANumber", V1("parallelism: abc\n"),
                  "sched.yaml:3:14: parallelism: Invalid value: \"abc\": must be an integer"},
        ErrorCase{"IntQuoted", V1("parallelism: \"16\"\n"),
                  "sched.yaml:3:14: parallelism: Invalid value: \"16\": must be an integer"},
        ErrorCase{"IntOutOfRange", V1("parallelism: 99999999999\n"),
                  "sched.yaml:3:14: parallelism: Invalid value: 99999999999: must be between "
                  "-2147483648 and 2147483647"},
        ErrorCase{"FloatBad", V1("clientConnection: {qps: fast}\n"),
                  "sched.yaml:3:25: clientConnection.qps: Invalid value: \"fast\": must be a "
                  "number"},
        ErrorCase{"BoolBad", V1("leaderElection:\n  leaderElect: maybe\n"),
                  "sched.yaml:4:16: leaderElection.leaderElect: Invalid value: \"maybe\": must "
                  "be a boolean"},
        ErrorCase{"DurationMissingUnit", V1("leaderElection:\n  leaseDuration: 15\n"),
                  "sched.yaml:4:18: leaderElection.leaseDuration: Invalid value: \"15\": time: "
                  "missing unit in duration \"15\""},
        // Strict decoding, as upstream: every level names the unknown field.
        ErrorCase{"UnknownTopLevel", V1("parallelizm: 4\n"),
                  "sched.yaml:3:1: parallelizm: unknown field"},
        ErrorCase{"RemovedHealthzBindAddress", V1("healthzBindAddress: 0.0.0.0:10251\n"),
                  "sched.yaml:3:1: healthzBindAddress: unknown field"},
        ErrorCase{"UnknownClientConnection", V1("clientConnection: {qsp: 5}\n"),
                  "sched.yaml:3:20: clientConnection.qsp: unknown field"},
        ErrorCase{"UnknownLeaderElection", V1("leaderElection:\n  leaseDurationSeconds: 15\n"),
                  "sched.yaml:4:3: leaderElection.leaseDurationSeconds: unknown field"},
        ErrorCase{"UnknownProfileField", V1("profiles:\n- schedulerName: a\n  plugin: {}\n"),
                  "sched.yaml:5:3: profiles[0].plugin: unknown field"},
        ErrorCase{"UnknownExtensionPoint",
                  V1("profiles:\n- plugins:\n    prefilter: {enabled: [{name: A}]}\n"),
                  "sched.yaml:5:5: profiles[0].plugins.prefilter: unknown field"},
        ErrorCase{"UnknownPluginSetField",
                  V1("profiles:\n- plugins:\n    score: {enable: [{name: A}]}\n"),
                  "sched.yaml:5:13: profiles[0].plugins.score.enable: unknown field"},
        ErrorCase{"UnknownPluginField",
                  V1("profiles:\n- plugins:\n    score: {enabled: [{name: A, wieght: 2}]}\n"),
                  "sched.yaml:5:33: profiles[0].plugins.score.enabled[0].wieght: unknown field"},
        ErrorCase{"UnknownPluginConfigField",
                  V1("profiles:\n- pluginConfig:\n  - {name: NodeAffinity, arg: {}}\n"),
                  "sched.yaml:5:26: profiles[0].pluginConfig[0].arg: unknown field"},
        ErrorCase{"V1beta2MultiPoint",
                  std::string(kV1beta2Header) +
                      "profiles:\n- plugins:\n    multiPoint: {enabled: [{name: A}]}\n",
                  "sched.yaml:5:5: profiles[0].plugins.multiPoint: unknown field"},
        ErrorCase{"V1beta2ProfilePercentage",
                  std::string(kV1beta2Header) + "profiles:\n- percentageOfNodesToScore: 10\n",
                  "sched.yaml:4:3: profiles[0].percentageOfNodesToScore: unknown field"},
        ErrorCase{"DurationUnknownUnit", V1("leaderElection:\n  renewDeadline: 1d\n"),
                  "sched.yaml:4:18: leaderElection.renewDeadline: Invalid value: \"1d\": time: "
                  "unknown unit \"d\" in duration \"1d\""},
        ErrorCase{"DurationNotWholeSeconds", V1("leaderElection:\n  retryPeriod: 1500ms\n"),
                  "sched.yaml:4:16: leaderElection.retryPeriod: Invalid value: \"1500ms\": must "
                  "be a whole number of seconds"},
        ErrorCase{"ObjectExpected", V1("leaderElection: [a]\n"),
                  "sched.yaml:3:17: leaderElection: Invalid value: array: must be an object"},
        ErrorCase{"ListExpected", V1("profiles: {schedulerName: a}\n"),
                  "sched.yaml:3:11: profiles: Invalid value: object: must be a list"},
        ErrorCase{"StringExpected", V1("profiles: [{schedulerName: [a]}]\n"),
                  "sched.yaml:3:28: profiles[0].schedulerName: Invalid value: array: must be a "
                  "string"},
        ErrorCase{"NegativeWeight",
                  V1("profiles:\n  - plugins:\n      score:\n        enabled:\n          - "
                     "name: A\n          - name: B\n            weight: -1\n"),
                  "sched.yaml:9:21: profiles[0].plugins.score.enabled[1].weight: Invalid "
                  "value: -1: must be non-negative (0 means the default weight)"},
        ErrorCase{"TypedArgsNotObject",
                  V1("profiles: [{pluginConfig: [{name: NodeResourcesFit, args: x}]}]\n"),
                  "sched.yaml:3:59: profiles[0].pluginConfig[0].args: Invalid value: \"x\": "
                  "args for plugin NodeResourcesFit must be an object"},
        ErrorCase{"TypedArgsWrongKind",
                  V1("profiles: [{pluginConfig: [{name: NodeResourcesFit, args: {kind: "
                     "InterPodAffinityArgs}}]}]\n"),
                  "sched.yaml:3:66: profiles[0].pluginConfig[0].args.kind: Invalid value: "
                  "\"InterPodAffinityArgs\": args for plugin NodeResourcesFit were not of type "
                  "NodeResourcesFitArgs.kubescheduler.config.k8s.io"},
        ErrorCase{"TypedArgsWrongGroup",
                  V1("profiles: [{pluginConfig: [{name: PodTopologySpread, args: {apiVersion: "
                     "example.com/v1}}]}]\n"),
                  "sched.yaml:3:73: profiles[0].pluginConfig[0].args.apiVersion: Invalid value: "
                  "\"example.com/v1\": args for plugin PodTopologySpread were not of group "
                  "kubescheduler.config.k8s.io"}),
    [](const ::testing::TestParamInfo<ErrorCase>& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(
    Validation, ErrorTest,
    ::testing::Values(
        ErrorCase{"Parallelism", V1("parallelism: 0\n"),
                  "sched.yaml: parallelism: Invalid value: 0: should be an integer value greater "
                  "than zero"},
        ErrorCase{"PercentageAbove100", V1("percentageOfNodesToScore: 101\n"),
                  "sched.yaml: percentageOfNodesToScore: Invalid value: 101: not in valid range "
                  "[0-100]"},
        ErrorCase{"PercentageNegative", V1("percentageOfNodesToScore: -1\n"),
                  "sched.yaml: percentageOfNodesToScore: Invalid value: -1: not in valid range "
                  "[0-100]"},
        ErrorCase{"ProfilePercentage",
                  V1("profiles: [{schedulerName: a, percentageOfNodesToScore: 120}]\n"),
                  "sched.yaml: profiles[0].percentageOfNodesToScore: Invalid value: 120: not in "
                  "valid range [0-100]"},
        ErrorCase{"InitialBackoff", V1("podInitialBackoffSeconds: 0\n"),
                  "sched.yaml: podInitialBackoffSeconds: Invalid value: 0: must be greater than "
                  "0"},
        ErrorCase{"MaxBackoff", V1("podInitialBackoffSeconds: 5\npodMaxBackoffSeconds: 1\n"),
                  "sched.yaml: podMaxBackoffSeconds: Invalid value: 1: must be greater than or "
                  "equal to PodInitialBackoffSeconds"},
        ErrorCase{"Burst", V1("clientConnection: {burst: -1}\n"),
                  "sched.yaml: clientConnection.burst: Invalid value: -1: must be non-negative"},
        ErrorCase{"LeaseNotAboveRenew",
                  V1("leaderElection: {leaseDuration: 10s, renewDeadline: 10s}\n"),
                  "sched.yaml: leaderElection.leaseDuration: Invalid value: 10s: must be greater "
                  "than `RenewDeadline` (10s)"},
        ErrorCase{"LeaseNegative", V1("leaderElection: {leaseDuration: -1m30s}\n"),
                  "sched.yaml: leaderElection.leaseDuration: Invalid value: -1m30s: must be "
                  "greater than zero\n"
                  "sched.yaml: leaderElection.leaseDuration: Invalid value: -1m30s: must be "
                  "greater than `RenewDeadline` (10s)"},
        ErrorCase{"RenewNegative", V1("leaderElection: {renewDeadline: -1s}\n"),
                  "sched.yaml: leaderElection.renewDeadline: Invalid value: -1s: must be greater "
                  "than zero"},
        ErrorCase{"RetryNegative", V1("leaderElection: {retryPeriod: -2s}\n"),
                  "sched.yaml: leaderElection.retryPeriod: Invalid value: -2s: must be greater "
                  "than zero"},
        ErrorCase{"RenewNotAboveRetryJitter",
                  V1("leaderElection: {renewDeadline: 12s, retryPeriod: 10s}\n"),
                  "sched.yaml: leaderElection.renewDeadline: Invalid value: 12s: must be greater "
                  "than retryPeriod*JitterFactor (10s*1.2)"},
        ErrorCase{"ResourceLockNotLeases", V1("leaderElection: {resourceLock: endpoints}\n"),
                  "sched.yaml: leaderElection.resourceLock: Invalid value: \"endpoints\": "
                  "resourceLock value must be \"leases\""},
        ErrorCase{"DuplicateSchedulerName",
                  V1("profiles: [{schedulerName: foo}, {schedulerName: bar}, {schedulerName: "
                     "foo}]\n"),
                  "sched.yaml: profiles[2].schedulerName: Duplicate value: \"foo\""},
        ErrorCase{"MissingSchedulerNameWithSeveralProfiles",
                  V1("profiles: [{schedulerName: foo}, {plugins: {}}]\n"),
                  "sched.yaml: profiles[1].schedulerName: Required value"},
        ErrorCase{"ExplicitEmptySchedulerName", V1("profiles: [{schedulerName: \"\"}]\n"),
                  "sched.yaml: profiles[0].schedulerName: Required value"},
        ErrorCase{"DuplicatePluginConfig",
                  V1("profiles: [{pluginConfig: [{name: NodeResourcesFit}, {name: Other}, "
                     "{name: NodeResourcesFit}]}]\n"),
                  "sched.yaml: profiles[0].pluginConfig[2]: Duplicate value: "
                  "\"NodeResourcesFit\""},
        ErrorCase{"RemovedPluginEnabled",
                  V1("profiles: [{plugins: {filter: {enabled: [{name: EBSLimits}]}}}]\n"),
                  "sched.yaml: profiles[0].plugins.filter.enabled[0]: Invalid value: "
                  "\"EBSLimits\": was invalid in version \"kubescheduler.config.k8s.io/v1\" "
                  "(KubeSchedulerConfiguration is version \"kubescheduler.config.k8s.io/v1\")"},
        ErrorCase{
            "RemovedPluginConfigured",
            std::string(kV1beta3Header) + "profiles: [{pluginConfig: [{name: GCEPDLimits}]}]\n",
            "sched.yaml: profiles[0].pluginConfig[0]: Invalid value: \"GCEPDLimits\": was "
            "invalid in version \"kubescheduler.config.k8s.io/v1\" "
            "(KubeSchedulerConfiguration is version \"kubescheduler.config.k8s.io/v1beta3\")"},
        ErrorCase{"QueueSortDiffers",
                  V1("profiles:\n"
                     "  - schedulerName: a\n"
                     "    plugins: {queueSort: {enabled: [{name: MySort}], disabled: [{name: "
                     "'*'}]}}\n"
                     "  - schedulerName: b\n"),
                  "sched.yaml: profiles[1].plugins.queueSort: Invalid value: "
                  "{\"enabled\":[],\"disabled\":[]}: must be the same for all profiles"},
        ErrorCase{"TwoQueueSortPlugins",
                  V1("profiles: [{plugins: {queueSort: {enabled: [{name: A}, {name: B}]}}}]\n"),
                  "sched.yaml: profiles[0].plugins.queueSort.enabled: Invalid value: 2: only one "
                  "queue sort plugin can be enabled"},
        ErrorCase{"QueueSortArgsDiffer",
                  V1("profiles:\n"
                     "  - schedulerName: a\n"
                     "    plugins: {queueSort: {enabled: [{name: MySort}]}}\n"
                     "    pluginConfig: [{name: MySort, args: {order: asc}}]\n"
                     "  - schedulerName: b\n"
                     "    plugins: {queueSort: {enabled: [{name: MySort}]}}\n"
                     "    pluginConfig: [{name: MySort, args: {order: desc}}]\n"),
                  "sched.yaml: profiles[1].pluginConfig.args: Invalid value: {\"order\": "
                  "\"desc\"}: queueSort must be the same for all profiles"},
        ErrorCase{"SeveralErrorsOneLineEach", V1("parallelism: -3\npodInitialBackoffSeconds: 0\n"),
                  "sched.yaml: parallelism: Invalid value: -3: should be an integer value "
                  "greater than zero\n"
                  "sched.yaml: podInitialBackoffSeconds: Invalid value: 0: must be greater than "
                  "0"}),
    [](const ::testing::TestParamInfo<ErrorCase>& info) { return info.param.name; });

TEST(ValidationTest, ValidConfigsPass) {
  for (const std::string& text : {
           V1("leaderElection: {leaderElect: false, leaseDuration: 1s, renewDeadline: 5s, "
              "retryPeriod: 5s, resourceLock: endpoints}\n"),
           V1("profiles:\n"
              "  - schedulerName: a\n"
              "    plugins: {queueSort: {enabled: [{name: MySort}]}}\n"
              "    pluginConfig: [{name: MySort, args: {x: 1, y: [2]}}]\n"
              "  - schedulerName: b\n"
              "    plugins: {queueSort: {enabled: [{name: MySort}]}}\n"
              "    pluginConfig: [{name: MySort, args: {y: [2], x: 1}}]\n"),
           V1("percentageOfNodesToScore: 100\nprofiles: [{schedulerName: a, "
              "percentageOfNodesToScore: 0}]\n"),
           V1("podInitialBackoffSeconds: 3\npodMaxBackoffSeconds: 3\n"),
           V1("profiles: [{plugins: {score: {enabled: [{name: A, weight: 0}, {name: B, weight: "
              "1000}]}}}]\n"),
       }) {
    MustDecode(text);
  }
}

// Errors defaulting makes unreachable through DecodeConfiguration.
TEST(ValidationTest, DirectOnlyErrors) {
  KubeSchedulerConfiguration cfg = DefaultConfiguration();
  cfg.profiles.clear();
  cfg.leader_election.resource_lock.clear();
  cfg.leader_election.resource_name.clear();
  cfg.leader_election.resource_namespace.clear();
  std::vector<std::string> got;
  for (const internal::FieldError& e : internal::Validate(cfg)) got.push_back(e.Format("s"));
  EXPECT_EQ(got, (std::vector<std::string>{
                     "s: leaderElection.resourceLock: Required value",
                     "s: leaderElection.resourceNamespace: Required value",
                     "s: leaderElection.resourceName: Required value",
                     "s: leaderElection.resourceLock: Invalid value: \"\": resourceLock value "
                     "must be \"leases\"",
                     "s: profiles: Required value",
                 }));
  EXPECT_TRUE(internal::Validate(DefaultConfiguration()).empty());
}

// ---------------------------------------------------------------------------------------
// Go durations.

struct DurationCase {
  std::string text;
  bool ok;
  int64_t nanos;
  std::string error;
};

void PrintTo(const DurationCase& c, std::ostream* os) { *os << '"' << c.text << '"'; }

class ParseDurationTest : public ::testing::TestWithParam<DurationCase> {};

TEST_P(ParseDurationTest, Parse) {
  const DurationCase& c = GetParam();
  int64_t nanos = -12345;
  std::string error;
  EXPECT_EQ(api::MoveOrMessage(internal::ParseGoDuration(c.text), &nanos, &error), c.ok) << c.text;
  if (c.ok) {
    EXPECT_EQ(nanos, c.nanos) << c.text;
  } else {
    EXPECT_EQ(error, c.error) << c.text;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ParseDurationTest,
    ::testing::Values(DurationCase{"15s", true, 15'000'000'000, ""},
                      DurationCase{"1m30s", true, 90'000'000'000, ""},
                      DurationCase{"1.5h", true, 5'400'000'000'000, ""},
                      DurationCase{"300ms", true, 300'000'000, ""},
                      DurationCase{"-1s", true, -1'000'000'000, ""},
                      DurationCase{"+2s", true, 2'000'000'000, ""}, DurationCase{"0", true, 0, ""},
                      DurationCase{"1.s", true, 1'000'000'000, ""},
                      DurationCase{".5s", true, 500'000'000, ""},
                      DurationCase{"1h2m3s4ms5us6ns", true, 3'723'004'005'006, ""},
                      DurationCase{"7\xC2\xB5s", true, 7'000, ""},
                      DurationCase{"9223372036854775807ns", true, INT64_MAX, ""},
                      DurationCase{"-9223372036854775808ns", true, INT64_MIN, ""},
                      DurationCase{"9223372036854775808ns", false, 0,
                                   "time: invalid duration \"9223372036854775808ns\""},
                      DurationCase{"", false, 0, "time: invalid duration \"\""},
                      DurationCase{"-", false, 0, "time: invalid duration \"-\""},
                      DurationCase{"s", false, 0, "time: invalid duration \"s\""},
                      DurationCase{".s", false, 0, "time: invalid duration \".s\""},
                      DurationCase{"15", false, 0, "time: missing unit in duration \"15\""},
                      DurationCase{"1d", false, 0, "time: unknown unit \"d\" in duration \"1d\""}));

TEST(FormatDurationTest, GoFormat) {
  EXPECT_EQ(internal::FormatGoDuration(0), "0s");
  EXPECT_EQ(internal::FormatGoDuration(90'000'000'000), "1m30s");
  EXPECT_EQ(internal::FormatGoDuration(3'600'000'000'000), "1h0m0s");
  EXPECT_EQ(internal::FormatGoDuration(1'500'000'000), "1.5s");
  EXPECT_EQ(internal::FormatGoDuration(-2'000'000'000), "-2s");
  EXPECT_EQ(internal::FormatGoDuration(1'500'000), "1.5ms");
  EXPECT_EQ(internal::FormatGoDuration(1'000), "1\xC2\xB5s");
  EXPECT_EQ(internal::FormatGoDuration(5), "5ns");
  EXPECT_EQ(internal::FormatSeconds(15), "15s");
}

}  // namespace
}  // namespace phalanx::config
