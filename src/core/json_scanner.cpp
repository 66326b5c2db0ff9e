#include "json_scanner.hpp"

#include "shared_helpers.hpp"

#include <algorithm>
#include <array>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace babelqueue::inline v1::detail {
namespace {

bool lower_hex4(const char* p) noexcept {
  for (int i = 0; i < 4; ++i) {
    if (p[i] >= 'A' && p[i] <= 'F') return false;
  }
  return true;
}

// Reads 4 hex digits; -1 when one is not hex.
long read_hex4(const char* p) noexcept {
  long v = 0;
  for (int i = 0; i < 4; ++i) {
    int h = hex_value(p[i]);
    if (h < 0) return -1;
    v = (v << 4) | h;
  }
  return v;
}

void append_utf8(std::uint32_t cp, std::string& out) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// Index of the first byte in [p, end) that needs attention inside a string: '"', '\\',
// a control byte (< 0x20) or a non-ASCII byte (>= 0x80). Returns end - p when none.
std::size_t find_special(const char* p, const char* end) noexcept {
  const char* start = p;
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i space = _mm_set1_epi8(0x20);
  while (end - p >= 16) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    // Signed compare: bytes >= 0x80 are negative, so "< 0x20" also flags non-ASCII.
    __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                             _mm_cmplt_epi8(v, space));
    int mask = _mm_movemask_epi8(m);
    if (mask != 0)
      return static_cast<std::size_t>(p - start) + static_cast<std::size_t>(__builtin_ctz(mask));
    p += 16;
  }
#endif
  while (p < end) {
    auto c = static_cast<unsigned char>(*p);
    if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80) break;
    ++p;
  }
  return static_cast<std::size_t>(p - start);
}

}  // namespace

bool json_reader::fail(std::string_view what) {
  if (error_.empty()) {
    error_.assign(what);
    error_ += " at byte ";
    error_ += std::to_string(offset());
  }
  return false;
}

void json_reader::skip_ws_slow() noexcept {
  if (!is_ws(*p_)) return;  // a control byte: not white space; the caller reports it
  canonical_ = false;
  while (p_ < end_ && is_ws(*p_)) ++p_;
}

bool json_reader::expect_literal(std::string_view word) {
  if (static_cast<std::size_t>(end_ - p_) < word.size() ||
      std::memcmp(p_, word.data(), word.size()) != 0) {
    return fail("invalid literal");
  }
  p_ += word.size();
  return true;
}

bool json_reader::scan_string_slow(string_scan& out, const char* start, const char* resume,
                                   bool canonical) {
  p_ = resume;
  bool escapes = false;
  bool canon = canonical;
  for (;;) {
    p_ += find_special(p_, end_);
    if (p_ >= end_) return fail("unterminated string");
    auto c = static_cast<unsigned char>(*p_);
    if (c == '"') break;
    if (c == '\\') {
      escapes = true;
      const char* esc = p_;
      if (!scan_escape()) return false;
      // Canonical escapes (D2): \" \\ \b \f \n \r \t, \u00xx (lowercase) for the other
      // controls, \u2028 \u2029 (lowercase). Anything else (\/ \u00e9 \u000A ...) is not.
      char kind = esc[1];
      if (kind == 'u') {
        long cp = read_hex4(esc + 2);
        bool ok =
            lower_hex4(esc + 2) &&
            ((cp < 0x20 && cp != 0x08 && cp != 0x09 && cp != 0x0A && cp != 0x0C && cp != 0x0D) ||
             cp == 0x2028 || cp == 0x2029);
        if (!ok) canon = false;
      } else if (kind == '/') {
        canon = false;
      }
      continue;
    }
    if (c < 0x20) return fail("unescaped control character in a string");
    // non-ASCII
    std::size_t n = utf8_sequence_length(reinterpret_cast<const unsigned char*>(p_),
                                         reinterpret_cast<const unsigned char*>(end_));
    if (n == 0) return fail("invalid UTF-8 in a string");
    if (n == 3 && is_line_or_paragraph_separator(p_)) canon = false;  // escaped when canonical
    p_ += n;
  }
  out.raw = std::string_view(start, static_cast<std::size_t>(p_ - start));
  out.has_escapes = escapes;
  out.canonical = canon;
  if (!canon) canonical_ = false;
  ++p_;  // closing quote
  return true;
}

