// The observer seam: the exact hook sequence of each D5 path, the publish-span header
// injection a tracing module relies on, the log level gate, fan-out and threading.
#include "runtime/observe.hpp"
#include "runtime/test_util.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <thread>

using namespace babelqueue;

namespace obs {
// A named exception type: process_end and the DLQ copy must both report it by name.
struct payment_timeout : std::runtime_error {
  using std::runtime_error::runtime_error;
};
}  // namespace obs

namespace {

/// Records every hook as one line (logs separately), and checks that each end hook gets
/// back the state its start hook returned, on the same thread.
class recorder : public observer {
 public:
  explicit recorder(log_level level = log_level::off) : level_(level) {}

  log_level min_level() const noexcept override { return level_; }
  void on_log(const log_record& r) override {
    std::lock_guard lock(mutex_);
    logs.push_back(std::string(to_string(r.level)) + ": " + format(r));
    log_levels.push_back(r.level);
  }

  void on_published(std::string_view q) override { add("published " + std::string(q)); }
  void on_consumed(std::string_view q) override { add("consumed " + std::string(q)); }
  void on_acked(std::string_view q) override { add("acked " + std::string(q)); }
  void on_retried(std::string_view q) override { add("retried " + std::string(q)); }
  void on_dead_lettered(std::string_view q, dead_letter_reason reason) override {
    add("dead_lettered " + std::string(q) + " " + std::string(to_string(reason)));
  }
  void on_rejected(std::string_view q, const error_info& reason) override {
    add("rejected " + std::string(q) + " " + std::string(reason.reason()));
  }
  void on_released(std::string_view q) override { add("released " + std::string(q)); }
  void on_dropped(std::string_view q) override { add("dropped " + std::string(q)); }
  void on_handled(std::string_view urn, std::chrono::nanoseconds latency, bool ok) override {
    EXPECT_GE(latency.count(), 0);
    add("handled " + std::string(urn) + (ok ? " ok" : " failed"));
  }

  std::unique_ptr<span_state> on_publish_start(publish_info& info) override {
    std::string line =
        "publish_start " + std::string(to_string(info.kind)) + " " + std::string(info.queue);
    if (info.env != nullptr) {
      line += " " + std::string(info.urn) + " attempts=" + std::to_string(info.env->attempts());
      EXPECT_EQ(info.urn, info.env->urn());
    } else {
      line += " (no envelope)";
    }
    if (info.inbound != nullptr) line += " inbound";
    EXPECT_FALSE(info.body.empty() && info.env != nullptr);
    add(line);
    return std::make_unique<tagged>(next_tag());
  }
  void on_publish_end(const publish_info& info, const error_info* error,
                      span_state* state) override {
    check(state);
    add("publish_end " + std::string(to_string(info.kind)) + " " + std::string(info.queue) +
        (error == nullptr ? " ok" : " " + std::string(error->reason())));
  }

  std::unique_ptr<span_state> on_process_start(const process_info& info) override {
    std::string line = "process_start " + std::string(info.queue);
    if (info.env != nullptr) {
      line += " " + std::string(info.env->urn()) + " attempts=" + std::to_string(info.attempts);
      EXPECT_EQ(info.rejection, nullptr);
      EXPECT_EQ(info.env->attempts(), info.attempts);
    } else {
      EXPECT_NE(info.rejection, nullptr);
      line += " rejected=" + std::string(info.rejection->reason());
    }
    EXPECT_EQ(info.delivery.queue, info.queue);
    {
      std::lock_guard lock(mutex_);
      process_start_headers = info.delivery.hdrs;
    }
    add(line);
    return std::make_unique<tagged>(next_tag());
  }
  void on_process_end(const process_info& info, const process_result& r,
                      span_state* state) override {
    check(state);
    std::string line = "process_end " + std::string(to_string(r.outcome));
    if (r.error != nullptr) {
      line += " error=" + std::string(r.error->reason()) + ":" + r.error->message;
    }
    if (!r.exception_type.empty()) line += " exception=" + std::string(r.exception_type);
    if (r.reason) line += " reason=" + std::string(to_string(*r.reason));
    if (!r.dead_letter_queue.empty()) line += " dlq=" + std::string(r.dead_letter_queue);
    if (r.unknown_urn) line += " unknown_urn=" + std::string(to_string(*r.unknown_urn));
    if (r.next_attempts) line += " next_attempts=" + std::to_string(*r.next_attempts);
    if (r.settle_error != nullptr) line += " settle_error=" + std::string(r.settle_error->reason());
    EXPECT_EQ(r.handler_latency.has_value(), info.env != nullptr && !r.unknown_urn);
    add(line);
  }

