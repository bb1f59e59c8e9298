// Test support for validating what a test's code under test writes against the 1.36
// schemas (schema.h). Header-only; a test binary links phalanx_schema (TEST_DEPS) and
// gets PHALANX_UPSTREAM_DIR from phalanx_module.
//
//   TEST(X, StatusWriteIsValid) {
//     PHALANX_UPSTREAM_SCHEMAS(schemas);  // skips in a user's clone, fails in CI
//     EXPECT_TRUE(phalanx::schema::IsValid(*schemas, body, gvk, WriteKind::kMergePatch));
//   }
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "schema/schema.h"

namespace phalanx::schema {

// The upstream reference data: $PHALANX_UPSTREAM_DIR when set (a copy laid out as
// ../shared/upstream), else the source tree's ../shared/upstream (PHALANX_UPSTREAM_DIR of
// the build).
inline std::string UpstreamDir() {
  if (const char* e = std::getenv("PHALANX_UPSTREAM_DIR"); e && *e) return e;
  return PHALANX_UPSTREAM_DIR;
}

}  // namespace phalanx::schema

// Declares `const phalanx::schema::SchemaSet* var`: the OpenAPI documents of
// ../shared/upstream/openapi-v3-v1.36 and every CRD under ../shared/upstream/crds
// (UpstreamDir() below).
// Without ../shared/upstream the test is skipped, saying so, except under CI=true where it
// fails.
#define PHALANX_UPSTREAM_SCHEMAS(var)                                                      \
  const ::phalanx::schema::SchemaSet* var = nullptr;                                       \
  do {                                                                                     \
    const std::string phalanx_upstream_dir_ = ::phalanx::schema::UpstreamDir();            \
    if (!std::filesystem::exists(phalanx_upstream_dir_ + "/openapi-v3-v1.36")) {           \
      const char* ci = std::getenv("CI");                                                  \
      if (ci && std::string(ci) == "true") {                                               \
        FAIL() << "upstream schemas missing in CI: " << phalanx_upstream_dir_;             \
      }                                                                                    \
      GTEST_SKIP() << "needs ../shared/upstream (" << phalanx_upstream_dir_                \
                   << "); not in a user's clone";                                          \
    }                                                                                      \
    auto phalanx_schemas_ = ::phalanx::schema::SchemaSet::Upstream(phalanx_upstream_dir_); \
    ASSERT_TRUE(phalanx_schemas_.ok()) << phalanx_schemas_.status();                       \
    var = *phalanx_schemas_;                                                               \
  } while (0)

namespace phalanx::schema {

// Success when `body` validates as `gvk` written as `kind`; else a failure listing every
// violation and the body.
inline ::testing::AssertionResult IsValid(const SchemaSet& set, const nlohmann::json& body,
                                          const GroupVersionKind& gvk,
                                          WriteKind kind = WriteKind::kObject) {
  const Result r = set.Validate(body, gvk, kind);
  if (r.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << gvk.String() << " body is invalid:\n"
                                       << r.ToString() << "body: " << body.dump();
}

// The same for a merge patch applied to `base` (both the patch and the result checked).
inline ::testing::AssertionResult IsValidMergePatch(const SchemaSet& set,
                                                    const nlohmann::json& base,
                                                    const nlohmann::json& patch,
                                                    const GroupVersionKind& gvk) {
  const Result r = set.ValidateMergePatched(base, patch, gvk);
  if (r.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << gvk.String() << " merge patch is invalid:\n"
                                       << r.ToString() << "patch: " << patch.dump();
}

}  // namespace phalanx::schema