bool json_reader::scan_escape() {
  // p_ at the backslash
  if (end_ - p_ < 2) return fail("unterminated escape");
  char k = p_[1];
  switch (k) {
    case '"':
    case '\\':
    case '/':
    case 'b':
    case 'f':
    case 'n':
    case 'r':
    case 't':
      p_ += 2;
      return true;
    case 'u': {
      if (end_ - p_ < 6) return fail("truncated \\u escape");
      long cp = read_hex4(p_ + 2);
      if (cp < 0) return fail("invalid \\u escape");
      p_ += 6;
      if (cp >= 0xDC00 && cp <= 0xDFFF) return fail("lone low surrogate escape");
      if (cp >= 0xD800 && cp <= 0xDBFF) {
        if (end_ - p_ < 6 || p_[0] != '\\' || p_[1] != 'u')
          return fail("lone high surrogate escape");
        long lo = read_hex4(p_ + 2);
        if (lo < 0xDC00 || lo > 0xDFFF) return fail("lone high surrogate escape");
        p_ += 6;
        canonical_ = false;  // a pair stands for a raw non-BMP character in canonical form
      }
      return true;
    }
    default:
      return fail("invalid escape");
  }
}

// Iterative validation (no recursion, no sink): the hot path of decode() for `data`.
// Containers opened here are tracked one bit per level (1 = object, 0 = array).
//
// The position lives in a local, not in p_: a member is stored and reloaded around every
// token (the out-of-line slow paths could read it), which put a store-to-load forwarding
// delay on the critical path of each of the thousand tokens of a large payload. p_ is
// brought in step only around the out-of-line calls (white space, literals, the full string
// scanner, errors), so the offsets in error messages are the same as the member version's.
bool json_reader::skip_value() {
  // The innermost open container's kind is `in_object` (a register: it is read after every
  // value); the kinds of the ones around it are bits of `kinds`, one per level.
  std::uint64_t kinds[64];  // 4096 levels, the depth cap's ceiling
  std::size_t level = 0;
  bool in_object = false;
  // Levels this value may open: the reader's cap less the depth it is at. The reader's own
  // counter is not stepped per bracket; with every bracket closed it would be back here.
  const std::size_t room =
      std::min<std::size_t>(max_depth_ > depth_ ? max_depth_ - depth_ : 0, 4096);
  const char* p = p_;
  const char* const end = end_;
  auto fail_here = [&](std::string_view what) {
    p_ = p;
    return fail(what);
  };
  auto ws = [&] {
    if (p < end && static_cast<unsigned char>(*p) <= 0x20) {
      p_ = p;
      skip_ws_slow();
      p = p_;
    }
  };
  auto literal = [&](std::string_view word) {
    p_ = p;
    const bool ok = expect_literal(word);
    p = p_;
    return ok;
  };
  auto open = [&](bool object) {
    ++p;
    if (level >= room) return fail_here("nesting is deeper than the limit");
    const std::uint64_t bit = std::uint64_t{1} << (level & 63);
    if (in_object)
      kinds[level >> 6] |= bit;
    else
      kinds[level >> 6] &= ~bit;
    ++level;
    in_object = object;
    return true;
  };
  auto close = [&] {
    ++p;
    --level;
    in_object = ((kinds[level >> 6] >> (level & 63)) & 1u) != 0;
  };
  // At '"': scan_string() on the local position, keeping no result.
  auto skip_string = [&] {
    const char* start = p + 1;
    bool canonical = true;
    const string_run run = scan_string_run(start, end, canonical);
    if (run.closed) {
      if (!canonical) canonical_ = false;
      p = run.at + 1;
      return true;
    }
    string_scan unused;
    const bool ok = scan_string_slow(unused, start, run.at, canonical);
    p = p_;
    return ok;
  };
  // At '-' or a digit: scan_number() on the local position.
  auto skip_number = [&] {
    bool integer;
    const char* why;
    p = scan_number_run(p, end, integer, why);
    return why == nullptr || fail_here(why);
  };

// White space is not looked for before each token: compact JSON has none, so the token's own
// test comes first and a byte <= ' ' that fails it is the rare case that skips white space
// and tests again (two tests per token fewer: about 6 % of validating a large payload).
value:  // at the value, or at white space before it
  if (p >= end) return fail_here("unexpected end of input");
  switch (*p) {
    case '"':
      if (!skip_string()) return false;
      goto after_value;
    case '{':
      if (!open(true)) return false;
      if (p < end && *p == '"') goto key;
      ws();
      if (p < end && *p == '}') {
        close();
        goto after_value;
      }
      goto key;
    case '[':
      if (!open(false)) return false;
      ws();
      if (p < end && *p == ']') {
        close();
        goto after_value;
      }
      goto value;
    case 't':
      if (!literal("true")) return false;
      goto after_value;
    case 'f':
      if (!literal("false")) return false;
      goto after_value;
    case 'n':
      if (!literal("null")) return false;
      goto after_value;
    case ' ':
    case '\t':
    case '\n':
    case '\r':
      ws();
      goto value;
    default:
      if (!skip_number()) return false;
      goto after_value;
  }

key:  // at the key, or at white space before it
  if (p >= end || *p != '"') {
    ws();
    if (p >= end || *p != '"') return fail_here("expected a string key");
  }
  if (!skip_string()) return false;
  if (p >= end || *p != ':') {
    ws();
    if (p >= end || *p != ':') return fail_here("expected ':' after a key");
  }
  ++p;
  goto value;

after_value : {
  if (level == 0) {
    p_ = p;
    return true;
  }
  if (p < end && static_cast<unsigned char>(*p) <= 0x20) ws();
  const char c = p < end ? *p : '\0';
  if (c == ',') {
    ++p;
    if (in_object) goto key;
    goto value;
  }
  if (c == (in_object ? '}' : ']')) {
    close();
    goto after_value;
  }
  return fail_here(in_object ? "expected ',' or '}' in an object"
                             : "expected ',' or ']' in an array");
}
}

