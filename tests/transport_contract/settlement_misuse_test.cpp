// Settlement misuse on every transport (issue #36): a handle of another instance (same scheme,
// another scheme, an owner destroyed and replaced), a handle that is no transport's at all, a
// second ack / release, and every call after close() get a typed error — invalid_argument or
// closed — never undefined behaviour, and the same condition on every transport.
//
// Built twice from this file: settlement_misuse_tests (memory, sqlite: no server) and
// settlement_misuse_live_tests (the seven broker transports against scripts/services.sh,
// skipped — or failed under CI — when a server is missing). Both run in the asan phase.
#include "support/services.hpp"

#include <babelqueue/memory/memory_transport.hpp>
#include <babelqueue/runtime/url.hpp>
#include <babelqueue/sqlite/sqlite_transport.hpp>
// BQ_HAVE_<SCHEME>: which broker transports the live build links (tests/transport_contract).
#if BQ_HAVE_ARTEMIS
#include <babelqueue/artemis/artemis_transport.hpp>
#endif
#if BQ_HAVE_ASB
#include <babelqueue/asb/asb_transport.hpp>
#endif
#if BQ_HAVE_KAFKA
#include <babelqueue/kafka/kafka_transport.hpp>
#endif
#if BQ_HAVE_PULSAR
#include <babelqueue/pulsar/pulsar_transport.hpp>
#endif
#if BQ_HAVE_RABBITMQ
#include <babelqueue/rabbitmq/rabbitmq_transport.hpp>
#endif
#if BQ_HAVE_REDIS
#include <babelqueue/redis/redis_transport.hpp>
#endif
#if BQ_HAVE_SQS
#include <babelqueue/sqs/sqs_transport.hpp>
#endif

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace {

using namespace babelqueue;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

std::string temp_db() {
  static const std::string dir = [] {
    auto d = std::filesystem::temp_directory_path() / bqtest::unique_name("bq-misuse");
    std::filesystem::create_directories(d);
    return d.string();
  }();
  return dir + "/" + bqtest::unique_name("q") + ".db";
}

// The URL of a fresh transport of `scheme`, or "" when its server is not configured.
std::string url_of(const std::string& scheme) {
  if (scheme == "memory") return "memory://" + bqtest::unique_name("misuse");
  if (scheme == "sqlite") return "sqlite://" + temp_db();
  using bqtest::env_or_empty;
  if (scheme == "redis") return env_or_empty("BABELQUEUE_REDIS_URL");
  if (scheme == "rabbitmq") return env_or_empty("BABELQUEUE_RABBITMQ_URL");
  if (scheme == "artemis") return env_or_empty("BABELQUEUE_ARTEMIS_URL");
  if (scheme == "pulsar") return env_or_empty("BABELQUEUE_PULSAR_URL");
  if (scheme == "sqs") {
    const auto u = env_or_empty("BABELQUEUE_SQS_URL");
    return u.empty() ? u : u + "&create_queues=true";
  }
  if (scheme == "kafka") {
    const auto b = env_or_empty("BABELQUEUE_KAFKA_BOOTSTRAP");
    return b.empty() ? b
                     : "kafka://" + b + "?group=" + bqtest::unique_name("misuse") +
                           "&rdkafka.session.timeout.ms=6000&rdkafka.heartbeat.interval.ms=500";
  }
#if BQ_HAVE_ASB
  if (scheme == "asb") {
    const auto cs = env_or_empty("BABELQUEUE_ASB_CONNECTION_STRING");
    return cs.empty() ? cs : asb::url_from_connection_string(cs).value_or("");
  }
#endif
  return "";
}

// The schemes this executable covers, each with its URL factory registered.
std::vector<std::string> schemes() {
  memory::register_transport();
  sqlite::register_transport();
  std::vector<std::string> out;
#if BQ_MISUSE_LIVE
#if BQ_HAVE_REDIS
  redis::register_transport();
  out.push_back("redis");
#endif
#if BQ_HAVE_RABBITMQ
  rabbitmq::register_transport();
  out.push_back("rabbitmq");
#endif
#if BQ_HAVE_KAFKA
  kafka::register_transport();
  out.push_back("kafka");
#endif
#if BQ_HAVE_ARTEMIS
  artemis::register_transport();
  out.push_back("artemis");
#endif
#if BQ_HAVE_ASB
  asb::register_transport();
  out.push_back("asb");
#endif
#if BQ_HAVE_SQS
  sqs::register_transport();
  out.push_back("sqs");
#endif
#if BQ_HAVE_PULSAR
  pulsar::register_transport();
  out.push_back("pulsar");
#endif
#else
  out = {"memory", "sqlite"};
#endif
  return out;
}

// The error code of a failed result, or "ok".
template <class T>
std::string code_of(const result<T>& r) {
  return r ? std::string("ok") : r.error().code.message();
}

const std::string invalid = make_error_code(transport_errc::invalid_argument).message();
const std::string closed = make_error_code(transport_errc::closed).message();

class SettlementMisuse : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    url_ = url_of(GetParam());
    BQ_REQUIRE_SERVICE(url_, "server for this scheme", "(see scripts/services.sh)");
    queue_ = bqtest::unique_name("bq-misuse");
  }

  std::unique_ptr<transport> open() {
    auto t = open_transport(url_);
    EXPECT_TRUE(t) << t.error().message;
    return t ? std::move(*t) : nullptr;
  }

  // Publishes one envelope through `t` and receives it back (brokers that subscribe on first
  // receive — Pulsar — are subscribed before the publish, so nothing is lost).
  std::optional<received_message> publish_and_receive(transport& t) {
    (void)t.receive(queue_, 100ms);
    auto p = t.publish(queue_, bqtest::envelope_text(1));
    EXPECT_TRUE(p) << p.error().message;
    const auto until = clock_type::now() + 60s;
    while (clock_type::now() < until) {
      auto r = t.receive(queue_, 1s);
      EXPECT_TRUE(r) << r.error().message;
      if (!r) return std::nullopt;
      if (*r) return std::move(**r);
    }
    ADD_FAILURE() << "nothing received in 60 s";
    return std::nullopt;
  }

  std::string url_;
  std::string queue_;
};

