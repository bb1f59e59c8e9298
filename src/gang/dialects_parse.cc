#include "gang/dialects_parse.h"

#include <nlohmann/json.hpp>

#include "api/labels_internal.h"

namespace phalanx::gang::detail {

namespace {

const char* JsonTypeName(const nlohmann::json& v) {
  switch (v.type()) {
    case nlohmann::json::value_t::null:
      return "null";
    case nlohmann::json::value_t::object:
      return "an object";
    case nlohmann::json::value_t::array:
      return "an array";
    case nlohmann::json::value_t::boolean:
      return "a boolean";
    case nlohmann::json::value_t::string:
      return "a string";
    default:
      return "a number";
  }
}

}  // namespace

api::StatusOr<std::vector<std::string>> ParseJsonStringArray(std::string_view s) {
  auto fail = [](const std::string& what) {
    return absl::InvalidArgumentError("must be a JSON array of strings: " + what);
  };
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(s.begin(), s.end());
  } catch (const nlohmann::json::parse_error& e) {
    // e.what(): "[json.exception.parse_error.101] parse error at line 1, column 5: ...".
    std::string what = e.what();
    if (const size_t at = what.find("] "); at != std::string::npos) what.erase(0, at + 2);
    return fail(what);
  }
  std::vector<std::string> values;
  if (doc.is_null()) return values;
  if (!doc.is_array()) return fail(std::string("got ") + JsonTypeName(doc));
  values.reserve(doc.size());
  for (size_t i = 0; i < doc.size(); ++i) {
    if (!doc[i].is_string()) {
      return fail("item " + std::to_string(i) + " is " + JsonTypeName(doc[i]));
    }
    values.push_back(doc[i].get<std::string>());
  }
  return values;
}

bool ParseInt64(std::string_view s, int64_t* out) { return api::internal::ParseInt64(s, out); }

bool IsDNS1123Subdomain(std::string_view s) { return api::internal::IsDNS1123Subdomain(s); }

}  // namespace phalanx::gang::detail
