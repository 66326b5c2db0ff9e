// D5: accept → route → handler; retry arithmetic; DLQ naming; lossless re-emit (D4).
#include "runtime/test_util.hpp"

#include <babelqueue/dead_letter.hpp>

#include <gtest/gtest.h>

#include <stdexcept>

using namespace babelqueue;
using namespace std::chrono_literals;

namespace {

struct payment_timeout : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class AppRules : public ::testing::Test {
 protected:
  void SetUp() override { memory::register_transport(); }
  std::string broker = bqtest::unique_broker();
  std::string url() const { return "memory://" + broker; }
  bqtest::log_capture logs;
};

}  // namespace

TEST_F(AppRules, SuccessfulHandlerSeesTheEnvelopeAndTheMessageIsAcked) {
  auto o = bqtest::fast_options(&logs);
  o.queue = "orders";
  app a(url(), o);
  std::string seen_urn, seen_trace, seen_queue, seen_meta_queue;
  std::int64_t seen_id = 0, seen_attempts = -1;
  a.handle("urn:babel:orders:created", [&](message& m) {
    seen_urn = m.urn();
    seen_trace = m.trace_id();
    seen_id = m.data().at("order_id").get<std::int64_t>();
    seen_attempts = m.attempts();
    seen_queue = m.queue();
    seen_meta_queue = m.meta().at("queue").get<std::string>();
    EXPECT_FALSE(m.is_replay());
    EXPECT_EQ(m.raw(), m.delivery().body);
  });
  auto id = a.publish("urn:babel:orders:created", json{{"order_id", 1042}},
                      {.queue = "", .trace_id = "trace-1", .hdrs = {}});
  ASSERT_TRUE(id) << id.error().message;
  EXPECT_EQ(id->size(), 36u);
  auto n = a.drain();
  ASSERT_TRUE(n);
  EXPECT_EQ(*n, 1u);
  EXPECT_EQ(seen_urn, "urn:babel:orders:created");
  EXPECT_EQ(seen_trace, "trace-1");
  EXPECT_EQ(seen_id, 1042);
  EXPECT_EQ(seen_attempts, 0);
  EXPECT_EQ(seen_queue, "orders");
  EXPECT_EQ(seen_meta_queue, "orders");
  EXPECT_EQ(memory::depth(broker, "orders"), 0u);
  EXPECT_EQ(memory::in_flight(broker, "orders"), 0u);
}

TEST_F(AppRules, RetryArithmeticHandlerSeesZeroOneTwoAndDlqCarriesThreeInBothPlaces) {
  auto o = bqtest::fast_options(&logs);
  o.queue = "orders";
  o.dead_letter = true;
  app a(url(), o);
  std::vector<std::int64_t> seen;
  a.handle("urn:babel:orders:created", [&](message& m) {
    seen.push_back(m.attempts());
    throw payment_timeout("Payment gateway timeout");
  });
  auto id = a.publish("urn:babel:orders:created", json{{"order_id", 1}}).value();
  EXPECT_EQ(a.drain().value(), 3u);  // retries re-published onto the queue are drained too
  EXPECT_EQ(seen, (std::vector<std::int64_t>{0, 1, 2}));
  EXPECT_EQ(memory::depth(broker, "orders"), 0u);
  auto dlq = bqtest::take_all(broker, "orders.dlq");
  ASSERT_EQ(dlq.size(), 1u);
  auto env = decode(dlq[0].body).value();
  EXPECT_EQ(env.attempts(), 3);
  EXPECT_EQ(env.id(), id);  // same message, not a new one
  auto dl = env.dead_letter();
  ASSERT_TRUE(dl);
  EXPECT_EQ(dl->reason, "failed");
  EXPECT_EQ(dl->attempts, 3);
  EXPECT_EQ(dl->error.value_or(""), "Payment gateway timeout");
  EXPECT_EQ(dl->exception.value_or(""), "(anonymous namespace)::payment_timeout");
  EXPECT_EQ(dl->original_queue, "orders");
  EXPECT_EQ(dl->lang, "cpp");
  EXPECT_GT(dl->failed_at, 1700000000000);
  // The dead_letter block is the last key, in spec order.
  const std::string& body = dlq[0].body;
  EXPECT_NE(
      body.find(
          R"("attempts":3,"dead_letter":{"reason":"failed","error":"Payment gateway timeout","exception":)"),
      std::string::npos)
      << body;
}

