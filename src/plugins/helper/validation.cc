#include "plugins/helper/validation.h"

#include <fmt/format.h>

namespace phalanx::plugins::helper {

namespace {

constexpr std::string_view kQualifiedNameFmt = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
constexpr std::string_view kQualifiedNameErrMsg =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
    "an alphanumeric character";
constexpr std::string_view kDNS1123SubdomainFmt =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
constexpr std::string_view kDNS1123SubdomainErrMsg =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
    "or '.', and must start and end with an alphanumeric character";

bool IsAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}
bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

bool MatchesQualifiedName(std::string_view s) {
  if (s.empty() || !IsAlnum(s.front()) || !IsAlnum(s.back())) return false;
  for (char c : s) {
    if (!IsAlnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

bool MatchesDNS1123Label(std::string_view s) {
  if (s.empty() || !IsLowerAlnum(s.front()) || !IsLowerAlnum(s.back())) return false;
  for (char c : s) {
    if (!IsLowerAlnum(c) && c != '-') return false;
  }
  return true;
}

bool MatchesDNS1123Subdomain(std::string_view s) {
  size_t start = 0;
  while (true) {
    size_t dot = s.find('.', start);
    std::string_view label = s.substr(start, dot == std::string_view::npos ? s.npos : dot - start);
    if (!MatchesDNS1123Label(label)) return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

std::string RegexError(std::string_view msg, std::string_view fmt_str,
                       const std::vector<std::string_view>& examples) {
  std::string out(msg);
  if (examples.empty()) {
    return out + " (regex used for validation is '" + std::string(fmt_str) + "')";
  }
  out += " (e.g. ";
  for (size_t i = 0; i < examples.size(); ++i) {
    if (i > 0) out += " or ";
    out += "'" + std::string(examples[i]) + "', ";
  }
  out += "regex used for validation is '" + std::string(fmt_str) + "')";
  return out;
}

}  // namespace

std::vector<std::string> IsQualifiedName(std::string_view value) {
  std::vector<std::string> errs;
  const std::vector<std::string_view> examples = {"MyName", "my.name", "123-abc"};
  std::string_view name;
  size_t slashes = 0;
  for (char c : value) slashes += (c == '/');
  if (slashes == 0) {
    name = value;
  } else if (slashes == 1) {
    size_t pos = value.find('/');
    std::string_view prefix = value.substr(0, pos);
    name = value.substr(pos + 1);
    if (prefix.empty()) {
      errs.push_back("prefix part must be non-empty");
    } else {
      if (prefix.size() > 253) errs.push_back("prefix part must be no more than 253 characters");
      if (!MatchesDNS1123Subdomain(prefix)) {
        errs.push_back("prefix part " +
                       RegexError(kDNS1123SubdomainErrMsg, kDNS1123SubdomainFmt, {"example.com"}));
      }
    }
  } else {
    errs.push_back("a qualified name " +
                   RegexError(kQualifiedNameErrMsg, kQualifiedNameFmt, examples) +
                   " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')");
    return errs;
  }
  if (name.empty()) {
    errs.push_back("name part must be non-empty");
  } else if (name.size() > 63) {
    errs.push_back("name part must be no more than 63 characters");
  }
  if (!MatchesQualifiedName(name)) {
    errs.push_back("name part " + RegexError(kQualifiedNameErrMsg, kQualifiedNameFmt, examples));
  }
  return errs;
}

bool IsExtendedResourceName(std::string_view name) {
  // IsNativeResource: no '/', or within the kubernetes.io/ namespace.
  if (name.find('/') == std::string_view::npos) return false;
  if (name.find("kubernetes.io/") != std::string_view::npos) return false;
  if (name.substr(0, 9) == "requests.") return false;
  return IsQualifiedName("requests." + std::string(name)).empty();
}

bool IsScalarResourceName(std::string_view name) {
  return IsExtendedResourceName(name) || name.substr(0, 10) == "hugepages-" ||
         name.find("kubernetes.io/") != std::string_view::npos ||
         name.substr(0, 19) == "attachable-volumes-";
}

framework::Status ArgsError(const FieldErrors& errs, std::string_view kind) {
  return framework::Status::Error(std::string(kind) + ": " + errs.Aggregate());
}

}  // namespace phalanx::plugins::helper
