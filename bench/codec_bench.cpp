// make+encode and decode+accept on the standard small envelope and a ≈16 KiB one, with a
// bare simdjson parse and an nlohmann parse of the same bytes as reference points.
#include "bench_payloads.hpp"

#include <babelqueue/codec.hpp>

#include <benchmark/benchmark.h>

#ifdef BABELQUEUE_BENCH_SIMDJSON
#include <simdjson.h>
#endif

namespace {

std::string sample(const babelqueue::json& data) {
  return babelqueue::encode(
             babelqueue::make("urn:babel:orders:created", data, {"orders", ""}).value())
      .value();
}

void make_encode(benchmark::State& state, const babelqueue::json& data) {
  std::string out;
  for (auto _ : state) {
    auto env = babelqueue::make("urn:babel:orders:created", data, {"orders", ""});
    out.clear();
    (void)babelqueue::encode_to(*env, out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * out.size()));
}

void decode_accept(benchmark::State& state, const std::string& body) {
  for (auto _ : state) {
    auto env = babelqueue::decode(body);
    benchmark::DoNotOptimize(env.has_value());
    if (!env) state.SkipWithError("rejected");
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * body.size()));
}

void retry_reencode(benchmark::State& state, const std::string& body) {
  auto env = babelqueue::decode(body).value();
  std::string out;
  for (auto _ : state) {
    env.set_attempts(env.attempts() + 1);
    out.clear();
    (void)babelqueue::encode_to(env, out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * body.size()));
}

void nlohmann_parse(benchmark::State& state, const std::string& body) {
  for (auto _ : state) {
    auto v = babelqueue::json::parse(body);
    benchmark::DoNotOptimize(v.size());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * body.size()));
}

#ifdef BABELQUEUE_BENCH_SIMDJSON
void simdjson_parse(benchmark::State& state, const std::string& body) {
  simdjson::dom::parser parser;
  simdjson::padded_string padded(body);
  for (auto _ : state) {
    auto doc = parser.parse(padded);
    benchmark::DoNotOptimize(doc.error());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * body.size()));
}
#endif

const babelqueue::json kSmall = bench::small_data();
const babelqueue::json kLarge = bench::large_data();
const std::string kSmallBody = sample(kSmall);
const std::string kLargeBody = sample(kLarge);

}  // namespace

BENCHMARK_CAPTURE(make_encode, small, kSmall);
BENCHMARK_CAPTURE(decode_accept, small, kSmallBody);
BENCHMARK_CAPTURE(retry_reencode, small, kSmallBody);
BENCHMARK_CAPTURE(nlohmann_parse, small, kSmallBody);
BENCHMARK_CAPTURE(make_encode, large_16k, kLarge);
BENCHMARK_CAPTURE(decode_accept, large_16k, kLargeBody);
BENCHMARK_CAPTURE(retry_reencode, large_16k, kLargeBody);
BENCHMARK_CAPTURE(nlohmann_parse, large_16k, kLargeBody);
#ifdef BABELQUEUE_BENCH_SIMDJSON
BENCHMARK_CAPTURE(simdjson_parse, small, kSmallBody);
BENCHMARK_CAPTURE(simdjson_parse, large_16k, kLargeBody);
#endif

BENCHMARK_MAIN();