TEST_F(AppRules, TerminalFailureWithDeadLetteringOffIsDroppedNotLooped) {
  auto o = bqtest::fast_options(&logs);
  app a(url(), o);
  int calls = 0;
  a.handle("urn:x:y:z", [&](message&) {
    ++calls;
    throw std::runtime_error("nope");
  });
  (void)a.publish("urn:x:y:z", json::object()).value();
  EXPECT_EQ(a.drain().value(), 3u);
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(memory::depth(broker, "default"), 0u);
  EXPECT_EQ(memory::depth(broker, "default.dlq"), 0u);
  EXPECT_TRUE(logs.contains("dropping"));
}

TEST_F(AppRules, MaxAttemptsOneOrZeroDeadLettersOnTheFirstFailureWithOne) {
  for (std::int64_t max : {1, 0}) {
    const std::string b = bqtest::unique_broker();
    auto o = bqtest::fast_options();
    o.max_attempts = max;
    o.dead_letter = true;
    app a("memory://" + b, o);
    int calls = 0;
    a.handle("urn:x:y:z", [&](message&) {
      ++calls;
      throw std::runtime_error("once");
    });
    (void)a.publish("urn:x:y:z", json::object()).value();
    EXPECT_EQ(a.drain().value(), 1u);
    EXPECT_EQ(calls, 1);
    auto dlq = bqtest::take_all(b, "default.dlq");
    ASSERT_EQ(dlq.size(), 1u);
    auto env = decode(dlq[0].body).value();
    EXPECT_EQ(env.attempts(), 1);
    EXPECT_EQ(env.dead_letter()->attempts, 1);
  }
}

TEST_F(AppRules, AttemptsAlreadyAtTheLimitDeadLetterAtOnce) {
  auto o = bqtest::fast_options();
  o.dead_letter = true;
  app a(url(), o);
  std::vector<std::int64_t> seen;
  a.handle("urn:babel:catalog:item.indexed", [&](message& m) {
    seen.push_back(m.attempts());
    throw std::runtime_error("x");
  });
  // The conformance fixture carries attempts 2 (a Python producer's second retry).
  bqtest::put_raw(
      broker, "default",
      R"({"job":"urn:babel:catalog:item.indexed","trace_id":"t","data":{},"meta":{"id":"i","queue":"catalog","lang":"python","schema_version":1,"created_at":1},"attempts":2})");
  EXPECT_EQ(a.drain().value(), 1u);
  EXPECT_EQ(seen, (std::vector<std::int64_t>{2}));
  auto dlq = bqtest::take_all(broker, "default.dlq");
  ASSERT_EQ(dlq.size(), 1u);
  auto env = decode(dlq[0].body).value();
  EXPECT_EQ(env.attempts(), 3);
  EXPECT_EQ(env.dead_letter()->original_queue, "catalog");  // meta.queue wins
}

TEST_F(AppRules, DeadLetterQueueNameExplicitOrSuffixAndOriginalQueueFallback) {
  {
    auto o = bqtest::fast_options();
    o.dead_letter = true;
    o.max_attempts = 1;
    o.dead_letter_suffix = "-dead";
    app a(url(), o);
    a.handle("urn:a:b:c", [](message&) { throw std::runtime_error("x"); });
    // No meta.queue: original_queue falls back to the consumed queue.
    bqtest::put_raw(
        broker, "work",
        R"({"job":"urn:a:b:c","trace_id":"t","data":{},"meta":{"id":"i","lang":"go","schema_version":1,"created_at":1},"attempts":0})");
    EXPECT_EQ(a.drain("work").value(), 1u);
    auto dlq = bqtest::take_all(broker, "work-dead");
    ASSERT_EQ(dlq.size(), 1u);
    EXPECT_EQ(decode(dlq[0].body).value().dead_letter()->original_queue, "work");
  }
  {
    auto o = bqtest::fast_options();
    o.dead_letter = true;
    o.max_attempts = 1;
    o.dead_letter_queue = "graveyard";
    app a(url(), o);
    a.handle("urn:a:b:c", [](message&) { throw std::runtime_error("x"); });
    (void)a.publish("urn:a:b:c", json::object(), {.queue = "work2", .trace_id = {}, .hdrs = {}});
    EXPECT_EQ(a.drain("work2").value(), 1u);
    EXPECT_EQ(bqtest::take_all(broker, "graveyard").size(), 1u);
  }
}

