// Go-compatible parsing of durations and quoting of strings, for the configuration
// formats that come from Go programs (KubeSchedulerConfiguration leader election
// durations, Koordinator waiting-time annotations, ...).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "api/status.h"

namespace phalanx::api {

// Go time.ParseDuration: "[-+]?([0-9]*(\.[0-9]*)?(ns|us|µs|μs|ms|s|m|h))+" or "0", into
// nanoseconds. InvalidArgumentError with Go's message, e.g. `time: invalid duration "1d"`
// or `time: unknown unit "d" in duration "1d"`.
StatusOr<int64_t> ParseGoDuration(std::string_view text);

// Go strconv.Quote for the ASCII/UTF-8 strings in error messages: `"a\"b"`.
std::string GoQuote(std::string_view s);

}  // namespace phalanx::api
