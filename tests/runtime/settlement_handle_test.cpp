// settlement_owner (runtime/settlement_handle.hpp): a handle is claimed back only by the owner
// that issued it, only for the state type it was issued with, and only until it is settled;
// foreign, stray and aliased handles are refused without reading what they point to.
#include <babelqueue/runtime/settlement_handle.hpp>

#include <gtest/gtest.h>

#include <memory>
#include <new>
#include <string>

using namespace babelqueue;

namespace {

struct receipt {
  std::string id;
};
struct other_state {
  std::int64_t row = 0;
};

received_message with_handle(std::shared_ptr<void> h) {
  received_message m;
  m.handle = std::move(h);
  return m;
}

bool refused(const result<claimed_handle<receipt>>& r) {
  return !r && r.error().code == make_error_code(transport_errc::invalid_argument);
}

TEST(SettlementHandle, TheIssuingOwnerClaimsItsState) {
  settlement_owner owner("test");
  auto m = with_handle(owner.issue(receipt{"r-1"}));
  auto c = owner.claim<receipt>(m);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ((*c)->id, "r-1");
  (*c)->id = "changed";  // the state is the handle's own, shared by copies
  // A copy on purpose: copies of a message share its one handle.
  const received_message copy = m;  // NOLINT(performance-unnecessary-copy-initialization)
  EXPECT_EQ((*owner.claim<receipt>(copy))->id, "changed");
}

TEST(SettlementHandle, IdsAreNeverReused) {
  std::uint64_t first = 0;
  {
    settlement_owner a("test");
    first = a.id();
  }
  settlement_owner b("test");
  EXPECT_NE(b.id(), first);
}

TEST(SettlementHandle, AnotherOwnerIsRefusedEvenAtTheSameAddress) {
  // Raw storage rather than std::optional: GCC 12 at -O1 (the tsan tree) reports a
  // maybe-uninitialized string in optional's reset() path, a false positive.
  alignas(settlement_owner) unsigned char storage[sizeof(settlement_owner)];
  auto* a = new (storage) settlement_owner("test");
  auto m = with_handle(a->issue(receipt{"r-1"}));
  settlement_owner other("test");
  EXPECT_TRUE(refused(other.claim<receipt>(m)));
  // A successor built in the same storage: same address, new id.
  a->~settlement_owner();
  auto* successor = new (storage) settlement_owner("test");
  EXPECT_EQ(static_cast<void*>(successor), static_cast<void*>(a));
  EXPECT_TRUE(refused(successor->claim<receipt>(m)));
  successor->~settlement_owner();
}

TEST(SettlementHandle, AnotherStateTypeIsRefused) {
  settlement_owner owner("test");
  auto m = with_handle(owner.issue(other_state{7}));
  EXPECT_TRUE(refused(owner.claim<receipt>(m)));
  EXPECT_TRUE(owner.claim<other_state>(m));
}

TEST(SettlementHandle, EmptyStrayAndAliasedHandlesAreRefused) {
  settlement_owner owner("test");
  EXPECT_TRUE(refused(owner.claim<receipt>(received_message{})));
  // A plain shared_ptr (make_shared, or new with the default deleter) has no tag.
  EXPECT_TRUE(refused(owner.claim<receipt>(with_handle(std::make_shared<char>('x')))));
  EXPECT_TRUE(refused(owner.claim<receipt>(with_handle(std::shared_ptr<receipt>(new receipt)))));
  // An alias of a real handle pointing elsewhere shares the tag but not the address.
  auto real = owner.issue(receipt{"r-1"});
  static char elsewhere = 0;
  EXPECT_TRUE(refused(owner.claim<receipt>(with_handle(std::shared_ptr<void>(real, &elsewhere)))));
  // An alias to the same address is the same handle.
  EXPECT_TRUE(owner.claim<receipt>(with_handle(std::shared_ptr<void>(real, real.get()))));
}

TEST(SettlementHandle, ASettledHandleIsRefusedThroughEveryCopy) {
  settlement_owner owner("test");
  auto m = with_handle(owner.issue(receipt{"r-1"}));
  // A copy on purpose: copies of a message share its one handle.
  const received_message copy = m;  // NOLINT(performance-unnecessary-copy-initialization)
  auto c = owner.claim<receipt>(m);
  ASSERT_TRUE(c);
  c->settle();
  auto again = owner.claim<receipt>(copy);
  ASSERT_TRUE(refused(again));
  EXPECT_NE(again.error().message.find("already settled"), std::string::npos);
  EXPECT_NE(owner.claim<receipt>(with_handle(nullptr)).error().message.find("test: "),
            std::string::npos);
}

TEST(SettlementHandle, TheStateLivesAsLongAsAnyCopy) {
  settlement_owner owner("test");
  auto probe = std::make_shared<int>(1);
  std::weak_ptr<int> alive = probe;
  received_message m = with_handle(owner.issue(std::move(probe)));
  EXPECT_FALSE(alive.expired());
  m.handle.reset();
  EXPECT_TRUE(alive.expired());  // the tag's deleter freed the state
}

}  // namespace
