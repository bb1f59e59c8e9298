// Error formatting (apimachinery field.Error wording), Go duration parsing/formatting and
// YAML node equality for the config module.
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/internal.h"

namespace phalanx::config::internal {

std::string FieldError::Format(const std::string& source) const {
  std::string out = source;
  if (line > 0) out += ":" + std::to_string(line) + ":" + std::to_string(column);
  out += ": ";
  if (!path.empty()) out += path + ": ";
  out += body;
  return out;
}

FieldError Invalid(std::string path, std::string_view value, std::string_view detail) {
  std::string body = "Invalid value: ";
  body += value;
  if (!detail.empty()) {
    body += ": ";
    body += detail;
  }
  return FieldError{std::move(path), std::move(body)};
}

FieldError Required(std::string path, std::string_view detail) {
  std::string body = "Required value";
  if (!detail.empty()) {
    body += ": ";
    body += detail;
  }
  return FieldError{std::move(path), std::move(body)};
}

FieldError Duplicate(std::string path, std::string_view value) {
  std::string body = "Duplicate value: ";
  body += value;
  return FieldError{std::move(path), std::move(body)};
}

FieldError NotSupported(std::string path, std::string_view value,
                        const std::vector<std::string_view>& supported) {
  std::string body = "Unsupported value: ";
  body += value;
  if (!supported.empty()) {
    body += ": supported values: ";
    for (size_t i = 0; i < supported.size(); ++i) {
      if (i > 0) body += ", ";
      body += GoQuote(supported[i]);
    }
  }
  return FieldError{std::move(path), std::move(body)};
}

std::string GoQuote(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\a': out += "\\a"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\v': out += "\\v"; break;
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

std::string JoinErrors(const std::vector<FieldError>& errors, const std::string& source) {
  std::string out;
  for (size_t i = 0; i < errors.size(); ++i) {
    if (i > 0) out += '\n';
    out += errors[i].Format(source);
  }
  return out;
}

// ---- Go durations (time.ParseDuration / Duration.String) ----

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
      {"ns", kNanosecond},      {"us", kMicrosecond}, {"\xC2\xB5s", kMicrosecond},  // U+00B5
      {"\xCE\xBCs", kMicrosecond},                                                    // U+03BC
      {"ms", kMillisecond},     {"s", kSecond},       {"m", kMinute},
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

bool ParseGoDuration(std::string_view text, int64_t* nanos, std::string* error) {
  const std::string invalid = "time: invalid duration " + GoQuote(text);
  std::string_view s = text;
  bool neg = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s == "0") {
    *nanos = 0;
    return true;
  }
  if (s.empty()) {
    *error = invalid;
    return false;
  }
  uint64_t total = 0;
  while (!s.empty()) {
    if (!(s[0] == '.' || IsDigit(s[0]))) {
      *error = invalid;
      return false;
    }
    // Integer part.
    uint64_t v = 0;
    size_t i = 0;
    for (; i < s.size() && IsDigit(s[i]); ++i) {
      if (v > (kMaxMagnitude - 1) / 10) {  // overflow
        *error = invalid;
        return false;
      }
      v = v * 10 + static_cast<uint64_t>(s[i] - '0');
      if (v > kMaxMagnitude) {
        *error = invalid;
        return false;
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
      *error = invalid;
      return false;
    }
    // Unit.
    size_t k = 0;
    for (; k < s.size() && s[k] != '.' && !IsDigit(s[k]); ++k) {
    }
    if (k == 0) {
      *error = "time: missing unit in duration " + GoQuote(text);
      return false;
    }
    std::string_view unit_name = s.substr(0, k);
    s.remove_prefix(k);
    uint64_t unit = 0;
    if (!UnitValue(unit_name, &unit)) {
      *error = "time: unknown unit " + GoQuote(unit_name) + " in duration " + GoQuote(text);
      return false;
    }
    if (v > kMaxMagnitude / unit) {
      *error = invalid;
      return false;
    }
    v *= unit;
    if (f > 0) {
      v += static_cast<uint64_t>(static_cast<double>(f) * (static_cast<double>(unit) / scale));
      if (v > kMaxMagnitude) {
        *error = invalid;
        return false;
      }
    }
    total += v;
    if (total > kMaxMagnitude) {
      *error = invalid;
      return false;
    }
  }
  if (neg) {
    *nanos = total == kMaxMagnitude ? INT64_MIN : -static_cast<int64_t>(total);
    return true;
  }
  if (total > kMaxMagnitude - 1) {
    *error = invalid;
    return false;
  }
  *nanos = static_cast<int64_t>(total);
  return true;
}

namespace {

// Go fmtFrac: the fraction of v/10^prec without trailing zeros, prepended to *out.
uint64_t PrependFrac(std::string* out, uint64_t v, int prec) {
  bool print = false;
  std::string frac;
  for (int i = 0; i < prec; ++i) {
    const uint64_t digit = v % 10;
    print = print || digit != 0;
    if (print) frac.insert(frac.begin(), static_cast<char>('0' + digit));
    v /= 10;
  }
  if (print) out->insert(0, "." + frac);
  return v;
}

void PrependInt(std::string* out, uint64_t v) { out->insert(0, std::to_string(v)); }

}  // namespace

std::string FormatGoDuration(int64_t nanos) {
  if (nanos == 0) return "0s";
  const bool neg = nanos < 0;
  uint64_t u = neg ? (~static_cast<uint64_t>(nanos) + 1) : static_cast<uint64_t>(nanos);
  std::string out;
  if (u < kSecond) {
    int prec = 0;
    out = "s";
    if (u < kMicrosecond) {
      prec = 0;
      out.insert(0, "n");
    } else if (u < kMillisecond) {
      prec = 3;
      out.insert(0, "\xC2\xB5");  // µ
    } else {
      prec = 6;
      out.insert(0, "m");
    }
    u = PrependFrac(&out, u, prec);
    PrependInt(&out, u);
  } else {
    out = "s";
    u = PrependFrac(&out, u, 9);
    PrependInt(&out, u % 60);
    u /= 60;
    if (u > 0) {
      out.insert(0, "m");
      PrependInt(&out, u % 60);
      u /= 60;
      if (u > 0) {
        out.insert(0, "h");
        PrependInt(&out, u);
      }
    }
  }
  if (neg) out.insert(0, "-");
  return out;
}

std::string FormatSeconds(int64_t seconds) {
  constexpr int64_t kMaxSeconds = INT64_MAX / 1000000000;
  if (seconds > kMaxSeconds || seconds < -kMaxSeconds) return std::to_string(seconds) + "s";
  return FormatGoDuration(seconds * 1000000000);
}

// ---- YAML equality ----

bool YamlEqual(const YAML::Node& a, const YAML::Node& b) {
  const bool a_null = !a.IsDefined() || a.IsNull();
  const bool b_null = !b.IsDefined() || b.IsNull();
  if (a_null || b_null) return a_null == b_null;
  if (a.Type() != b.Type()) return false;
  switch (a.Type()) {
    case YAML::NodeType::Scalar:
      return a.Scalar() == b.Scalar();
    case YAML::NodeType::Sequence: {
      if (a.size() != b.size()) return false;
      for (size_t i = 0; i < a.size(); ++i) {
        if (!YamlEqual(a[i], b[i])) return false;
      }
      return true;
    }
    case YAML::NodeType::Map: {
      if (a.size() != b.size()) return false;
      for (const auto& kv : a) {
        if (!kv.first.IsScalar()) return false;
        bool found = false;
        for (const auto& kv2 : b) {
          if (kv2.first.IsScalar() && kv2.first.Scalar() == kv.first.Scalar()) {
            if (!YamlEqual(kv.second, kv2.second)) return false;
            found = true;
            break;
          }
        }
        if (!found) return false;
      }
      return true;
    }
    default:
      return true;
  }
}

}  // namespace phalanx::config::internal
