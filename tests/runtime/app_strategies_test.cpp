// D5 unknown-URN strategies: fail, delete, release, dead_letter (and its degradation).
#include "runtime/test_util.hpp"

#include <gtest/gtest.h>

using namespace babelqueue;

namespace {

class Strategies : public ::testing::Test {
 protected:
  void SetUp() override { memory::register_transport(); }
  std::string broker = bqtest::unique_broker("strat");
  std::string url() const { return "memory://" + broker; }
  app_options options(unknown_urn_strategy s, bool dlq) {
    auto o = bqtest::fast_options(&logs);
    o.on_unknown_urn = s;
    o.dead_letter = dlq;
    return o;
  }
  bqtest::log_capture logs;
};

const char* unknown_body =
    R"({"job":"urn:babel:nobody:handles","trace_id":"t-9","data":{"a":1},"meta":{"id":"m-9","queue":"inbox","lang":"php","schema_version":1,"created_at":1},"attempts":0})";

}  // namespace

TEST_F(Strategies, FailCountsAsAFailureAndDeadLettersAsUnknownUrn) {
  app a(url(), options(unknown_urn_strategy::fail, true));
  a.handle("urn:other:x:y", [](message&) {});
  bqtest::put_raw(broker, "default", unknown_body);
  EXPECT_EQ(a.drain().value(), 3u);  // 0, 1, 2 then DLQ
  auto dlq = bqtest::take_all(broker, "default.dlq");
  ASSERT_EQ(dlq.size(), 1u);
  auto env = decode(dlq[0].body).value();
  EXPECT_EQ(env.attempts(), 3);
  auto dl = env.dead_letter().value();
  EXPECT_EQ(dl.reason, "unknown_urn");
  EXPECT_EQ(dl.attempts, 3);
  EXPECT_EQ(dl.error.value_or(""),
            "no handler is mapped for the message URN: \"urn:babel:nobody:handles\"");
  EXPECT_EQ(dl.original_queue, "inbox");
}

TEST_F(Strategies, FailIsTheDefault) {
  EXPECT_EQ(app_options{}.on_unknown_urn, unknown_urn_strategy::fail);
  EXPECT_EQ(app_options{}.max_attempts, 3);
  EXPECT_FALSE(app_options{}.dead_letter);
  EXPECT_EQ(app_options{}.dead_letter_suffix, ".dlq");
  EXPECT_EQ(app_options{}.queue, "default");
  EXPECT_EQ(app_options{}.poll_timeout, std::chrono::milliseconds(1000));
  EXPECT_EQ(app_options{}.workers, 1u);
}

TEST_F(Strategies, DeleteAcksAndDrops) {
  app a(url(), options(unknown_urn_strategy::del, true));
  bqtest::put_raw(broker, "default", unknown_body);
  EXPECT_EQ(a.drain().value(), 1u);
  EXPECT_EQ(memory::depth(broker, "default"), 0u);
  EXPECT_EQ(memory::depth(broker, "default.dlq"), 0u);
  EXPECT_EQ(memory::in_flight(broker, "default"), 0u);
}

TEST_F(Strategies, ReleasePutsTheSameBytesBackWithoutABump) {
  app a(url(), options(unknown_urn_strategy::release, true));
  bqtest::put_raw(broker, "default", unknown_body, {{"traceparent", "00-x"}});
  EXPECT_EQ(a.drain("default", 1).value(), 1u);
  auto back = bqtest::take_all(broker, "default");
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].body, unknown_body);
  EXPECT_EQ(back[0].hdrs.at("traceparent"), "00-x");
  EXPECT_EQ(memory::depth(broker, "default.dlq"), 0u);
}

TEST_F(Strategies, DrainWithReleaseDoesNotSpinOnAMessageNobodyHandles) {
  app a(url(), options(unknown_urn_strategy::release, false));
  int calls = 0;
  a.handle("urn:a:b:c", [&](message&) { ++calls; });
  bqtest::put_raw(broker, "default", unknown_body);
  (void)a.publish("urn:a:b:c", json::object()).value();
  EXPECT_EQ(a.drain().value(), 2u);  // the unknown one once, the handled one once
  EXPECT_EQ(calls, 1);
  auto back = bqtest::take_all(broker, "default");
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].body, unknown_body);
}

TEST_F(Strategies, ReleaseHonoursTheConfiguredDelay) {
  auto o = options(unknown_urn_strategy::release, false);
  o.unknown_urn_release_delay = std::chrono::milliseconds(300);
  app a(url(), o);
  bqtest::put_raw(broker, "default", unknown_body);
  EXPECT_EQ(a.drain("default", 1).value(), 1u);
  memory::memory_transport t(broker);
  auto early = t.receive("default", std::chrono::milliseconds(50)).value();
  EXPECT_FALSE(early.has_value());
  auto later = t.receive("default", std::chrono::milliseconds(2000)).value();
  ASSERT_TRUE(later.has_value());
  EXPECT_EQ(later->body, unknown_body);
  (void)t.ack(*later);
}