void unescape_into(std::string_view raw, std::string& out) {
  const char* p = raw.data();
  const char* end = p + raw.size();
  while (p < end) {
    const char* q =
        static_cast<const char*>(std::memchr(p, '\\', static_cast<std::size_t>(end - p)));
    if (q == nullptr) {
      out.append(p, end);
      return;
    }
    out.append(p, q);
    char k = q[1];
    p = q + 2;
    switch (k) {
      case 'b':
        out.push_back('\b');
        break;
      case 'f':
        out.push_back('\f');
        break;
      case 'n':
        out.push_back('\n');
        break;
      case 'r':
        out.push_back('\r');
        break;
      case 't':
        out.push_back('\t');
        break;
      case 'u': {
        auto cp = static_cast<std::uint32_t>(read_hex4(p));
        p += 4;
        if (cp >= 0xD800 && cp <= 0xDBFF) {  // validated: a low surrogate follows
          auto lo = static_cast<std::uint32_t>(read_hex4(p + 2));
          p += 6;
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        }
        append_utf8(cp, out);
        break;
      }
      default:
        out.push_back(k);
        break;  // " \ /
    }
  }
}

namespace {

constexpr const std::array<bool, 256>& kSpecial = k_needs_escape;

// Appends `utf8` escaped per D2. When `check` is set, invalid UTF-8 (including encoded
// surrogates) makes it stop and return false; otherwise the input is trusted.
template <bool check>
bool escape_impl(std::string_view utf8, std::string& out) {
  static constexpr char hex[] = "0123456789abcdef";
  const char* p = utf8.data();
  const char* end = p + utf8.size();
  while (p < end) {
    const char* q = p;
    if (end - q >= 16) {
      q += find_special(q, end);
    } else {
      while (q < end && !kSpecial[static_cast<unsigned char>(*q)]) ++q;
    }
    out.append(p, q);
    p = q;
    if (p >= end) break;
    auto c = static_cast<unsigned char>(*p);
    if (c >= 0x80) {
      std::size_t n;
      if constexpr (check) {
        n = utf8_sequence_length(reinterpret_cast<const unsigned char*>(p),
                                 reinterpret_cast<const unsigned char*>(end));
        if (n == 0) return false;
      } else {
        n = 1;
        while (p + n < end && (static_cast<unsigned char>(p[n]) & 0xC0) == 0x80) ++n;
      }
      // Only U+2028 / U+2029 are escaped among non-ASCII characters (D2).
      if (n == 3 && c == 0xE2 && static_cast<unsigned char>(p[1]) == 0x80 &&
          (static_cast<unsigned char>(p[2]) == 0xA8 || static_cast<unsigned char>(p[2]) == 0xA9)) {
        out.append(static_cast<unsigned char>(p[2]) == 0xA8 ? "\\u2028" : "\\u2029");
      } else {
        out.append(p, n);
      }
      p += n;
      continue;
    }
    ++p;
    switch (c) {
      case '"':
        out.append("\\\"");
        break;
      case '\\':
        out.append("\\\\");
        break;
      case '\b':
        out.append("\\b");
        break;
      case '\f':
        out.append("\\f");
        break;
      case '\n':
        out.append("\\n");
        break;
      case '\r':
        out.append("\\r");
        break;
      case '\t':
        out.append("\\t");
        break;
      default: {
        char buf[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 0xF]};
        out.append(buf, 6);
      }
    }
  }
  return true;
}

}  // namespace

