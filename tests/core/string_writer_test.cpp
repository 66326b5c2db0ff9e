// write_json_string() (the canonical writer's word-at-a-time string path) against a plain
// byte-by-byte D2 escaper written here from the rule itself, over every length from 0 to 80
// with random mixes of plain bytes, bytes that need escaping and UTF-8 (valid, invalid,
// U+2028/U+2029, truncated sequences) at every position, and with output strings whose
// spare capacity starts anywhere (so the cursor grows mid-string).
#include "core/string_writer.hpp"

#include "core/output_cursor.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <random>
#include <string>

namespace {

// Length of the valid UTF-8 character at s[i], or 0 (RFC 3629: no overlongs, no surrogates,
// nothing above U+10FFFF), decoded from the code point rather than from byte ranges.
std::size_t reference_utf8(const std::string& s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  std::size_t len;
  std::uint32_t cp;
  if ((c & 0xE0) == 0xC0)
    len = 2, cp = c & 0x1F;
  else if ((c & 0xF0) == 0xE0)
    len = 3, cp = c & 0x0F;
  else if ((c & 0xF8) == 0xF0)
    len = 4, cp = c & 0x07;
  else
    return 0;
  if (i + len > s.size()) return 0;
  for (std::size_t k = 1; k < len; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(i + k) & 0x3F);
  }
  const std::uint32_t min = len == 2 ? 0x80 : len == 3 ? 0x800 : 0x10000;
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

// The D2 string form, quotes included; nullopt for invalid UTF-8.
std::optional<std::string> reference_escape(const std::string& s, bool key) {
  static const char* hex = "0123456789abcdef";
  std::string out = "\"";
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      const std::size_t n = reference_utf8(s, i);
      if (n == 0) return std::nullopt;
      const std::string ch = s.substr(i, n);
      out += ch == "\xE2\x80\xA8" ? "\\u2028" : ch == "\xE2\x80\xA9" ? "\\u2029" : ch;
      i += n;
      continue;
    }
    ++i;
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
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
        if (c < 0x20) {
          out += "\\u00";
          out += hex[c >> 4];
          out += hex[c & 0xF];
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += key ? "\":" : "\"";
  return out;
}

// What write_json_string() appends to an output that already holds `prefix` and has
// `spare` bytes of capacity beyond it; nullopt when it reports invalid UTF-8.
std::optional<std::string> written(const std::string& s, bool key, const std::string& prefix,
                                   std::size_t spare) {
  std::string out = prefix;
  out.reserve(prefix.size() + spare);
  bool ok;
  {
    babelqueue::detail::output_cursor cursor(out);
    ok = babelqueue::detail::write_json_string(cursor, s.data(), s.size(), key);
  }
  EXPECT_EQ(out.compare(0, prefix.size(), prefix), 0) << "the prefix was overwritten";
  if (!ok) return std::nullopt;
  return out.substr(prefix.size());
}

// `plain` of 1000 picks are ASCII letters, the rest specials (an invalid one now and then).
std::string random_string(std::mt19937_64& rng, std::size_t n, int plain = 880) {
  static const std::string specials[] = {
      "\"", "\\", "\n", "\t", std::string(1, '\0'), "\x01", "\x1f", "\x7f", "\xC3\xA9",
      "\xE2\x80\x94", "\xE2\x80\xA8", "\xE2\x80\xA9", "\xF0\x9F\x98\x80", "\xEF\xBF\xBF", " ", "~",
      // The lowest and highest second bytes the RFC 3629 ranges allow.
      "\xC2\x80", "\xDF\xBF", "\xE0\xA0\x80", "\xED\x9F\xBF", "\xF0\x90\x80\x80",
      "\xF4\x8F\xBF\xBF"};
  static const std::string invalid[] = {"\xC3",     "\xE2\x80",         "\x80",
                                        "\xC0\xAF", "\xED\xA0\x80",     "\xF4\x90\x80\x80",
                                        "\xFF",     "\xE0\x9F\xBF",     "\xF0\x8F\xBF\xBF",
                                        "\xC1\xBF", "\xF5\x80\x80\x80", "\xBF"};
  std::string s;
  // Mostly plain text, so the fast paths run and the specials land at every offset; an
  // invalid sequence now and then.
  std::uniform_int_distribution<int> pick(0, 999);
  std::uniform_int_distribution<std::size_t> special(0, std::size(specials) - 1);
  std::uniform_int_distribution<std::size_t> bad(0, std::size(invalid) - 1);
  while (s.size() < n) {
    const int p = pick(rng);
    if (p < plain)
      s += static_cast<char>('a' + p % 26);
    else if (p < 995)
      s += specials[special(rng)];
    else
      s += invalid[bad(rng)];
  }
  s.resize(n);  // may cut a sequence short: truncated UTF-8 at the end is covered too
  return s;
}

// Writes `rounds` random strings (random_string(..., plain)) of every length in
// [shortest, longest] and compares each with the reference escaper; counts the invalid ones.
void expect_reference_output(std::mt19937_64& rng, std::size_t shortest, std::size_t longest,
                             int rounds, int plain, std::size_t& invalid, std::size_t& total) {
  for (std::size_t n = shortest; n <= longest; ++n) {
    for (int round = 0; round < rounds; ++round) {
      const std::string s = random_string(rng, n, plain);
      const bool key = round % 2 == 1;
      const auto expected = reference_escape(s, key);
      const auto got =
          written(s, key, round % 3 == 0 ? "" : "{\"k\":", static_cast<std::size_t>(round % 50));
      ++total;
      if (!expected) ++invalid;
      ASSERT_EQ(got.has_value(), expected.has_value()) << "n=" << n << " round=" << round;
      if (expected) {
        ASSERT_EQ(*got, *expected) << "n=" << n << " round=" << round;
      }
    }
  }
}

TEST(StringWriter, MatchesTheReferenceEscaperOnEveryLength) {
  std::mt19937_64 rng(20261203);
  std::size_t invalid = 0, total = 0;
  expect_reference_output(rng, 0, 80, 400, 880, invalid, total);
  EXPECT_GT(invalid, total / 20);  // both outcomes were exercised
  EXPECT_LT(invalid, total / 2);
}

// Text where most characters are non-ASCII (Greek, Cyrillic, CJK, emoji): characters of 2 to
// 4 bytes run across the 16-byte blocks at every offset, several per block.
TEST(StringWriter, DenseNonAsciiMatchesTheReferenceEscaper) {
  std::mt19937_64 rng(20261204);
  std::size_t invalid = 0, total = 0;
  expect_reference_output(rng, 14, 120, 300, 200, invalid, total);
  EXPECT_GT(total - invalid, total / 5);  // valid text dominates many strings
  EXPECT_GT(invalid, total / 20);
}

TEST(StringWriter, PlainStringsOfEveryLengthCopyExactly) {
  for (std::size_t n = 0; n <= 200; ++n) {
    std::string s;
    for (std::size_t i = 0; i < n; ++i) {
      const auto c = static_cast<char>('!' + (i * 7) % 90);
      s += c == '"' || c == '\\' ? 'x' : c;
    }
    const auto expected = reference_escape(s, false);
    ASSERT_TRUE(expected.has_value());
    EXPECT_EQ(written(s, false, "", 0), expected) << n;
    EXPECT_EQ(written(s, false, "[", n + 3), expected) << n;
  }
}

TEST(StringWriter, EverySingleByteAndEveryPositionOfOneSpecial) {
  for (int c = 0; c < 256; ++c) {
    for (std::size_t len : {1u, 3u, 7u, 8u, 15u, 16u, 17u, 31u, 33u}) {
      for (std::size_t at = 0; at < len; ++at) {
        std::string s(len, 'q');
        s[at] = static_cast<char>(c);
        EXPECT_EQ(written(s, true, "x", 1), reference_escape(s, true))
            << c << " " << len << " " << at;
      }
    }
  }
}

TEST(StringWriter, LongStringsGrowTheOutput) {
  std::mt19937_64 rng(7);
  for (std::size_t n : {1000u, 65536u, 300000u}) {
    const std::string s = random_string(rng, n);
    EXPECT_EQ(written(s, false, "", 0), reference_escape(s, false)) << n;
    const std::string plain(n, 'p');
    EXPECT_EQ(written(plain, false, "", 0), reference_escape(plain, false)) << n;
  }
}

}  // namespace
