// The scanner's string paths (the 16-byte fast path that validates non-ASCII characters in
// place, and the full scanner it hands escapes and controls to) against a reference built
// from the pieces a string is made of: random strings of valid and invalid pieces at every
// offset relative to the 16-byte blocks and to the end of the text, read three ways —
// canonicalize() (the SAX walk), decode() of an envelope whose `data` holds the string (the
// iterative validator), and the same envelope's re-encoding, which is byte-identical exactly
// when the scanner found the string canonical (D2/D4).
#include <babelqueue/codec.hpp>

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace {

struct piece {
  std::string raw;        // as written inside the quotes
  std::string canonical;  // its canonical escaped form (D2)
  bool valid = true;
};

const std::vector<piece>& pieces() {
  static const std::vector<piece> all = {
      {"a", "a"},
      {"Z", "Z"},
      {" ", " "},
      {"~", "~"},
      {"/", "/"},
      {"\xC3\xA9", "\xC3\xA9"},
      {"\xE2\x80\x94", "\xE2\x80\x94"},
      {"\xF0\x9F\x98\x80", "\xF0\x9F\x98\x80"},
      {"\xEF\xBF\xBF", "\xEF\xBF\xBF"},
      {"\xDF\xBF", "\xDF\xBF"},
      // The lowest and highest second bytes the RFC 3629 ranges allow.
      {"\xC2\x80", "\xC2\x80"},
      {"\xE0\xA0\x80", "\xE0\xA0\x80"},
      {"\xED\x9F\xBF", "\xED\x9F\xBF"},
      {"\xF0\x90\x80\x80", "\xF0\x90\x80\x80"},
      {"\xF4\x8F\xBF\xBF", "\xF4\x8F\xBF\xBF"},
      {"\xE2\x80\xA8", "\\u2028"},
      {"\xE2\x80\xA9", "\\u2029"},  // raw: not canonical
      {"\\n", "\\n"},
      {"\\\"", "\\\""},
      {"\\\\", "\\\\"},
      {"\\u001f", "\\u001f"},
      {"\\u2028", "\\u2028"},
      {"\\/", "/"},
      {"\\u00e9", "\xC3\xA9"},
      {"\\u000A", "\\n"},
      {"\\ud83d\\ude00", "\xF0\x9F\x98\x80"},
      // Invalid pieces end in an ASCII letter, so two of them never join into a valid one.
      {"\\x", "", false},
      {"\\u12g4", "", false},
      {"\\ud83da", "", false},
      {"\\ude00a", "", false},
      {"\x01", "", false},
      {"\x1f", "", false},
      {"\t", "", false},
      {"\xC3q", "", false},
      {"\x80q", "", false},
      {"\xC0\xAFq", "", false},
      {"\xED\xA0\x80q", "", false},
      {"\xF4\x90\x80\x80q", "", false},
      {"\xE2\x80q", "", false},
      {"\xFFq", "", false},
      {"\xF0\x9F\x98q", "", false},
      {"\xE0\x9F\xBFq", "", false},
      {"\xF0\x8F\xBF\xBFq", "", false},
      {"\xC1\xBFq", "", false},
      {"\xF5\x80\x80\x80q", "", false},
      {"\xBFq", "", false},
  };
  return all;
}

struct sample {
  std::string raw, canonical;
  bool valid = true;
};

sample random_sample(std::mt19937_64& rng, std::size_t plain_before, std::size_t count) {
  sample s;
  std::uniform_int_distribution<int> pick(0, 99);
  std::uniform_int_distribution<std::size_t> which(0, pieces().size() - 1);
  for (std::size_t i = 0; i < plain_before; ++i) s.raw += 'p', s.canonical += 'p';
  for (std::size_t i = 0; i < count; ++i) {
    const piece& p =
        pick(rng) < 60 ? pieces()[static_cast<std::size_t>(pick(rng) % 4)] : pieces()[which(rng)];
    // An invalid piece now and then, so most samples test the valid paths.
    if (!p.valid && pick(rng) < 85) continue;
    s.raw += p.raw;
    s.canonical += p.canonical;
    s.valid = s.valid && p.valid;
  }
  return s;
}

std::string envelope_with(const std::string& raw, std::size_t tail_padding) {
  return R"({"job":"urn:babel:t:s","trace_id":"t-1","data":{"k":")" + raw + R"(","pad":")" +
         std::string(tail_padding, 'x') +
         R"("},"meta":{"id":"i-1","queue":"q","lang":"python","schema_version":1,"created_at":1},"attempts":0})";
}

TEST(StringScan, RandomStringsMatchTheReferenceOnEveryPath) {
  std::mt19937_64 rng(42);
  int valid = 0, invalid = 0, non_canonical = 0;
  for (int round = 0; round < 20000; ++round) {
    const sample s = random_sample(rng, static_cast<std::size_t>(round % 37),
                                   static_cast<std::size_t>(round % 23));
    const std::string text = "{\"k\":\"" + s.raw + "\"}";
    // At the very end of the text too: no 16 bytes after the string.
    const std::string bare = "\"" + s.raw + "\"";
    const auto walked = babelqueue::canonicalize(text);
    const auto walked_bare = babelqueue::canonicalize(bare);
    ASSERT_EQ(walked.has_value(), s.valid) << round << " " << text;
    ASSERT_EQ(walked_bare.has_value(), s.valid) << round << " " << text;
    if (s.valid) {
      ASSERT_EQ(*walked, "{\"k\":\"" + s.canonical + "\"}") << round;
      ASSERT_EQ(*walked_bare, "\"" + s.canonical + "\"") << round;
    }
    const std::string body = envelope_with(s.raw, static_cast<std::size_t>(round % 19));
    const auto decoded = babelqueue::decode(body);
    ASSERT_EQ(decoded.has_value(), s.valid) << round << " " << body;
    if (!s.valid) {
      ++invalid;
      EXPECT_EQ(decoded.error().code, babelqueue::errc::malformed_json) << body;
      continue;
    }
    ++valid;
    const auto again = babelqueue::encode(*decoded);
    ASSERT_TRUE(again.has_value());
    const bool canonical = s.raw == s.canonical;
    if (!canonical) ++non_canonical;
    if (canonical) {
      ASSERT_EQ(*again, body) << round;
    } else {
      ASSERT_EQ(*again, envelope_with(s.canonical, static_cast<std::size_t>(round % 19))) << round;
    }
  }
  EXPECT_GT(valid, 5000);
  EXPECT_GT(invalid, 1000);
  EXPECT_GT(non_canonical, 1000);
}

}  // namespace
