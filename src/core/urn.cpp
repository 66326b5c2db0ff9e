// URN convention check (advisory) and Unicode trimming.
#include <babelqueue/urn.hpp>

#include <cstdint>

namespace babelqueue {
inline namespace v1 {
namespace {

// Decodes one UTF-8 code point at p (returns its length, 0 when invalid).
std::size_t decode_utf8(const unsigned char* p, std::size_t avail, std::uint32_t& cp) noexcept {
  if (avail == 0) return 0;
  unsigned char c = p[0];
  if (c < 0x80) {
    cp = c;
    return 1;
  }
  std::size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 0;
  if (n == 0 || n > avail) return 0;
  cp = c & (0xFF >> (n + 1));
  for (std::size_t i = 1; i < n; ++i) {
    if ((p[i] & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (p[i] & 0x3F);
  }
  return n;
}

// Go's unicode.IsSpace: ASCII white space, NEL, NBSP and the Unicode Z-category spaces.
bool is_unicode_space(std::uint32_t cp) noexcept {
  switch (cp) {
    case 0x09: case 0x0A: case 0x0B: case 0x0C: case 0x0D: case 0x20:
    case 0x85: case 0xA0: case 0x1680: case 0x2028: case 0x2029: case 0x202F:
    case 0x205F: case 0x3000:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200A;
  }
}

// Length of the trailing code point ending at `end` (0 when invalid).
std::size_t last_code_point(const unsigned char* begin, const unsigned char* end,
                            std::uint32_t& cp) noexcept {
  const unsigned char* p = end;
  for (int i = 0; i < 4 && p > begin; ++i) {
    --p;
    if ((*p & 0xC0) != 0x80) {
      std::size_t n = decode_utf8(p, static_cast<std::size_t>(end - p), cp);
      return n == static_cast<std::size_t>(end - p) ? n : 0;
    }
  }
  return 0;
}

bool all_of(std::string_view s, bool (*ok)(char)) {
  for (char c : s)
    if (!ok(c)) return false;
  return true;
}

bool urn_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == ':' || c == '.' || c == '_' || c == '-';
}
bool context_char(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; }

}  // namespace

std::string_view trim_unicode(std::string_view text) noexcept {
  // Fast path: both ends are printable ASCII, nothing to trim.
  if (!text.empty()) {
    auto first = static_cast<unsigned char>(text.front());
    auto last = static_cast<unsigned char>(text.back());
    if (first > 0x20 && first < 0x7F && last > 0x20 && last < 0x7F) return text;
  }
  auto* b = reinterpret_cast<const unsigned char*>(text.data());
  auto* e = b + text.size();
  std::uint32_t cp = 0;
  while (b < e) {
    std::size_t n = decode_utf8(b, static_cast<std::size_t>(e - b), cp);
    if (n == 0 || !is_unicode_space(cp)) break;
    b += n;
  }
  while (e > b) {
    std::size_t n = last_code_point(b, e, cp);
    if (n == 0 || !is_unicode_space(cp)) break;
    e -= n;
  }
  return {reinterpret_cast<const char*>(b), static_cast<std::size_t>(e - b)};
}

std::string_view to_string(urn_rule rule) noexcept {
  switch (rule) {
    case urn_rule::ok: return "ok";
    case urn_rule::empty: return "empty";
    case urn_rule::not_ascii_lowercase: return "not_ascii_lowercase";
    case urn_rule::bad_prefix: return "bad_prefix";
    case urn_rule::bad_context: return "bad_context";
    case urn_rule::bad_event: return "bad_event";
    case urn_rule::extra_segments: return "extra_segments";
    case urn_rule::class_name: return "class_name";
  }
  return "ok";
}

urn_verdict check_urn(std::string_view urn) {
  if (urn.empty()) return {urn_rule::empty, "a URN must not be empty"};
  if (urn.find('\\') != std::string_view::npos) {
    return {urn_rule::class_name, "a URN is never a class name (found '\\')"};
  }
  if (!all_of(urn, urn_char)) {
    return {urn_rule::not_ascii_lowercase,
            "a URN uses only lowercase ASCII [a-z0-9:._-]: no spaces, uppercase or unicode"};
  }
  constexpr std::string_view prefix = "urn:babel:";
  if (urn.substr(0, prefix.size()) != prefix) {
    return {urn_rule::bad_prefix, "a URN starts with 'urn:babel:'"};
  }
  std::string_view rest = urn.substr(prefix.size());
  std::size_t colon = rest.find(':');
  if (colon == std::string_view::npos) {
    return {urn_rule::bad_event, "missing ':<event-or-command>' after the bounded context"};
  }
  std::string_view context = rest.substr(0, colon);
  std::string_view event = rest.substr(colon + 1);
  if (context.empty() || !all_of(context, context_char)) {
    return {urn_rule::bad_context, "the bounded context is lowercase [a-z0-9-]+"};
  }
  if (event.find(':') != std::string_view::npos) {
    return {urn_rule::extra_segments, "a URN has exactly four ':'-separated segments"};
  }
  if (event.empty() || event.front() == '.' || event.back() == '.' ||
      event.find("..") != std::string_view::npos) {
    return {urn_rule::bad_event, "the event is lowercase, with non-empty dot-separated parts"};
  }
  return {};
}

}  // namespace v1
}  // namespace babelqueue
