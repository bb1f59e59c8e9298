#include "api/field_errors.h"

#include <utility>

namespace phalanx::api {

namespace {

// "<head>: <value>: <detail>" with empty parts (and their separators) left out.
std::string Join3(std::string_view head, std::string_view value, std::string_view detail) {
  std::string out(head);
  if (!value.empty()) {
    out += ": ";
    out += value;
  }
  if (!detail.empty()) {
    out += ": ";
    out += detail;
  }
  return out;
}

}  // namespace

std::string FieldError::Body() const {
  switch (type) {
    case FieldErrorType::kInvalid:
    case FieldErrorType::kTypeInvalid:
      return Join3("Invalid value", value, detail);
    case FieldErrorType::kRequired:
      return Join3("Required value", "", detail);
    case FieldErrorType::kDuplicate:
      return Join3("Duplicate value", value, "");
    case FieldErrorType::kNotSupported:
      return Join3("Unsupported value", value, detail);
    case FieldErrorType::kForbidden:
      return Join3("Forbidden", "", detail);
    case FieldErrorType::kMessage:
      return detail;
  }
  return detail;
}

std::string FieldError::Error() const {
  if (field.empty()) return Body();
  return field + ": " + Body();
}

std::string FieldError::Format(const std::string& source) const {
  std::string out = source;
  if (line > 0) out += ":" + std::to_string(line) + ":" + std::to_string(column);
  out += ": ";
  out += Error();
  return out;
}

FieldError FieldError::Invalid(std::string field, std::string value, std::string_view detail) {
  return {FieldErrorType::kInvalid, std::move(field), std::move(value), std::string(detail)};
}

FieldError FieldError::TypeInvalid(std::string field, std::string value, std::string_view detail) {
  return {FieldErrorType::kTypeInvalid, std::move(field), std::move(value), std::string(detail)};
}

FieldError FieldError::Required(std::string field, std::string_view detail) {
  return {FieldErrorType::kRequired, std::move(field), "", std::string(detail)};
}

FieldError FieldError::Duplicate(std::string field, std::string value) {
  return {FieldErrorType::kDuplicate, std::move(field), std::move(value), ""};
}

FieldError FieldError::NotSupported(std::string field, std::string value,
                                    const std::vector<std::string_view>& supported) {
  std::string detail;
  if (!supported.empty()) {
    detail = "supported values: ";
    for (size_t i = 0; i < supported.size(); ++i) {
      if (i > 0) detail += ", ";
      detail += GoQuote(supported[i]);
    }
  }
  return {FieldErrorType::kNotSupported, std::move(field), std::move(value), std::move(detail)};
}

FieldError FieldError::Forbidden(std::string field, std::string_view detail) {
  return {FieldErrorType::kForbidden, std::move(field), "", std::string(detail)};
}

FieldError FieldError::Message(std::string field, std::string_view detail) {
  return {FieldErrorType::kMessage, std::move(field), "", std::string(detail)};
}

void FieldErrors::Invalid(const std::string& field, std::string_view value,
                          std::string_view detail) {
  Add(FieldError::Invalid(field, GoQuote(value), detail));
}

void FieldErrors::Invalid(const std::string& field, int64_t value, std::string_view detail) {
  Add(FieldError::Invalid(field, std::to_string(value), detail));
}

void FieldErrors::TypeInvalid(const std::string& field, std::string_view detail) {
  Add(FieldError::TypeInvalid(field, "", detail));
}

void FieldErrors::NotSupported(const std::string& field, std::string_view value,
                               const std::vector<std::string_view>& supported) {
  Add(FieldError::NotSupported(field, GoQuote(value), supported));
}

void FieldErrors::Duplicate(const std::string& field, std::string_view value) {
  Add(FieldError::Duplicate(field, GoQuote(value)));
}

void FieldErrors::Required(const std::string& field, std::string_view detail) {
  Add(FieldError::Required(field, detail));
}

std::vector<std::string> FieldErrors::Errors() const {
  std::vector<std::string> out;
  out.reserve(errs_.size());
  for (const FieldError& e : errs_) out.push_back(e.Error());
  return out;
}

std::string FieldErrors::Aggregate() const {
  if (errs_.size() == 1) return errs_[0].Error();
  return "[" + Join(", ") + "]";
}

std::string FieldErrors::Join(std::string_view sep) const {
  std::string out;
  for (size_t i = 0; i < errs_.size(); ++i) {
    if (i > 0) out += sep;
    out += errs_[i].Error();
  }
  return out;
}

std::string FieldErrors::FormatAll(const std::string& source) const {
  std::string out;
  for (size_t i = 0; i < errs_.size(); ++i) {
    if (i > 0) out += '\n';
    out += errs_[i].Format(source);
  }
  return out;
}

std::string FieldErrors::Summary() const {
  if (errs_.empty()) return {};
  return origin_ + ": " + Join("; ");
}

Status FieldErrors::ToStatus(std::string_view prefix) const {
  if (errs_.empty()) return absl::OkStatus();
  std::string msg(prefix);
  if (!msg.empty()) msg += ": ";
  msg += Aggregate();
  return absl::InvalidArgumentError(msg);
}

}  // namespace phalanx::api
