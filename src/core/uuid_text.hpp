#pragma once
// The text of a UUID from its 16 bytes: 36 lowercase characters, 8-4-4-4-12.
//
// Private to babelqueue::core; header-only so that a test can build it with SSE2 hidden and
// check the portable loop too.

#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace babelqueue::inline v1::detail {

/// Writes the 36 characters of the UUID `bytes` at `out` (no terminator).
inline void write_uuid_text(const unsigned char* bytes, char* out) noexcept {
  // The 32 hex digits first, then placed around the dashes.
  char hex[32];
#if defined(__SSE2__)
  // Every nibble at once: high and low nibbles interleaved, each becoming '0' + n, plus 39
  // more when n > 9 ('a' - '0' - 10).
  const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes));
  const __m128i low_nibbles = _mm_set1_epi8(0x0F);
  const __m128i hi = _mm_and_si128(_mm_srli_epi16(b, 4), low_nibbles);
  const __m128i lo = _mm_and_si128(b, low_nibbles);
  const auto to_hex = [](__m128i n) {
    const __m128i letters = _mm_and_si128(_mm_cmpgt_epi8(n, _mm_set1_epi8(9)), _mm_set1_epi8(39));
    return _mm_add_epi8(_mm_add_epi8(n, _mm_set1_epi8('0')), letters);
  };
  _mm_storeu_si128(reinterpret_cast<__m128i*>(hex), to_hex(_mm_unpacklo_epi8(hi, lo)));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(hex + 16), to_hex(_mm_unpackhi_epi8(hi, lo)));
#else
  static constexpr char digits[] = "0123456789abcdef";
  for (int i = 0; i < 16; ++i) {
    hex[2 * i] = digits[bytes[i] >> 4];
    hex[2 * i + 1] = digits[bytes[i] & 0x0F];
  }
#endif
  std::memcpy(out, hex, 8);
  out[8] = '-';
  std::memcpy(out + 9, hex + 8, 4);
  out[13] = '-';
  std::memcpy(out + 14, hex + 12, 4);
  out[18] = '-';
  std::memcpy(out + 19, hex + 16, 4);
  out[23] = '-';
  std::memcpy(out + 24, hex + 20, 12);
}

}  // namespace babelqueue::inline v1::detail
