// metav1.Time on the wire (k8s.io/apimachinery/pkg/apis/meta/v1 time.go): RFC 3339.
#pragma once

#include <string>
#include <string_view>

#include "api/types.h"

namespace phalanx::api {

// "2006-01-02T15:04:05Z" with optional fractional seconds and offset, into nanoseconds
// since the epoch; false when malformed or outside the int64 nanosecond range (years
// 1678..2261).
bool ParseRFC3339Time(std::string_view text, Timestamp* out);
// Whole seconds in UTC ("2023-11-14T22:13:20Z"), as metav1.Time marshals (the fraction is
// dropped, rounding down).
std::string FormatRFC3339(Timestamp t);

}  // namespace phalanx::api
