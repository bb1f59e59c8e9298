// Name validation and field-error formatting as the Kubernetes API machinery does it
// (k8s.io/apimachinery/pkg/util/validation and .../validation/field), for plugin args.
#pragma once

#include <string>
#include <string_view>
#include <vector>

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

// An accumulated field.ErrorList. Each entry is "path: body", with bodies formatted as
// upstream's field.Error (Invalid value / Unsupported value / Duplicate value /
// Required value).
class FieldErrors {
 public:
  // "<path>: Invalid value: \"<value>\": <detail>"
  void Invalid(const std::string& path, std::string_view value, std::string_view detail);
  // "<path>: Invalid value: <value>: <detail>"
  void Invalid(const std::string& path, int64_t value, std::string_view detail);
  // "<path>: Unsupported value: \"<value>\": supported values: \"a\", \"b\""
  void NotSupported(const std::string& path, std::string_view value,
                    const std::vector<std::string_view>& supported);
  // "<path>: Duplicate value: \"<value>\""
  void Duplicate(const std::string& path, std::string_view value);
  // "<path>: Required value: <detail>"
  void Required(const std::string& path, std::string_view detail);
  // A pre-formatted message.
  void Add(std::string msg) { errs_.push_back(std::move(msg)); }

  bool empty() const { return errs_.empty(); }
  const std::vector<std::string>& errors() const { return errs_; }
  // Aggregate as upstream utilerrors: one error -> "msg", several -> "[m1, m2]".
  std::string Aggregate() const;
  // Status::Error("<kind>: <aggregate>").
  framework::Status ToStatus(std::string_view kind) const;

 private:
  std::vector<std::string> errs_;
};

}  // namespace phalanx::plugins::helper
