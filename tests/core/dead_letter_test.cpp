#include <babelqueue/codec.hpp>
#include <babelqueue/dead_letter.hpp>

#include <gtest/gtest.h>

using namespace babelqueue;

TEST(DeadLetter, SevenKeysInSpecOrderWithNulls) {
  auto env = make("urn:babel:orders:created", {{"a", 1}}, {"orders", "t"}).value();
  env.set_attempts(3);
  auto dl = annotate(env, dead_letter_reason::unknown_urn, "orders", 3);
  std::string out = encode(dl).value();
  auto at = out.find(
      R"(,"dead_letter":{"reason":"unknown_urn","error":null,"exception":null,"failed_at":)");
  ASSERT_NE(at, std::string::npos) << out;
  EXPECT_NE(out.find(R"(,"original_queue":"orders","attempts":3,"lang":"cpp"}})"),
            std::string::npos)
      << out;
  EXPECT_FALSE(env.has_dead_letter());  // annotate returns a copy
  EXPECT_GT(dl.dead_letter()->failed_at, 1700000000000);
  EXPECT_EQ(dl.attempts(), 3);
}

TEST(DeadLetter, ReplacesAnExistingBlockInPlace) {
  auto env = make("urn:x", json::object()).value();
  auto once = annotate(env, dead_letter_reason::failed, "q", 1, "e1");
  auto twice =
      annotate(once, dead_letter_reason::poison, "q", 2, "e\xFF");  // invalid UTF-8 sanitised
  std::string out = encode(twice).value();
  EXPECT_EQ(out.find("dead_letter"), out.rfind("dead_letter"));
  EXPECT_EQ(twice.dead_letter()->reason, "poison");
  EXPECT_EQ(twice.dead_letter()->error, "e\xEF\xBF\xBD");
  EXPECT_TRUE(accepts(out));
}

TEST(DeadLetter, Spellings) {
  EXPECT_EQ(parse_dead_letter_reason("poison"), dead_letter_reason::poison);
  EXPECT_EQ(to_string(dead_letter_reason::unknown_urn), "unknown_urn");
}
