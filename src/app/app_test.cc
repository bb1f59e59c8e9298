#include "app/app.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "framework/interface.h"

namespace phalanx::app {
namespace {

framework::StatusOr<std::unique_ptr<framework::Plugin>> NoPlugin(framework::PluginArgs,
                                                                 framework::Handle&) {
  return framework::Status::Error("not built in this test");
}

TEST(AppTest, NewRegistryWithoutOptionsIsInTree) {
  auto r = NewRegistry({});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->Has("NodeResourcesFit"));
  EXPECT_TRUE(r->Has("DefaultBinder"));
  EXPECT_FALSE(r->Has("NodeNumber"));
}

TEST(AppTest, WithPluginAddsToInTree) {
  auto r = NewRegistry({WithPlugin("NodeNumber", NoPlugin), WithPlugin("Other", NoPlugin)});
  ASSERT_TRUE(r.ok()) << r.status().Message();
  EXPECT_TRUE(r->Has("NodeNumber"));
  EXPECT_TRUE(r->Has("Other"));
  EXPECT_TRUE(r->Has("NodeResourcesFit"));
}

TEST(AppTest, DuplicateNamesAreErrors) {
  struct Case {
    const char* name;
    std::vector<Option> options;
    std::string want;
  };
  const Case cases[] = {
      {"shadows an in-tree plugin",
       {WithPlugin("NodeResourcesFit", NoPlugin)},
       "out-of-tree plugin NodeResourcesFit: a plugin named NodeResourcesFit already exists"},
      {"registered twice",
       {WithPlugin("NodeNumber", NoPlugin), WithPlugin("NodeNumber", NoPlugin)},
       "out-of-tree plugin NodeNumber: a plugin named NodeNumber already exists"},
      {"empty name", {WithPlugin("", NoPlugin)}, "out-of-tree plugin with an empty name"},
      {"no factory",
       {WithPlugin("NodeNumber", nullptr)},
       "out-of-tree plugin NodeNumber: no factory"},
  };
  for (const auto& c : cases) {
    auto r = NewRegistry(c.options);
    ASSERT_FALSE(r.ok()) << c.name;
    EXPECT_TRUE(r.status().IsError()) << c.name;
    EXPECT_EQ(r.status().Message(), c.want) << c.name;
  }
}

int RunArgs(std::vector<std::string> args, std::vector<Option> options) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return Run(static_cast<int>(argv.size()), argv.data(), std::move(options));
}

TEST(AppTest, RunFailsOnDuplicateBeforeLoadingAnything) {
  // The scenario does not exist: exit 1 must come from the registry, checked first.
  testing::internal::CaptureStderr();
  int code = RunArgs({"phalanx", "simulate", "/does/not/exist.yaml", "--no-progress"},
                     {WithPlugin("NodeResourcesFit", NoPlugin)});
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(code, 1);
  EXPECT_EQ(err,
            "phalanx: error: out-of-tree plugin NodeResourcesFit: a plugin named "
            "NodeResourcesFit already exists\n");
}

TEST(AppTest, VersionIgnoresOptions) {
  testing::internal::CaptureStdout();
  int code = RunArgs({"phalanx", "version"}, {WithPlugin("NodeResourcesFit", NoPlugin)});
  std::string out = testing::internal::GetCapturedStdout();
  EXPECT_EQ(code, 0);
  EXPECT_EQ(out.rfind("phalanx ", 0), 0u) << out;
}

}  // namespace
}  // namespace phalanx::app
