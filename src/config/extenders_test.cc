// Tests of the extenders section of KubeSchedulerConfiguration: decode (strict, every
// field of upstream v1 Extender) and validation (upstream validateExtenders).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "config/config.h"

namespace phalanx::config {
namespace {

using ::testing::HasSubstr;

std::string V1(const std::string& body) {
  return "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n" + body;
}

TEST(Extenders, DecodesEveryField) {
  auto cfg = DecodeConfiguration(V1(R"(extenders:
- urlPrefix: http://127.0.0.1:8888/scheduler
  filterVerb: filter
  preemptVerb: preempt
  prioritizeVerb: prioritize
  bindVerb: bind
  weight: 3
  enableHTTPS: true
  tlsConfig: {insecure: true, serverName: ext, caFile: /ca.pem, caData: aGVsbG8=}
  httpTimeout: 1500ms
  nodeCacheCapable: true
  ignorable: true
  managedResources:
  - {name: example.com/foo, ignoredByScheduler: true}
  - name: example.com/bar
)"),
                                 "sched.yaml");
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  ASSERT_EQ(cfg->extenders.size(), 1u);
  const Extender& e = cfg->extenders[0];
  EXPECT_EQ(e.url_prefix, "http://127.0.0.1:8888/scheduler");
  EXPECT_EQ(e.filter_verb, "filter");
  EXPECT_EQ(e.preempt_verb, "preempt");
  EXPECT_EQ(e.prioritize_verb, "prioritize");
  EXPECT_EQ(e.bind_verb, "bind");
  EXPECT_EQ(e.weight, 3);
  EXPECT_TRUE(e.enable_https);
  ASSERT_TRUE(e.tls_config.has_value());
  EXPECT_TRUE(e.tls_config->insecure);
  EXPECT_EQ(e.tls_config->server_name, "ext");
  EXPECT_EQ(e.tls_config->ca_file, "/ca.pem");
  EXPECT_EQ(e.tls_config->ca_data, "hello");
  EXPECT_EQ(e.http_timeout_ns, 1'500'000'000);
  EXPECT_TRUE(e.node_cache_capable);
  EXPECT_TRUE(e.ignorable);
  ASSERT_EQ(e.managed_resources.size(), 2u);
  EXPECT_EQ(e.managed_resources[0].name, "example.com/foo");
  EXPECT_TRUE(e.managed_resources[0].ignored_by_scheduler);
  EXPECT_FALSE(e.managed_resources[1].ignored_by_scheduler);
}

TEST(Extenders, AbsentMeansNone) {
  auto cfg = DecodeConfiguration(V1(""), "sched.yaml");
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  EXPECT_TRUE(cfg->extenders.empty());
}

struct Bad {
  const char* name;
  const char* body;
  const char* want;
};

class ExtenderErrors : public ::testing::TestWithParam<Bad> {};

TEST_P(ExtenderErrors, NameTheField) {
  auto cfg = DecodeConfiguration(V1(GetParam().body), "sched.yaml");
  ASSERT_FALSE(cfg.ok());
  EXPECT_THAT(std::string(cfg.status().message()), HasSubstr(GetParam().want));
}

INSTANTIATE_TEST_SUITE_P(
    Config, ExtenderErrors,
    ::testing::Values(
        Bad{"ZeroWeight", "extenders: [{urlPrefix: 'http://a', prioritizeVerb: p}]\n",
            "sched.yaml: extenders[0].weight: Invalid value: 0: must have a positive weight "
            "applied to it"},
        Bad{"NegativeWeight",
            "extenders: [{urlPrefix: 'http://a', prioritizeVerb: p, weight: -2}]\n",
            "extenders[0].weight: Invalid value: -2: must have a positive weight applied to it"},
        Bad{"TwoBinders",
            "extenders: [{urlPrefix: 'http://a', bindVerb: b}, {urlPrefix: 'http://b', "
            "bindVerb: b}]\n",
            "extenders: Invalid value: \"found 2 extenders implementing bind\": only one "
            "extender can implement bind"},
        Bad{"NotExtendedResource",
            "extenders: [{urlPrefix: 'http://a', managedResources: [{name: cpu}]}]\n",
            "extenders[0].managedResources[0].name: Invalid value: \"cpu\": cpu is an invalid "
            "extended resource name"},
        Bad{"KubernetesIoResource",
            "extenders: [{urlPrefix: 'http://a', managedResources: [{name: kubernetes.io/x}]}]\n",
            "kubernetes.io/x is an invalid extended resource name"},
        Bad{"DuplicateResource",
            "extenders: [{urlPrefix: 'http://a', managedResources: [{name: example.com/a}]}, "
            "{urlPrefix: 'http://b', managedResources: [{name: example.com/a}]}]\n",
            "extenders[1].managedResources[0].name: Invalid value: \"example.com/a\": "
            "duplicate extender managed resource name"},
        Bad{"MissingUrl", "extenders: [{filterVerb: f}]\n",
            "extenders[0].urlPrefix: Required value"},
        Bad{"UnknownField", "extenders: [{urlPrefix: 'http://a', filterverb: f}]\n",
            "sched.yaml:3:37: extenders[0].filterverb: unknown field"},
        Bad{"UnknownTLSField",
            "extenders: [{urlPrefix: 'http://a', tlsConfig: {insecureSkip: true}}]\n",
            "extenders[0].tlsConfig.insecureSkip: unknown field"},
        Bad{"BadTimeout", "extenders: [{urlPrefix: 'http://a', httpTimeout: 5}]\n",
            "extenders[0].httpTimeout: Invalid value: \"5\": time: missing unit in duration"},
        Bad{"BadBase64", "extenders: [{urlPrefix: 'http://a', tlsConfig: {caData: '%%%'}}]\n",
            "extenders[0].tlsConfig.caData: Invalid value: \"%%%\": must be a base64-encoded "
            "string"},
        Bad{"NotAList", "extenders: {urlPrefix: 'http://a'}\n",
            "extenders: Invalid value: object: must be a list"}),
    [](const ::testing::TestParamInfo<Bad>& i) { return std::string(i.param.name); });

}  // namespace
}  // namespace phalanx::config
