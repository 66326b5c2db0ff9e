// ECMAScript Number::toString layout over the shortest round-trip digits (D2).
#include "shared_helpers.hpp"

#include <babelqueue/codec.hpp>

#include <charconv>
#include <cmath>
#include <cstring>

namespace babelqueue {
inline namespace v1 {

namespace detail {

// Written straight into `out` from std::to_chars' shortest scientific form, with no string
// in between: the encoder calls this once per double of every payload.
std::size_t format_double_to(double value, char* out) noexcept {
  char* o = out;
  if (value == 0) {  // -0 as Go writes it (D2)
    if (std::signbit(value)) *o++ = '-';
    *o++ = '0';
    return static_cast<std::size_t>(o - out);
  }
  if (std::signbit(value)) *o++ = '-';
  char sci[40];
  const auto res = std::to_chars(sci, sci + sizeof sci, std::fabs(value), std::chars_format::scientific);
  // sci = d[.ddd]e±XX: the digits (no leading zero; to_chars writes no trailing zeros in the
  // shortest form, but strip them anyway) and the decimal exponent.
  char digits[24];
  int k = 0;
  const char* p = sci;
  for (; p < res.ptr && *p != 'e'; ++p) {
    if (*p != '.') digits[k++] = *p;
  }
  while (k > 1 && digits[k - 1] == '0') --k;
  ++p;  // 'e'
  const bool negative_exponent = *p == '-';
  ++p;  // sign
  int exponent = 0;
  for (; p < res.ptr; ++p) exponent = exponent * 10 + (*p - '0');
  if (negative_exponent) exponent = -exponent;
  const int n = exponent + 1;  // position of the decimal point relative to the digits

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