TEST_F(AppRules, RetryReEmitIsLosslessUnknownKeysBigIntegersAndNumberTextSurvive) {
  auto o = bqtest::fast_options();
  o.dead_letter = true;
  app a(url(), o);
  int calls = 0;
  a.handle("urn:babel:test:lossless", [&](message& m) {
    ++calls;
    EXPECT_EQ(
        m.data_text(),
        R"({"big":12345678901234567890,"huge":123456789012345678901234567890,"f":1.10,"e":1E2,"s":"\u2028"})");
    throw std::runtime_error("again");
  });
  const std::string original =
      R"({"job":"urn:babel:test:lossless","trace_id":"7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b","data":{"big":12345678901234567890,"huge":123456789012345678901234567890,"f":1.10,"e":1E2,"s":"\u2028"},"meta":{"id":"m-1","queue":"default","lang":"go","schema_version":1,"created_at":1749132727000,"x_meta":"keep"},"attempts":0,"x_top":{"k":[1,2]}})";
  bqtest::put_raw(broker, "default", original);
  ASSERT_EQ(a.drain("default", 1).value(), 1u);  // one handler call: the retry stays queued
  auto retried = bqtest::take_all(broker, "default");
  ASSERT_EQ(retried.size(), 1u);
  std::string expected = original;
  expected.replace(expected.find(R"("attempts":0)"), 12, R"("attempts":1)");
  EXPECT_EQ(retried[0].body, expected);  // byte-for-byte apart from attempts (D4)

  // ... and through to the DLQ: only attempts and the dead_letter block differ.
  bqtest::put_raw(broker, "default", retried[0].body);
  EXPECT_EQ(a.drain().value(), 2u);
  auto dlq = bqtest::take_all(broker, "default.dlq");
  ASSERT_EQ(dlq.size(), 1u);
  std::string prefix = original;
  prefix.replace(prefix.find(R"("attempts":0)"), 12, R"("attempts":3)");
  prefix.pop_back();  // drop the closing brace: the dead_letter block follows
  EXPECT_EQ(dlq[0].body.substr(0, prefix.size()), prefix);
  EXPECT_EQ(dlq[0].body.substr(prefix.size(), 16), R"(,"dead_letter":{)");
  EXPECT_EQ(calls, 3);
}

TEST_F(AppRules, HeadersReachTheHandlerAndSurviveARetry) {
  auto o = bqtest::fast_options();
  app a(url(), o);
  std::vector<bool> replay;
  std::vector<std::string> traceparent;
  a.handle("urn:a:b:c", [&](message& m) {
    replay.push_back(m.is_replay());
    traceparent.emplace_back(m.header("traceparent").value_or(""));
    if (replay.size() == 1) throw std::runtime_error("first time fails");
  });
  (void)a
      .publish("urn:a:b:c", json::object(),
               {.queue = {},
                .trace_id = {},
                .hdrs = {{"bq-replay-bypass", "1"}, {"traceparent", "00-abc-def-01"}}})
      .value();
  EXPECT_EQ(a.drain().value(), 2u);
  EXPECT_EQ(replay, (std::vector<bool>{true, true}));
  EXPECT_EQ(traceparent, (std::vector<std::string>{"00-abc-def-01", "00-abc-def-01"}));
}

TEST_F(AppRules, BypassExternalEffectsSkipsTheEffectOfAReplayAndOfItsRetry) {
  app a(url(), bqtest::fast_options());
  int effects = 0, handled = 0;
  std::vector<bool> ran;
  a.handle("urn:a:b:c", [&](message& m) {
    ++handled;
    ran.push_back(m.bypass_external_effects([&] { ++effects; }));
    if (handled == 1) throw std::runtime_error("the replay fails once");
  });
  const std::string body =
      R"({"job":"urn:a:b:c","trace_id":"t","data":{},"meta":{"schema_version":1},"attempts":0})";
  bqtest::put_raw(broker, "default", body, {{"bq-replay-bypass", "1"}});
  bqtest::put_raw(broker, "default", body);  // an ordinary delivery runs its effect
  bqtest::put_raw(broker, "default", body, {{"bq-replay-bypass", "false"}});  // any value
  EXPECT_EQ(a.drain().value(), 4u);  // the replay, its retry, the ordinary one, "false"
  EXPECT_EQ(handled, 4);
  EXPECT_EQ(effects, 1);
  EXPECT_EQ(ran, (std::vector<bool>{false, true, false, false}));
}