// A message of another scheme: sqlite's for every transport but sqlite, memory's for sqlite.
struct foreign_message {
  std::unique_ptr<transport> owner;
  received_message message;
};

foreign_message foreign_for(const std::string& scheme) {
  const std::string other = scheme == "sqlite" ? "memory" : "sqlite";
  foreign_message f;
  f.owner = open_transport(url_of(other)).value();
  const std::string q = bqtest::unique_name("bq-foreign");
  f.owner->publish(q, bqtest::envelope_text(2)).value();
  f.message = f.owner->receive(q, 1s).value().value();
  return f;
}

TEST_P(SettlementMisuse, HandleOfAnotherInstanceOfTheSameSchemeIsRefused) {
  auto a = open();
  auto b = open();
  ASSERT_TRUE(a && b);
  auto m = publish_and_receive(*a);
  ASSERT_TRUE(m);
  EXPECT_EQ(code_of(b->ack(*m)), invalid);
  EXPECT_EQ(code_of(b->release(*m)), invalid);
  // Still the owner's to settle.
  EXPECT_EQ(code_of(a->ack(*m)), "ok");
}

TEST_P(SettlementMisuse, HandleOfAnotherSchemeIsRefusedBothWays) {
  auto a = open();
  ASSERT_TRUE(a);
  auto f = foreign_for(GetParam());
  EXPECT_EQ(code_of(a->ack(f.message)), invalid);
  EXPECT_EQ(code_of(a->release(f.message)), invalid);
  auto m = publish_and_receive(*a);
  ASSERT_TRUE(m);
  EXPECT_EQ(code_of(f.owner->ack(*m)), invalid);
  EXPECT_EQ(code_of(f.owner->release(*m)), invalid);
  EXPECT_EQ(code_of(f.owner->ack(f.message)), "ok");
  EXPECT_EQ(code_of(a->ack(*m)), "ok");
}

