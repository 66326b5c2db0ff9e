// app.handle<T> / app.publish(T) / msg.publish(T) on the real runtime (memory:// transport)
// with generated types: conversion, the failure path (pointer in dead_letter.error, never a
// crash), the schema guard before conversion, and unknown members kept on re-emit (D4).
#include "example_messages.hpp"  // namespace example
#include "runtime/test_util.hpp"

#include <babelqueue/codec.hpp>
#include <babelqueue/memory/memory_transport.hpp>
#include <babelqueue/runtime/app.hpp>
#include <babelqueue/schema/wrap.hpp>

#include <gtest/gtest.h>

namespace bq = babelqueue;
using bq::json;
using example::OrdersPlaced;
using example::ShippingRequested;

namespace {

// A binding whose to_json writes an array: `data` must be an object.
struct Odd {
  static constexpr std::string_view urn = "urn:babel:odd";
  friend void to_json(json& j, const Odd&) { j = json::array(); }
  friend void from_json(const json&, Odd&) {}
};

struct TypedApp : ::testing::Test {
  void SetUp() override {
    bq::memory::register_transport();
    broker = bqtest::unique_broker("typed");
    options = bqtest::fast_options();
    options.queue = "orders";
    options.dead_letter = true;
  }
  std::vector<json> bodies(const std::string& queue) {
    std::vector<json> out;
    for (const auto& m : bqtest::take_all(broker, queue))
      out.push_back(bq::parse_json(m.body).value());
    return out;
  }
  std::string broker;
  bq::app_options options;
};

json order_data() {
  return json::parse(R"({"order_id":1042,"placed_at":"2026-12-06T23:15:00Z","currency":"TRY",
    "customer":{"id":7,"email":"ada@example.com"},"lines":[{"sku":"A","qty":2},{"sku":"B","qty":1}]})");
}

TEST_F(TypedApp, TypedHandlerGetsTheStructAndTypedPublishesTakeTheUrnFromTheType) {
  bq::app app("memory://" + broker, options);
  std::vector<OrdersPlaced> seen;
  std::vector<std::int64_t> shipped;
  app.handle<OrdersPlaced>([&](const OrdersPlaced& order, bq::message& msg) {
    seen.push_back(order);
    ShippingRequested s;
    s.order_id = order.order_id;
    s.address.line = "1 Main St";
    s.address.city = "Izmir";
    msg.publish(s, {.queue = "shipping", .hdrs = {}}).value();
  });
  app.handle<ShippingRequested>([&](const ShippingRequested& s) { shipped.push_back(s.order_id); });

  OrdersPlaced typed_order = bq::typed::from_data<OrdersPlaced>(order_data()).value();
  typed_order.order_id = 1043;
  app.publish(OrdersPlaced{typed_order}).value();                // typed
  app.publish("urn:babel:orders:placed", order_data()).value();  // untyped producer
  EXPECT_EQ(app.drain("orders").value(), 2u);
  EXPECT_EQ(app.drain("shipping").value(), 2u);

  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0], typed_order);
  EXPECT_EQ(seen[1].order_id, 1042);
  EXPECT_EQ(seen[1].currency, OrdersPlaced::Currency::TRY);
  EXPECT_EQ(seen[1].lines.at(1).sku, "B");
  EXPECT_EQ(shipped, (std::vector<std::int64_t>{1043, 1042}));
}

