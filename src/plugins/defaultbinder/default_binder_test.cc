// Ported from upstream defaultbinder/default_binder_test.go.
#include "plugins/defaultbinder/default_binder.h"

#include <gtest/gtest.h>

#include "plugins/testing_fake_handle.h"
#include "testing/builders.h"

namespace phalanx::plugins::defaultbinder {
namespace {

using phalanx::testing::PodBuilder;

TEST(DefaultBinderTest, Bind) {
  struct Case {
    const char* name;
    api::Status client_status;
    framework::Code want_code;
    std::string want_message;
  };
  const Case cases[] = {
      {"successful", absl::OkStatus(), framework::Code::kSuccess, ""},
      {"binding error", absl::UnavailableError("binding error"), framework::Code::kError,
       "binding error"},
      {"conflict from the API server is an error", absl::AbortedError("pod already bound"),
       framework::Code::kError, "pod already bound"},
      {"an error without a message names its code", absl::NotFoundError(""),
       framework::Code::kError, "NOT_FOUND"},
  };
  for (const auto& c : cases) {
    fake::FakeHandle h;
    h.fake_client().bind_status = c.client_status;
    auto pl = DefaultBinder::New(nullptr, h);
    ASSERT_TRUE(pl.ok());
    auto* b = dynamic_cast<framework::BindPlugin*>(pl.value().get());
    ASSERT_NE(b, nullptr);
    framework::CycleState state;
    auto pi = PodBuilder("foo", "ns").UID("foo").Info();
    auto s = b->Bind(state, *pi, "foohost.kubernetes.mydomain.com");
    EXPECT_EQ(s.code(), c.want_code) << c.name;
    EXPECT_EQ(s.Message(), c.want_message) << c.name;
    ASSERT_EQ(h.fake_client().binds.size(), 1u) << c.name;
    EXPECT_EQ(h.fake_client().binds[0],
              (std::pair<std::string, std::string>{"ns/foo", "foohost.kubernetes.mydomain.com"}));
  }
}

}  // namespace
}  // namespace phalanx::plugins::defaultbinder