TEST_P(SettlementMisuse, HandleThatIsNoTransportsIsRefused) {
  auto a = open();
  ASSERT_TRUE(a);
  received_message empty;
  empty.queue = queue_;
  EXPECT_EQ(code_of(a->ack(empty)), invalid);
  EXPECT_EQ(code_of(a->release(empty)), invalid);
  // A caller's own object behind the handle, smaller than any transport's state.
  received_message stray = empty;
  stray.handle = std::make_shared<char>('x');
  EXPECT_EQ(code_of(a->ack(stray)), invalid);
  EXPECT_EQ(code_of(a->release(stray)), invalid);
}

TEST_P(SettlementMisuse, HandleOfADestroyedOwnerIsRefusedByItsSuccessor) {
  std::optional<received_message> m;
  const void* first = nullptr;
  {
    auto a = open();
    ASSERT_TRUE(a);
    first = a.get();
    m = publish_and_receive(*a);
    ASSERT_TRUE(m);
  }
  // The successor often gets the same address from the allocator (not under ASan, whose
  // quarantine delays reuse): the owner mark must not be an address.
  auto b = open();
  ASSERT_TRUE(b);
  RecordProperty("address_reused", b.get() == first ? "yes" : "no");
  EXPECT_EQ(code_of(b->ack(*m)), invalid) << "successor at the same address: " << (b.get() == first);
  EXPECT_EQ(code_of(b->release(*m)), invalid);
}

TEST_P(SettlementMisuse, SecondAckIsRefused) {
  auto a = open();
  ASSERT_TRUE(a);
  auto m = publish_and_receive(*a);
  ASSERT_TRUE(m);
  ASSERT_EQ(code_of(a->ack(*m)), "ok");
  EXPECT_EQ(code_of(a->ack(*m)), invalid);
  const received_message copy = *m;  // copies share the handle, and its settled mark
  EXPECT_EQ(code_of(a->ack(copy)), invalid);
  EXPECT_EQ(code_of(a->release(*m)), invalid);
}

TEST_P(SettlementMisuse, SecondReleaseAndAckAfterReleaseAreRefused) {
  auto a = open();
  ASSERT_TRUE(a);
  auto m = publish_and_receive(*a);
  ASSERT_TRUE(m);
  ASSERT_EQ(code_of(a->release(*m)), "ok");
  EXPECT_EQ(code_of(a->release(*m)), invalid);
  EXPECT_EQ(code_of(a->ack(*m)), invalid);
}

TEST_P(SettlementMisuse, EveryCallAfterCloseIsClosed) {
  auto a = open();
  ASSERT_TRUE(a);
  auto m = publish_and_receive(*a);
  ASSERT_TRUE(m);
  auto f = foreign_for(GetParam());
  ASSERT_EQ(code_of(a->close(clock_type::now() + 10s)), "ok");
  EXPECT_EQ(code_of(a->publish(queue_, bqtest::envelope_text(3))), closed);
  const std::vector<outgoing_message> batch{{bqtest::envelope_text(4), {}}};
  EXPECT_EQ(code_of(a->publish_batch(queue_, batch)), closed);
  EXPECT_EQ(code_of(a->receive(queue_, 0ms)), closed);
  EXPECT_EQ(code_of(a->ack(*m)), closed);
  EXPECT_EQ(code_of(a->release(*m)), closed);
  EXPECT_EQ(code_of(a->ack(f.message)), closed);
  EXPECT_EQ(code_of(a->peek(queue_, 0, 1)), closed);
  EXPECT_EQ(code_of(a->close(clock_type::now() + 1s)), "ok");  // again: a no-op
}

INSTANTIATE_TEST_SUITE_P(AllSchemes, SettlementMisuse, ::testing::ValuesIn(schemes()),
                         [](const auto& info) { return info.param; });

}  // namespace
