#pragma once
// Small helpers shared by several components, so each exists once. Header-only and private:
// not installed, not part of the public API. Other components include it through their
// private `-I src` (`#include "core/shared_helpers.hpp"`), as they include their own
// private headers.

#include <charconv>
#include <cmath>
#include <string>
#include <string_view>

namespace babelqueue::inline v1::detail {

/// Value of one hexadecimal digit (either case), or -1.
constexpr int hex_value(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/// A dotted property path one level deeper ("customer" + "email" -> "customer.email"), the
/// name alone at the root: how the schema tools and the GDPR scans name a property.
inline std::string join_path(const std::string& path, const std::string& name) {
  return path.empty() ? name : path + "." + name;
}

/// The pieces joined into one string, sized once. For messages built from literals and
/// views: `"x" + std::string(view) + "y"` makes GCC 12 at -O3 warn (-Wrestrict, a false
/// positive in operator+(const char*, std::string&&)), which a -Werror release build stops on.
template <class... Pieces>
std::string concat(const Pieces&... pieces) {
  std::string out;
  out.reserve((std::string_view(pieces).size() + ...));
  (out.append(std::string_view(pieces)), ...);
  return out;
}

/// Appends `token` as one JSON-pointer reference token (RFC 6901: `~` -> `~0`, `/` -> `~1`).
inline void append_pointer_token(std::string_view token, std::string& out) {
  for (char c : token) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
}

/// `token` escaped as one JSON-pointer reference token.
inline std::string pointer_escape(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  append_pointer_token(token, out);
  return out;
}

/// Longest text format_double_to() writes ("-0.000001" + 17 digits, or 17 digits with
/// "e-324" and a sign), with room to spare.
inline constexpr std::size_t k_double_text_max = 32;
/// Writes the D2 text of a finite double (format_double()'s) into `out`, which has room for
/// k_double_text_max bytes; returns its length.
std::size_t format_double_to(double value, char* out) noexcept;

/// The shortest decimal digits that round-trip a finite double, and where the decimal point
/// goes: |value| = 0.d1d2…dk × 10^point (Go's decimalSlice `d` and `dp`). Every layout
/// (ECMAScript's for the wire, Go's `%v`/`%e`/`%f` for the schema tooling) is built on it.
struct shortest_digits {
  bool negative = false;  // the sign bit (set for -0)
  std::string digits;     // no leading or trailing zeros; "0" for zero
  int point = 0;          // 1 for zero
};

inline shortest_digits shortest(double value) {
  shortest_digits out;
  out.negative = std::signbit(value);
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, std::fabs(value), std::chars_format::scientific);
  const std::string_view text(buf, static_cast<std::size_t>(res.ptr - buf));  // d[.ddd]e±XX
  const auto e = text.find('e');
  for (char c : text.substr(0, e)) {
    if (c != '.') out.digits.push_back(c);
  }
  int exponent = 0;
  std::from_chars(text.data() + e + 1 + (text[e + 1] == '+' ? 1 : 0), text.data() + text.size(),
                  exponent);
  while (out.digits.size() > 1 && out.digits.back() == '0') out.digits.pop_back();
  out.point = out.digits == "0" ? 1 : exponent + 1;
  return out;
}

}  // namespace babelqueue::inline v1::detail