  std::vector<std::string> events() {
    std::lock_guard lock(mutex_);
    return events_;
  }
  void clear() {
    std::lock_guard lock(mutex_);
    events_.clear();
    logs.clear();
    log_levels.clear();
  }

  std::vector<std::string> logs;
  std::vector<log_level> log_levels;
  headers process_start_headers;
  std::atomic<int> state_mismatches{0};

 private:
  struct tagged : span_state {
    explicit tagged(int t) : tag(t), thread(std::this_thread::get_id()) {}
    int tag;
    std::thread::id thread;
  };
  int next_tag() { return ++tags_; }
  void check(span_state* state) {
    auto* t = dynamic_cast<tagged*>(state);
    if (t == nullptr || t->thread != std::this_thread::get_id()) ++state_mismatches;
  }
  void add(std::string line) {
    std::lock_guard lock(mutex_);
    events_.push_back(std::move(line));
  }

  log_level level_;
  std::mutex mutex_;
  std::vector<std::string> events_;
  std::atomic<int> tags_{0};
};

class Observer : public ::testing::Test {
 protected:
  void SetUp() override { memory::register_transport(); }
  std::string broker = bqtest::unique_broker("observer");
  std::string url() const { return "memory://" + broker; }
  app_options options(std::shared_ptr<observer> o) {
    auto opts = bqtest::fast_options();
    opts.observers.push_back(std::move(o));
    return opts;
  }
  using lines = std::vector<std::string>;
};

}  // namespace

TEST_F(Observer, ASuccessfulDelivery) {
  auto rec = std::make_shared<recorder>();
  app a(url(), options(rec));
  a.handle("urn:a:b:ok", [](message&) {});
  (void)a.publish("urn:a:b:ok", json::object()).value();
  EXPECT_EQ(a.drain().value(), 1u);
  EXPECT_EQ(rec->events(), (lines{
                               "publish_start app default urn:a:b:ok attempts=0",
                               "publish_end app default ok",
                               "published default",
                               "consumed default",
                               "process_start default urn:a:b:ok attempts=0",
                               "handled urn:a:b:ok ok",
                               "acked default",
                               "process_end acked",
                           }));
  EXPECT_EQ(rec->state_mismatches.load(), 0);
}

TEST_F(Observer, ARetryThenSuccess) {
  auto rec = std::make_shared<recorder>();
  app a(url(), options(rec));
  int calls = 0;
  a.handle("urn:a:b:flaky", [&](message&) {
    if (++calls == 1) throw std::runtime_error("first time fails");
  });
  (void)a.publish("urn:a:b:flaky", json::object()).value();
  rec->clear();
  EXPECT_EQ(a.drain().value(), 2u);
  EXPECT_EQ(rec->events(), (lines{
                               "consumed default",
                               "process_start default urn:a:b:flaky attempts=0",
                               "handled urn:a:b:flaky failed",
                               "publish_start retry default urn:a:b:flaky attempts=1 inbound",
                               "publish_end retry default ok",
                               "retried default",
                               "process_end retried error=handler_failed:first time fails "
                               "exception=std::runtime_error next_attempts=1",
                               "consumed default",
                               "process_start default urn:a:b:flaky attempts=1",
                               "handled urn:a:b:flaky ok",
                               "acked default",
                               "process_end acked",
                           }));
  EXPECT_EQ(rec->state_mismatches.load(), 0);
}

