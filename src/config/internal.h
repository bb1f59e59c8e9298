// Internals of the config module (decode, defaulting, validation), exposed for tests.
// Not part of the contract: other modules use config.h.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "api/duration.h"
#include "api/field_errors.h"
#include "config/default_plugins.h"
#include "config/types.h"

namespace YAML {
class Node;
}

namespace phalanx::config::internal {

inline constexpr std::string_view kGroup = "kubescheduler.config.k8s.io";
inline constexpr std::string_view kV1 = "kubescheduler.config.k8s.io/v1";
inline constexpr std::string_view kV1beta3 = "kubescheduler.config.k8s.io/v1beta3";
inline constexpr std::string_view kV1beta2 = "kubescheduler.config.k8s.io/v1beta2";
inline constexpr std::string_view kKind = "KubeSchedulerConfiguration";

// Errors are api::FieldError (apimachinery's field.Error shape: "<path>: <body>", body
// e.g. `Invalid value: 0: should be an integer value greater than zero`) collected in an
// api::FieldErrors; line/column (1-based) are known for decode errors only, and
// FieldError::Format(source) / FieldErrors::FormatAll(source) render the loader's message
// ("<source>:<line>:<column>: <path>: <body>").
using api::FieldError;
using api::FieldErrors;

// field.Invalid / Required / Duplicate / NotSupported wording. `value` is already
// rendered (GoQuote for strings).
inline FieldError Invalid(std::string path, std::string_view value, std::string_view detail) {
  return FieldError::Invalid(std::move(path), std::string(value), detail);
}
inline FieldError Required(std::string path, std::string_view detail = {}) {
  return FieldError::Required(std::move(path), detail);
}
inline FieldError Duplicate(std::string path, std::string_view value) {
  return FieldError::Duplicate(std::move(path), std::string(value));
}
inline FieldError NotSupported(std::string path, std::string_view value,
                               const std::vector<std::string_view>& supported) {
  return FieldError::NotSupported(std::move(path), std::string(value), supported);
}
// Go's %q rendering of a string (api::GoQuote).
using api::GoQuote;

// Go time.ParseDuration (api::ParseGoDuration): nanoseconds, or InvalidArgumentError with
// Go's message, e.g. `time: missing unit in duration "15"`.
using api::ParseGoDuration;
// Go time.Duration.String(): "1m30s", "0s", "-2s", "1.5s".
std::string FormatGoDuration(int64_t nanos);
// FormatGoDuration of whole seconds.
std::string FormatSeconds(int64_t seconds);

// Structural equality of two YAML nodes (maps compared as unordered key sets).
bool YamlEqual(const YAML::Node& a, const YAML::Node& b);

// Output of decoding, before defaulting.
struct Decoded {
  KubeSchedulerConfiguration cfg;
  ApiVersion version = ApiVersion::kV1;
  // Per profile: whether schedulerName was given (upstream's *string != nil).
  std::vector<bool> scheduler_name_set;
};

// Decodes `text` into *out. Fields absent from the text keep upstream's defaults for
// pointer fields (parallelism, backoffs, leaderElect, ...) and zero values for the fields
// upstream defaults when zero (qps, burst, durations, lock names); profiles keep the
// user's plugin sets unmerged. Returns false with the errors (YAML syntax, apiVersion,
// kind, field types) in *errors. Throws nothing.
bool Decode(std::string_view text, Decoded* out, FieldErrors* errors);

// Upstream SetDefaults_KubeSchedulerConfiguration of out->version: one default profile
// when there is none, schedulerName "default-scheduler" for a lone unnamed profile,
// plugins = MergePlugins(DefaultPlugins(version), user's), zero-valued clientConnection
// and leaderElection fields defaulted.
void SetDefaults(Decoded* d);

// Upstream ValidateKubeSchedulerConfiguration (plus component-base's clientConnection and
// leaderElection validation and client-go's renewDeadline/retryPeriod rule). Returns the
// errors in a fixed order; empty when valid.
FieldErrors Validate(const KubeSchedulerConfiguration& cfg);

}  // namespace phalanx::config::internal
