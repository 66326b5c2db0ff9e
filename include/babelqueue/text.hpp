#pragma once
/// @file text.hpp
/// @brief The one "blank" rule of the SDK (decision D3a): empty or ASCII white space only.
///
/// Used by the decoder (`job`/`urn`/`trace_id`), the producers (`make`, `app::handle`, CLI
/// arguments) and header hygiene, so a URN registered and a URN received are judged by the
/// same rule. U+00A0, U+2003, U+3000 and other Unicode spaces are NOT blank (as Python's
/// ADR-0032 and the PHP SDK say, and as Go, Python and PHP behave).
/// @note Thread-safety: pure functions.

#include <string>
#include <string_view>

namespace babelqueue {
inline namespace v1 {

/// Space, `\t`, `\n`, `\v`, `\f`, `\r`.
constexpr bool is_ascii_space(char c) noexcept { return c == ' ' || (c >= '\t' && c <= '\r'); }

/// True when `text` is empty or holds only ASCII white space.
constexpr bool is_blank(std::string_view text) noexcept {
  for (char c : text) {
    if (!is_ascii_space(c)) return false;
  }
  return true;
}

/// `text` without leading and trailing ASCII white space (a view into `text`).
constexpr std::string_view trim_ascii(std::string_view text) noexcept {
  while (!text.empty() && is_ascii_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_ascii_space(text.back())) text.remove_suffix(1);
  return text;
}

/// `c` with A–Z lower-cased (no locale: protocol names, never user text).
constexpr char ascii_lower(char c) noexcept {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

/// `text` with A–Z lower-cased.
inline std::string ascii_lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = ascii_lower(c);
  return out;
}

/// True when `a` and `b` are equal ignoring the case of A–Z.
constexpr bool equals_ascii_ci(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
  }
  return true;
}

}  // namespace v1
}  // namespace babelqueue
