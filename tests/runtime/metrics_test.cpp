// The metrics and logging seams.
#include "runtime/test_util.hpp"

#include <gtest/gtest.h>

using namespace babelqueue;

TEST(Metrics, CountersFollowTheDispatchPaths) {
  memory::register_transport();
  const auto broker = bqtest::unique_broker("metrics");
  auto o = bqtest::fast_options();
  o.dead_letter = true;
  o.on_unknown_urn = unknown_urn_strategy::del;
  auto m = std::make_shared<atomic_metrics>();
  o.metrics_sink = m;
  app a("memory://" + broker, o);
  a.handle("urn:ok:x:y", [](message&) {});
  a.handle("urn:bad:x:y", [](message&) { throw std::runtime_error("x"); });
  (void)a.publish("urn:ok:x:y", json::object()).value();
  (void)a.publish("urn:bad:x:y", json::object()).value();
  (void)a.publish("urn:nobody:x:y", json::object()).value();
  bqtest::put_raw(broker, "default", "garbage");
  EXPECT_EQ(a.drain().value(), 6u);  // ok, bad x3, unknown, garbage
  auto s = m->snapshot();
  EXPECT_EQ(s.published, 3u);
  EXPECT_EQ(s.consumed, 6u);
  EXPECT_EQ(s.acked, 1u);
  EXPECT_EQ(s.retried, 2u);
  EXPECT_EQ(s.dead_lettered, 2u);
  EXPECT_EQ(s.dead_lettered_by_reason.at("failed"), 1u);
  EXPECT_EQ(s.dead_lettered_by_reason.at("poison"), 1u);
  EXPECT_EQ(s.rejected, 1u);
  EXPECT_EQ(s.rejected_by_reason.at("malformed_json"), 1u);
  EXPECT_EQ(s.dropped, 1u);
  EXPECT_EQ(s.handled, 4u);
  EXPECT_EQ(s.handler_failures, 3u);
  EXPECT_GE(s.handler_latency_max.count(), 0);
}

TEST(Logging, ThrowingSinksAndMetricsDoNotBreakTheRuntime) {
  memory::register_transport();
  struct angry_metrics : metrics {
    void on_consumed(std::string_view) override { throw std::runtime_error("metrics"); }
  };
  auto o = bqtest::fast_options();
  o.logger = [](log_level, std::string_view) { throw std::runtime_error("log"); };
  o.metrics_sink = std::make_shared<angry_metrics>();
  const auto broker = bqtest::unique_broker("angry");
  app a("memory://" + broker, o);
  int calls = 0;
  a.handle("urn:a:b:c", [&](message&) { ++calls; });
  (void)a.publish("urn:a:b:c", json::object()).value();
  bqtest::put_raw(broker, "default", "garbage");
  EXPECT_EQ(a.drain().value(), 2u);
  EXPECT_EQ(calls, 1);
}

TEST(Logging, LevelNames) {
  EXPECT_EQ(to_string(log_level::debug), "debug");
  EXPECT_EQ(to_string(log_level::warn), "warn");
  auto sink = stderr_sink(log_level::error);
  sink(log_level::info, "not printed");
}
