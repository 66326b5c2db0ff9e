// ECMAScript Number::toString layout over the shortest round-trip digits (D2).
#include "shared_helpers.hpp"

#include <babelqueue/codec.hpp>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace babelqueue {
inline namespace v1 {

namespace detail {

namespace {

// Writes the text of |value| when it is a decimal with at most three fractional digits and
// below 2^53 / 10^4 (prices, quantities, percentages: most doubles of real payloads),
// without the general shortest-digits search. `value` times 1000 lands within rounding
// error of an integer; with its trailing zeros dropped that is m / 10^k, and the correctly
// rounded division m / 10^k == value proves that these digits parse back to `value`. They
// are also the shortest and the only candidate: below the bound the spacing of doubles is at
// most 2^-13, under a tenth of 10^-3, so no other decimal with k or fewer fractional digits
// (all at least 10^-k from m / 10^k, as m does not end in 0) lies within half a spacing of
// `value`. Returns the length written (at most 20), or 0 when a check fails: the general
// path then takes it.
std::size_t write_short_decimal(double value, char* out) noexcept {
  constexpr double k_bound = 9007199254740992.0 / 10000.0;
  if (!(value < k_bound) || value < 0.001) return 0;
  const double scaled = value * 1000.0;
  // Rounded by truncating scaled + 0.5 (inline, unlike std::nearbyint's libm call): scaled
  // is in [1, 2^50), where adding 0.5 rounds by at most 2^-3, and a scaled value that is not
  // within 0.01 of the integer found is rejected just below either way.
  const auto rounded = static_cast<std::uint64_t>(scaled + 0.5);
  if (std::fabs(scaled - static_cast<double>(rounded)) > 0.01) return 0;
  std::uint64_t m = rounded;
  int fraction = 3;
  while (fraction > 0 && m % 10 == 0) m /= 10, --fraction;
  static constexpr std::uint64_t k_pow10[] = {1, 10, 100, 1000};
  if (static_cast<double>(m) / static_cast<double>(k_pow10[fraction]) != value) return 0;
  // ECMAScript's layout of these digits is plain fixed notation below 10^21: the integer
  // part ("0" below 1), then the fraction padded to its digit count ("0.05", "20.99").
  const std::uint64_t whole = m / k_pow10[fraction];
  char* o = std::to_chars(out, out + 20, whole).ptr;
  if (fraction > 0) {
    auto part = static_cast<unsigned>(m % k_pow10[fraction]);
    *o = '.';
    for (int d = fraction; d > 0; --d, part /= 10) o[d] = static_cast<char>('0' + part % 10);
    o += fraction + 1;
  }
  return static_cast<std::size_t>(o - out);
}

// The shortest round-trip digits of finite, positive `value` from std::to_chars' shortest
// scientific form (d[.ddd]e±XX), and where the decimal point goes.
void general_digits(double value, char* digits, int& k, int& point) noexcept {
  char sci[40];
  const auto res = std::to_chars(sci, sci + sizeof sci, value, std::chars_format::scientific);
  k = 0;
  const char* p = sci;
  for (; p < res.ptr && *p != 'e'; ++p) {
    if (*p != '.') digits[k++] = *p;
  }
  while (k > 1 && digits[k - 1] == '0') --k;  // none in the shortest form; kept as a guard
  ++p;                                        // 'e'
  const bool negative_exponent = *p == '-';
  ++p;  // sign
  int exponent = 0;
  for (; p < res.ptr; ++p) exponent = exponent * 10 + (*p - '0');
  if (negative_exponent) exponent = -exponent;
  point = exponent + 1;
}

}  // namespace

// Written straight into `out` with no string in between: the encoder calls this once per
// double of every payload.
std::size_t format_double_to(double value, char* out) noexcept {
  char* o = out;
  if (value == 0) {  // -0 as Go writes it (D2)
    if (std::signbit(value)) *o++ = '-';
    *o++ = '0';
    return static_cast<std::size_t>(o - out);
  }
  if (std::signbit(value)) *o++ = '-';
  const double magnitude = std::fabs(value);
  if (const std::size_t n = write_short_decimal(magnitude, o); n != 0)
    return static_cast<std::size_t>(o - out) + n;
  // From 10^-6 up to 2^53 ECMAScript's layout is plain fixed notation, and std::to_chars'
  // shortest fixed form is the same text: the fewest characters that parse back are the
  // fewest digits once the point's place is given, closest to the value on a tie, as the
  // shortest scientific form is. No layout step then. (Above 2^53 the fixed form may print a
  // large integer's exact digits where ECMAScript pads the shortest ones with zeros.)
  if (magnitude >= 1e-6 && magnitude < 9007199254740992.0) {
    return static_cast<std::size_t>(
        std::to_chars(o, out + k_double_text_max, magnitude, std::chars_format::fixed).ptr - out);
  }
  char digits[24];
  int k = 0;  // digits written (no leading or trailing zeros)
  int n = 0;  // position of the decimal point relative to the digits
  general_digits(magnitude, digits, k, n);

  auto put = [&](const char* from, int count) {
    std::memcpy(o, from, static_cast<std::size_t>(count));
    o += count;
  };
  auto zeros = [&](int count) {
    std::memset(o, '0', static_cast<std::size_t>(count));
    o += count;
  };
  if (k <= n && n <= 21) {
    put(digits, k);
    zeros(n - k);
  } else if (0 < n && n <= 21) {
    put(digits, n);
    *o++ = '.';
    put(digits + n, k - n);
  } else if (-6 < n && n <= 0) {
    *o++ = '0';
    *o++ = '.';
    zeros(-n);
    put(digits, k);
  } else {
    *o++ = digits[0];
    if (k > 1) {
      *o++ = '.';
      put(digits + 1, k - 1);
    }
    *o++ = 'e';
    const int e = n - 1;
    *o++ = e < 0 ? '-' : '+';
    o = std::to_chars(o, o + 4, e < 0 ? -e : e).ptr;
  }
  return static_cast<std::size_t>(o - out);
}

}  // namespace detail

std::string format_double(double value) {
  char buf[detail::k_double_text_max];
  return std::string(buf, detail::format_double_to(value, buf));
}

}  // namespace v1
}  // namespace babelqueue
