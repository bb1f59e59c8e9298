// Internal to src/api: Kubernetes name/value validation and field-error formatting
// (k8s.io/apimachinery/pkg/util/validation and .../validation/field), shared by
// labels.cc and decode.cc.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include "api/status.h"

namespace phalanx::api::internal {

// IsQualifiedName (label keys, taint/toleration keys): OK when valid, else
// InvalidArgument with the reason as its message, upstream's wording, e.g. "name part must
// be no more than 63 characters".
Status QualifiedNameError(std::string_view name);
// IsValidLabelValue: OK when valid (empty is valid), else InvalidArgument with the reason,
// e.g. "must be no more than 63 characters".
Status LabelValueError(std::string_view value);
// IsDNS1123Subdomain (object names such as node names), at most 253 characters.
bool IsDNS1123Subdomain(std::string_view s);
// strconv.ParseInt(s, 10, 64): optional sign then decimal digits, no overflow.
bool ParseInt64(std::string_view s, int64_t* out);

// field.Error texts: "<path>: Invalid value: \"v\": <detail>" and friends.
std::string FieldInvalid(std::string_view path, std::string_view value, std::string_view detail);
std::string FieldRequired(std::string_view path, std::string_view detail);
std::string FieldForbidden(std::string_view path, std::string_view detail);
std::string FieldNotSupported(std::string_view path, std::string_view value,
                              std::initializer_list<std::string_view> supported);
// Joins field paths: Child("spec", "containers") == "spec.containers"; Child("", x) == x.
std::string Child(std::string_view path, std::string_view name);
std::string Index(std::string_view path, size_t i);

}  // namespace phalanx::api::internal
