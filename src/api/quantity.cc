// resource.Quantity parsing, following k8s.io/apimachinery/pkg/api/resource/quantity.go
// (parseQuantityString + ParseQuantity). See quantity.h for the grammar.
#include "api/quantity.h"

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "api/quantity_internal.h"

namespace phalanx::api {
namespace {

using U128 = unsigned __int128;

// Upstream error texts (quantity.go ErrFormatWrong / ErrSuffix).
constexpr std::string_view kErrFormatWrong =
    "quantities must match the regular expression "
    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
constexpr std::string_view kErrSuffix = "unable to parse quantity's suffix";
constexpr std::string_view kErrOutOfRange = "quantity out of range";

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

bool IsSuffixChar(char c) {
  return std::string_view("eEinumkKMGTP").find(c) != std::string_view::npos;
}

U128 Pow10(int n) {  // 0 <= n <= 38
  U128 r = 1;
  for (int i = 0; i < n; ++i) r *= 10;
  return r;
}

Status Fail(std::string_view msg) { return absl::InvalidArgumentError(std::string(msg)); }

// Interprets a suffix as quantitySuffixer.interpret does: decimal SI table, then binary SI
// table, then a decimal exponent "e<int64>" / "E<int64>". Sets either *exp10 or *exp2.
bool InterpretSuffix(std::string_view s, int64_t* exp10, int* exp2) {
  *exp10 = 0;
  *exp2 = 0;
  struct Entry {
    std::string_view suffix;
    int exponent;
  };
  static constexpr Entry kDecimal[] = {{"n", -9}, {"u", -6}, {"m", -3}, {"", 0},   {"k", 3},
                                       {"M", 6},  {"G", 9},  {"T", 12}, {"P", 15}, {"E", 18}};
  static constexpr Entry kBinary[] = {{"Ki", 10}, {"Mi", 20}, {"Gi", 30},
                                      {"Ti", 40}, {"Pi", 50}, {"Ei", 60}};
  for (const auto& e : kDecimal) {
    if (s == e.suffix) {
      *exp10 = e.exponent;
      return true;
    }
  }
  for (const auto& e : kBinary) {
    if (s == e.suffix) {
      *exp2 = e.exponent;
      return true;
    }
  }
  if (s.size() > 1 && (s[0] == 'e' || s[0] == 'E')) {
    // strconv.ParseInt(s[1:], 10, 64): optional sign, at least one digit, no overflow.
    std::string_view num = s.substr(1);
    bool neg = false;
    if (num[0] == '+' || num[0] == '-') {
      neg = num[0] == '-';
      num.remove_prefix(1);
    }
    if (num.empty()) return false;
    U128 v = 0;
    for (char c : num) {
      if (!IsDigit(c)) return false;
      v = v * 10 + static_cast<U128>(c - '0');
      if (v > static_cast<U128>(kInt64Max) + 1) return false;
    }
    if (!neg && v > static_cast<U128>(kInt64Max)) return false;
    // Exponents this large only decide between "out of range" and "rounds to 1n"; clamp so
    // that later exponent arithmetic cannot overflow.
    constexpr U128 kClamp = 1'000'000'000'000;
    if (v > kClamp) v = kClamp;
    *exp10 = neg ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
    return true;
  }
  return false;
}

// digits (most significant first, no sign) * 2^k, k <= 60.
std::string MultiplyByPow2(const std::string& digits, int k) {
  const U128 m = static_cast<U128>(1) << k;
  std::string rev;
  rev.reserve(digits.size() + 20);
  U128 carry = 0;
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
    U128 cur = static_cast<U128>(*it - '0') * m + carry;
    rev.push_back(static_cast<char>('0' + static_cast<int>(cur % 10)));
    carry = cur / 10;
  }
  while (carry != 0) {
    rev.push_back(static_cast<char>('0' + static_cast<int>(carry % 10)));
    carry /= 10;
  }
  return std::string(rev.rbegin(), rev.rend());
}

U128 ParseDigits(std::string_view digits) {  // at most 38 digits
  U128 v = 0;
  for (char c : digits) v = v * 10 + static_cast<U128>(c - '0');
  return v;
}

int64_t Clamp(bool negative, U128 magnitude) {
  if (negative) {
    if (magnitude > static_cast<U128>(kInt64Max) + 1) return std::numeric_limits<int64_t>::min();
    return static_cast<int64_t>(-static_cast<Int128>(magnitude));
  }
  if (magnitude > static_cast<U128>(kInt64Max)) return kInt64Max;
  return static_cast<int64_t>(magnitude);
}

// ceil(sign * mantissa * 10^p), clamped to int64.
int64_t CeilScaled(bool negative, U128 mantissa, int64_t p) {
  if (mantissa == 0) return 0;
  if (p >= 0) {
    // Anything with more than 19 digits saturates; avoid overflowing the 128-bit product.
    if (p > 19) return Clamp(negative, static_cast<U128>(kInt64Max) + 2);
    const U128 f = Pow10(static_cast<int>(p));
    if (mantissa > (static_cast<U128>(kInt64Max) + 2) / f) {
      return Clamp(negative, static_cast<U128>(kInt64Max) + 2);
    }
    return Clamp(negative, mantissa * f);
  }
  U128 q = 0;
  U128 r = mantissa;
  if (-p <= 38) {
    const U128 d = Pow10(static_cast<int>(-p));
    q = mantissa / d;
    r = mantissa % d;
  }
  // Towards +inf: positive values round up, negative values truncate.
  if (!negative && r != 0) q += 1;
  return Clamp(negative, q);
}

}  // namespace