TEST_F(Observer, ATerminalFailureIsDeadLetteredWithTheHandlerError) {
  auto rec = std::make_shared<recorder>();
  auto o = options(rec);
  o.dead_letter = true;
  o.max_attempts = 2;
  app a(url(), o);
  a.handle("urn:a:b:pay", [](message&) { throw obs::payment_timeout("gateway timeout"); });
  (void)a.publish("urn:a:b:pay", json::object()).value();
  rec->clear();
  EXPECT_EQ(a.drain().value(), 2u);
  EXPECT_EQ(rec->events(),
            (lines{
                "consumed default",
                "process_start default urn:a:b:pay attempts=0",
                "handled urn:a:b:pay failed",
                "publish_start retry default urn:a:b:pay attempts=1 inbound",
                "publish_end retry default ok",
                "retried default",
                "process_end retried error=handler_failed:gateway timeout "
                "exception=obs::payment_timeout next_attempts=1",
                "consumed default",
                "process_start default urn:a:b:pay attempts=1",
                "handled urn:a:b:pay failed",
                "publish_start dead_letter default.dlq urn:a:b:pay attempts=2 inbound",
                "publish_end dead_letter default.dlq ok",
                "dead_lettered default.dlq failed",
                "process_end dead_lettered error=handler_failed:gateway timeout "
                "exception=obs::payment_timeout reason=failed dlq=default.dlq next_attempts=2",
            }));
  // The DLQ copy and the span agree.
  auto dlq = bqtest::take_all(broker, "default.dlq");
  ASSERT_EQ(dlq.size(), 1u);
  auto dl = decode(dlq[0].body).value().dead_letter();
  ASSERT_TRUE(dl);
  EXPECT_EQ(dl->exception.value_or(""), "obs::payment_timeout");
  EXPECT_EQ(dl->error.value_or(""), "gateway timeout");
}

TEST_F(Observer, TheProcessEndCarriesTheErrorAsAnErrorInfo) {
  // What a tracing module records: an error_info whose code is handler_failed.
  struct catcher : observer {
    void on_process_end(const process_info&, const process_result& r, span_state*) override {
      ASSERT_NE(r.error, nullptr);
      error = *r.error;
      type = r.exception_type;
    }
    error_info error;  // a copy: works whatever type error_info::code has
    std::string type;
  };
  auto c = std::make_shared<catcher>();
  auto o = options(c);
  o.max_attempts = 1;
  app a(url(), o);
  a.handle("urn:a:b:c", [](message&) { throw 42; });
  (void)a.publish("urn:a:b:c", json::object()).value();
  EXPECT_EQ(a.drain().value(), 1u);
  EXPECT_TRUE(c->error.code == runtime_errc::handler_failed);
  EXPECT_EQ(c->error.message, "unknown exception");
  EXPECT_EQ(c->type, "int");
}

TEST_F(Observer, APoisonMessageIsRejectedWithoutAnEnvelope) {
  auto rec = std::make_shared<recorder>();
  auto o = options(rec);
  o.dead_letter = true;
  app a(url(), o);
  bqtest::put_raw(broker, "default", "not json", {{"traceparent", "00-abc"}});
  EXPECT_EQ(a.drain().value(), 1u);
  EXPECT_EQ(rec->events(), (lines{
                               "consumed default",
                               "process_start default rejected=malformed_json",
                               "rejected default malformed_json",
                               "publish_start dead_letter default.dlq (no envelope) inbound",
                               "publish_end dead_letter default.dlq ok",
                               "dead_lettered default.dlq poison",
                               "process_end rejected error=malformed_json:" +
                                   decode(std::string_view("not json")).error().message +
                                   " reason=poison dlq=default.dlq",
                           }));
  EXPECT_EQ(rec->process_start_headers.at("traceparent"), "00-abc");  // headers as received

  // Dead-lettering off: rejected and dropped.
  auto rec2 = std::make_shared<recorder>();
  app b(url(), options(rec2));
  bqtest::put_raw(broker, "default", "[]");
  EXPECT_EQ(b.drain().value(), 1u);
  auto ev = rec2->events();
  ASSERT_EQ(ev.size(), 5u);
  EXPECT_EQ(ev[1], "process_start default rejected=malformed_json");
  EXPECT_EQ(ev[3], "dropped default");
  EXPECT_EQ(ev[4].rfind("process_end rejected error=malformed_json:", 0), 0u) << ev[4];
}

