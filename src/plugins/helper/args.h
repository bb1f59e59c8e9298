// Decoding of plugin args (pluginConfig[].args) from YAML. yaml-cpp stays behind this
// header: callers pass `const YAML::Node&` obtained in their own .cc files.
//
// Decoding is strict like upstream's (unknown fields are errors, "kind"/"apiVersion" are
// accepted and checked); type errors and unknown fields are recorded into FieldErrors
// with the field path, e.g. `scoringStrategy.resources[0].weight: Invalid value: "x":
// must be an integer`.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "api/types.h"
#include "plugins/helper/validation.h"

namespace YAML {
class Node;
}

namespace phalanx::plugins::helper {

// Checks the args document: nullptr / null / empty map -> true with *has_content false.
// A map whose `kind` differs from `kind` is an error ("want args of kind X, got Y"), as is
// a non-map document or a key outside `known` (besides kind and apiVersion).
bool CheckArgsMap(const YAML::Node* args, std::string_view kind,
                  std::initializer_list<std::string_view> known, FieldErrors* errs,
                  bool* has_content);
bool CheckArgsMap(const YAML::Node* args, std::string_view kind,
                  std::span<const std::string_view> known, FieldErrors* errs, bool* has_content);

// Checks that a nested node is a map with keys among `known`; null/undefined -> false
// without error.
bool CheckMap(const YAML::Node& n, const std::string& path,
              std::initializer_list<std::string_view> known, FieldErrors* errs);

// Scalar readers: an undefined or null node leaves *out untouched and returns true;
// a wrong type records an error and returns false.
bool ReadInt(const YAML::Node& n, const std::string& path, int64_t* out, FieldErrors* errs);
// One integer field of `kind`'s args (e.g. "GangReservationArgs"), at least `min`: else
// Error "<kind>: <field>: Invalid value: <v>: must be greater than or equal to <min>". A
// value that is not an integer throws YAML::Exception, which the caller's loop over the
// args catches and reports as "<kind>: <what>".
framework::Status ReadIntAtLeast(std::string_view kind, const YAML::Node& v,
                                 const std::string& field, int64_t min, int64_t* out);

// One integer field of an args kind: its name, its minimum, and what takes the value.
struct IntArg {
  const char* name;
  int64_t min;
  std::function<void(int64_t)> set;
};
// Strict decoding of args whose fields are all integers: CheckArgsMap with their names, then
// for each field present ReadIntAtLeast and its `set`. Success (args nullptr or empty: no
// `set` is called), or the Error naming the kind and the field.
framework::Status ReadIntArgs(const YAML::Node* args, std::string_view kind,
                              const std::vector<IntArg>& fields);
bool ReadString(const YAML::Node& n, const std::string& path, std::string* out, FieldErrors* errs);
bool ReadStringList(const YAML::Node& n, const std::string& path, std::vector<std::string>* out,
                    FieldErrors* errs);
// A finite number >= 0 (a YAML scalar such as 0.5 or "2"); else `<path>: Invalid value:
// "<text>": must be a number >= 0`.
bool ReadNonNegativeNumber(const YAML::Node& n, const std::string& path, double* out,
                           FieldErrors* errs);

// v1.NodeSelectorTerm / v1.NodeSelector / []v1.PreferredSchedulingTerm in API field
// names (matchExpressions, matchFields, key, operator, values, nodeSelectorTerms, weight,
// preference). Only decoding; semantic validation is api::ValidateNodeSelectorTerm.
bool ReadNodeSelectorTerm(const YAML::Node& n, const std::string& path, api::NodeSelectorTerm* out,
                          FieldErrors* errs);
bool ReadNodeSelector(const YAML::Node& n, const std::string& path, api::NodeSelector* out,
                      FieldErrors* errs);
bool ReadPreferredSchedulingTerms(const YAML::Node& n, const std::string& path,
                                  std::vector<api::PreferredSchedulingTerm>* out,
                                  FieldErrors* errs);

}  // namespace phalanx::plugins::helper
