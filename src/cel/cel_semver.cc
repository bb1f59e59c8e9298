// Semantic versions as github.com/blang/semver/v4 parses and compares them (semver.go:
// Parse, NewPRVersion, Version.Compare), which k8s.io/apiserver/pkg/cel/library/semverlib.go
// uses for semver() and for VersionValue attributes (dynamic-resource-allocation/cel
// compile.go). Error texts are blang/semver's.
#include <charconv>
#include <string>
#include <vector>

#include "cel/cel_internal.h"

namespace phalanx::cel {
namespace {

bool IsNum(char c) { return c >= '0' && c <= '9'; }
bool IsAlnum(char c) {
  return IsNum(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-';
}
bool OnlyNumbers(std::string_view s) {
  for (char c : s) {
    if (!IsNum(c)) return false;
  }
  return true;
}
bool OnlyAlnum(std::string_view s) {
  for (char c : s) {
    if (!IsAlnum(c)) return false;
  }
  return true;
}
bool HasLeadingZeroes(std::string_view s) { return s.size() > 1 && s[0] == '0'; }

absl::Status ParseUint(std::string_view s, uint64_t* out) {
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size()) {
    return absl::InvalidArgumentError(Cat(
        "strconv.ParseUint: parsing \"", s,
        "\": ", ec == std::errc::result_out_of_range ? "value out of range" : "invalid syntax"));
  }
  return absl::OkStatus();
}

absl::Status ParseNumber(std::string_view s, std::string_view what, std::string_view cap,
                         uint64_t* out) {
  if (!OnlyNumbers(s)) {
    return absl::InvalidArgumentError(
        Cat("Invalid character(s) found in ", what, " number \"", s, "\""));
  }
  if (HasLeadingZeroes(s)) {
    return absl::InvalidArgumentError(
        Cat(cap, " number must not contain leading zeroes \"", s, "\""));
  }
  return ParseUint(s, out);
}

absl::Status CheckPrerelease(std::string_view s) {
  if (s.empty()) return absl::InvalidArgumentError("Prerelease is empty");
  if (OnlyNumbers(s)) {
    if (HasLeadingZeroes(s)) {
      return absl::InvalidArgumentError(
          Cat("Numeric PreRelease version must not contain leading zeroes \"", s, "\""));
    }
    uint64_t ignored = 0;
    return ParseUint(s, &ignored);
  }
  if (!OnlyAlnum(s)) {
    return absl::InvalidArgumentError(Cat("Invalid character(s) found in prerelease \"", s, "\""));
  }
  return absl::OkStatus();
}

absl::StatusOr<Semver> ParseStrict(std::string_view s) {
  if (s.empty()) return absl::InvalidArgumentError("Version string empty");
  std::vector<std::string_view> parts = SplitN(s, ".", 3);
  if (parts.size() != 3) return absl::InvalidArgumentError("No Major.Minor.Patch elements found");
  Semver v;
  if (auto st = ParseNumber(parts[0], "major", "Major", &v.major); !st.ok()) return st;
  if (auto st = ParseNumber(parts[1], "minor", "Minor", &v.minor); !st.ok()) return st;
  std::string_view patch = parts[2];
  std::vector<std::string_view> build, pre;
  if (size_t b = patch.find('+'); b != std::string_view::npos) {
    build = SplitN(patch.substr(b + 1), ".");
    patch = patch.substr(0, b);
  }
  if (size_t p = patch.find('-'); p != std::string_view::npos) {
    pre = SplitN(patch.substr(p + 1), ".");
    patch = patch.substr(0, p);
  }
  if (auto st = ParseNumber(patch, "patch", "Patch", &v.patch); !st.ok()) return st;
  for (std::string_view p : pre) {
    if (auto st = CheckPrerelease(p); !st.ok()) return st;
    v.pre.emplace_back(p);
  }
  for (std::string_view b : build) {
    if (b.empty()) return absl::InvalidArgumentError("Build meta data is empty");
    if (!OnlyAlnum(b)) {
      return absl::InvalidArgumentError(
          Cat("Invalid character(s) found in build meta data \"", b, "\""));
    }
    v.build.emplace_back(b);
  }
  return v;
}

// semverlib.go normalizeAndParse.
absl::StatusOr<Semver> NormalizeAndParse(std::string_view s) {
  if (!s.empty() && s[0] == 'v') s.remove_prefix(1);
  std::vector<std::string> parts;
  for (std::string_view p : SplitN(s, ".", 3)) parts.emplace_back(p);
  for (std::string& p : parts) {
    if (p.size() > 1) {
      const size_t nz = p.find_first_not_of('0');
      p = nz == std::string::npos ? std::string() : p.substr(nz);
      if (p.empty() || !IsNum(p[0])) p = "0" + p;
    }
  }
  if (parts.size() < 3) {
    if (parts.back().find_first_of("+-") != std::string::npos) {
      return absl::InvalidArgumentError("short version cannot contain PreRelease/Build meta data");
    }
    while (parts.size() < 3) parts.emplace_back("0");
  }
  return ParseStrict(Join(parts, "."));
}

int ComparePre(const std::string& a, const std::string& b) {
  const bool an = OnlyNumbers(a), bn = OnlyNumbers(b);
  if (an && bn) {
    // No leading zeroes, so the longer number is the larger one.
    if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  } else if (an != bn) {
    return an ? -1 : 1;
  }
  const int c = a.compare(b);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

}  // namespace

absl::StatusOr<Semver> ParseSemver(std::string_view s, bool normalize) {
  return normalize ? NormalizeAndParse(s) : ParseStrict(s);
}

int CompareSemver(const Semver& a, const Semver& b) {
  if (a.major != b.major) return a.major < b.major ? -1 : 1;
  if (a.minor != b.minor) return a.minor < b.minor ? -1 : 1;
  if (a.patch != b.patch) return a.patch < b.patch ? -1 : 1;
  if (a.pre.empty() && b.pre.empty()) return 0;
  if (a.pre.empty()) return 1;
  if (b.pre.empty()) return -1;
  size_t i = 0;
  for (; i < a.pre.size() && i < b.pre.size(); ++i) {
    if (int c = ComparePre(a.pre[i], b.pre[i]); c != 0) return c;
  }
  if (i == a.pre.size() && i == b.pre.size()) return 0;
  return i == a.pre.size() ? -1 : 1;
}

}  // namespace phalanx::cel
