// Typed vs untyped handler overhead, measured in the same run (docs/benchmarks.md, "Typed
// messages"). One orders:placed message (3 lines, a nested customer) — the generated
// example::OrdersPlaced from examples/registry.
//  - Handler/*: what the runtime does per delivery once the envelope is decoded: build the
//    handler's `message` and call the registered handler. Untyped reads the same fields by
//    hand from msg.data(); Typed converts data to the struct first (typed::make_handler, the
//    function app.handle<T> registers); TypedGuarded also validates against the schema first.
//  - Drain/*: the whole runtime path on memory://: publish N, app.drain() N with a typed or an
//    untyped handler (decode, route, handler, ack).
#include "example_messages.hpp"

#include <babelqueue/codec.hpp>
#include <babelqueue/memory/memory_transport.hpp>
#include <babelqueue/runtime/app.hpp>
#include <babelqueue/schema/wrap.hpp>

#include <benchmark/benchmark.h>

#include <atomic>
#include <string>

namespace bq = babelqueue;
using example::OrdersPlaced;

namespace {

const bq::json& order_data() {
  static const bq::json data =
      bq::json::parse(R"({"order_id":1042,"placed_at":"2026-12-06T23:15:00Z",
    "currency":"EUR","customer":{"id":7,"email":"ada@example.com","name":"Ada"},
    "lines":[{"sku":"BOOK-1","qty":2,"unit_price":12.5},{"sku":"PEN-2","qty":10,"unit_price":1.25},
             {"sku":"BAG-3","qty":1,"unit_price":30}],"priority":3,"tags":["gift","eu"]})");
  return data;
}

// The work both handlers do with the message: the same fields, the same sum.
std::int64_t untyped_work(const bq::message& msg) {
  const auto& d = msg.data();
  std::int64_t sum =
      d.at("order_id").get<std::int64_t>() + d.at("customer").at("id").get<std::int64_t>();
  for (const auto& line : d.at("lines")) sum += line.at("qty").get<std::int64_t>();
  return sum + static_cast<std::int64_t>(d.at("placed_at").get_ref<const std::string&>().size());
}

std::int64_t typed_work(const OrdersPlaced& o) {
  std::int64_t sum = o.order_id + o.customer.id;
  for (const auto& line : o.lines) sum += line.qty;
  return sum + static_cast<std::int64_t>(o.placed_at.size());
}

struct delivery_fixture {
  delivery_fixture() {
    env = bq::make(OrdersPlaced::urn, order_data()).value();
    delivery.queue = "orders";
    delivery.body = bq::encode(env).value();
  }
  bq::envelope env;
  bq::received_message delivery;
};

template <class Handler>
void run_handler(benchmark::State& state, Handler&& handler) {
  delivery_fixture f;
  for (auto _ : state) {
    bq::message msg(f.delivery, f.env, nullptr);  // fresh per delivery: data() parses once
    handler(msg);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_Handler_Untyped(benchmark::State& state) {
  std::int64_t sink = 0;
  bq::handler h = [&sink](bq::message& msg) { sink += untyped_work(msg); };
  run_handler(state, h);
  benchmark::DoNotOptimize(sink);
}

void BM_Handler_Typed(benchmark::State& state) {
  std::int64_t sink = 0;
  bq::handler h = bq::typed::make_handler<OrdersPlaced>(
      [&sink](const OrdersPlaced& o) { sink += typed_work(o); });
  run_handler(state, h);
  benchmark::DoNotOptimize(sink);
}

void BM_Handler_TypedGuarded(benchmark::State& state) {
  std::int64_t sink = 0;
  auto schemas = bq::schema::map_provider::from_text(
                     {{std::string(OrdersPlaced::urn), std::string(OrdersPlaced::schema)}})
                     .value();
  bq::handler h = bq::typed::make_handler<OrdersPlaced>(
      [&sink](const OrdersPlaced& o) { sink += typed_work(o); }, bq::schema::check_with(schemas));
  run_handler(state, h);
  benchmark::DoNotOptimize(sink);
}

// publish `batch` messages, drain them; the publish is outside the timing.
template <class Register>
void run_drain(benchmark::State& state, Register&& register_handler) {
  static std::atomic<int> brokers{0};
  bq::memory::register_transport();
  bq::app_options o;
  o.queue = "orders";
  o.poll_timeout = std::chrono::milliseconds(0);
  bq::app app("memory://typed-bench-" + std::to_string(brokers.fetch_add(1)), o);
  register_handler(app);
  const auto batch = static_cast<std::size_t>(state.range(0));
  for (auto _ : state) {
    state.PauseTiming();
    for (std::size_t i = 0; i < batch; ++i) (void)app.publish(OrdersPlaced::urn, order_data());
    state.ResumeTiming();
    auto n = app.drain("orders", batch);
    if (!n || *n != batch) state.SkipWithError("drain did not process the batch");
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(batch));
}

void BM_Drain_Untyped(benchmark::State& state) {
  std::int64_t sink = 0;
  run_drain(state, [&sink](bq::app& app) {
    app.handle(std::string(OrdersPlaced::urn),
               [&sink](bq::message& msg) { sink += untyped_work(msg); });
  });
  benchmark::DoNotOptimize(sink);
}

void BM_Drain_Typed(benchmark::State& state) {
  std::int64_t sink = 0;
  run_drain(state, [&sink](bq::app& app) {
    app.handle<OrdersPlaced>([&sink](const OrdersPlaced& o) { sink += typed_work(o); });
  });
  benchmark::DoNotOptimize(sink);
}

}  // namespace

BENCHMARK(BM_Handler_Untyped);
BENCHMARK(BM_Handler_Typed);
BENCHMARK(BM_Handler_TypedGuarded);
BENCHMARK(BM_Drain_Untyped)->Arg(256);
BENCHMARK(BM_Drain_Typed)->Arg(256);
BENCHMARK_MAIN();
