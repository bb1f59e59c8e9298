#include "gang/dialects_parse.h"

#include <limits>

#include "api/duration.h"

namespace phalanx::gang::detail {

namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

bool Hex4(std::string_view s, size_t at, uint32_t* out) {
  if (at + 4 > s.size()) return false;
  uint32_t v = 0;
  for (size_t i = at; i < at + 4; ++i) {
    const char c = s[i];
    v <<= 4;
    if (c >= '0' && c <= '9') {
      v |= static_cast<uint32_t>(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      v |= static_cast<uint32_t>(c - 'a' + 10);
    } else if (c >= 'A' && c <= 'F') {
      v |= static_cast<uint32_t>(c - 'A' + 10);
    } else {
      return false;
    }
  }
  *out = v;
  return true;
}

bool IsJsonSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

}  // namespace

api::StatusOr<std::vector<std::string>> ParseJsonStringArray(std::string_view s) {
  std::vector<std::string> values;
  std::vector<std::string>* out = &values;
  size_t i = 0;
  auto skip = [&] {
    while (i < s.size() && IsJsonSpace(s[i])) ++i;
  };
  auto fail = [&](const std::string& what) {
    return absl::InvalidArgumentError("must be a JSON array of strings: " + what + " at offset " +
                                      std::to_string(i));
  };
  skip();
  if (s.substr(i, 4) == "null") {
    i += 4;
    skip();
    if (i != s.size()) return fail("unexpected trailing characters");
    return values;
  }
  if (i >= s.size() || s[i] != '[') return fail("expected '['");
  ++i;
  skip();
  if (i < s.size() && s[i] == ']') {
    ++i;
  } else {
    while (true) {
      skip();
      if (i >= s.size() || s[i] != '"') return fail("expected a string");
      ++i;
      std::string v;
      bool closed = false;
      while (i < s.size()) {
        const char c = s[i];
        if (c == '"') {
          ++i;
          closed = true;
          break;
        }
        if (static_cast<unsigned char>(c) < 0x20) return fail("control character in string");
        if (c != '\\') {
          v.push_back(c);
          ++i;
          continue;
        }
        if (i + 1 >= s.size()) return fail("unterminated escape");
        const char e = s[i + 1];
        i += 2;
        switch (e) {
          case '"':
            v.push_back('"');
            break;
          case '\\':
            v.push_back('\\');
            break;
          case '/':
            v.push_back('/');
            break;
          case 'b':
            v.push_back('\b');
            break;
          case 'f':
            v.push_back('\f');
            break;
          case 'n':
            v.push_back('\n');
            break;
          case 'r':
            v.push_back('\r');
            break;
          case 't':
            v.push_back('\t');
            break;
          case 'u': {
            uint32_t cp = 0;
            if (!Hex4(s, i, &cp)) return fail("bad \\u escape");
            i += 4;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
              uint32_t lo = 0;
              if (i + 1 < s.size() && s[i] == '\\' && s[i + 1] == 'u' && Hex4(s, i + 2, &lo) &&
                  lo >= 0xDC00 && lo <= 0xDFFF) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                i += 6;
              } else {
                cp = 0xFFFD;
              }
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
              cp = 0xFFFD;
            }
            AppendUtf8(cp, &v);
            break;
          }
          default:
            return fail("bad escape");
        }
      }
      if (!closed) return fail("unterminated string");
      out->push_back(std::move(v));
      skip();
      if (i < s.size() && s[i] == ',') {
        ++i;
        continue;
      }
      if (i < s.size() && s[i] == ']') {
        ++i;
        break;
      }
      return fail("expected ',' or ']'");
    }
  }
  skip();
  if (i != s.size()) return fail("unexpected trailing characters");
  return values;
}

bool ParseInt64(std::string_view s, int64_t* out) {
  if (s.empty()) return false;
  bool neg = false;
  size_t i = 0;
  if (s[0] == '-' || s[0] == '+') {
    neg = s[0] == '-';
    i = 1;
  }
  if (i == s.size()) return false;
  constexpr uint64_t kMaxPos = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  const uint64_t limit = neg ? kMaxPos + 1 : kMaxPos;
  uint64_t v = 0;
  for (; i < s.size(); ++i) {
    if (!IsDigit(s[i])) return false;
    const uint64_t d = static_cast<uint64_t>(s[i] - '0');
    if (v > (limit - d) / 10) return false;
    v = v * 10 + d;
  }
  if (neg) {
    *out = v == kMaxPos + 1 ? std::numeric_limits<int64_t>::min() : -static_cast<int64_t>(v);
  } else {
    *out = static_cast<int64_t>(v);
  }
  return true;
}

bool IsDNS1123Subdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || IsDigit(c); };
  size_t start = 0;
  while (true) {
    const size_t dot = s.find('.', start);
    const std::string_view label =
        s.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (label.empty() || !alnum(label.front()) || !alnum(label.back())) return false;
    for (char c : label) {
      if (!alnum(c) && c != '-') return false;
    }
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

}  // namespace phalanx::gang::detail
