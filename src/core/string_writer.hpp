#pragma once
// Writes one JSON string, quotes included, in its canonical escaped form (D2) through an
// output_cursor, validating its UTF-8 on the way: the canonical writer's innermost loop.
//
// Most strings of a payload are short keys and values with nothing to escape, so the fast
// paths check and copy whole words instead of bytes: a string under 16 bytes is checked as
// two overlapping 8-byte (or 4-byte) words and stored the same way; a longer one goes 16
// bytes at a time (SSE2, part of every x86-64) with one overlapping load for its tail, its
// non-ASCII characters validated where they stand (validate_block). A byte that needs
// escaping ('"', '\\', a control, U+2028/U+2029), and in a short string any non-ASCII byte,
// hands over to the byte loop from there, which escapes or validates that one character and
// returns to the fast loop.
//
// Private to babelqueue::core.

#include "json_scanner.hpp"
#include "output_cursor.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace babelqueue::inline v1::detail {
namespace string_writer_impl {

inline std::uint64_t load8(const char* p) noexcept {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline std::uint32_t load4(const char* p) noexcept {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

inline constexpr std::uint64_t k_ones = 0x0101010101010101ULL;
inline constexpr std::uint64_t k_highs = 0x8080808080808080ULL;

/// Non-zero when a byte of `w` is a zero byte (exact as an "any" test: a borrow only ever
/// starts at a real zero byte).
constexpr std::uint64_t any_zero_byte(std::uint64_t w) noexcept {
  return (w - k_ones) & ~w & k_highs;
}

/// Non-zero when a byte of `w` needs the byte loop: < 0x20, >= 0x80, '"' or '\\'.
constexpr std::uint64_t any_special_byte(std::uint64_t w) noexcept {
  const std::uint64_t below_space = (w - k_ones * 0x20) & ~w & k_highs;
  return (w & k_highs) | below_space | any_zero_byte(w ^ (k_ones * '"')) |
         any_zero_byte(w ^ (k_ones * '\\'));
}

/// Writes the character at s[i] that the fast paths stopped at, moving `i` and `d` past it;
/// false when it starts invalid UTF-8. `d` has room for 6 bytes.
inline bool write_special(const char* s, std::size_t n, std::size_t& i, char*& d) noexcept {
  static constexpr char hex[] = "0123456789abcdef";
  const auto c = static_cast<unsigned char>(s[i]);
  if (c >= 0x80) {
    const auto* u = reinterpret_cast<const unsigned char*>(s + i);
    const std::size_t k = utf8_sequence_length(u, reinterpret_cast<const unsigned char*>(s + n));
    if (k == 0) return false;
    if (k == 3 && c == 0xE2 && u[1] == 0x80 && (u[2] == 0xA8 || u[2] == 0xA9)) {
      std::memcpy(d, u[2] == 0xA8 ? "\\u2028" : "\\u2029", 6);  // the only escaped non-ASCII (D2)
      d += 6;
    } else {
      // k is 2, 3 or 4: fixed-size copies (a variable-length memcpy becomes a call or
      // `rep movs`, several times the cost of these few bytes).
      std::memcpy(d, u, 2);
      if (k > 2) d[2] = static_cast<char>(u[2]);
      if (k > 3) d[3] = static_cast<char>(u[3]);
      d += k;
    }
    i += k;
    return true;
  }
  ++i;
  *d++ = '\\';
  switch (c) {
    case '"':
      *d++ = '"';
      return true;
    case '\\':
      *d++ = '\\';
      return true;
    case '\b':
      *d++ = 'b';
      return true;
    case '\f':
      *d++ = 'f';
      return true;
    case '\n':
      *d++ = 'n';
      return true;
    case '\r':
      *d++ = 'r';
      return true;
    case '\t':
      *d++ = 't';
      return true;
    default:
      std::memcpy(d, "u00", 3);
      d[3] = hex[c >> 4];
      d[4] = hex[c & 0xF];
      d += 5;
      return true;
  }
}

/// Index of the first byte flagged in `mask` (any_special_byte of a little-endian word).
/// Exact for the lowest flag: a borrow only ever runs upwards from a truly flagged byte.
inline std::size_t first_flagged(std::uint64_t mask) noexcept {
  return static_cast<std::size_t>(__builtin_ctzll(mask)) / 8;
}

/// Copies the clean prefix of the last n - i (< 16) bytes of `s` to `d` and moves `i` and
/// `d` past it: a whole short string, the rest of a string after its last 16-byte block, or
/// what follows a special character near its end (a title's "café"). Two overlapping words
/// (or, under 4 bytes, the first, middle and last byte); the bytes stored past the clean
/// prefix are within the room (room_for_rest) and are overwritten by what is written next.
inline void copy_clean_tail(const char* s, std::size_t n, std::size_t& i, char*& d) noexcept {
  const std::size_t len = n - i;
  const char* p = s + i;
  std::size_t clean = len;
  if (len >= 8) {
    const std::uint64_t a = load8(p), b = load8(p + len - 8);
    if (const std::uint64_t m = any_special_byte(a); m != 0) {
      clean = first_flagged(m);
    } else if (const std::uint64_t mb = any_special_byte(b); mb != 0) {
      clean = len - 8 + first_flagged(mb);
    }
    std::memcpy(d, &a, 8);
    std::memcpy(d + len - 8, &b, 8);
  } else if (len >= 4) {
    const std::uint32_t a = load4(p), b = load4(p + len - 4);
    // One word of both halves: a zero-extended half would flag its zero bytes.
    if (const std::uint64_t m = any_special_byte(a | (std::uint64_t{b} << 32)); m != 0) {
      const std::size_t at = first_flagged(m);
      clean = at < 4 ? at : len - 8 + at;  // byte 4 + j of the word is p[len - 4 + j]
    }
    std::memcpy(d, &a, 4);
    std::memcpy(d + len - 4, &b, 4);
  } else if (len > 0) {
    // 1–3 bytes: first, middle and last cover them all; the other bytes are a harmless 'a'.
    const auto at = [&](std::size_t k) { return std::uint64_t{static_cast<unsigned char>(p[k])}; };
    const std::uint64_t w =
        ((k_ones * 'a') & ~0xFFFFFFULL) | at(0) | (at(len >> 1) << 8) | (at(len - 1) << 16);
    if (any_special_byte(w) == 0) {
      d[0] = p[0];
      d[len >> 1] = p[len >> 1];
      d[len - 1] = p[len - 1];
    } else {
      clean = 0;
      while (!k_needs_escape[static_cast<unsigned char>(p[clean])]) d[clean] = p[clean], ++clean;
    }
  }
  i += clean;
  d += clean;
}

/// Room a string needs from where `i` stands: the rest copied plainly, one special
/// character's escape (6 bytes), the closing quote and ':', and 16 bytes of over-store.
constexpr std::size_t room_for_rest(std::size_t n, std::size_t i) noexcept {
  return (n - i) + 6 + 2 + 16;
}

/// The general loop, from byte `i` of `s` with `d` (room_for_rest(n, i) behind it) written
/// up to there.
inline bool write_from(output_cursor& out, const char* s, std::size_t n, std::size_t i, char* d) {
  while (i < n) {
#if defined(__SSE2__)
    while (n - i >= 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
      const __m128i special =
          _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
                                    _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
                       _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)));  // signed: also every byte >= 0x80
      const auto mask = static_cast<unsigned>(_mm_movemask_epi8(special));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(d), v);  // the clean prefix is kept below
      if (mask != 0) {
        const auto clean = static_cast<std::size_t>(__builtin_ctz(mask));
        i += clean;
        d += clean;
        break;
      }
      i += 16;
      d += 16;
    }
#else
    while (n - i >= 16 && any_special_byte(load8(s + i)) == 0) {
      std::memcpy(d, s + i, 8);
      i += 8;
      d += 8;
    }
#endif
    if (n - i < 16) {
      copy_clean_tail(s, n, i, d);
    } else {
      // The word loop stopped at a word holding a special byte, not at the byte itself
      // (the SSE2 loop stops at the byte, so this copies nothing there).
      while (!k_needs_escape[static_cast<unsigned char>(s[i])]) *d++ = s[i++];
    }
    if (i == n) break;
    if (!write_special(s, n, i, d)) return false;
    out.commit(d);
    d = out.room(room_for_rest(n, i));
  }
  out.commit(d);
  return true;
}