StatusOr<Quantity> Quantity::Parse(std::string_view text) {
  // An empty string is the only input that fails before the scan (quantity.go).
  if (text.empty()) return Fail(kErrFormatWrong);

  // parseQuantityString: [sign] digits* ['.' digits*] suffixChars* [sign] digits*
  size_t pos = 0;
  const size_t end = text.size();
  bool negative = false;
  if (text[0] == '-' || text[0] == '+') {
    negative = text[0] == '-';
    ++pos;
  }
  const size_t int_begin = pos;
  while (pos < end && IsDigit(text[pos])) ++pos;
  std::string_view int_digits = text.substr(int_begin, pos - int_begin);
  std::string_view frac_digits;
  if (pos < end && text[pos] == '.') {
    ++pos;
    const size_t frac_begin = pos;
    while (pos < end && IsDigit(text[pos])) ++pos;
    frac_digits = text.substr(frac_begin, pos - frac_begin);
  }
  const size_t suffix_begin = pos;
  while (pos < end && IsSuffixChar(text[pos])) ++pos;
  if (pos < end && (text[pos] == '-' || text[pos] == '+')) ++pos;
  while (pos < end && IsDigit(text[pos])) ++pos;
  if (pos != end) return Fail(kErrFormatWrong);
  std::string_view suffix = text.substr(suffix_begin);

  int64_t exp10 = 0;
  int exp2 = 0;
  if (!InterpretSuffix(suffix, &exp10, &exp2)) return Fail(kErrSuffix);

  // value = digits * 10^(exp10 - len(frac)) * 2^exp2. Upstream accepts a missing number
  // ("-", ".", "Ki") as zero.
  std::string digits;
  digits.reserve(int_digits.size() + frac_digits.size());
  digits.append(int_digits);
  digits.append(frac_digits);
  exp10 -= static_cast<int64_t>(frac_digits.size());
  const size_t first_nonzero = digits.find_first_not_of('0');
  if (first_nonzero == std::string::npos) {
    return Quantity();
  }
  digits.erase(0, first_nonzero);
  if (exp2 > 0) digits = MultiplyByPow2(digits, exp2);
  const size_t last_nonzero = digits.find_last_not_of('0');
  exp10 += static_cast<int64_t>(digits.size() - 1 - last_nonzero);
  digits.erase(last_nonzero + 1);

  const int64_t n = static_cast<int64_t>(digits.size());
  // Position of the leading digit: value >= 10^top. 10^16 units is already above the
  // 2^63-1 milli limit, so reject before building a 128-bit mantissa.
  const int64_t top = n - 1 + exp10;
  if (top >= 17) return Fail(kErrOutOfRange);

  Quantity q;
  q.negative_ = negative;
  if (exp10 < -9) {
    // Round away from zero to a whole number of nano units (inf.RoundUp at Nano scale);
    // the dropped part is non-zero because trailing zeros were stripped.
    const int64_t drop = -9 - exp10;
    q.mantissa_ = drop >= n ? 1 : ParseDigits(std::string_view(digits).substr(0, n - drop)) + 1;
    q.exponent_ = -9;
  } else {
    q.mantissa_ = ParseDigits(digits);  // n <= 17 - exp10 <= 26 digits
    q.exponent_ = static_cast<int32_t>(exp10);
  }
  // Every accepted quantity must have an exact MilliValue(): ceil(|value| * 1000) must fit
  // in int64. Here |value| < 10^17 + 1, so |value| * 1000 fits in 128 bits.
  const int64_t p = int64_t{q.exponent_} + 3;  // >= -6
  U128 milli_ceil = 0;
  if (p >= 0) {
    milli_ceil = q.mantissa_ * Pow10(static_cast<int>(p));
  } else {
    const U128 d = Pow10(static_cast<int>(-p));
    milli_ceil = q.mantissa_ / d + (q.mantissa_ % d != 0 ? 1 : 0);
  }
  if (milli_ceil > static_cast<U128>(kInt64Max)) return Fail(kErrOutOfRange);
  return q;
}

