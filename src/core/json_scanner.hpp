#pragma once
// Strict RFC 8259 scanner shared by decode(), canonicalize() and parse_json().
//
// One reader, several consumers: the envelope decoder walks the frame itself and calls
// skip_value() for `data`; the canonical writer and the json builder drive walk() with a
// sink. The reader also tracks whether the text it has seen is already canonical (D2):
// compact, and every string escaped exactly as the canonical writer would escape it. A
// canonical body can then be kept byte-for-byte instead of being rewritten (D4).
//
// Private to babelqueue::core.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace babelqueue::inline v1::detail {

/// What scan_string() learnt about one string.
struct string_scan {
  std::string_view raw;      // the text between the quotes, escapes untouched
  bool has_escapes = false;  // raw contains a backslash (needs unescaping to read)
  bool canonical = true;     // raw is already in the canonical escaped form (D2)
};

/// What scan_number() learnt about one number.
struct number_scan {
  std::string_view text;    // exact text
  bool is_integer = false;  // no fraction and no exponent
};

// Length of the valid UTF-8 sequence starting at p (lead byte >= 0x80), or 0 when invalid
// (overlong forms, surrogates U+D800..DFFF and values above U+10FFFF are invalid).
inline std::size_t utf8_sequence_length(const unsigned char* p, const unsigned char* end) noexcept {
  unsigned char c = p[0];
  auto avail = static_cast<std::size_t>(end - p);
  auto cont = [&](std::size_t i) { return i < avail && (p[i] & 0xC0) == 0x80; };
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (avail < 3 || !cont(1) || !cont(2)) return 0;
    if (c == 0xE0 && p[1] < 0xA0) return 0;   // overlong
    if (c == 0xED && p[1] >= 0xA0) return 0;  // surrogate
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (avail < 4 || !cont(1) || !cont(2) || !cont(3)) return 0;
    if (c == 0xF0 && p[1] < 0x90) return 0;   // overlong
    if (c == 0xF4 && p[1] >= 0x90) return 0;  // above U+10FFFF
    return 4;
  }
  return 0;
}

class json_reader {
 public:
  json_reader(std::string_view text, std::size_t max_depth) noexcept
      : begin_(text.data()),
        p_(text.data()),
        end_(text.data() + text.size()),
        max_depth_(max_depth) {}

  // -- position --
  const char* pos() const noexcept { return p_; }
  const char* begin() const noexcept { return begin_; }
  const char* end() const noexcept { return end_; }
  /// Moves to `p`, a position inside the text: for a caller that scans a stretch with a
  /// local position (a register, not this member reloaded around every token) and hands it
  /// back before each out-of-line step.
  void seek(const char* p) noexcept { p_ = p; }
  bool at_end() const noexcept { return p_ == end_; }
  char peek() const noexcept { return p_ < end_ ? *p_ : '\0'; }
  bool consume(char c) noexcept {
    if (p_ < end_ && *p_ == c) {
      ++p_;
      return true;
    }
    return false;
  }
  std::size_t offset() const noexcept { return static_cast<std::size_t>(p_ - begin_); }

  // -- state --
  bool canonical() const noexcept { return canonical_; }
  void mark_not_canonical() noexcept { canonical_ = false; }
  const std::string& error() const noexcept { return error_; }
  /// Records the first error (with the byte offset) and returns false.
  bool fail(std::string_view what);