/// The byte loop from byte `i` (`d` written up to there), then the closing quote and the
/// ':' of a key. Out of line: written inside write_json_string's lambda, it made GCC store
/// the lambda's captures on every call, also for the strings that never come here (~8
/// instructions each); a lambda that only forwards to it is inlined away.
[[gnu::noinline]] inline bool write_rest(output_cursor& out, const char* s, std::size_t n,
                                         std::size_t i, char* d, bool key) {
  if (!write_from(out, s, n, i, d)) return false;
  out.put('"');
  if (key) out.put(':');
  return true;
}

#if defined(__SSE2__)
/// Where validate_block() left a block: the offset the next block starts from, or (`slow`)
/// the offset of a character the byte loop must write.
struct block_exit {
  std::size_t next;
  bool slow;
};

/// Validates, each where it stands, the non-ASCII characters among the bytes flagged in
/// `mask` (special bytes of the 16-byte block of `s` at `base`, already stored at d + base).
/// A character that needs escaping (a quote, a backslash, a control, U+2028, U+2029) or is
/// invalid ends the fast path there. A character that runs past the block is copied whole
/// and the next block starts after it. Before this, every non-ASCII character sent the whole
/// rest of its string through the byte loop: 99 instructions per accented letter against
/// 39 here, 13 % of encoding the large benchmark envelope. Out of line: inlined, it
/// lengthened the block loop of every string, +1.4 % instructions for the small envelope,
/// which has no non-ASCII text at all.
[[gnu::noinline]] inline block_exit validate_block(const char* s, std::size_t n, std::size_t base,
                                                   unsigned mask, char* d) noexcept {
  const std::size_t end = base + 16;
  while (mask != 0) {
    const std::size_t at = base + static_cast<std::size_t>(__builtin_ctz(mask));
    const auto* u = reinterpret_cast<const unsigned char*>(s + at);
    if (u[0] < 0x80) return {at, true};
    const std::size_t k = utf8_sequence_length(u, reinterpret_cast<const unsigned char*>(s + n));
    if (k == 0 || (k == 3 && u[0] == 0xE2 && u[1] == 0x80 && (u[2] == 0xA8 || u[2] == 0xA9))) {
      return {at, true};
    }
    if (at + k > end) {  // fixed-size copies of the k (2..4) bytes, as in write_special
      std::memcpy(d + at, u, 2);
      if (k > 2) d[at + 2] = static_cast<char>(u[2]);
      if (k > 3) d[at + 3] = static_cast<char>(u[3]);
      return {at + k, false};
    }
    mask &= ~0u << (at + k - base);  // the character's own bytes are flagged too
  }
  return {end, false};
}
#endif

}  // namespace string_writer_impl

