#include "api/duration.h"

#include <cstdint>
#include <utility>

namespace phalanx::api {

std::string GoQuote(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\a':
        out += "\\a";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\v':
        out += "\\v";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          out += "\\x";
          out += kHex[c >> 4];
          out += kHex[c & 0xf];
        } else {
          out += static_cast<char>(c);  // UTF-8 bytes pass through
        }
    }
  }
  out += '"';
  return out;
}

// ---- Go durations (time.ParseDuration) ----

namespace {

constexpr uint64_t kNanosecond = 1;
constexpr uint64_t kMicrosecond = 1000 * kNanosecond;
constexpr uint64_t kMillisecond = 1000 * kMicrosecond;
constexpr uint64_t kSecond = 1000 * kMillisecond;
constexpr uint64_t kMinute = 60 * kSecond;
constexpr uint64_t kHour = 60 * kMinute;
constexpr uint64_t kMaxMagnitude = uint64_t{1} << 63;

bool UnitValue(std::string_view unit, uint64_t* value) {
  static const std::pair<std::string_view, uint64_t> kUnits[] = {
      {"ns", kNanosecond},
      {"us", kMicrosecond},
      {"\xC2\xB5s", kMicrosecond},  // U+00B5
      {"\xCE\xBCs", kMicrosecond},  // U+03BC
      {"ms", kMillisecond},
      {"s", kSecond},
      {"m", kMinute},
      {"h", kHour},
  };
  for (const auto& [name, v] : kUnits) {
    if (name == unit) {
      *value = v;
      return true;
    }
  }
  return false;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

StatusOr<int64_t> ParseGoDuration(std::string_view text) {
  const Status invalid = absl::InvalidArgumentError("time: invalid duration " + GoQuote(text));
  std::string_view s = text;
  bool neg = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s == "0") {
    return int64_t{0};
  }
  if (s.empty()) {
    return invalid;
  }
  uint64_t total = 0;
  while (!s.empty()) {
    if (!(s[0] == '.' || IsDigit(s[0]))) {
      return invalid;
    }
    // Integer part.
    uint64_t v = 0;
    size_t i = 0;
    for (; i < s.size() && IsDigit(s[i]); ++i) {
      if (v > (kMaxMagnitude - 1) / 10) {  // overflow
        return invalid;
      }
      v = v * 10 + static_cast<uint64_t>(s[i] - '0');
      if (v > kMaxMagnitude) {
        return invalid;
      }
    }
    const bool pre = i > 0;
    s.remove_prefix(i);
    // Fraction part.
    uint64_t f = 0;
    double scale = 1;
    bool post = false;
    if (!s.empty() && s[0] == '.') {
      s.remove_prefix(1);
      size_t j = 0;
      bool overflow = false;
      for (; j < s.size() && IsDigit(s[j]); ++j) {
        if (overflow) continue;
        if (f > (kMaxMagnitude - 1) / 10) {
          overflow = true;  // ignore further digits, as Go does
          continue;
        }
        uint64_t y = f * 10 + static_cast<uint64_t>(s[j] - '0');
        if (y > kMaxMagnitude) {
          overflow = true;
          continue;
        }
        f = y;
        scale *= 10;
      }
      post = j > 0;
      s.remove_prefix(j);
    }
    if (!pre && !post) {
      return invalid;
    }
    // Unit.
    size_t k = 0;
    for (; k < s.size() && s[k] != '.' && !IsDigit(s[k]); ++k) {
    }
    if (k == 0) {
      return absl::InvalidArgumentError("time: missing unit in duration " + GoQuote(text));
    }
    std::string_view unit_name = s.substr(0, k);
    s.remove_prefix(k);
    uint64_t unit = 0;
    if (!UnitValue(unit_name, &unit)) {
      return absl::InvalidArgumentError("time: unknown unit " + GoQuote(unit_name) +
                                        " in duration " + GoQuote(text));
    }
    if (v > kMaxMagnitude / unit) {
      return invalid;
    }
    v *= unit;
    if (f > 0) {
      v += static_cast<uint64_t>(static_cast<double>(f) * (static_cast<double>(unit) / scale));
      if (v > kMaxMagnitude) {
        return invalid;
      }
    }
    total += v;
    if (total > kMaxMagnitude) {
      return invalid;
    }
  }
  if (neg) {
    return total == kMaxMagnitude ? INT64_MIN : -static_cast<int64_t>(total);
  }
  if (total > kMaxMagnitude - 1) {
    return invalid;
  }
  return static_cast<int64_t>(total);
}

}  // namespace phalanx::api
