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

// ---- Go durations (Duration.String; parsing lives in api/duration) ----

namespace {
constexpr uint64_t kNanosecond = 1;
constexpr uint64_t kMicrosecond = 1000 * kNanosecond;
constexpr uint64_t kMillisecond = 1000 * kMicrosecond;
constexpr uint64_t kSecond = 1000 * kMillisecond;
}  // namespace

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
