// The ready-made observers: atomic_metrics, stderr_logger, observer_from_log_sink.
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
  o.observers.push_back(m);
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

TEST(Metrics, RejectionsAreCountedByD3ReasonNotByEnumValue) {
  atomic_metrics m;
  for (auto code : atomic_metrics::d3_reasons) m.on_rejected("q", error_info{code, "x"});
  m.on_rejected("q", error_info{errc::invalid_attempts, "again"});
  m.on_rejected("q", error_info{transport_errc::unavailable, "not a D3 reason"});
  m.on_rejected("q", error_info{errc::ok, "nor this"});
  m.on_dead_lettered("q.dlq", dead_letter_reason::unknown_urn);
  auto s = m.snapshot();
  EXPECT_EQ(s.rejected, atomic_metrics::d3_reasons.size() + 3);
  EXPECT_EQ(s.rejected_by_reason.size(), atomic_metrics::d3_reasons.size() + 1);
  for (const char* name : {"malformed_json", "missing_urn", "missing_meta",
                           "unsupported_schema_version", "invalid_data", "missing_trace_id"}) {
    EXPECT_EQ(s.rejected_by_reason.at(name), 1u) << name;
  }
  EXPECT_EQ(s.rejected_by_reason.at("invalid_attempts"), 2u);
  EXPECT_EQ(s.rejected_by_reason.at("other"), 2u);
  EXPECT_EQ(s.dead_lettered, 1u);
  EXPECT_EQ(s.dead_lettered_by_reason.at("unknown_urn"), 1u);
  EXPECT_EQ(m.min_level(), log_level::off);  // a metrics observer never costs log formatting
}

TEST(Logging, ThrowingObserversDoNotBreakTheRuntime) {
  memory::register_transport();
  // Throws from every hook; the runtime must swallow each and go on, and the observers
  // after it in the list must still be called.
  struct angry : observer {
    log_level min_level() const noexcept override { return log_level::debug; }
    void on_log(const log_record&) override { throw std::runtime_error("log"); }
    void on_published(std::string_view) override { throw std::runtime_error("m"); }
    void on_consumed(std::string_view) override { throw std::runtime_error("m"); }
    void on_acked(std::string_view) override { throw std::runtime_error("m"); }
    void on_rejected(std::string_view, const error_info&) override { throw 42; }
    void on_dropped(std::string_view) override { throw std::runtime_error("m"); }
    void on_handled(std::string_view, std::chrono::nanoseconds, bool) override {
      throw std::runtime_error("m");
    }
    std::unique_ptr<span_state> on_publish_start(publish_info& info) override {
      info.hdrs["x-angry"] = "1";
      throw std::runtime_error("span");
    }
    void on_publish_end(const publish_info&, const error_info*, span_state*) override {
      throw std::runtime_error("span");
    }
    std::unique_ptr<span_state> on_process_start(const process_info&) override {
      throw std::runtime_error("span");
    }
    void on_process_end(const process_info&, const process_result&, span_state*) override {
      throw std::runtime_error("span");
    }
  };
  auto o = bqtest::fast_options();
  o.observers.push_back(std::make_shared<angry>());
  o.observers.push_back(nullptr);  // ignored
  auto after = std::make_shared<atomic_metrics>();
  o.observers.push_back(after);
  bqtest::log_capture logs;
  o.observers.push_back(logs.observer());
  const auto broker = bqtest::unique_broker("angry");
  app a("memory://" + broker, o);
  int calls = 0;
  a.handle("urn:a:b:c", [&](message&) { ++calls; });
  (void)a.publish("urn:a:b:c", json::object()).value();
  bqtest::put_raw(broker, "default", "garbage");
  EXPECT_EQ(a.drain().value(), 2u);
  EXPECT_EQ(calls, 1);
  auto s = after->snapshot();
  EXPECT_EQ(s.published, 1u);
  EXPECT_EQ(s.consumed, 2u);
  EXPECT_EQ(s.acked, 1u);
  EXPECT_EQ(s.rejected, 1u);
  EXPECT_EQ(s.dropped, 1u);
  EXPECT_TRUE(logs.contains("dropping a rejected message"));
}

TEST(Logging, LevelNamesAndFormat) {
  EXPECT_EQ(to_string(log_level::debug), "debug");
  EXPECT_EQ(to_string(log_level::warn), "warn");
  EXPECT_EQ(to_string(log_level::off), "off");
  EXPECT_EQ(to_string(process_outcome::dead_lettered), "dead_lettered");
  EXPECT_EQ(to_string(publish_kind::dead_letter), "dead_letter");
  log_record r;
  r.message = "retrying";
  EXPECT_EQ(format(r), "retrying");
  r.queue = "orders";
  r.urn = "urn:a:b:c";
  r.attempts = 2;
  EXPECT_EQ(format(r), "retrying [queue=orders urn=urn:a:b:c attempts=2]");

  stderr_logger logger(log_level::error);
  EXPECT_EQ(logger.min_level(), log_level::error);
  logger.on_log(r);  // below its level: not printed
  logger.set_min_level(log_level::off);
  EXPECT_EQ(logger.min_level(), log_level::off);

  EXPECT_EQ(observer_from_log_sink(nullptr)->min_level(), log_level::off);
  std::vector<std::string> lines;
  auto sink = observer_from_log_sink(
      [&](log_level, std::string_view line) { lines.emplace_back(line); }, log_level::warn);
  EXPECT_EQ(sink->min_level(), log_level::warn);
  r.level = log_level::warn;
  sink->on_log(r);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "retrying [queue=orders urn=urn:a:b:c attempts=2]");
}
