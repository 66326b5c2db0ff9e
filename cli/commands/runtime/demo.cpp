// babelqueue demo [--broker URL] — the README walkthrough: publish, consume, continue a
// trace, fail a handler into retries and the dead-letter queue, read the DLQ. Runs on the
// embedded default (a throw-away sqlite file when sqlite is built, else memory://).
#include "command.hpp"
#include "commands/runtime/broker.hpp"

#include <babelqueue/codec.hpp>
#include <babelqueue/runtime/app.hpp>
#include <babelqueue/runtime/url.hpp>

#include <filesystem>
#include <iostream>
#include <random>
#include <stdexcept>

namespace shop {
// A named type, so the dead_letter block's `exception` reads like a real service's.
struct payment_gateway_timeout : std::runtime_error {
  using std::runtime_error::runtime_error;
};
}  // namespace shop

namespace {

void step(int n, const std::string& title) {
  std::cout << "\n== " << n << ". " << title << " ==\n";
}

std::string pretty(std::string_view canonical) {
  auto j = babelqueue::parse_json(canonical);
  return j ? j->dump(2) : std::string(canonical);
}

// A fresh file per run, removed afterwards: the demo never touches the user's queues.
struct temp_store {
  std::filesystem::path dir;
  temp_store() {
    std::random_device rd;
    dir = std::filesystem::temp_directory_path() /
          ("babelqueue-demo-" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(dir);
  }
  ~temp_store() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

int run_demo(const std::string& given_broker) {
  babelqueue::cli::register_builtin_transports();
  std::unique_ptr<temp_store> store;
  std::string url = given_broker;
  if (url.empty()) {
#ifdef BABELQUEUE_HAVE_SQLITE
    store = std::make_unique<temp_store>();
    url = "sqlite://" + (store->dir / "demo.db").string();
#else
    url = "memory://demo";
#endif
  }
  std::cout << "BabelQueue C++ demo on " << babelqueue::redact_url(url) << "\n"
            << "(an embedded broker: nothing to install; the same code runs on redis:// ...)\n";

  babelqueue::app_options o;
  o.queue = "orders";
  o.max_attempts = 3;
  o.dead_letter = true;
  o.poll_timeout = std::chrono::milliseconds(100);
  // Two observers: the runtime's log lines (info and up) on stdout, and the counters.
  o.observers.push_back(babelqueue::observer_from_log_sink(
      [](babelqueue::log_level, std::string_view line) {
        std::cout << "   [runtime] " << line << "\n";
      },
      babelqueue::log_level::info));
  auto metrics = std::make_shared<babelqueue::atomic_metrics>();
  o.observers.push_back(metrics);
  auto opened = babelqueue::app::open(url, o);
  if (!opened) {
    std::cerr << "cannot open " << babelqueue::redact_url(url) << ": " << opened.error().message
              << "\n";
    return 2;
  }
  auto& app = **opened;

  app.handle("urn:babel:orders:created", [](babelqueue::message& m) {
    std::cout << "   handler(orders:created) got order_id=" << m.data().at("order_id")
              << " attempts=" << m.attempts() << "\n"
              << "     trace_id=" << m.trace_id() << "\n     meta.id =" << m.id() << "\n";
    auto child = m.publish("urn:babel:shipping:requested", {{"order_id", m.data().at("order_id")}},
                           {.queue = "shipping", .hdrs = {}});
    std::cout << "   handler published urn:babel:shipping:requested to 'shipping': meta.id="
              << child.value() << " (same trace_id, new id)\n";
  });
  app.handle("urn:babel:shipping:requested", [](babelqueue::message& m) {
    std::cout << "   handler(shipping:requested) trace_id=" << m.trace_id() << " meta.id=" << m.id()
              << "\n";
  });
  app.handle("urn:babel:payments:captured", [](babelqueue::message& m) {
    std::cout << "   handler(payments:captured) attempt " << m.attempts()
              << ": calling the payment gateway... it times out\n";
    throw shop::payment_gateway_timeout("Payment gateway timeout");
  });

  step(1, "Publish an order");
  auto env = babelqueue::make("urn:babel:orders:created",
                              {{"order_id", 1042}, {"total_cents", 12990}}, {"orders", ""})
                 .value();
  std::cout << "   envelope on the wire (canonical, one line):\n   "
            << babelqueue::encode(env).value() << "\n";
  auto id = app.publish(env).value();
  std::cout << "   published to 'orders': meta.id=" << id << "\n";

  step(2, "Consume it (the handler continues the trace downstream)");
  const auto orders = app.drain("orders").value();
  std::cout << "   -> drained " << orders << " message(s) from 'orders'\n";
  const auto shipping = app.drain("shipping").value();
  std::cout << "   -> drained " << shipping << " message(s) from 'shipping'\n";

  step(3, "A handler that keeps failing: retries, then the dead-letter queue");
  std::cout << "   max_attempts=3: the handler sees attempts 0, 1, 2; each failure re-publishes\n"
               "   the same envelope with attempts+1, and the third goes to 'orders.dlq'.\n";
  (void)app.publish("urn:babel:payments:captured", {{"order_id", 1042}, {"amount", "129.90"}})
      .value();
  const auto deliveries = app.drain("orders").value();
  std::cout << "   -> drained " << deliveries << " deliveries from 'orders'\n";

  step(4, "Read the dead-letter queue (any BabelQueue SDK can)");
  babelqueue::app_options reader_opts;
  reader_opts.queue = "orders.dlq";
  reader_opts.poll_timeout = std::chrono::milliseconds(100);
  babelqueue::app reader(url, reader_opts);
  reader.handle_unmatched([](babelqueue::message& m) {
    auto dl = m.env().dead_letter();
    std::cout << "   " << m.urn() << " attempts=" << m.attempts() << "\n";
    if (dl) {
      std::cout << "   dead_letter: reason=" << dl->reason << " error=\"" << dl->error.value_or("")
                << "\" exception=" << dl->exception.value_or("null")
                << "\n                attempts=" << dl->attempts
                << " original_queue=" << dl->original_queue << " lang=" << dl->lang << "\n";
    }
    std::cout << "   the message as stored:\n" << pretty(m.raw()) << "\n";
  });
  const auto dead = reader.drain().value();
  std::cout << "   -> read " << dead << " message(s) from 'orders.dlq'\n";

  step(5, "What the runtime counted");
  auto s = metrics->snapshot();
  std::cout << "   published=" << s.published << " consumed=" << s.consumed << " acked=" << s.acked
            << " retried=" << s.retried << " dead_lettered=" << s.dead_lettered
            << " handler_failures=" << s.handler_failures << "\n";
  std::cout << "\nNext: `babelqueue publish --queue orders urn:babel:orders:created --data "
               "'{\"order_id\":1}'` in one shell,\n      `babelqueue consume --queue orders` "
               "in another.\n";
  return 0;
}

babelqueue::cli::command_registrar demo_command{
    "demo", [](CLI::App& root) {
      auto* cmd = root.add_subcommand(
          "demo", "Walk through publish, consume, trace continuation, retries and the DLQ");
      auto broker = std::make_shared<std::string>();
      cmd->add_option("--broker", *broker,
                      "Broker URL (default: a throw-away embedded queue, removed afterwards)");
      cmd->callback([broker] {
        try {
          babelqueue::cli::exit_status() = run_demo(*broker);
        } catch (const std::exception& e) {
          std::cerr << "demo failed: " << e.what() << "\n";
          babelqueue::cli::exit_status() = 2;
        }
      });
    }};

}  // namespace
