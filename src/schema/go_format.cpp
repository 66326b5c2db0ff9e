#include "go_format.hpp"

#include "core/shared_helpers.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <system_error>
#include <vector>

namespace babelqueue {
inline namespace v1 {
namespace schema {
namespace detail {
namespace {

// Shortest round-trip digits, shared with the wire's double layout (core).
using decimal_digits = ::babelqueue::detail::shortest_digits;
using ::babelqueue::detail::shortest;

// strconv's %e layout of the shortest digits: d[.ddd]e±XX (at least two exponent digits).
std::string layout_e(const decimal_digits& d) {
  std::string out = d.negative ? "-" : "";
  out += d.digits[0];
  if (d.digits.size() > 1) {
    out += '.';
    out.append(d.digits, 1);
  }
  int exp = d.digits == "0" ? 0 : d.point - 1;
  out += 'e';
  out += exp < 0 ? '-' : '+';
  exp = std::abs(exp);
  if (exp < 10) out += '0';
  out += std::to_string(exp);
  return out;
}

// strconv's %f layout of the shortest digits (no exponent, no trailing zeros).
std::string layout_f(const decimal_digits& d) {
  std::string out = d.negative ? "-" : "";
  if (d.point <= 0) {
    out += "0.";
    out.append(static_cast<std::size_t>(-d.point), '0');
    out += d.digits;
    return out;
  }
  const auto point = static_cast<std::size_t>(d.point);
  if (d.digits.size() <= point) {
    out += d.digits;
    out.append(point - d.digits.size(), '0');
    return out;
  }
  out.append(d.digits, 0, point);
  out += '.';
  out.append(d.digits, point);
  return out;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Decodes one UTF-8 sequence at text[i]; returns its length, or 0 when invalid (Go then sees
// utf8.RuneError of width 1).
std::size_t decode_utf8(std::string_view text, std::size_t i, char32_t& cp) {
  const auto b0 = static_cast<unsigned char>(text[i]);
  std::size_t len = 0;
  char32_t min = 0;
  if (b0 < 0x80) {
    cp = b0;
    return 1;
  } else if ((b0 & 0xE0) == 0xC0) {
    len = 2, cp = b0 & 0x1F, min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3, cp = b0 & 0x0F, min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4, cp = b0 & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (i + len > text.size()) return 0;
  for (std::size_t k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(text[i + k]);
    if ((b & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

// unicode.IsPrint, approximated for the code points likely to appear in property names:
// control, format, separator (other than ASCII space) and private-use characters are not
// printable.
bool go_printable(char32_t cp) {
  if (cp < 0x20 || cp == 0x7F) return false;
  if (cp < 0x7F) return true;
  if (cp >= 0x80 && cp <= 0xA0) return false;
  if (cp == 0xAD || cp == 0x1680 || cp == 0x180E || cp == 0x3000 || cp == 0xFEFF) return false;
  if (cp >= 0x2000 && cp <= 0x200F) return false;
  if (cp >= 0x2028 && cp <= 0x202F) return false;
  if (cp >= 0x205F && cp <= 0x206F) return false;
  if (cp >= 0xE000 && cp <= 0xF8FF) return false;
  if (cp >= 0xFFF9 && cp <= 0xFFFB) return false;
  if (cp == 0xFFFE || cp == 0xFFFF) return false;
  if (cp >= 0xF0000) return false;  // supplementary private use planes
  return true;
}

void hex_escape(std::string& out, const char* prefix, unsigned value, int width) {
  static constexpr char digits[] = "0123456789abcdef";
  out += prefix;
  for (int shift = (width - 1) * 4; shift >= 0; shift -= 4) out += digits[(value >> shift) & 0xF];
}

}  // namespace

std::string go_float(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  const auto d = shortest(value);
  const int exp = d.digits == "0" ? 0 : d.point - 1;
  // strconv 'g' with the shortest precision switches to %e when exp < -4 || exp >= 6 —
  // fmt.Println(1e6) prints 1e+06.
  if (exp < -4 || exp >= 6) return layout_e(d);
  return layout_f(d);
}

std::string go_value(const json& value) {
  switch (value.type()) {
    case json::value_t::null:
      return "<nil>";
    case json::value_t::boolean:
      return value.get<bool>() ? "true" : "false";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
      // encoding/json decodes every number into float64.
      return go_float(value.get<double>());
    case json::value_t::string:
      return value.get<std::string>();
    case json::value_t::array: {
      std::string out = "[";
      bool first = true;
      for (const auto& item : value) {
        if (!first) out += ' ';
        first = false;
        out += go_value(item);
      }
      return out + "]";
    }
    case json::value_t::object: {
      // fmt prints maps with their keys sorted.
      std::vector<std::pair<std::string, const json*>> members;
      for (auto it = value.begin(); it != value.end(); ++it)
        members.emplace_back(it.key(), &it.value());
      std::sort(members.begin(), members.end(),
                [](const auto& a, const auto& b) { return a.first < b.first; });
      std::string out = "map[";
      bool first = true;
      for (const auto& [key, item] : members) {
        if (!first) out += ' ';
        first = false;
        out += key;
        out += ':';
        out += go_value(*item);
      }
      return out + "]";
    }
    default:
      return "";
  }
}

std::string go_quote(std::string_view text) {
  std::string out = "\"";
  for (std::size_t i = 0; i < text.size();) {
    char32_t cp = 0;
    const std::size_t len = decode_utf8(text, i, cp);
    if (len == 0) {
      hex_escape(out, "\\x", static_cast<unsigned char>(text[i]), 2);
      ++i;
      continue;
    }
    i += len;
    switch (cp) {
      case '"':
        out += "\\\"";
        continue;
      case '\\':
        out += "\\\\";
        continue;
      case '\a':
        out += "\\a";
        continue;
      case '\b':
        out += "\\b";
        continue;
      case '\f':
        out += "\\f";
        continue;
      case '\n':
        out += "\\n";
        continue;
      case '\r':
        out += "\\r";
        continue;
      case '\t':
        out += "\\t";
        continue;
      case '\v':
        out += "\\v";
        continue;
      default:
        break;
    }
    if (go_printable(cp)) {
      append_utf8(out, cp);
    } else if (cp < 0x20 || cp == 0x7F) {
      hex_escape(out, "\\x", static_cast<unsigned>(cp), 2);
    } else if (cp < 0x10000) {
      hex_escape(out, "\\u", static_cast<unsigned>(cp), 4);
    } else {
      hex_escape(out, "\\U", static_cast<unsigned>(cp), 8);
    }
  }
  out += '"';
  return out;
}

void go_json_string(std::string_view text, std::string& out) {
  out += '"';
  for (std::size_t i = 0; i < text.size();) {
    const auto b = static_cast<unsigned char>(text[i]);
    if (b < 0x80) {
      ++i;
      switch (b) {
        case '"':
          out += "\\\"";
          break;
        case '\\':
          out += "\\\\";
          break;
        case '\b':
          out += "\\b";
          break;  // Go >= 1.22
        case '\f':
          out += "\\f";
          break;  // Go >= 1.22
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\t':
          out += "\\t";
          break;
        case '<':
        case '>':
        case '&':
          hex_escape(out, "\\u00", b, 2);
          break;
        default:
          if (b < 0x20) {
            hex_escape(out, "\\u00", b, 2);
          } else {
            out += static_cast<char>(b);
          }
      }
      continue;
    }
    char32_t cp = 0;
    const std::size_t len = decode_utf8(text, i, cp);
    if (len == 0) {
      out += "\\ufffd";
      ++i;
      continue;
    }
    if (cp == 0x2028 || cp == 0x2029) {
      hex_escape(out, "\\u", static_cast<unsigned>(cp), 4);
    } else {
      out.append(text.substr(i, len));
    }
    i += len;
  }
  out += '"';
}

// encoding/json's float64 layout: %f unless |v| < 1e-6 or >= 1e21, then %e with a one-digit
// negative exponent cleaned up (`1e-07` → `1e-7`).
std::string go_json_number(double value) {
  const auto d = shortest(value);
  const double magnitude = std::fabs(value);
  if (magnitude != 0 && (magnitude < 1e-6 || magnitude >= 1e21)) {
    std::string text = layout_e(d);
    const auto n = text.size();
    if (n >= 4 && text[n - 4] == 'e' && text[n - 3] == '-' && text[n - 2] == '0')
      text.erase(n - 2, 1);
    return text;
  }
  return layout_f(d);
}

}  // namespace detail
}  // namespace schema
}  // namespace v1
}  // namespace babelqueue
