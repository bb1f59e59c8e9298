// Label selectors (k8s.io/apimachinery/pkg/labels, metav1 validation) and node selectors
// (k8s.io/component-helpers/scheduling/corev1/nodeaffinity, pkg/apis/core/validation).
#include "api/labels.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "api/field_errors.h"
#include "api/labels_internal.h"

namespace phalanx::api {
namespace internal {
namespace {

bool IsAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]
bool MatchesQualifiedNamePart(std::string_view s) {
  if (s.empty() || !IsAlnum(s.front()) || !IsAlnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return IsAlnum(c) || c == '-' || c == '_' || c == '.'; });
}

}  // namespace

// [a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*
bool IsDNS1123Subdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  size_t start = 0;
  while (true) {
    size_t dot = s.find('.', start);
    std::string_view label = s.substr(start, dot == std::string_view::npos ? s.npos : dot - start);
    auto lower_alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
    if (label.empty() || !lower_alnum(label.front()) || !lower_alnum(label.back())) return false;
    for (char c : label) {
      if (!lower_alnum(c) && c != '-') return false;
    }
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

namespace {

constexpr std::string_view kQualifiedNameFmt =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
    "an alphanumeric character (regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

}  // namespace

Status QualifiedNameError(std::string_view name) {
  std::string_view prefix;
  std::string_view part = name;
  const size_t slash = name.find('/');
  if (slash != std::string_view::npos) {
    if (name.find('/', slash + 1) != std::string_view::npos) {
      return absl::InvalidArgumentError(
          "a qualified name " + std::string(kQualifiedNameFmt) +
          " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')");
    }
    prefix = name.substr(0, slash);
    part = name.substr(slash + 1);
    if (prefix.empty()) return absl::InvalidArgumentError("prefix part must be non-empty");
    if (!IsDNS1123Subdomain(prefix)) {
      return absl::InvalidArgumentError(
          "prefix part a lowercase RFC 1123 subdomain must consist of lower case "
          "alphanumeric characters, '-' or '.', and must start and end with an "
          "alphanumeric character (e.g. 'example.com')");
    }
  }
  if (part.empty()) return absl::InvalidArgumentError("name part must be non-empty");
  if (part.size() > 63)
    return absl::InvalidArgumentError("name part must be no more than 63 characters");
  if (!MatchesQualifiedNamePart(part))
    return absl::InvalidArgumentError("name part " + std::string(kQualifiedNameFmt));
  return absl::OkStatus();
}

Status LabelValueError(std::string_view value) {
  if (value.size() > 63) return absl::InvalidArgumentError("must be no more than 63 characters");
  if (!value.empty() && !MatchesQualifiedNamePart(value)) {
    return absl::InvalidArgumentError(
        "a valid label must be an empty string or consist of alphanumeric characters, "
        "'-', '_' or '.', and must start and end with an alphanumeric character");
  }
  return absl::OkStatus();
}

bool ParseInt64(std::string_view s, int64_t* out) {
  bool neg = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return false;
  unsigned __int128 v = 0;
  constexpr unsigned __int128 kMaxMagnitude = static_cast<unsigned __int128>(INT64_MAX) + 1;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<unsigned>(c - '0');
    if (v > kMaxMagnitude) return false;
  }
  if (!neg && v == kMaxMagnitude) return false;
  *out = neg ? static_cast<int64_t>(-static_cast<__int128>(v)) : static_cast<int64_t>(v);
  return true;
}

// The api::FieldError wording, with values quoted as given (no escaping).
std::string FieldInvalid(std::string_view path, std::string_view value, std::string_view detail) {
  return FieldError::Invalid(std::string(path), "\"" + std::string(value) + "\"", detail).Error();
}

std::string FieldRequired(std::string_view path, std::string_view detail) {
  return FieldError::Required(std::string(path), detail).Error();
}

std::string FieldForbidden(std::string_view path, std::string_view detail) {
  return FieldError::Forbidden(std::string(path), detail).Error();
}

std::string FieldNotSupported(std::string_view path, std::string_view value,
                              std::initializer_list<std::string_view> supported) {
  return FieldError::NotSupported(std::string(path), "\"" + std::string(value) + "\"",
                                  std::vector<std::string_view>(supported))
      .Error();
}

std::string Child(std::string_view path, std::string_view name) {
  if (path.empty()) return std::string(name);
  std::string s(path);
  s += '.';
  s += name;
  return s;
}

