// Consumer-side wrap on the real runtime (memory:// transport): a schema violation is a
// handler failure — retried, then dead-lettered with the violations — while valid messages
// and URNs without a schema reach the handler.
#include <babelqueue/codec.hpp>
#include <babelqueue/memory/memory_transport.hpp>
#include <babelqueue/runtime/app.hpp>
#include <babelqueue/schema/wrap.hpp>

#include <gtest/gtest.h>

#include <atomic>

namespace bq = babelqueue;
namespace schema = babelqueue::schema;

namespace {

std::string fresh_broker() {
  static std::atomic<int> n{0};
  return "schema-wrap-" + std::to_string(n.fetch_add(1));
}

bq::app_options options() {
  bq::app_options o;
  o.queue = "orders";
  o.dead_letter = true;
  o.poll_timeout = std::chrono::milliseconds(20);
  return o;
}

schema::map_provider orders() {
  return schema::map_provider::from_text(
             {{"urn:babel:orders:created",
               R"({"type":"object","required":["order_id"],"properties":{"order_id":{"type":"integer","minimum":1}}})"}})
      .value();
}

std::vector<std::string> drain_bodies(const std::string& broker, const std::string& queue) {
  bq::memory::memory_transport t(broker);
  std::vector<std::string> out;
  for (;;) {
    auto got = t.receive(queue, std::chrono::milliseconds(0));
    if (!got || !*got) break;
    (void)t.ack(**got);
    out.push_back((**got).body);
  }
  return out;
}

}  // namespace

TEST(SchemaWrap, ViolationIsRetriedThenDeadLettered) {
  bq::memory::register_transport();
  const auto broker = fresh_broker();
  bq::app a("memory://" + broker, options());
  int handled = 0;
  a.handle("urn:babel:orders:created", schema::wrap(orders(), [&](bq::message&) { ++handled; }));
  a.publish("urn:babel:orders:created", bq::json{{"order_id", 0}}).value();
  EXPECT_EQ(a.drain().value(), 3u);  // max_attempts 3: the poison message uses every attempt
  EXPECT_EQ(handled, 0);
  auto dlq = drain_bodies(broker, "orders.dlq");
  ASSERT_EQ(dlq.size(), 1u);
  auto env = bq::decode(dlq[0]).value();
  auto dl = env.dead_letter();
  ASSERT_TRUE(dl);
  EXPECT_EQ(dl->reason, "failed");
  EXPECT_EQ(dl->attempts, 3);
  EXPECT_NE(dl->error.value_or("").find("order_id: must be >= 1"), std::string::npos)
      << dl->error.value_or("");
  EXPECT_NE(dl->exception.value_or("").find("invalid_payload_error"), std::string::npos);
}

TEST(SchemaWrap, ValidAndUnregisteredReachTheHandler) {
  bq::memory::register_transport();
  const auto broker = fresh_broker();
  bq::app a("memory://" + broker, options());
  auto provider = std::make_shared<const schema::map_provider>(orders());
  int valid = 0, other = 0;
  a.handle("urn:babel:orders:created", schema::wrap(provider, [&](bq::message& m) {
             EXPECT_EQ(m.data().at("order_id"), 7);
             ++valid;
           }));
  a.handle("urn:babel:orders:shipped", schema::wrap(provider, [&](bq::message&) { ++other; }));
  a.publish("urn:babel:orders:created", bq::json{{"order_id", 7}}).value();
  a.publish("urn:babel:orders:shipped", bq::json{{"anything", true}}).value();
  EXPECT_EQ(a.drain().value(), 2u);
  EXPECT_EQ(valid, 1);
  EXPECT_EQ(other, 1);
  EXPECT_TRUE(drain_bodies(broker, "orders.dlq").empty());
}
