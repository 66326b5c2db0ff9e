// detail::inline_vector (the envelope's member table) against std::vector under random
// push_back / insert / erase / clear / copy / move, across its move to the heap, and an
// envelope with more top-level members than fit inline decoding and re-encoding intact.
#include <babelqueue/codec.hpp>
#include <babelqueue/detail/inline_vector.hpp>

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <utility>
#include <vector>

namespace {

using small = babelqueue::detail::inline_vector<int, 4>;

void expect_same(const small& got, const std::vector<int>& want) {
  ASSERT_EQ(got.size(), want.size());
  EXPECT_EQ(std::vector<int>(got.begin(), got.end()), want);
}

TEST(InlineVector, RandomOperationsMatchStdVector) {
  std::mt19937 rng(5);
  for (int run = 0; run < 300; ++run) {
    small v;
    std::vector<int> ref;
    for (int step = 0; step < 60; ++step) {
      const int op = static_cast<int>(rng() % 10);
      const int value = static_cast<int>(rng() % 1000);
      if (op < 4 || ref.empty()) {
        v.push_back(value);
        ref.push_back(value);
      } else if (op < 6) {
        const std::size_t at = rng() % (ref.size() + 1);
        EXPECT_EQ(*v.insert(v.begin() + at, value), value);
        ref.insert(ref.begin() + static_cast<std::ptrdiff_t>(at), value);
      } else if (op < 8) {
        const std::size_t at = rng() % ref.size();
        v.erase(v.begin() + at);
        ref.erase(ref.begin() + static_cast<std::ptrdiff_t>(at));
      } else if (op == 8) {
        small copy = v;
        EXPECT_TRUE(copy == v);
        small moved = std::move(copy);
        EXPECT_TRUE(moved == v);
        EXPECT_TRUE(copy.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty
        v = std::move(moved);
      } else if (rng() % 8 == 0) {
        v.clear();
        ref.clear();
      }
      expect_same(v, ref);
      if (HasFailure()) return;
    }
  }
}

TEST(InlineVector, EnvelopeWithManyTopLevelMembersRoundTrips) {
  std::string body =
      R"({"job":"urn:babel:t:s","trace_id":"t","data":{},"meta":{"id":"i","queue":"q","lang":"php","schema_version":1,"created_at":1},"attempts":0)";
  for (int i = 0; i < 12; ++i) body += ",\"x" + std::to_string(i) + "\":" + std::to_string(i);
  body += "}";
  auto env = babelqueue::decode(body);
  ASSERT_TRUE(env.has_value()) << env.error().message;
  EXPECT_EQ(env->member("x11"), "11");
  EXPECT_EQ(env->member_names().size(), 17u);
  EXPECT_EQ(*babelqueue::encode(*env), body);
  env->set_attempts(3);
  const auto again = babelqueue::decode(*babelqueue::encode(*env));
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->attempts(), 3);
  EXPECT_EQ(again->member("x0"), "0");
}

}  // namespace