TEST_F(AppRules, ReplayFlagNeedsANonEmptyHeader) {
  app a(url(), bqtest::fast_options());
  bool replay = true;
  a.handle("urn:a:b:c", [&](message& m) { replay = m.is_replay(); });
  bqtest::put_raw(
      broker, "default",
      R"({"job":"urn:a:b:c","trace_id":"t","data":{},"meta":{"schema_version":1},"attempts":0})",
      {{"traceparent", "x"}});
  EXPECT_EQ(a.drain().value(), 1u);
  EXPECT_FALSE(replay);
}

TEST_F(AppRules, NonStandardExceptionsAreFailuresToo) {
  auto o = bqtest::fast_options();
  o.dead_letter = true;
  o.max_attempts = 1;
  app a(url(), o);
  a.handle("urn:a:b:c", [](message&) { throw 42; });
  (void)a.publish("urn:a:b:c", json::object()).value();
  EXPECT_EQ(a.drain().value(), 1u);
  auto dlq = bqtest::take_all(broker, "default.dlq");
  ASSERT_EQ(dlq.size(), 1u);
  auto dl = decode(dlq[0].body).value().dead_letter().value();
  EXPECT_EQ(dl.error.value_or(""), "unknown exception");
  EXPECT_EQ(dl.exception.value_or(""), "int");
}

TEST_F(AppRules, BabelqueueErrorFromDataIsAFailureWithItsReason) {
  auto o = bqtest::fast_options();
  o.dead_letter = true;
  o.max_attempts = 1;
  app a(url(), o);
  a.handle("urn:a:b:c", [](message& m) { (void)m.data(); });  // 1e400 fits no double
  bqtest::put_raw(
      broker, "default",
      R"({"job":"urn:a:b:c","trace_id":"t","data":{"x":1e400},"meta":{"schema_version":1},"attempts":0})");
  EXPECT_EQ(a.drain().value(), 1u);
  auto dlq = bqtest::take_all(broker, "default.dlq");
  ASSERT_EQ(dlq.size(), 1u);
  auto dl = decode(dlq[0].body).value().dead_letter().value();
  EXPECT_EQ(dl.exception.value_or(""), "babelqueue::v1::error");
  EXPECT_NE(dl.error.value_or("").find("number_out_of_range"), std::string::npos);
}

TEST_F(AppRules, InvalidOptionsAndUrlsThrowOrFailWithoutCrashing) {
  app_options o;
  o.workers = 0;
  EXPECT_THROW(app(url(), o), error);
  EXPECT_EQ(app::open(url(), o).code(), condition::invalid_argument);
  EXPECT_EQ(app::open("nosuch://x").code(), runtime_errc::unknown_scheme);
  EXPECT_EQ(app::open("not a url").code(), condition::invalid_argument);
}

TEST_F(AppRules, PublishingJsonTextKeepsEveryNumberExactly) {
  app a(url(), bqtest::fast_options(&logs));
  const std::string data = R"({"neg":-12345678901234567890,"low":-9223372036854775809,"f":1.10})";
  std::string seen;
  a.handle("urn:babel:t:numbers", [&](message& m) { seen = m.data_text(); });
  auto id = a.publish("urn:babel:t:numbers", json_text(data),
                      {.queue = {}, .trace_id = "t-1", .hdrs = {}});
  ASSERT_TRUE(id) << id.error().message;
  EXPECT_EQ(a.drain().value(), 1u);
  EXPECT_EQ(seen, data);
  EXPECT_EQ(a.publish("urn:a:b:c", json_text("[1]")).code(), errc::invalid_data);
  EXPECT_EQ(a.publish("urn:a:b:c", json_text("{")).code(), errc::malformed_json);
  EXPECT_EQ(memory::depth(broker, "default"), 0u);
}
