// ECMAScript Number::toString layout over the shortest round-trip digits (D2).
#include "shared_helpers.hpp"

#include <babelqueue/codec.hpp>

#include <cmath>
#include <cstdlib>

namespace babelqueue {
inline namespace v1 {

std::string format_double(double value) {
  if (value == 0) return std::signbit(value) ? "-0" : "0";  // -0 as Go writes it (D2)
  const detail::shortest_digits d = detail::shortest(value);
  std::string out;
  if (d.negative) out.push_back('-');
  const std::string& digits = d.digits;
  const int k = static_cast<int>(digits.size());
  const int n = d.point;  // position of the decimal point relative to the digits
  if (k <= n && n <= 21) {
    out += digits;
    out.append(static_cast<std::size_t>(n - k), '0');
  } else if (0 < n && n <= 21) {
    out.append(digits, 0, static_cast<std::size_t>(n));
    out.push_back('.');
    out.append(digits, static_cast<std::size_t>(n), std::string::npos);
  } else if (-6 < n && n <= 0) {
    out += "0.";
    out.append(static_cast<std::size_t>(-n), '0');
    out += digits;
  } else {
    out.push_back(digits[0]);
    if (k > 1) {
      out.push_back('.');
      out.append(digits, 1, std::string::npos);
    }
    out.push_back('e');
    out.push_back(n - 1 < 0 ? '-' : '+');
    out += std::to_string(std::abs(n - 1));
  }
  return out;
}

}  // namespace v1
}  // namespace babelqueue
