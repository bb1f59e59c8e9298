// Small, strict value parsers used by the gang dialect adapters (dialects.cc): the value
// syntaxes the dialects' own controllers accept (Go time.ParseDuration, encoding/json
// []string, strconv.ParseInt base 10, RFC 1123 subdomain names). None of them throws.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "api/duration.h"
#include "api/status.h"

namespace phalanx::gang::detail {

// Go time.ParseDuration: "[-+]?([0-9]*(\.[0-9]*)?(ns|us|µs|μs|ms|s|m|h))+" or "0", in
// nanoseconds. Examples: "300ms", "1.5h", "2h45m", "-1m", "0". Out of int64 range is an
// error. InvalidArgumentError with Go's message (`time: invalid duration "1d"`).
using api::ParseGoDuration;

// A JSON array of strings, e.g. `["ns-a/gang-a", "ns-b/gang-b"]`, decoded by nlohmann-json
// (RFC 8259: standard escapes, \uXXXX incl. surrogate pairs, no trailing commas). `null`
// is accepted as an empty array, as Go's json.Unmarshal into a []string does.
// InvalidArgumentError "must be a JSON array of strings: <what>", where <what> is the
// parser's message (with the byte offset) or "item 1 is a number".
api::StatusOr<std::vector<std::string>> ParseJsonStringArray(std::string_view text);

// Decimal integer (optional sign, no spaces, no fraction) that fits in int64, as Go's
// strconv.ParseInt(s, 10, 64) (api's validation helper).
[[nodiscard]] bool ParseInt64(std::string_view text, int64_t* out);

// RFC 1123 subdomain as Kubernetes validates names (at most 253 characters; api's
// validation helper).
bool IsDNS1123Subdomain(std::string_view s);

}  // namespace phalanx::gang::detail
