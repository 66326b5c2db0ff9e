#pragma once
// The claiming_store contract (idempotency/store.hpp) as one check every persistent store's
// tests run against a real backend — the rules tests/idempotency/claim_test.cpp checks on
// memory_store, plus ids that need exact keys (white space, UTF-8, long).
#include <babelqueue/idempotency/error.hpp>
#include <babelqueue/idempotency/store.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace bqtest {

inline void check_claiming_store_contract(babelqueue::idempotency::claiming_store& s) {
  using namespace std::chrono_literals;
  namespace idem = babelqueue::idempotency;
  // seen / remember / forget
  EXPECT_FALSE(s.seen("a").value());
  ASSERT_TRUE(s.remember("a"));
  ASSERT_TRUE(s.remember("a"));  // twice is not an error
  EXPECT_TRUE(s.seen("a").value());
  EXPECT_FALSE(s.seen("A").value());   // exact key
  EXPECT_FALSE(s.seen("a ").value());  // never trimmed
  ASSERT_TRUE(s.forget("a"));
  EXPECT_FALSE(s.seen("a").value());
  ASSERT_TRUE(s.forget("never-there"));
  for (const std::string& id :
       std::vector<std::string>{" ", "caf\xc3\xa9 \xe2\x80\xa8", std::string(600, 'x'),
                                std::string("nul\0inside", 10), "'; DROP TABLE x; --"}) {
    EXPECT_FALSE(s.seen(id).value()) << id;
    ASSERT_TRUE(s.remember(id));
    EXPECT_TRUE(s.seen(id).value()) << id;
  }
  // claims: in flight, not seen; release; remember ends the claim; committed cannot be claimed
  EXPECT_TRUE(s.claim("c", 1h).value());
  EXPECT_FALSE(s.claim("c", 1h).value());
  EXPECT_FALSE(s.seen("c").value());
  ASSERT_TRUE(s.release("c"));
  EXPECT_TRUE(s.claim("c", 1h).value());
  ASSERT_TRUE(s.remember("c"));
  EXPECT_TRUE(s.seen("c").value());
  EXPECT_FALSE(s.claim("c", 1h).value());
  ASSERT_TRUE(s.release("c"));  // never touches a committed mark
  EXPECT_TRUE(s.seen("c").value());
  ASSERT_TRUE(s.release("never-claimed"));
  ASSERT_TRUE(s.forget("c"));  // forgotten: claimable again
  EXPECT_TRUE(s.claim("c", 1h).value());
  // an expired claim (its worker crashed) is taken over
  EXPECT_TRUE(s.claim("crashed", 30ms).value());
  EXPECT_FALSE(s.claim("crashed", 30ms).value());
  std::this_thread::sleep_for(80ms);
  EXPECT_TRUE(s.claim("crashed", 1h).value());
  // a non-positive ttl is refused
  auto bad = s.claim("z", 0ms);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, idem::errc::invalid_argument);
}

}  // namespace bqtest
