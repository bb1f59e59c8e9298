// Label and node selectors (k8s.io/apimachinery/pkg/labels, component-helpers nodeaffinity).
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "api/status.h"
#include "api/types.h"

namespace phalanx::api {

using Labels = std::map<std::string, std::string>;

// Validates a metav1.LabelSelector as the API server does: operators In/NotIn need
// >=1 value, Exists/DoesNotExist need none; Gt/Lt are NOT allowed here. The first error
// as InvalidArgumentError, e.g. "matchExpressions[0].operator: Unsupported value: \"Gt\"".
Status ValidateLabelSelector(const LabelSelector& sel);

// True when `labels` satisfy `sel` (metav1.LabelSelectorAsSelector semantics: an empty
// selector matches everything). Precondition: sel validated.
bool LabelSelectorMatches(const LabelSelector& sel, const Labels& labels);

// Validates node selector requirements: In/NotIn >=1 value, Exists/DoesNotExist none,
// Gt/Lt exactly one integer value; matchFields only key "metadata.name" with In/NotIn.
// The first error as InvalidArgumentError ("matchExpressions[0].values: Required value: ...").
Status ValidateNodeSelectorTerm(const NodeSelectorTerm& term);

// One requirement against a label map (Gt/Lt compare parsed integers; a non-integer label
// value does not match).
bool NodeSelectorRequirementMatches(const NodeSelectorRequirement& req, const Labels& labels);

// A term matches when all its expressions and fields match; an empty term matches nothing
// (upstream nodeaffinity.nodeSelectorTerms semantics).
bool NodeSelectorTermMatches(const NodeSelectorTerm& term, const Labels& node_labels,
                             std::string_view node_name);

// Terms are ORed. A selector with no terms matches nothing.
bool NodeSelectorMatches(const NodeSelector& sel, const Labels& node_labels,
                         std::string_view node_name);

}  // namespace phalanx::api
