// What tracing costs the runtime's consume loop (docs/benchmarks-otel.md): the same queue of
// N envelopes consumed by app::drain() with an empty handler, in interleaved rounds, under
//   off    no observer (the seam's zero-cost path: what every consume figure measures),
//   noop   the tracing observer on the OpenTelemetry API's no-op provider (no SDK),
//   sdk    the tracing observer on an SDK TracerProvider: always-on sampler, batch
//          processor, an exporter that drops the spans (the SDK's own cost, no network).
// Each round refills the queue with the transport's publish_batch (not timed), then times
// the drain. Prints msg/s per mode and round, the medians, and the cost per message of noop
// and sdk over off (1e9/rate difference).
//   otel_consume <url> [messages=20000] [rounds=5]     e.g. redis://127.0.0.1:6379
#include <babelqueue/codec.hpp>
#include <babelqueue/memory/memory_transport.hpp>
#include <babelqueue/otel/tracing.hpp>
#include <babelqueue/redis/redis_transport.hpp>
#include <babelqueue/runtime/app.hpp>
#include <babelqueue/runtime/url.hpp>
#include <babelqueue/sqlite/sqlite_transport.hpp>

#include <opentelemetry/sdk/trace/batch_span_processor_factory.h>
#include <opentelemetry/sdk/trace/batch_span_processor_options.h>
#include <opentelemetry/sdk/trace/exporter.h>
#include <opentelemetry/sdk/trace/span_data.h>
#include <opentelemetry/sdk/trace/tracer_provider_factory.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace {

namespace sdk = opentelemetry::sdk::trace;

// Accepts every batch and keeps nothing.
class drop_exporter final : public sdk::SpanExporter {
 public:
  std::unique_ptr<sdk::Recordable> MakeRecordable() noexcept override {
    return std::make_unique<sdk::SpanData>();
  }
  opentelemetry::sdk::common::ExportResult Export(
      const opentelemetry::nostd::span<std::unique_ptr<sdk::Recordable>>&) noexcept override {
    return opentelemetry::sdk::common::ExportResult::kSuccess;
  }
  bool ForceFlush(std::chrono::microseconds) noexcept override { return true; }
  bool Shutdown(std::chrono::microseconds) noexcept override { return true; }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <url> [messages] [rounds]\n", argv[0]);
    return 2;
  }
  const std::string url = argv[1];
  const std::size_t messages = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 20000;
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 5;
  babelqueue::memory::register_transport();
  babelqueue::sqlite::register_transport();
  babelqueue::redis::register_transport();

  sdk::BatchSpanProcessorOptions batch;
  batch.max_queue_size = 65536;
  auto provider = sdk::TracerProviderFactory::Create(
      sdk::BatchSpanProcessorFactory::Create(std::make_unique<drop_exporter>(), batch));
  babelqueue::otel::tracing_options with_sdk;
  with_sdk.tracer = provider->GetTracer("bench");
  const std::map<std::string, std::shared_ptr<babelqueue::observer>> modes = {
      {"off", nullptr},
      {"noop", babelqueue::otel::make_tracing()},
      {"sdk", babelqueue::otel::make_tracing(with_sdk)}};

  const std::string body = [] {
    babelqueue::make_options mo;
    mo.queue = "bench-otel";
    return babelqueue::encode(
               babelqueue::make("urn:babel:bench:otel", babelqueue::json{{"n", 1}}, mo).value())
        .value();
  }();
  std::map<std::string, std::vector<double>> rates;
  std::printf("%-5s %10s %10s %10s   (msg/s, %zu messages per drain)\n", "round", "off", "noop",
              "sdk", messages);
  for (int r = 1; r <= rounds; ++r) {
    std::printf("%-5d", r);
    for (const char* mode : {"off", "noop", "sdk"}) {
      const std::string queue = "bench-otel-" + std::string(mode) + "-" + std::to_string(r);
      {  // fill (untimed)
        auto t = babelqueue::open_transport(url).value();
        std::vector<babelqueue::outgoing_message> chunk(500, {body, {}});
        for (std::size_t sent = 0; sent < messages; sent += chunk.size()) {
          chunk.resize(std::min<std::size_t>(500, messages - sent));
          if (!t->publish_batch(queue, chunk)) {
            std::fprintf(stderr, "fill failed\n");
            return 1;
          }
        }
        (void)t->close(std::chrono::steady_clock::now() + std::chrono::seconds(5));
      }
      babelqueue::app_options o;
      o.queue = queue;
      o.poll_timeout = std::chrono::milliseconds(200);
      if (auto obs = modes.at(mode)) o.observers.push_back(obs);
      babelqueue::app a(url, o);
      a.handle("urn:babel:bench:otel", [](babelqueue::message&) {});
      const auto t0 = std::chrono::steady_clock::now();
      const std::size_t n = a.drain(queue, messages).value();
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (n != messages) std::fprintf(stderr, "drained %zu of %zu\n", n, messages);
      rates[mode].push_back(static_cast<double>(n) / s);
      std::printf(" %10.0f", static_cast<double>(n) / s);
      std::fflush(stdout);
    }
    std::printf("\n");
  }
  provider->Shutdown();
  const double off = median(rates["off"]), noop = median(rates["noop"]),
               with = median(rates["sdk"]);
  std::printf("median %9.0f %10.0f %10.0f\n", off, noop, with);
  std::printf("cost per message over off: noop %.2f us, sdk %.2f us\n", (1e6 / noop) - (1e6 / off),
              (1e6 / with) - (1e6 / off));
  return 0;
}
