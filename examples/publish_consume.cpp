// Publish and consume on memory:// with babelqueue::app: a handler per URN, a downstream
// message that continues the trace, a failing handler retried into the dead-letter queue,
// and a worker thread stopped gracefully.
//
// Build: cmake -S . -B build && cmake --build build --target example_publish_consume
#include <babelqueue/memory/memory_transport.hpp>
#include <babelqueue/runtime/app.hpp>

#include <atomic>
#include <chrono>
#include <iostream>
#include <stdexcept>
#include <thread>

int main() {
  // Transports are separate libraries: register the schemes this program uses.
  babelqueue::memory::register_transport();

  babelqueue::app_options options;
  options.queue = "orders";
  options.dead_letter = true;  // terminal failures go to orders.dlq instead of being dropped
  options.poll_timeout = std::chrono::milliseconds(100);
  // Observers see every step (observer.hpp): here log lines on stderr and counters.
  options.observers.push_back(
      std::make_shared<babelqueue::stderr_logger>(babelqueue::log_level::info));
  auto metrics = std::make_shared<babelqueue::atomic_metrics>();
  options.observers.push_back(metrics);
  babelqueue::app app("memory://example", options);

  std::atomic<int> shipped{0};
  app.handle("urn:babel:orders:created", [](babelqueue::message& msg) {
    std::cout << "order " << msg.data().at("order_id") << " (trace " << msg.trace_id() << ")\n";
    // Same trace_id, fresh meta.id; throws nothing, returns the new id or an error.
    auto id = msg.publish("urn:babel:shipping:requested", {{"order_id", msg.data().at("order_id")}},
                          {.queue = "shipping", .hdrs = {}});
    if (!id) throw babelqueue::error(id.error());  // a throw = a failed delivery (retried)
  });
  app.handle("urn:babel:shipping:requested", [&shipped](babelqueue::message& msg) {
    std::cout << "shipping " << msg.data().at("order_id") << " (trace " << msg.trace_id() << ")\n";
    shipped.fetch_add(1);
  });
  app.handle("urn:babel:payments:captured", [](babelqueue::message& msg) {
    throw std::runtime_error("gateway down (attempt " + std::to_string(msg.attempts()) + ")");
  });

  // A long-running worker: consume() blocks until stop().
  std::thread worker([&app] { app.consume({"orders", "shipping"}).value(); });

  for (int order_id = 1; order_id <= 3; ++order_id) {
    auto id = app.publish("urn:babel:orders:created", {{"order_id", order_id}});
    std::cout << "published meta.id " << id.value() << "\n";
  }
  app.publish("urn:babel:payments:captured", {{"order_id", 1}}).value();

  // Wait for the work to land, then stop: in-flight handlers finish and are acked.
  for (int i = 0;
       i < 100 && (shipped.load() < 3 || babelqueue::memory::depth("example", "orders.dlq") == 0);
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  app.stop();
  worker.join();

  const auto dead = babelqueue::memory::depth("example", "orders.dlq");
  const auto counts = metrics->snapshot();
  std::cout << "shipped " << shipped.load() << ", dead-lettered " << dead << " (consumed "
            << counts.consumed << ", retried " << counts.retried << ")\n";
  return shipped.load() == 3 && dead == 1 ? 0 : 1;
}