std::string Index(std::string_view path, size_t i) {
  return std::string(path) + "[" + std::to_string(i) + "]";
}

}  // namespace internal

namespace {

using internal::Child;
using internal::Index;

Status SetError(std::string msg) { return absl::InvalidArgumentError(msg); }

bool Contains(const std::vector<std::string>& values, std::string_view v) {
  return std::find(values.begin(), values.end(), v) != values.end();
}

// Shared by label-selector and node-selector requirements: key syntax and label values.
Status ValidateKeyAndValues(const std::string& key, const std::vector<std::string>& values,
                            const std::string& path) {
  if (api::Status msg = internal::QualifiedNameError(key); !msg.ok()) {
    return SetError(internal::FieldInvalid(Child(path, "key"), key, std::string(msg.message())));
  }
  for (size_t i = 0; i < values.size(); ++i) {
    if (api::Status msg = internal::LabelValueError(values[i]); !msg.ok()) {
      return SetError(internal::FieldInvalid(Index(Child(path, "values"), i), values[i],
                                             std::string(msg.message())));
    }
  }
  return absl::OkStatus();
}

// labels.Requirement.Matches for the set-based operators (and Gt/Lt).
bool RequirementMatches(std::string_view op, const std::string& key,
                        const std::vector<std::string>& values, const Labels& labels) {
  // Malformed requirements fail labels.NewRequirement upstream and so never match.
  if ((op == "In" || op == "NotIn") && values.empty()) return false;
  if ((op == "Exists" || op == "DoesNotExist") && !values.empty()) return false;
  auto it = labels.find(key);
  const bool has = it != labels.end();
  if (op == "In") return has && Contains(values, it->second);
  if (op == "NotIn") return !has || !Contains(values, it->second);
  if (op == "Exists") return has;
  if (op == "DoesNotExist") return !has;
  if (op == "Gt" || op == "Lt") {
    if (!has || values.size() != 1) return false;
    int64_t label_value = 0;
    int64_t bound = 0;
    if (!internal::ParseInt64(it->second, &label_value) ||
        !internal::ParseInt64(values[0], &bound)) {
      return false;
    }
    return op == "Gt" ? label_value > bound : label_value < bound;
  }
  return false;
}

Status ValidateNodeSelectorRequirement(const NodeSelectorRequirement& req,
                                       const std::string& path) {
  const std::string& op = req.op;
  if (op == "In" || op == "NotIn") {
    if (req.values.empty()) {
      return SetError(internal::FieldRequired(
          Child(path, "values"), "must be specified when `operator` is 'In' or 'NotIn'"));
    }
  } else if (op == "Exists" || op == "DoesNotExist") {
    if (!req.values.empty()) {
      return SetError(
          internal::FieldForbidden(Child(path, "values"),
                                   "may not be specified when `operator` is 'Exists' or "
                                   "'DoesNotExist'"));
    }
  } else if (op == "Gt" || op == "Lt") {
    if (req.values.size() != 1) {
      return SetError(
          internal::FieldRequired(Child(path, "values"),
                                  "must be specified single value when `operator` is 'Lt' or "
                                  "'Gt'"));
    }
    int64_t unused = 0;
    if (!internal::ParseInt64(req.values[0], &unused)) {
      return SetError(
          internal::FieldInvalid(Index(Child(path, "values"), 0), req.values[0],
                                 "for 'Gt', 'Lt' operators, the value must be an integer"));
    }
  } else {
    return SetError(
        internal::FieldInvalid(Child(path, "operator"), op, "not a valid selector operator"));
  }
  return ValidateKeyAndValues(req.key, req.values, path);
}

Status ValidateNodeFieldSelectorRequirement(const NodeSelectorRequirement& req,
                                            const std::string& path) {
  if (req.op == "In" || req.op == "NotIn") {
    if (req.values.size() != 1) {
      return SetError(
          internal::FieldRequired(Child(path, "values"),
                                  "must be only one value when `operator` is 'In' or 'NotIn' for "
                                  "node field selector"));
    }
  } else {
    return SetError(
        internal::FieldInvalid(Child(path, "operator"), req.op, "not a valid selector operator"));
  }
  if (req.key != "metadata.name") {
    return SetError(
        internal::FieldInvalid(Child(path, "key"), req.key, "not a valid field selector key"));
  }
  for (size_t i = 0; i < req.values.size(); ++i) {  // ValidateNodeName
    if (!internal::IsDNS1123Subdomain(req.values[i])) {
      return SetError(
          internal::FieldInvalid(Index(Child(path, "values"), i), req.values[i],
                                 "a lowercase RFC 1123 subdomain must consist of lower case "
                                 "alphanumeric characters, '-' or '.', and must start and end "
                                 "with an alphanumeric character"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

Status ValidateLabelSelector(const LabelSelector& sel) {
  for (const auto& [key, value] : sel.match_labels) {
    const std::string path = Child("matchLabels", key);
    if (api::Status msg = internal::QualifiedNameError(key); !msg.ok()) {
      return SetError(internal::FieldInvalid(path, key, std::string(msg.message())));
    }
    if (api::Status msg = internal::LabelValueError(value); !msg.ok()) {
      return SetError(internal::FieldInvalid(path, value, std::string(msg.message())));
    }
  }
  for (size_t i = 0; i < sel.match_expressions.size(); ++i) {
    const LabelSelectorRequirement& req = sel.match_expressions[i];
    const std::string path = Index("matchExpressions", i);
    if (req.op == "In" || req.op == "NotIn") {
      if (req.values.empty()) {
        return SetError(internal::FieldRequired(
            Child(path, "values"), "must be specified when `operator` is 'In' or 'NotIn'"));
      }
    } else if (req.op == "Exists" || req.op == "DoesNotExist") {
      if (!req.values.empty()) {
        return SetError(
            internal::FieldForbidden(Child(path, "values"),
                                     "may not be specified when `operator` is 'Exists' or "
                                     "'DoesNotExist'"));
      }
    } else {
      return SetError(internal::FieldNotSupported(Child(path, "operator"), req.op,
                                                  {"DoesNotExist", "Exists", "In", "NotIn"}));
    }
    if (Status st = ValidateKeyAndValues(req.key, req.values, path); !st.ok()) return st;
  }
  return absl::OkStatus();
}

bool LabelSelectorMatches(const LabelSelector& sel, const Labels& labels) {
  for (const auto& [key, value] : sel.match_labels) {
    auto it = labels.find(key);
    if (it == labels.end() || it->second != value) return false;
  }
  for (const auto& req : sel.match_expressions) {
    // Gt/Lt are invalid here (validation rejects them); treat them as non-matching.
    if (req.op == "Gt" || req.op == "Lt") return false;
    if (!RequirementMatches(req.op, req.key, req.values, labels)) return false;
  }
  return true;
}

Status ValidateNodeSelectorTerm(const NodeSelectorTerm& term) {
  for (size_t i = 0; i < term.match_expressions.size(); ++i) {
    Status st =
        ValidateNodeSelectorRequirement(term.match_expressions[i], Index("matchExpressions", i));
    if (!st.ok()) return st;
  }
  for (size_t i = 0; i < term.match_fields.size(); ++i) {
    Status st = ValidateNodeFieldSelectorRequirement(term.match_fields[i], Index("matchFields", i));
    if (!st.ok()) return st;
  }
  return absl::OkStatus();
}

bool NodeSelectorRequirementMatches(const NodeSelectorRequirement& req, const Labels& labels) {
  return RequirementMatches(req.op, req.key, req.values, labels);
}

bool NodeSelectorTermMatches(const NodeSelectorTerm& term, const Labels& node_labels,
                             std::string_view node_name) {
  // An empty term selects no objects (nodeaffinity.nodeSelectorTerms.Match skips it).
  if (term.match_expressions.empty() && term.match_fields.empty()) return false;
  for (const auto& req : term.match_expressions) {
    if (!NodeSelectorRequirementMatches(req, node_labels)) return false;
  }
  for (const auto& req : term.match_fields) {
    // Only metadata.name is a valid node field; In/NotIn against the node's name.
    if (req.key != "metadata.name") return false;
    const bool in = Contains(req.values, node_name);
    if (req.op == "In") {
      if (!in) return false;
    } else if (req.op == "NotIn") {
      if (in) return false;
    } else {
      return false;
    }
  }
  return true;
}

bool NodeSelectorMatches(const NodeSelector& sel, const Labels& node_labels,
                         std::string_view node_name) {
  return std::any_of(sel.node_selector_terms.begin(), sel.node_selector_terms.end(),
                     [&](const NodeSelectorTerm& t) {
                       return NodeSelectorTermMatches(t, node_labels, node_name);
                     });
}

}  // namespace phalanx::api