  // -- tokens --
  /// Skips JSON white space; any white space makes the text non-canonical.
  void skip_ws() noexcept {
    // One compare on the hot path: in compact JSON the next byte is never <= ' '.
    if (p_ < end_ && static_cast<unsigned char>(*p_) <= 0x20) skip_ws_slow();
  }
  /// At '"': validates one string (UTF-8, escapes, surrogate pairs) and moves past it.
  /// Inline fast path, 16 bytes at a time: which byte ends the string is read from the
  /// masks, not reloaded from memory, and a non-ASCII character is validated where it
  /// stands before the scan goes on, so text with a few accented letters never leaves the
  /// fast path. An escape or a control byte hands over to the full scanner, which resumes
  /// where the fast path stopped.
  bool scan_string(string_scan& out) {
    const char* start = p_ + 1;
    bool canonical = true;
    const string_run run = scan_string_run(start, end_, canonical);
    if (!run.closed) return scan_string_slow(out, start, run.at, canonical);
    out.raw = std::string_view(start, static_cast<std::size_t>(run.at - start));
    out.has_escapes = false;
    out.canonical = canonical;
    if (!canonical) canonical_ = false;
    p_ = run.at + 1;
    return true;
  }
  /// Where the fast path over a string's body from `q` stopped: at the closing quote
  /// (`closed`), or where the full scanner takes over (an escape, a control byte, invalid
  /// UTF-8, or fewer than 16 bytes left). Clears `canonical` on a raw U+2028 / U+2029.
  struct string_run {
    const char* at;
    bool closed;
  };
  static string_run scan_string_run(const char* q, const char* end, bool& canonical) noexcept {
#if defined(__SSE2__)
    while (end - q >= 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
      const auto quote =
          static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('"'))));
      // Signed compare: "< 0x20" flags the controls and every byte >= 0x80 at once.
      const auto special = static_cast<unsigned>(_mm_movemask_epi8(_mm_or_si128(
          _mm_cmpeq_epi8(v, _mm_set1_epi8('\\')), _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)))));
      // The bits up to the first quote (all 16 when there is none). Each non-ASCII character
      // among them is validated where it stands and its bytes' flags cleared, with no new
      // load; one that runs past the block moves the scan to its end.
      unsigned attention = special & (quote ^ (quote - 1));
      const char* next = q + 16;
      while (attention != 0) {
        const char* at = q + __builtin_ctz(attention);
        if (static_cast<unsigned char>(*at) < 0x80) return {at, false};  // an escape or a control
        const std::size_t n = utf8_sequence_length(reinterpret_cast<const unsigned char*>(at),
                                                   reinterpret_cast<const unsigned char*>(end));
        if (n == 0) return {at, false};  // the full scanner reports it
        if (n == 3 && is_line_or_paragraph_separator(at)) canonical = false;
        if (at + n > next) {
          next = at + n;
          break;
        }
        attention &= ~0u << (at + n - q);
      }
      if (next == q + 16 && quote != 0) return {q + __builtin_ctz(quote), true};
      q = next;
    }
#else
    (void)end;
    (void)canonical;
#endif
    return {q, false};
  }
  /// At '-' or a digit: validates one number and moves past it.
  inline bool scan_number(number_scan& out);
  /// The end of the number at `p` (`integer` when it has no fraction and no exponent), or,
  /// with `why` set, where and why it is invalid.
  static inline const char* scan_number_run(const char* p, const char* end, bool& integer,
                                            const char*& why) noexcept;
  /// Validates one value of any kind and moves past it.
  bool skip_value();
  /// Entering / leaving an array or object; false (with an error) when too deep.
  bool enter() {
    if (++depth_ > max_depth_) return fail("nesting is deeper than the limit");
    return true;
  }
  void leave() noexcept { --depth_; }

  /// Generic SAX walk of one value. Sink provides:
  ///   bool null(); bool boolean(bool); bool number(const number_scan&);
  ///   bool string(const string_scan&); bool key(const string_scan&);
  ///   bool begin_object(); bool end_object(); bool begin_array(); bool end_array();
  /// A sink returning false stops the walk (it must call fail() itself first).
  template <class Sink>
  bool walk(Sink& sink);

 private:
  static bool is_ws(char c) noexcept { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
  void skip_ws_slow() noexcept;
  /// The full string scanner; [start, resume) is known to be valid and free of escapes,
  /// and canonical when `canonical` is set.
  bool scan_string_slow(string_scan& out, const char* start, const char* resume, bool canonical);
  /// At a 3-byte UTF-8 sequence: U+2028 or U+2029, which the canonical form escapes (D2).
  static bool is_line_or_paragraph_separator(const char* p) noexcept {
    return static_cast<unsigned char>(p[0]) == 0xE2 && static_cast<unsigned char>(p[1]) == 0x80 &&
           (static_cast<unsigned char>(p[2]) == 0xA8 || static_cast<unsigned char>(p[2]) == 0xA9);
  }
  bool scan_escape();
  bool scan_utf8();
  bool expect_literal(std::string_view word);

  const char* begin_;
  const char* p_;
  const char* end_;
  std::size_t depth_ = 0;
  std::size_t max_depth_;
  bool canonical_ = true;
  std::string error_;
};

