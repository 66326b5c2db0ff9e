// Typed messages on memory://: C++ structs generated from the schema registry in
// examples/registry (babelqueue_generate_messages), a typed handler, typed publishes, and a
// body whose `data` does not convert dead-lettered with the field's path (docs/typed.md).
//
// Build (in this repository): cmake --build build --target example_typed_orders
// From an installed babelqueue (tests/install/typed_consumer does exactly this):
//   find_package(babelqueue CONFIG REQUIRED COMPONENTS runtime memory)
//   add_executable(typed_orders typed_orders.cpp)
//   babelqueue_generate_messages(typed_orders REGISTRY registry HEADER orders_messages.hpp)
//   target_link_libraries(typed_orders PRIVATE babelqueue::runtime babelqueue::memory)
#include "orders_messages.hpp"  // generated: messages::OrdersPlaced, messages::ShippingRequested

#include <babelqueue/memory/memory_transport.hpp>
#include <babelqueue/runtime/app.hpp>

#include <iostream>
#include <string>

int main() {
  using messages::OrdersPlaced;
  using messages::ShippingRequested;
  babelqueue::memory::register_transport();

  babelqueue::app_options options;
  options.queue = "orders";
  options.dead_letter = true;
  options.max_attempts = 1;  // data that does not convert will not convert on a retry either
  options.poll_timeout = std::chrono::milliseconds(50);
  babelqueue::app app("memory://typed-example", options);

  int shipped = 0;
  // The URN comes from the type; the handler gets the converted struct and the message.
  app.handle<OrdersPlaced>([](const OrdersPlaced& order, babelqueue::message& msg) {
    std::cout << "order " << order.order_id << " placed at " << order.placed_at << ", "
              << order.lines.size() << " line(s), first qty " << order.lines.at(0).qty << "\n";
    ShippingRequested shipping;
    shipping.order_id = order.order_id;
    shipping.address = {.line = "1 Main St", .city = "Springfield", .postcode = std::nullopt};
    shipping.express = order.priority.value_or(0) > 5;
    // Continues the trace; the URN is ShippingRequested::urn.
    msg.publish(shipping, {.queue = "shipping", .hdrs = {}}).value();
  });
  app.handle<ShippingRequested>([&shipped](const ShippingRequested& s) {
    std::cout << "shipping order " << s.order_id << " to " << s.address.city
              << (s.express.value_or(false) ? " (express)" : "") << "\n";
    ++shipped;
  });

  OrdersPlaced order;
  order.order_id = 1042;
  order.placed_at = "2026-12-06T23:15:00Z";  // format: date-time stays the RFC 3339 text
  order.currency = OrdersPlaced::Currency::EUR;
  order.customer.id = 7;
  order.customer.email =
      "ada@example.com";  // x-gdpr-sensitive: see OrdersPlaced::gdpr_sensitive_paths
  order.lines.push_back({.sku = "BOOK-1", .qty = 2, .unit_price = 12.5});
  order.priority = 7;
  std::cout << "published " << app.publish(order).value() << "\n";

  // A producer that does not use the types sends a quantity as text: the typed handler's
  // conversion fails at /lines/0/qty and the message is dead-lettered with that reason.
  app.publish("urn:babel:orders:placed",
              babelqueue::json::parse(R"({"order_id":1043,"placed_at":"2026-12-06T23:16:00Z",
                 "customer":{"id":8},"lines":[{"sku":"PEN-2","qty":"two"}]})"))
      .value();

  app.drain("orders").value();
  app.drain("shipping").value();

  // Read the dead letter back with a catch-all handler.
  std::string dead_error;
  babelqueue::app dlq("memory://typed-example", options);
  dlq.handle_unmatched([&dead_error](babelqueue::message& msg) {
    dead_error = msg.env().dead_letter()->error.value_or("");
  });
  dlq.drain("orders.dlq").value();
  std::cout << "dead-lettered: " << dead_error << "\n";

  const bool ok = shipped == 1 && dead_error.find("(at /lines/0/qty)") != std::string::npos;
  std::cout << (ok ? "typed-orders-ok" : "typed-orders-FAILED") << "\n";
  return ok ? 0 : 1;
}