TEST_F(TypedApp, DataThatDoesNotConvertIsDeadLetteredWithThePointer) {
  options.max_attempts = 3;
  bq::app app("memory://" + broker, options);
  int called = 0;
  app.handle<OrdersPlaced>([&](const OrdersPlaced&) { ++called; });
  json bad = order_data();
  bad["lines"].push_back({{"sku", "C"}, {"qty", "two"}});
  app.publish("urn:babel:orders:placed", bad).value();
  app.publish("urn:babel:orders:placed", json::parse(R"({"order_id":"x"})")).value();
  EXPECT_EQ(app.drain("orders").value(), 6u);  // two messages, three attempts each
  EXPECT_EQ(called, 0);

  const auto dead = bodies("orders.dlq");
  ASSERT_EQ(dead.size(), 2u);
  EXPECT_EQ(dead[0]["dead_letter"]["reason"], "failed");
  EXPECT_EQ(dead[0]["dead_letter"]["attempts"], 3);
  EXPECT_EQ(dead[0]["dead_letter"]["error"],
            "invalid_data: data for \"urn:babel:orders:placed\" does not convert: expected an "
            "integer, got string (at /lines/2/qty)");
  EXPECT_EQ(dead[0]["data"], bad);  // the body itself is untouched
  EXPECT_NE(dead[1]["dead_letter"]["error"].get<std::string>().find("(at /order_id)"),
            std::string::npos);
}

TEST_F(TypedApp, TheSchemaGuardRunsBeforeConversion) {
  options.max_attempts = 1;
  bq::app app("memory://" + broker, options);
  auto schemas = bq::schema::map_provider::from_text(
                     {{std::string(OrdersPlaced::urn), std::string(OrdersPlaced::schema)}})
                     .value();
  int called = 0;
  app.handle<OrdersPlaced>([&](const OrdersPlaced&) { ++called; }, bq::schema::check_with(schemas));
  json bad = order_data();
  bad["lines"][1]["qty"] = "two";
  bad["currency"] = "GBP";
  app.publish("urn:babel:orders:placed", bad).value();
  app.publish("urn:babel:orders:placed", order_data()).value();
  EXPECT_EQ(app.drain("orders").value(), 2u);
  EXPECT_EQ(called, 1);
  const auto dead = bodies("orders.dlq");
  ASSERT_EQ(dead.size(), 1u);
  const auto error = dead[0]["dead_letter"]["error"].get<std::string>();
  // The validator's report (every violation), not the first conversion failure.
  EXPECT_NE(error.find("does not match its URN schema"), std::string::npos) << error;
  EXPECT_NE(error.find("lines[1].qty"), std::string::npos) << error;
  EXPECT_NE(error.find("currency"), std::string::npos) << error;
}

TEST_F(TypedApp, UnknownMembersSurviveATypedReEmit) {
  bq::app app("memory://" + broker, options);
  app.handle<OrdersPlaced>([&](const OrdersPlaced& order, bq::message& msg) {
    OrdersPlaced next = order;
    next.note = "checked";
    msg.publish(next, {.queue = "audit", .hdrs = {}}).value();
  });
  json in = order_data();
  in["channel"] = "web";                        // a newer producer's field
  in["customer"]["tier"] = json{{"level", 3}};  // nested too
  in["lines"][0]["warehouse"] = "IST-2";
  app.publish("urn:babel:orders:placed", in).value();
  EXPECT_EQ(app.drain("orders").value(), 1u);

  const auto audit = bodies("audit");
  ASSERT_EQ(audit.size(), 1u);
  EXPECT_EQ(audit[0]["job"], "urn:babel:orders:placed");
  json expected = in;
  expected["note"] = "checked";
  EXPECT_TRUE(bq::typed::detail::same_value(audit[0]["data"], expected)) << audit[0]["data"].dump();
  EXPECT_EQ(audit[0]["data"]["channel"], "web");
  EXPECT_EQ(audit[0]["data"]["customer"]["tier"]["level"], 3);
  EXPECT_EQ(audit[0]["data"]["lines"][0]["warehouse"], "IST-2");
}

TEST_F(TypedApp, ATypedPublishOfDataThatIsNotAnObjectIsAnErrorNotAMessage) {
  bq::app app("memory://" + broker, options);
  auto r = app.publish(Odd{});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, bq::make_error_code(bq::errc::invalid_data));
  EXPECT_TRUE(bodies("orders").empty());
}

}  // namespace
