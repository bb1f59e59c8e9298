// Field errors in the shape of Kubernetes' k8s.io/apimachinery/pkg/util/validation/field
// (field.Error / field.ErrorList): the one collector of validation errors for manifests
// (api/decode), the scheduler configuration (config), plugin args (plugins/helper) and
// queue objects (quota).
//
// A FieldError renders as upstream's Error(): "<field>: <body>", the body by type:
//   Invalid       "Invalid value: <value>: <detail>"
//   TypeInvalid   "Invalid value: <value>: <detail>"
//   Required      "Required value: <detail>"        ("Required value" without detail)
//   Duplicate     "Duplicate value: <value>"
//   NotSupported  "Unsupported value: <value>: supported values: \"a\", \"b\""
//   Forbidden     "Forbidden: <detail>"
//   Message       "<detail>"
// An empty value is left out with its separator ("Invalid value: must be a list"); an
// empty detail likewise. `value` is stored as rendered (Go's %q for strings, %v for
// numbers: see GoQuote) so that messages stay byte-identical to upstream's.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "api/duration.h"  // GoQuote
#include "api/status.h"

namespace phalanx::api {

// field.ErrorType.
// kMessage is not upstream's: a decoder's message outside field.Error's wording (strict
// decoding: `unknown field "x"`, `expected integer, got "a"`), rendered as `detail`.
enum class FieldErrorType {
  kInvalid,
  kTypeInvalid,
  kRequired,
  kDuplicate,
  kNotSupported,
  kForbidden,
  kMessage,
};

// One field.Error, optionally located in its source text.
struct FieldError {
  FieldErrorType type = FieldErrorType::kInvalid;
  std::string field;   // path, e.g. "profiles[0].plugins.score.enabled[1].weight"; "" = none
  std::string value;   // rendered bad value ("\"x\"", "-1"); "" = not shown
  std::string detail;  // why; "" = not shown
  int line = 0;        // 1-based position of the field in the source; 0 = unknown
  int column = 0;

  // The body by type (see the file comment), e.g. `Invalid value: -1: must be positive`.
  std::string Body() const;
  // "<field>: <body>", or the body alone when `field` is empty.
  std::string Error() const;
  // "<source>:<line>:<column>: <field>: <body>", or "<source>: <field>: <body>" when the
  // position is unknown (the config loader's format).
  std::string Format(const std::string& source) const;

  // Constructors by type; `value` is already rendered (GoQuote(s), std::to_string(n)).
  static FieldError Invalid(std::string field, std::string value, std::string_view detail);
  static FieldError TypeInvalid(std::string field, std::string value, std::string_view detail);
  static FieldError Required(std::string field, std::string_view detail = {});
  static FieldError Duplicate(std::string field, std::string value);
  // `supported` are raw values, rendered quoted in the given order.
  static FieldError NotSupported(std::string field, std::string value,
                                 const std::vector<std::string_view>& supported);
  static FieldError Forbidden(std::string field, std::string_view detail);
  static FieldError Message(std::string field, std::string_view detail);
};

// A field.ErrorList. The convenience adders take raw values and render them as upstream's
// field.Invalid(path, value, detail) does: strings quoted (GoQuote), integers as %d.
class FieldErrors {
 public:
  FieldErrors() = default;
  // `origin` names what the errors are about ("queues.yaml: Queue team-a"), for Summary().
  explicit FieldErrors(std::string origin) : origin_(std::move(origin)) {}

  void Add(FieldError e) { errs_.push_back(std::move(e)); }
  // "<field>: <message>" in the message's own wording (kMessage).
  void Add(std::string field, std::string_view message) {
    Add(FieldError::Message(std::move(field), message));
  }
  // A pre-formatted message (kMessage without a field), e.g. `unknown field "args.x"`.
  void Add(std::string message) { Add(FieldError::Message("", message)); }
  void Invalid(const std::string& field, std::string_view value, std::string_view detail);
  void Invalid(const std::string& field, int64_t value, std::string_view detail);
  // A value-less "<field>: Invalid value: <detail>" (e.g. "must be a list").
  void TypeInvalid(const std::string& field, std::string_view detail);
  void NotSupported(const std::string& field, std::string_view value,
                    const std::vector<std::string_view>& supported);
  void Duplicate(const std::string& field, std::string_view value);
  void Required(const std::string& field, std::string_view detail);

  // std::vector-like access, for loops and tests.
  void push_back(FieldError e) { Add(std::move(e)); }
  std::vector<FieldError>::const_iterator begin() const { return errs_.begin(); }
  std::vector<FieldError>::const_iterator end() const { return errs_.end(); }
  const FieldError& operator[](size_t i) const { return errs_[i]; }

  bool empty() const { return errs_.empty(); }
  size_t size() const { return errs_.size(); }
  const std::vector<FieldError>& list() const { return errs_; }
  std::vector<FieldError>& list() { return errs_; }
  // Error() of every entry.
  std::vector<std::string> Errors() const;

  // Aggregate as upstream utilerrors.NewAggregate: one error -> "e", several -> "[e1, e2]".
  std::string Aggregate() const;
  // The Error()s joined with `sep`.
  std::string Join(std::string_view sep) const;
  // Format(source) of every entry joined with '\n' (the config loader's message).
  std::string FormatAll(const std::string& source) const;
  // "<origin>: <e1>; <e2>", or "" when empty (the `invalid` text of gang and queue specs).
  std::string Summary() const;

  // OK when empty, else InvalidArgumentError("<prefix>: <Aggregate()>") — `prefix` names
  // the file, object or args kind (e.g. "NodeResourcesFitArgs"); "" = no prefix.
  Status ToStatus(std::string_view prefix) const;

 private:
  std::string origin_;
  std::vector<FieldError> errs_;
};

}  // namespace phalanx::api