int64_t Quantity::ScaledCeil(int32_t scale_exponent) const {
  return CeilScaled(negative_, mantissa_, int64_t{exponent_} + scale_exponent);
}

int64_t Quantity::Value() const { return ScaledCeil(0); }

int64_t Quantity::MilliValue() const { return ScaledCeil(3); }

Quantity Quantity::FromMilli(int64_t milli) {
  Quantity q = FromValue(milli);
  q.exponent_ = -3;
  return q;
}

Quantity Quantity::FromValue(int64_t value) {
  Quantity q;
  q.negative_ = value < 0;
  // Two's-complement negate in unsigned arithmetic handles INT64_MIN.
  const uint64_t magnitude =
      value < 0 ? ~static_cast<uint64_t>(value) + 1 : static_cast<uint64_t>(value);
  q.mantissa_ = magnitude;
  q.exponent_ = 0;
  return q;
}

Quantity QuantityInternal::FromNano(Int128 nano) {
  Quantity q;
  q.negative_ = nano < 0;
  q.mantissa_ = static_cast<U128>(nano < 0 ? -nano : nano);
  q.exponent_ = q.mantissa_ == 0 ? 0 : -9;
  return q;
}

Int128 QuantityInternal::Nano(const Quantity& q) {
  constexpr Int128 kSaturate = static_cast<Int128>(1) << 126;
  if (q.mantissa_ == 0) return 0;
  const int64_t p = int64_t{q.exponent_} + 9;
  U128 magnitude = 0;
  if (p >= 0) {
    if (p > 38) return q.negative_ ? -kSaturate : kSaturate;
    const U128 f = Pow10(static_cast<int>(p));
    if (q.mantissa_ > static_cast<U128>(kSaturate) / f) return q.negative_ ? -kSaturate : kSaturate;
    magnitude = q.mantissa_ * f;
  } else {
    // Not produced by Parse/FromMilli/FromValue (exponent >= -9); round away from zero.
    const U128 d = -p <= 38 ? Pow10(static_cast<int>(-p)) : 0;
    magnitude = d == 0 ? 1 : q.mantissa_ / d + (q.mantissa_ % d != 0 ? 1 : 0);
  }
  const Int128 v = static_cast<Int128>(magnitude);
  return q.negative_ ? -v : v;
}

int64_t NanoToScaledCeil(Int128 nano, int32_t scale_exponent) {
  const bool negative = nano < 0;
  const U128 magnitude = negative ? static_cast<U128>(-nano) : static_cast<U128>(nano);
  return CeilScaled(negative, magnitude, int64_t{scale_exponent} - 9);
}

int Quantity::Compare(const Quantity& other) const {
  const Int128 a = QuantityInternal::Nano(*this);
  const Int128 b = QuantityInternal::Nano(other);
  return a < b ? -1 : (a > b ? 1 : 0);
}

Quantity Quantity::Plus(const Quantity& other) const {
  return QuantityInternal::FromNano(QuantityInternal::Nano(*this) + QuantityInternal::Nano(other));
}

Quantity Quantity::Minus(const Quantity& other) const {
  return QuantityInternal::FromNano(QuantityInternal::Nano(*this) - QuantityInternal::Nano(other));
}

double Quantity::AsApproximateFloat64() const {
  return static_cast<double>(static_cast<long double>(QuantityInternal::Nano(*this)) / 1e9L);
}

bool Quantity::AsInt64(int64_t* out) const {
  constexpr Int128 kNano = 1000000000;
  const Int128 nano = QuantityInternal::Nano(*this);
  if (nano % kNano != 0) return false;
  const Int128 v = nano / kNano;
  if (v > std::numeric_limits<int64_t>::max() || v < std::numeric_limits<int64_t>::min()) {
    return false;
  }
  *out = static_cast<int64_t>(v);
  return true;
}

}  // namespace phalanx::api
