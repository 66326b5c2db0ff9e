// The D5 runtime rules over amqp:// (the App on RabbitMQ): retry arithmetic with the DLQ
// carrying 3 in body and x-attempts, poison bytes dead-lettered unchanged, Laravel's
// header-only attempts honoured, unknown-URN release to the tail, trace_id as
// correlation_id on every hop, headers surviving a retry.
#include "rabbitmq/rabbitmq_fixture.hpp"

#include <babelqueue/runtime/app.hpp>

#include <stdexcept>

using namespace std::chrono_literals;
using babelqueue::json;

namespace {

class RabbitApp : public bqtest::RabbitTest {
 protected:
  babelqueue::app_options app_opts() {
    babelqueue::rabbitmq::register_transport();
    babelqueue::app_options o;
    o.queue = queue_;
    o.poll_timeout = 300ms;
    o.dead_letter = true;
    return o;
  }
};

}  // namespace

TEST_F(RabbitApp, RetriesSeeZeroOneTwoAndTheDlqCarriesThreeInBodyAndHeader) {
  babelqueue::app app(bqtest::rabbitmq_url(), app_opts());
  std::vector<std::int64_t> seen;
  app.handle("urn:babel:orders:created", [&](babelqueue::message& m) {
    seen.push_back(m.attempts());
    throw std::runtime_error("Payment gateway timeout");
  });
  auto id = app.publish("urn:babel:orders:created", json{{"order_id", 1}},
                        {.queue = "", .trace_id = "trace-amqp-1", .hdrs = {}});
  ASSERT_TRUE(id) << id.error().message;
  auto n = app.drain();
  ASSERT_TRUE(n) << n.error().message;
  EXPECT_EQ(*n, 3u);
  EXPECT_EQ(seen, (std::vector<std::int64_t>{0, 1, 2}));
  EXPECT_EQ(raw_->count(queue_), 0);
  auto dlq = raw_->get(queue_ + ".dlq");
  ASSERT_TRUE(dlq);
  auto env = babelqueue::decode(dlq->body).value();
  EXPECT_EQ(env.attempts(), 3);
  EXPECT_EQ(env.id(), *id);
  EXPECT_EQ(env.trace_id(), "trace-amqp-1");
  ASSERT_TRUE(env.dead_letter());
  EXPECT_EQ(env.dead_letter()->reason, "failed");
  EXPECT_EQ(dlq->headers["x-attempts"].value.i32, 3);
  EXPECT_EQ(dlq->prop("correlation_id"), "trace-amqp-1") << "trace_id on every hop";
  EXPECT_EQ(dlq->prop("message_id"), *id);
}

TEST_F(RabbitApp, PoisonBytesAreDeadLetteredUnchanged) {
  ASSERT_EQ(raw_->declare(queue_), 0);
  const std::vector<std::string> garbage = {"not json", std::string("\xff\xfe\x00 bin", 7),
                                            R"({"job":"urn:babel:x:y"})"};
  for (const auto& g : garbage) ASSERT_TRUE(raw_->publish(queue_, g));
  babelqueue::app app(bqtest::rabbitmq_url(), app_opts());
  app.handle("urn:babel:test:item", [](babelqueue::message&) {});
  ASSERT_TRUE(app.drain());
  for (const auto& g : garbage) {
    auto m = raw_->get(queue_ + ".dlq");
    ASSERT_TRUE(m);
    EXPECT_EQ(m->body, g);
  }
  EXPECT_EQ(raw_->count(queue_), 0);
}

TEST_F(RabbitApp, LaravelsHeaderOnlyAttemptsCountTowardsTheLimit) {
  // Laravel released twice: body attempts 0, x-attempts 2. One more failure reaches 3.
  ASSERT_EQ(raw_->declare(queue_), 0);
  amqp_table_entry_t e{};
  e.key = amqp_cstring_bytes("x-attempts");
  e.value.kind = AMQP_FIELD_KIND_I32;
  e.value.value.i32 = 2;
  amqp_basic_properties_t props{};
  props._flags = AMQP_BASIC_HEADERS_FLAG;
  props.headers = amqp_table_t{1, &e};
  ASSERT_TRUE(raw_->publish(queue_, bqtest::envelope_text(5), &props));
  babelqueue::app app(bqtest::rabbitmq_url(), app_opts());
  std::vector<std::int64_t> seen;
  app.handle("urn:babel:test:item", [&](babelqueue::message& m) {
    seen.push_back(m.attempts());
    throw std::runtime_error("boom");
  });
  ASSERT_TRUE(app.drain());
  EXPECT_EQ(seen, (std::vector<std::int64_t>{2}));
  auto dlq = raw_->get(queue_ + ".dlq");
  ASSERT_TRUE(dlq);
  EXPECT_EQ(babelqueue::decode(dlq->body)->attempts(), 3);
}

TEST_F(RabbitApp, AnUnknownUrnIsReleasedUnchangedToTheTail) {
  auto o = app_opts();
  o.on_unknown_urn = babelqueue::unknown_urn_strategy::release;
  // The broker's own release, at once (a backed-off release is a delayed republish:
  // docs/delays.md).
  o.retry = babelqueue::retry_policy::immediate();
  babelqueue::app app(bqtest::rabbitmq_url(), o);
  app.handle("urn:babel:test:item", [](babelqueue::message&) {});
  const std::string stranger = bqtest::envelope_text(1, "urn:babel:other:thing");
  {
    auto t = open();
    ASSERT_TRUE(
        t->publish(queue_, stranger,
                   {{"traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}));
  }
  ASSERT_TRUE(app.drain());
  auto m = raw_->get(queue_);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->body, stranger) << "same bytes";
  EXPECT_EQ(m->headers.count("traceparent"), 1u) << "same headers";
  EXPECT_EQ(m->headers["x-attempts"].value.i32, 0) << "a release is not an attempt";
}

TEST_F(RabbitApp, OutOfBandHeadersSurviveARetry) {
  babelqueue::app app(bqtest::rabbitmq_url(), app_opts());
  std::vector<std::string> seen;
  int calls = 0;
  app.handle("urn:babel:test:item", [&](babelqueue::message& m) {
    auto it = m.hdrs().find("tenant");
    seen.push_back(it == m.hdrs().end() ? "<none>" : it->second);
    if (++calls == 1) throw std::runtime_error("once");
  });
  ASSERT_TRUE(app.publish("urn:babel:test:item", json{{"n", 1}},
                          {.queue = "", .trace_id = "", .hdrs = {{"tenant", "acme"}}}));
  ASSERT_TRUE(app.drain());
  EXPECT_EQ(seen, (std::vector<std::string>{"acme", "acme"}));
}