inline const char* json_reader::scan_number_run(const char* p, const char* end, bool& integer,
                                                const char*& why) noexcept {
  integer = true;
  why = nullptr;
  auto digits = [&] {
    while (p < end && *p >= '0' && *p <= '9') ++p;
  };
  if (p < end && *p == '-') ++p;
  if (p >= end) return why = "invalid number", p;
  if (*p == '0') {
    ++p;
  } else if (*p >= '1' && *p <= '9') {
    digits();
  } else {
    return why = "invalid value", p;
  }
  if (p < end && *p == '.') {
    integer = false;
    ++p;
    if (p >= end || *p < '0' || *p > '9') return why = "invalid number fraction", p;
    digits();
  }
  if (p < end && (*p == 'e' || *p == 'E')) {
    integer = false;
    ++p;
    if (p < end && (*p == '+' || *p == '-')) ++p;
    if (p >= end || *p < '0' || *p > '9') return why = "invalid number exponent", p;
    digits();
  }
  return p;
}

inline bool json_reader::scan_number(number_scan& out) {
  bool integer;
  const char* why;
  const char* after = scan_number_run(p_, end_, integer, why);
  if (why != nullptr) {
    p_ = after;
    return fail(why);
  }
  out.text = std::string_view(p_, static_cast<std::size_t>(after - p_));
  out.is_integer = integer;
  p_ = after;
  return true;
}

template <class Sink>
bool json_reader::walk(Sink& sink) {
  skip_ws();
  if (at_end()) return fail("unexpected end of input");
  switch (*p_) {
    case '{': {
      ++p_;
      if (!enter() || !sink.begin_object()) return false;
      skip_ws();
      if (consume('}')) {
        leave();
        return sink.end_object();
      }
      for (;;) {
        skip_ws();
        if (peek() != '"') return fail("expected a string key");
        string_scan key;
        if (!scan_string(key) || !sink.key(key)) return false;
        skip_ws();
        if (!consume(':')) return fail("expected ':' after a key");
        if (!walk(sink)) return false;
        skip_ws();
        if (consume(',')) continue;
        if (consume('}')) break;
        return fail("expected ',' or '}' in an object");
      }
      leave();
      return sink.end_object();
    }
    case '[': {
      ++p_;
      if (!enter() || !sink.begin_array()) return false;
      skip_ws();
      if (consume(']')) {
        leave();
        return sink.end_array();
      }
      for (;;) {
        if (!walk(sink)) return false;
        skip_ws();
        if (consume(',')) continue;
        if (consume(']')) break;
        return fail("expected ',' or ']' in an array");
      }
      leave();
      return sink.end_array();
    }
    case '"': {
      string_scan s;
      return scan_string(s) && sink.string(s);
    }
    case 't':
      return expect_literal("true") && sink.boolean(true);
    case 'f':
      return expect_literal("false") && sink.boolean(false);
    case 'n':
      return expect_literal("null") && sink.null();
    default: {
      number_scan n;
      return scan_number(n) && sink.number(n);
    }
  }
}

// -- string helpers (json_scanner.cpp) --

/// Appends the unescaped value of a string the reader has validated.
void unescape_into(std::string_view raw, std::string& out);
/// Appends `utf8` escaped per D2 (no quotes). The text must be valid UTF-8.
void escape_into(std::string_view utf8, std::string& out);
/// Bytes the canonical writer cannot copy as they are: '"', '\\', controls (< 0x20) and
/// non-ASCII (>= 0x80, whose UTF-8 must be checked). Any other byte is copied unchanged.
inline constexpr std::array<bool, 256> k_needs_escape = [] {
  std::array<bool, 256> t{};
  for (int c = 0; c < 256; ++c)
    t[static_cast<std::size_t>(c)] = c < 0x20 || c >= 0x80 || c == '"' || c == '\\';
  return t;
}();
/// As escape_into(), validating UTF-8 on the way; false (output partial) when invalid.
bool escape_checked_into(std::string_view utf8, std::string& out);
/// Appends a validated raw string's canonical escaped form (no quotes).
void reescape_into(const string_scan& s, std::string& out);
/// True when `text` is valid UTF-8 with no surrogate code points.
bool valid_utf8(std::string_view text) noexcept;
/// A copy of `text` with every invalid UTF-8 byte replaced by U+FFFD (for error messages
/// and other text the SDK did not receive as data, e.g. exception what() strings).
std::string to_valid_utf8(std::string_view text);

}  // namespace babelqueue::inline v1::detail