void escape_into(std::string_view utf8, std::string& out) { escape_impl<false>(utf8, out); }

bool escape_checked_into(std::string_view utf8, std::string& out) {
  return escape_impl<true>(utf8, out);
}

void reescape_into(const string_scan& s, std::string& out) {
  if (s.canonical) {
    out.append(s.raw);
    return;
  }
  std::string plain;
  unescape_into(s.raw, plain);
  escape_into(plain, out);
}

bool valid_utf8(std::string_view text) noexcept {
  const char* p = text.data();
  const char* end = p + text.size();
  while (p < end) {
    auto c = static_cast<unsigned char>(*p);
    if (c < 0x80) {
      ++p;
      continue;
    }
    std::size_t n = utf8_sequence_length(reinterpret_cast<const unsigned char*>(p),
                                         reinterpret_cast<const unsigned char*>(end));
    if (n == 0) return false;
    p += n;
  }
  return true;
}

}  // namespace babelqueue::inline v1::detail

namespace babelqueue::inline v1::detail {

std::string to_valid_utf8(std::string_view text) {
  if (valid_utf8(text)) return std::string(text);
  std::string out;
  out.reserve(text.size() + 8);
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const auto* end = p + text.size();
  while (p < end) {
    if (*p < 0x80) {
      out.push_back(static_cast<char>(*p++));
      continue;
    }
    std::size_t n = utf8_sequence_length(p, end);
    if (n == 0) {
      out.append("\xEF\xBF\xBD");  // U+FFFD for each invalid byte
      ++p;
    } else {
      out.append(reinterpret_cast<const char*>(p), n);
      p += n;
    }
  }
  return out;
}

}  // namespace babelqueue::inline v1::detail
