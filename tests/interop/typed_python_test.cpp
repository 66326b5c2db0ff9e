// Typed messages against the real Python SDK over a real redis-server: a Python producer's
// message consumed by a typed C++ handler (types generated from examples/registry), and a
// typed C++ publish consumed by Python. The C++ side re-emits what it consumed as a typed
// message too, and Python sees the fields the C++ type does not declare (D4).
#include "example_messages.hpp"  // namespace example (babelqueue_generate_messages)
#include "interop/python_peer.hpp"
#include "interop/redis_python_fixture.hpp"

#include <babelqueue/runtime/app.hpp>

#include <gtest/gtest.h>

using namespace std::chrono_literals;
using babelqueue::json;
using example::OrdersPlaced;
using example::ShippingRequested;

namespace {

std::vector<json> run_peer(const std::string& python, const std::vector<std::string>& args) {
  return bqtest::interop::run_peer(python, "peer.py", args);
}

class TypedPythonInterop : public bqtest::interop::redis_python_fixture {};

// What the Python producer sends: valid for the schema, plus members a newer producer added.
json python_order() {
  return json::parse(R"({"order_id":1042,"placed_at":"2026-12-06T23:15:00.5+03:00","currency":"TRY",
    "customer":{"id":7,"email":"ada@example.com","loyalty":{"tier":"gold"}},
    "lines":[{"sku":"BOOK-1","qty":2,"unit_price":12.5},{"sku":"PEN","qty":10,"colour":"blue"}],
    "channel":"web"})");
}

}  // namespace

TEST_F(TypedPythonInterop, PythonPublishesTypedCppConsumesAndReEmitsLosslessly) {
  const json spec = json::array({{{"urn", OrdersPlaced::urn},
                                  {"data", python_order()},
                                  {"trace_id", "trace-typed"},
                                  {"headers", json::object()}},
                                 {{"urn", OrdersPlaced::urn},
                                  {"data", json::parse(R"({"order_id":"1043"})")},
                                  {"trace_id", "trace-bad"},
                                  {"headers", json::object()}}});
  ASSERT_EQ(run_peer(python_, {"publish", url_, "typed", spec.dump()}).size(), 2u);

  babelqueue::app_options o;
  o.queue = "typed";
  o.poll_timeout = 500ms;
  o.max_attempts = 1;
  o.dead_letter = true;
  babelqueue::app app(url_, o);
  std::vector<OrdersPlaced> seen;
  app.handle<OrdersPlaced>([&](const OrdersPlaced& order, babelqueue::message& msg) {
    seen.push_back(order);
    EXPECT_EQ(msg.trace_id(), "trace-typed");
    msg.publish(order, {.queue = "typed-back", .hdrs = {}}).value();  // the same type, re-emitted
  });
  ASSERT_EQ(app.drain("typed").value(), 2u);

  ASSERT_EQ(seen.size(), 1u);
  const OrdersPlaced& order = seen[0];
  EXPECT_EQ(order.order_id, 1042);
  EXPECT_EQ(order.placed_at, "2026-12-06T23:15:00.5+03:00");
  EXPECT_EQ(order.currency, OrdersPlaced::Currency::TRY);
  EXPECT_EQ(order.customer.email, "ada@example.com");
  ASSERT_EQ(order.lines.size(), 2u);
  EXPECT_EQ(order.lines[1].qty, 10);
  EXPECT_EQ(order.lines[0].unit_price, 12.5);
  EXPECT_EQ(order.unknown_fields, json::parse(R"({"channel":"web"})"));

  // Python reads the typed re-emit: every member it sent, the undeclared ones included.
  auto back =
      run_peer(python_, {"consume", url_, "typed-back", "1", std::string(OrdersPlaced::urn)});
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0]["trace_id"], "trace-typed");
  EXPECT_EQ(back[0]["meta"]["lang"], "cpp");
  EXPECT_TRUE(babelqueue::typed::detail::same_value(back[0]["data"], python_order()))
      << back[0]["data"].dump();

  // The Python message that does not convert went to the DLQ with the pointer.
  auto dead = run_peer(python_, {"read-dlq", url_, "typed.dlq"});
  ASSERT_EQ(dead.size(), 1u);
  const json& env = dead[0]["envelope"];
  EXPECT_EQ(env["trace_id"], "trace-bad") << dead[0].dump();
  EXPECT_EQ(env["dead_letter"]["reason"], "failed");
  EXPECT_NE(env["dead_letter"]["error"].get<std::string>().find("(at /order_id)"),
            std::string::npos)
      << dead[0].dump();
}

TEST_F(TypedPythonInterop, TypedCppPublishesPythonConsumes) {
  ShippingRequested s;
  s.order_id = 1042;
  s.address.line = "Kordon 1";
  s.address.city = "İzmir";
  s.address.postcode = "35210";
  s.express = true;
  {
    babelqueue::app_options o;
    o.queue = "typed-ship";
    babelqueue::app app(url_, o);
    babelqueue::publish_options p;
    p.trace_id = "trace-ship";
    app.publish(s, p).value();
  }
  auto seen =
      run_peer(python_, {"consume", url_, "typed-ship", "1", std::string(ShippingRequested::urn)});
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0]["urn"], ShippingRequested::urn);
  EXPECT_EQ(seen[0]["trace_id"], "trace-ship");
  EXPECT_EQ(seen[0]["data"], json::parse(R"({"order_id":1042,"address":{"line":"Kordon 1",
    "city":"İzmir","postcode":"35210"},"express":true})"));
  // What Python received converts back to the same struct.
  EXPECT_EQ(babelqueue::typed::from_data<ShippingRequested>(seen[0]["data"]).value(), s);
}