TEST_F(Strategies, DeadLetterSendsAtOnceWithCurrentAttemptsAndNullCause) {
  app a(url(), options(unknown_urn_strategy::dead_letter, true));
  std::string body = unknown_body;
  body.replace(body.find(R"("attempts":0)"), 12, R"("attempts":1)");
  bqtest::put_raw(broker, "default", body);
  EXPECT_EQ(a.drain().value(), 1u);
  auto dlq = bqtest::take_all(broker, "default.dlq");
  ASSERT_EQ(dlq.size(), 1u);
  auto env = decode(dlq[0].body).value();
  EXPECT_EQ(env.attempts(), 1);  // not bumped
  auto dl = env.dead_letter().value();
  EXPECT_EQ(dl.reason, "unknown_urn");
  EXPECT_EQ(dl.attempts, 1);
  EXPECT_FALSE(dl.error.has_value());
  EXPECT_FALSE(dl.exception.has_value());
  EXPECT_NE(dlq[0].body.find(R"("error":null,"exception":null)"), std::string::npos);
}

TEST_F(Strategies, DeadLetterDegradesToDeleteWhenDeadLetteringIsOff) {
  app a(url(), options(unknown_urn_strategy::dead_letter, false));
  bqtest::put_raw(broker, "default", unknown_body);
  EXPECT_EQ(a.drain().value(), 1u);
  EXPECT_EQ(memory::depth(broker, "default"), 0u);
  EXPECT_EQ(memory::depth(broker, "default.dlq"), 0u);
  EXPECT_TRUE(logs.contains("dead-lettering off"));
}

TEST_F(Strategies, StrategyNamesParse) {
  EXPECT_EQ(parse_unknown_urn_strategy("delete"), unknown_urn_strategy::del);
  EXPECT_EQ(parse_unknown_urn_strategy("dead_letter"), unknown_urn_strategy::dead_letter);
  EXPECT_EQ(parse_unknown_urn_strategy("release"), unknown_urn_strategy::release);
  EXPECT_EQ(parse_unknown_urn_strategy("fail"), unknown_urn_strategy::fail);
  EXPECT_FALSE(parse_unknown_urn_strategy("explode"));
  EXPECT_EQ(parse_unknown_urn_strategy("dead-letter"), unknown_urn_strategy::dead_letter);
  EXPECT_EQ(to_string(unknown_urn_strategy::del), "delete");
  EXPECT_EQ(to_string(unknown_urn_strategy::dead_letter), "dead_letter");
}

// D3a: a received URN is routed exactly as it arrived. A padded `job` matches no handler —
// not even the one registered for its trimmed form — and takes the unknown-URN path, while
// app.handle() trims (ASCII) what the programmer passed.
TEST_F(Strategies, PaddedUrnIsRoutedUntrimmedAndTakesTheUnknownUrnPath) {
  app a(url(), options(unknown_urn_strategy::dead_letter, true));
  std::vector<std::string> handled;
  a.handle("  urn:babel:t:x ", [&](message& m) { handled.emplace_back(m.urn()); });
  const std::string padded =
      R"({"job":"  urn:babel:t:x  ","trace_id":" t-1 ","data":{},"meta":{"id":"m-1","schema_version":1},"attempts":0})";
  const std::string exact =
      R"({"job":"urn:babel:t:x","trace_id":"t-2","data":{},"meta":{"id":"m-2","schema_version":1},"attempts":0})";
  bqtest::put_raw(broker, "default", padded);
  bqtest::put_raw(broker, "default", exact);
  EXPECT_EQ(a.drain().value(), 2u);
  EXPECT_EQ(handled, std::vector<std::string>{"urn:babel:t:x"});  // the trimmed registration
  auto dlq = bqtest::take_all(broker, "default.dlq");
  ASSERT_EQ(dlq.size(), 1u);
  auto env = decode(dlq[0].body).value();
  EXPECT_EQ(env.urn(), "  urn:babel:t:x  ");  // re-emitted as received (D4)
  EXPECT_EQ(env.trace_id(), " t-1 ");
  EXPECT_EQ(env.id(), "m-1");
  EXPECT_EQ(env.dead_letter().value().reason, "unknown_urn");
}

TEST_F(Strategies, HandleRefusesABlankUrn) {
  app a(url(), options(unknown_urn_strategy::fail, false));
  for (const char* u : {"", "  ", "\t\r\n\v\f"}) {
    try {
      a.handle(u, [](message&) {});
      ADD_FAILURE() << "no throw for '" << u << "'";
    } catch (const babelqueue::error& e) {
      EXPECT_EQ(e.code(), errc::empty_urn);
    }
  }
  // Unicode white space is not blank (D3a): registered as given.
  EXPECT_NO_THROW(a.handle("\xC2\xA0", [](message&) {}));
}
