// Heap allocations per message on the codec's hot paths, counted by replacing the global
// operator new in this test binary (its own executable, so no other test sees the counter).
// The figures are the floor of the envelope's design: one buffer for its text (none when
// decode() is given the body to keep), its member table inline; encoding into a buffer
// that already has room allocates nothing. Any new
// allocation per message on these paths fails here (issue #17).
#include <babelqueue/codec.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <optional>
#include <string>

namespace {
std::atomic<long> g_allocations{0};
}  // namespace

void* operator new(std::size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return operator new(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace {

template <class F>
long allocations_of(F&& f) {
  const long before = g_allocations.load();
  f();
  return g_allocations.load() - before;
}

const babelqueue::json& small_data() {
  static const auto data = babelqueue::json::parse(
      R"({"order_id":1042,"amount":99.9,"currency":"EUR","customer":{"id":7,"email":"a@b.c"},"items":[{"sku":"A-1","qty":2},{"sku":"B-2","qty":1}]})");
  return data;
}

babelqueue::json large_data() {
  babelqueue::json items = babelqueue::json::array();
  for (int i = 0; i < 120; ++i) {
    items.push_back(
        {{"sku", "SKU-" + std::to_string(100000 + i)},
         {"qty", i % 7 + 1},
         {"price", 19.99 + i},
         {"title", "Item number " + std::to_string(i) + " \xE2\x80\x94 na\xC3\xAFve caf\xC3\xA9"},
         {"tags", {"a", "b"}}});
  }
  return {{"order_id", 1042}, {"items", items}};
}

TEST(Allocations, MakeAndEncodeIntoAReusedBuffer) {
  for (const babelqueue::json& data : {small_data(), large_data()}) {
    std::string out;
    out.reserve(64 * 1024);
    for (int warm = 0; warm < 3; ++warm)
      (void)babelqueue::encode_to(*babelqueue::make("urn:babel:t:s", data), out);
    long made = 0, encoded = 0;
    for (int i = 0; i < 100; ++i) {
      std::optional<babelqueue::result<babelqueue::envelope>> made_env;
      made += allocations_of([&] {
        made_env.emplace(babelqueue::make("urn:babel:t:s", data, {"orders", ""}));
      });
      ASSERT_TRUE(made_env->has_value());
      auto& env = *made_env;
      out.clear();
      encoded += allocations_of([&] { ASSERT_TRUE(babelqueue::encode_to(*env, out).has_value()); });
    }
    EXPECT_LE(made, 1 * 100) << "make(): the text only (the member table is inline)";
    EXPECT_EQ(encoded, 0) << "encode_to() into a buffer with room";
  }
}

TEST(Allocations, DecodeAndRetryReencode) {
  for (const babelqueue::json& data : {small_data(), large_data()}) {
    const std::string body = *babelqueue::encode(*babelqueue::make("urn:babel:t:s", data));
    std::string out;
    out.reserve(64 * 1024);
    long copied = 0, moved = 0, reencoded = 0;
    for (int i = 0; i < 100; ++i) {
      copied += allocations_of([&] { ASSERT_TRUE(babelqueue::decode(body).has_value()); });
      std::string owned = body;
      std::optional<babelqueue::result<babelqueue::envelope>> decoded;
      moved += allocations_of([&] { decoded.emplace(babelqueue::decode(std::move(owned))); });
      ASSERT_TRUE(decoded->has_value());
      auto& env = *decoded;
      env->set_attempts(env->attempts() + 1);
      out.clear();
      reencoded +=
          allocations_of([&] { ASSERT_TRUE(babelqueue::encode_to(*env, out).has_value()); });
    }
    EXPECT_LE(copied, 1 * 100) << "decode(const&): the copy of the body only";
    EXPECT_EQ(moved, 0) << "decode(std::string&&): none";
    EXPECT_EQ(reencoded, 0) << "a retry's re-encoding (attempts + 1) into a buffer with room";
  }
}

}  // namespace