/// Writes `"s"` (with a ':' after it when `key`) in canonical form; false, with the output
/// partial, when `s` is not valid UTF-8.
inline bool write_json_string(output_cursor& out, const char* s, std::size_t n, bool key) {
  using namespace string_writer_impl;
  char* d = out.room(room_for_rest(n, 0) + 1);
  *d++ = '"';
  const auto slow = [&](std::size_t i) { return write_rest(out, s, n, i, d + i, key); };
  char* const tail = d + n;
  if (n >= 16) {
#if defined(__SSE2__)
    // Whole 16-byte blocks, then the last 16 bytes (overlapping what was already copied).
    // Non-ASCII characters are validated in place; anything to escape hands over.
    const auto special_mask = [](__m128i v) {
      const __m128i q = _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
                                     _mm_cmpeq_epi8(v, _mm_set1_epi8('\\')));
      return static_cast<unsigned>(
          _mm_movemask_epi8(_mm_or_si128(q, _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)))));
    };
    std::size_t i = 0;
    while (n - i > 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i), v);
      const unsigned mask = special_mask(v);
      if (mask == 0) {
        i += 16;
        continue;
      }
      const block_exit e = validate_block(s, n, i, mask, d);
      if (e.slow) return slow(e.next);
      i = e.next;
    }
    const std::size_t base = n - 16;
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + base));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(tail - 16), v);
    if (const unsigned mask = special_mask(v) & (~0u << (i - base)); mask != 0) {  // past i only
      const block_exit e = validate_block(s, n, base, mask, d);
      if (e.slow) return slow(e.next);
    }
#else
    return slow(0);
#endif
  } else {
    // Under 16 bytes: the clean prefix as whole words; a special byte hands over there.
    std::size_t i = 0;
    char* q = d;
    copy_clean_tail(s, n, i, q);
    if (i != n) return slow(i);
  }
  char* e = tail;
  *e++ = '"';
  if (key) *e++ = ':';
  out.commit(e);
  return true;
}

}  // namespace babelqueue::inline v1::detail