TEST_F(Observer, UnknownUrnPerStrategy) {
  const std::string body =
      R"({"job":"urn:nobody:x:y","trace_id":"t","data":{},"meta":{"schema_version":1},"attempts":0})";
  struct expectation {
    unknown_urn_strategy strategy;
    bool dead_letter;
    lines events;
  };
  const std::vector<expectation> cases = {
      {unknown_urn_strategy::fail,
       true,
       {"consumed default", "process_start default urn:nobody:x:y attempts=0",
        "publish_start dead_letter default.dlq urn:nobody:x:y attempts=1 inbound",
        "publish_end dead_letter default.dlq ok", "dead_lettered default.dlq unknown_urn",
        "process_end dead_lettered error=handler_failed:no handler is mapped for the message "
        "URN: \"urn:nobody:x:y\" exception=babelqueue::unknown_urn reason=unknown_urn "
        "dlq=default.dlq unknown_urn=fail next_attempts=1"}},
      {unknown_urn_strategy::del,
       false,
       {"consumed default", "process_start default urn:nobody:x:y attempts=0", "dropped default",
        "process_end dropped unknown_urn=delete"}},
      // drain() meets the released message again: the drain guard puts it back once more
      // (no second process span) and ends the drain.
      {unknown_urn_strategy::release,
       false,
       {"consumed default", "process_start default urn:nobody:x:y attempts=0", "released default",
        "process_end released unknown_urn=release", "released default"}},
      {unknown_urn_strategy::dead_letter,
       true,
       {"consumed default", "process_start default urn:nobody:x:y attempts=0",
        "publish_start dead_letter default.dlq urn:nobody:x:y attempts=0 inbound",
        "publish_end dead_letter default.dlq ok", "dead_lettered default.dlq unknown_urn",
        "process_end dead_lettered reason=unknown_urn dlq=default.dlq unknown_urn=dead_letter "
        "next_attempts=0"}},
      {unknown_urn_strategy::dead_letter,
       false,
       {"consumed default", "process_start default urn:nobody:x:y attempts=0", "dropped default",
        "process_end dropped unknown_urn=dead_letter"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(to_string(c.strategy)) + (c.dead_letter ? " +dlq" : ""));
    const auto name = bqtest::unique_broker("unknown");
    auto rec = std::make_shared<recorder>();
    auto o = options(rec);
    o.on_unknown_urn = c.strategy;
    o.dead_letter = c.dead_letter;
    o.max_attempts = 1;
    app a("memory://" + name, o);
    bqtest::put_raw(name, "default", body);
    (void)a.drain().value();
    EXPECT_EQ(rec->events(), c.events);
    EXPECT_EQ(rec->state_mismatches.load(), 0);
  }
}

namespace {

/// A tracing observer in miniature: injects a `traceparent` into every publish, derived
/// from the inbound delivery's (so a child carries its parent's id), as an OpenTelemetry
/// module would inject the producer span's context.
class injector : public observer {
 public:
  std::unique_ptr<span_state> on_publish_start(publish_info& info) override {
    if (!info.carries_headers) {
      ++skipped;
    }
    std::string parent = "root";
    if (info.inbound != nullptr) {
      auto it = info.inbound->hdrs.find("traceparent");
      if (it != info.inbound->hdrs.end()) parent = it->second;
    }
    info.hdrs["traceparent"] = std::string(to_string(info.kind)) + "<" + parent;
    return nullptr;
  }
  std::atomic<int> skipped{0};
};

// memory:// without header support, as a broker binding that carries none.
class headerless final : public transport {
 public:
  explicit headerless(std::string name) : inner_(std::move(name)) {}
  result<void> publish(std::string_view q, std::string_view b, const headers& h) override {
    if (!h.empty()) return fail(transport_errc::not_supported, "no headers on this transport");
    return inner_.publish(q, b, h);
  }
  result<std::optional<received_message>> receive(std::string_view q,
                                                  std::chrono::milliseconds t) override {
    return inner_.receive(q, t);
  }
  result<void> ack(const received_message& m) override { return inner_.ack(m); }
  result<void> release(const received_message& m, std::chrono::milliseconds d) override {
    return inner_.release(m, d);
  }
  result<void> close(std::chrono::steady_clock::time_point d) override { return inner_.close(d); }
  std::string_view scheme() const noexcept override { return "headerless"; }
  transport_capabilities capabilities() const noexcept override {
    return {.native_delay = true, .headers = false, .delivery_count = false};
  }

 private:
  memory::memory_transport inner_;
};

}  // namespace

TEST_F(Observer, PublishSpansInjectHeadersTheConsumerSees) {
  auto inj = std::make_shared<injector>();
  auto rec = std::make_shared<recorder>();
  auto o = bqtest::fast_options();
  o.observers = {inj, rec};
  app a(url(), o);
  std::string seen_order, seen_shipping;
  a.handle("urn:babel:orders:created", [&](message& m) {
    seen_order = m.header("traceparent").value_or("");
    (void)m
        .publish("urn:babel:shipping:requested", json::object(),
                 {.queue = "shipping", .hdrs = {{"x-user", "kept"}}})
        .value();
  });
  a.handle("urn:babel:shipping:requested", [&](message& m) {
    seen_shipping = m.header("traceparent").value_or("");
    EXPECT_EQ(m.header("x-user").value_or(""), "kept");  // caller headers still travel
  });
  (void)a.publish("urn:babel:orders:created", json::object()).value();
  EXPECT_EQ(a.drain().value(), 1u);
  EXPECT_EQ(a.drain("shipping").value(), 1u);
  EXPECT_EQ(seen_order, "app<root");
  EXPECT_EQ(seen_shipping, "message<app<root");
  EXPECT_EQ(inj->skipped.load(), 0);
  // The message::publish span sits inside the process span of the delivery that made it.
  const auto ev = rec->events();
  const lines expected = {
      "publish_start app default urn:babel:orders:created attempts=0",
      "publish_end app default ok",
      "published default",
      "consumed default",
      "process_start default urn:babel:orders:created attempts=0",
      "publish_start message shipping urn:babel:shipping:requested attempts=0 inbound",
      "publish_end message shipping ok",
      "published shipping",
      "handled urn:babel:orders:created ok",
      "acked default",
      "process_end acked",
      "consumed shipping",
      "process_start shipping urn:babel:shipping:requested attempts=0",
      "handled urn:babel:shipping:requested ok",
      "acked shipping",
      "process_end acked",
  };
  EXPECT_EQ(ev, expected);
  EXPECT_EQ(rec->process_start_headers.at("traceparent"), "message<app<root");
}

TEST_F(Observer, RetriesAndDeadLettersCarryTheInjectedHeaders) {
  auto inj = std::make_shared<injector>();
  auto o = options(inj);
  o.dead_letter = true;
  o.max_attempts = 2;
  app a(url(), o);
  std::vector<std::string> seen;
  a.handle("urn:a:b:c", [&](message& m) {
    seen.emplace_back(m.header("traceparent").value_or(""));
    throw std::runtime_error("no");
  });
  (void)a.publish("urn:a:b:c", json::object()).value();
  EXPECT_EQ(a.drain().value(), 2u);
  EXPECT_EQ(seen, (std::vector<std::string>{"app<root", "retry<app<root"}));
  auto dlq = bqtest::take_all(broker, "default.dlq");
  ASSERT_EQ(dlq.size(), 1u);
  EXPECT_EQ(dlq[0].hdrs.at("traceparent"), "dead_letter<retry<app<root");
}

TEST_F(Observer, AddedHeadersAreDroppedWhereTheTransportCarriesNone) {
  const std::string name = broker;
  transport_source source = [name]() -> result<std::unique_ptr<transport>> {
    return std::unique_ptr<transport>(std::make_unique<headerless>(name));
  };
  auto inj = std::make_shared<injector>();
  app a(source, options(inj));
  int handled = 0;
  a.handle("urn:a:b:c", [&](message& m) {
    ++handled;
    EXPECT_TRUE(m.hdrs().empty());
    (void)m.publish("urn:a:b:d", json::object()).value();  // the observer cannot break it
  });
  a.handle("urn:a:b:d", [&](message&) { ++handled; });
  (void)a.publish("urn:a:b:c", json::object()).value();
  EXPECT_EQ(a.drain().value(), 2u);
  EXPECT_EQ(handled, 2);
  EXPECT_EQ(inj->skipped.load(), 2);
  // Headers the CALLER gives still fail as documented.
  EXPECT_EQ(
      a.publish("urn:a:b:c", json::object(), {.queue = {}, .trace_id = {}, .hdrs = {{"k", "v"}}})
          .code(),
      transport_errc::not_supported);
}

TEST_F(Observer, LogsBelowEveryObserversLevelAreNeverFormatted) {
#if BABELQUEUE_TEST_SHARED_LIBS
  GTEST_SKIP() << "reads detail::formatted_log_records(), which the shared runtime library "
                  "does not export (run in a static build)";
#else
  // Paths that log at debug (release strategy) and info (retry, delete strategy), none at
  // warn or above.
  auto run = [&](std::vector<std::shared_ptr<observer>> observers) {
    const auto name = bqtest::unique_broker("levels");
    auto o = bqtest::fast_options();
    o.observers = std::move(observers);
    o.on_unknown_urn = unknown_urn_strategy::release;
    app a("memory://" + name, o);
    int calls = 0;
    a.handle("urn:a:b:flaky", [&](message&) {
      if (++calls == 1) throw std::runtime_error("once");
    });
    (void)a.publish("urn:a:b:flaky", json::object()).value();
    (void)a.publish("urn:a:b:nobody", json::object()).value();
    (void)a.drain().value();
    EXPECT_EQ(calls, 2);
  };

  auto warn_only = std::make_shared<recorder>(log_level::warn);
  auto metrics = std::make_shared<atomic_metrics>();
  const auto before = detail::formatted_log_records();
  run({warn_only, metrics});
  EXPECT_EQ(detail::formatted_log_records(), before);  // no message text was ever built
  EXPECT_TRUE(warn_only->logs.empty());
  EXPECT_FALSE(warn_only->events().empty());  // the other hooks still ran
  EXPECT_EQ(metrics->snapshot().retried, 1u);

  run({});  // no observer at all: nothing formatted either
  EXPECT_EQ(detail::formatted_log_records(), before);

  // The counter does move when someone listens: a debug observer gets the debug record.
  auto debug = std::make_shared<recorder>(log_level::debug);
  run({warn_only, debug});
  EXPECT_GT(detail::formatted_log_records(), before);
  EXPECT_TRUE(warn_only->logs.empty());  // only observers at or below the level get a record
  ASSERT_FALSE(debug->logs.empty());
  bool saw_debug = false, saw_retry = false;
  for (std::size_t i = 0; i < debug->logs.size(); ++i) {
    if (debug->log_levels[i] == log_level::debug) saw_debug = true;
    if (debug->logs[i].rfind(
            "info: retrying (attempt 1 of 3): once [queue=default urn=urn:a:b:flaky", 0) == 0) {
      saw_retry = true;
    }
  }
  EXPECT_TRUE(saw_debug);
  EXPECT_TRUE(saw_retry) << debug->logs.front();
#endif
}

TEST_F(Observer, LogRecordsCarryStructuredContext) {
  struct context_catcher : observer {
    log_level min_level() const noexcept override { return log_level::warn; }
    void on_log(const log_record& r) override {
      if (r.level != log_level::warn) return;
      queue = r.queue;
      urn = r.urn;
      id = r.id;
      trace = r.trace_id;
      attempts = r.attempts;
      if (r.error != nullptr) error = *r.error;
    }
    std::string queue, urn, id, trace;
    std::optional<std::int64_t> attempts;
    error_info error;
  };
  auto c = std::make_shared<context_catcher>();
  auto o = options(c);
  o.max_attempts = 1;  // dropped at once: a warn record
  app a(url(), o);
  a.handle("urn:a:b:c", [](message&) { throw std::runtime_error("x"); });
  auto id = a.publish("urn:a:b:c", json::object(), {.queue = {}, .trace_id = "trace-1", .hdrs = {}})
                .value();
  EXPECT_EQ(a.drain().value(), 1u);
  EXPECT_EQ(c->queue, "default");
  EXPECT_EQ(c->urn, "urn:a:b:c");
  EXPECT_EQ(c->id, id);
  EXPECT_EQ(c->trace, "trace-1");
  EXPECT_EQ(c->attempts, 0);
  EXPECT_TRUE(c->error.code == runtime_errc::handler_failed);
  EXPECT_EQ(c->error.message, "x");
}

TEST_F(Observer, SeveralObserversAllSeeEverySpanEndedInReverseOrder) {
  std::mutex m;
  std::vector<std::string> order;
  struct named : observer {
    named(std::string n, std::mutex& mx, std::vector<std::string>& o)
        : name(std::move(n)), mutex(mx), out(o) {}
    std::unique_ptr<span_state> on_process_start(const process_info&) override {
      std::lock_guard lock(mutex);
      out.push_back(name + " start");
      return nullptr;
    }
    void on_process_end(const process_info&, const process_result&, span_state* s) override {
      EXPECT_EQ(s, nullptr);
      std::lock_guard lock(mutex);
      out.push_back(name + " end");
    }
    std::string name;
    std::mutex& mutex;
    std::vector<std::string>& out;
  };
  auto o = bqtest::fast_options();
  for (const char* n : {"a", "b", "c", "d", "e", "f"}) {  // more than the 4 inline slots
    o.observers.push_back(std::make_shared<named>(n, m, order));
  }
  app a(url(), o);
  a.handle("urn:a:b:c", [](message&) {});
  (void)a.publish("urn:a:b:c", json::object()).value();
  EXPECT_EQ(a.drain().value(), 1u);
  EXPECT_EQ(order, (std::vector<std::string>{"a start", "b start", "c start", "d start", "e start",
                                             "f start", "f end", "e end", "d end", "c end", "b end",
                                             "a end"}));
}

TEST_F(Observer, WorkerThreadsCallHooksConcurrentlyEachDeliveryOnOneThread) {
  // Every hook of one delivery — and its handler — runs on one worker thread (the state
  // check in recorder); four workers call the same observer at once.
  struct threads : observer {
    std::unique_ptr<span_state> on_process_start(const process_info& info) override {
      auto s = std::make_unique<state>();
      s->thread = std::this_thread::get_id();
      s->id = std::string(info.env->id());
      return s;
    }
    void on_process_end(const process_info& info, const process_result& r,
                        span_state* st) override {
      auto* s = static_cast<state*>(st);
      std::lock_guard lock(mutex);
      if (s->thread != std::this_thread::get_id() || s->id != info.env->id()) ++mismatches;
      if (r.outcome == process_outcome::acked) ++acked;
      seen_threads.insert(s->thread);
    }
    struct state : span_state {
      std::thread::id thread;
      std::string id;
    };
    std::mutex mutex;
    int mismatches = 0, acked = 0;
    std::set<std::thread::id> seen_threads;
  };
  auto t = std::make_shared<threads>();
  auto metrics = std::make_shared<atomic_metrics>();
  auto o = bqtest::fast_options();
  o.observers = {t, metrics};
  o.workers = 4;
  app a(url(), o);
  std::atomic<int> handled{0};
  a.handle("urn:a:b:c", [&](message&) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    handled.fetch_add(1);
  });
  constexpr int n = 60;
  for (int i = 0; i < n; ++i) (void)a.publish("urn:a:b:c", json{{"i", i}}).value();
  std::thread consumer([&] { a.consume().value(); });
  for (int i = 0; i < 400 && metrics->snapshot().acked < n; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  a.stop();
  consumer.join();
  std::lock_guard lock(t->mutex);
  EXPECT_EQ(t->acked, n);
  EXPECT_EQ(t->mismatches, 0);
  EXPECT_EQ(handled.load(), n);
  EXPECT_FALSE(t->seen_threads.count(std::this_thread::get_id()));
}
