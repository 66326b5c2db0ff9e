#pragma once
// JSON text for SQS requests, written by hand so a message body is sent exactly: a string
// value is escaped as JSON requires (`"`, `\`, control characters) and nothing else.
// SQS accepts only XML characters in a body or attribute (#x9 #xA #xD #x20–#xD7FF
// #xE000–#xFFFD #x10000–#x10FFFF) in valid UTF-8; sqs_text_problem() says why a text is not
// that, so the caller gets invalid_argument instead of a refused call.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace babelqueue::inline v1::sqs::detail {

/// Appends `text` as a JSON string literal (with the quotes).
inline void append_json_string(std::string& out, std::string_view text) {
  static constexpr char hex[] = "0123456789abcdef";
  out.push_back('"');
  std::size_t run = 0;  // start of the pending run of bytes that need no escape
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(text.data() + run, i - run);
    run = i + 1;
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        out += "\\u00";
        out.push_back(hex[c >> 4]);
        out.push_back(hex[c & 0xF]);
    }
  }
  out.append(text.data() + run, text.size() - run);
  out.push_back('"');
}

/// Why `text` cannot be an SQS message body or attribute value (invalid UTF-8 or a
/// character outside SQS's allowed set, with its byte offset), or nullopt when it can.
inline std::optional<std::string> sqs_text_problem(std::string_view text) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::size_t i = 0;
  while (i < n) {
    const unsigned char c = p[i];
    if (c < 0x80) {
      if (c < 0x20 && c != 0x9 && c != 0xA && c != 0xD) {
        return "control character 0x" + std::to_string(c) + " at byte " + std::to_string(i) +
               " (SQS accepts only TAB, LF and CR below U+0020)";
      }
      ++i;
      continue;
    }
    std::uint32_t cp = 0;
    std::size_t len = 0;
    if ((c & 0xE0) == 0xC0) {
      cp = c & 0x1F;
      len = 2;
    } else if ((c & 0xF0) == 0xE0) {
      cp = c & 0x0F;
      len = 3;
    } else if ((c & 0xF8) == 0xF0) {
      cp = c & 0x07;
      len = 4;
    } else
      return "invalid UTF-8 at byte " + std::to_string(i);
    if (i + len > n) return "truncated UTF-8 sequence at byte " + std::to_string(i);
    for (std::size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return "invalid UTF-8 at byte " + std::to_string(i);
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    const bool overlong =
        (len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000);
    if (overlong || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      return "invalid UTF-8 at byte " + std::to_string(i);
    }
    if (cp == 0xFFFE || cp == 0xFFFF) {
      return "character U+FFFE/U+FFFF at byte " + std::to_string(i) + " (not allowed by SQS)";
    }
    i += len;
  }
  return std::nullopt;
}

}  // namespace babelqueue::inline v1::sqs::detail
