// Name validation and field-error formatting as the Kubernetes API machinery does it
// (k8s.io/apimachinery/pkg/util/validation and .../validation/field), for plugin args.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "api/field_errors.h"
#include "framework/status.h"

namespace phalanx::plugins::helper {

// Error strings of validation.IsQualifiedName ("name part must be non-empty", ...);
// empty when `value` is a valid qualified name (optional DNS-1123 subdomain prefix and
// '/', then a name of <= 63 chars matching ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]).
std::vector<std::string> IsQualifiedName(std::string_view value);

// v1helper.IsExtendedResourceName: contains '/', not in the kubernetes.io/ namespace,
// no "requests." prefix, and "requests.<name>" is a qualified name.
bool IsExtendedResourceName(std::string_view name);

// schedutil.IsScalarResourceName: extended resources, hugepages-*, names in the
// kubernetes.io/ namespace and attachable-volumes-*. Stricter than api::IsScalarResourceName
// (which accepts any other name): NodeResourcesFit checks, and the scorers count, only these.
bool IsScalarResourceName(std::string_view name);

// Plugin args errors are an api::FieldErrors (field.ErrorList, upstream's wording).
using FieldErrors = api::FieldErrors;

// The plugin result for args errors: Status::Error("<kind>: <errs.Aggregate()>"), e.g.
// "NodeResourcesFitArgs: scoringStrategy.type: Unsupported value: \"X\": ...". `errs`
// must not be empty.
framework::Status ArgsError(const FieldErrors& errs, std::string_view kind);

}  // namespace phalanx::plugins::helper
