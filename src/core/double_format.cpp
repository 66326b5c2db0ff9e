// ECMAScript Number::toString layout over the shortest round-trip digits (D2).
#include <babelqueue/codec.hpp>

#include <charconv>
#include <cmath>
#include <cstdlib>

namespace babelqueue {
inline namespace v1 {

std::string format_double(double value) {
  std::string out;
  if (value == 0) return std::signbit(value) ? "-0" : "0";  // -0 as Go writes it (D2)
  if (value < 0) {
    out.push_back('-');
    value = -value;
  }
  // Shortest digits that round-trip, in scientific form: d[.ddd]e±x.
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::scientific);
  std::string_view sci(buf, static_cast<std::size_t>(res.ptr - buf));
  std::size_t e_pos = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e_pos)) {
    if (c != '.') digits.push_back(c);
  }
  int exponent = std::atoi(std::string(sci.substr(e_pos + 1)).c_str());
  const int k = static_cast<int>(digits.size());
  const int n = exponent + 1;  // position of the decimal point relative to the digits
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
