// api::FieldError / FieldErrors: upstream field.Error wording, the list's renderings and
// its Status.
#include "api/field_errors.h"

#include <gtest/gtest.h>

#include <string>

namespace phalanx::api {
namespace {

TEST(FieldErrorTest, BodiesFollowUpstreamWording) {
  EXPECT_EQ(FieldError::Invalid("a.b", "-1", "must be positive").Error(),
            "a.b: Invalid value: -1: must be positive");
  EXPECT_EQ(FieldError::Invalid("a", "\"x\"", "").Error(), "a: Invalid value: \"x\"");
  EXPECT_EQ(FieldError::TypeInvalid("args", "", "must be an object").Error(),
            "args: Invalid value: must be an object");
  EXPECT_EQ(FieldError::Required("spec.x").Error(), "spec.x: Required value");
  EXPECT_EQ(FieldError::Required("spec.x", "can not be empty").Error(),
            "spec.x: Required value: can not be empty");
  EXPECT_EQ(FieldError::Duplicate("p[1]", "\"a\"").Error(), "p[1]: Duplicate value: \"a\"");
  EXPECT_EQ(FieldError::NotSupported("op", "\"Gt\"", {"In", "NotIn"}).Error(),
            "op: Unsupported value: \"Gt\": supported values: \"In\", \"NotIn\"");
  EXPECT_EQ(FieldError::Forbidden("v", "may not be set").Error(), "v: Forbidden: may not be set");
  EXPECT_EQ(FieldError::Message("", "unknown field \"x\"").Error(), "unknown field \"x\"");
}

TEST(FieldErrorTest, FormatNamesSourceAndPosition) {
  FieldError e = FieldError::Invalid("parallelism", "0", "should be greater than zero");
  EXPECT_EQ(e.Format("s.yaml"),
            "s.yaml: parallelism: Invalid value: 0: should be greater than zero");
  e.line = 3;
  e.column = 14;
  EXPECT_EQ(e.Format("s.yaml"),
            "s.yaml:3:14: parallelism: Invalid value: 0: should be greater than zero");
}

TEST(FieldErrorsTest, AggregateJoinSummaryAndStatus) {
  FieldErrors errs("queues.yaml: Queue a");
  EXPECT_TRUE(errs.ToStatus("Args").ok());
  EXPECT_EQ(errs.Summary(), "");
  errs.Invalid("weight", int64_t{-1}, "must be positive");
  EXPECT_EQ(errs.Aggregate(), "weight: Invalid value: -1: must be positive");
  errs.NotSupported("mode", "x", {"a"});
  errs.Add("spec", "must be a map");
  EXPECT_EQ(errs.size(), 3u);
  EXPECT_EQ(errs.Aggregate(),
            "[weight: Invalid value: -1: must be positive, mode: Unsupported value: \"x\": "
            "supported values: \"a\", spec: must be a map]");
  EXPECT_EQ(errs.Summary(),
            "queues.yaml: Queue a: weight: Invalid value: -1: must be positive; mode: "
            "Unsupported value: \"x\": supported values: \"a\"; spec: must be a map");
  const Status s = errs.ToStatus("Args");
  EXPECT_TRUE(absl::IsInvalidArgument(s));
  EXPECT_EQ(std::string(s.message()), "Args: " + errs.Aggregate());
}

TEST(StatusBridgeTest, OkOrMessageAndMoveOrMessage) {
  std::string err = "untouched";
  EXPECT_TRUE(OkOrMessage(absl::OkStatus(), &err));
  EXPECT_EQ(err, "untouched");
  EXPECT_FALSE(OkOrMessage(absl::NotFoundError("x: not found"), &err));
  EXPECT_EQ(err, "x: not found");
  int v = 0;
  EXPECT_TRUE(MoveOrMessage(StatusOr<int>(7), &v, &err));
  EXPECT_EQ(v, 7);
  EXPECT_FALSE(MoveOrMessage(StatusOr<int>(absl::InvalidArgumentError("bad")), &v, nullptr));
  EXPECT_EQ(v, 7);
}

}  // namespace
}  // namespace phalanx::api
