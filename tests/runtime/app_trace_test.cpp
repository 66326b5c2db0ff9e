// Trace continuation from inside a handler, publish ids, attempts reconciliation through
// the transport, and settle failures that must not lose a message.
#include "runtime/test_util.hpp"

#include <gtest/gtest.h>

#include <set>

using namespace babelqueue;

namespace {

class Trace : public ::testing::Test {
 protected:
  void SetUp() override { memory::register_transport(); }
  std::string broker = bqtest::unique_broker("trace");
  std::string url() const { return "memory://" + broker; }
};

// A real memory transport with a binding-style native counter: delivery_count is set to
// 5 on every receive and reconciled SQS-style, max(body, n - 1). Lets the tests see that
// the app reads attempts through transport.reconcile_attempts().
class counting_transport final : public transport {
 public:
  explicit counting_transport(std::string name) : inner_(name) {}
  result<void> publish(std::string_view q, std::string_view b, const headers& h) override {
    if (fail_publish_to == q) return fail(transport_errc::unavailable, "refused by the test");
    if (refuse_headers_to == q && !h.empty())
      return fail(transport_errc::invalid_argument, "no headers here");
    return inner_.publish(q, b, h);
  }
  result<std::optional<received_message>> receive(std::string_view q,
                                                  std::chrono::milliseconds t) override {
    auto r = inner_.receive(q, t);
    if (r && *r) (*r)->delivery_count = 5;
    return r;
  }
  result<void> ack(const received_message& m) override { return inner_.ack(m); }
  result<void> release(const received_message& m, std::chrono::milliseconds d) override {
    ++releases;
    return inner_.release(m, d);
  }
  result<void> close(std::chrono::steady_clock::time_point d) override { return inner_.close(d); }
  std::int64_t reconcile_attempts(std::int64_t body, const received_message& m) const override {
    if (!m.delivery_count || *m.delivery_count <= 1) return body;
    return std::max(body, *m.delivery_count - 1);
  }
  std::string_view scheme() const noexcept override { return "counting"; }
  transport_capabilities capabilities() const noexcept override { return inner_.capabilities(); }

  std::string fail_publish_to;
  std::string refuse_headers_to;  // fault injection: a permanent, header-caused refusal
  int releases = 0;

 private:
  memory::memory_transport inner_;
};

}  // namespace

TEST_F(Trace, PublishingFromAHandlerContinuesTheTraceWithAFreshId) {
  app a(url(), bqtest::fast_options());
  std::string inbound_trace, inbound_id, child_id;
  std::string child_seen_trace, child_seen_id;
  a.handle("urn:babel:orders:created", [&](message& m) {
    inbound_trace = m.trace_id();
    inbound_id = m.id();
    child_id = m.publish("urn:babel:shipping:requested", json{{"order_id", 7}},
                         {.queue = "shipping", .hdrs = {}})
                   .value();
  });
  a.handle("urn:babel:shipping:requested", [&](message& m) {
    child_seen_trace = m.trace_id();
    child_seen_id = m.id();
    EXPECT_EQ(m.meta().at("queue"), "shipping");
    EXPECT_EQ(m.attempts(), 0);
  });
  auto first = a.publish("urn:babel:orders:created", json{{"order_id", 7}}).value();
  EXPECT_EQ(a.drain().value(), 1u);
  EXPECT_EQ(a.drain("shipping").value(), 1u);
  EXPECT_EQ(inbound_id, first);
  EXPECT_EQ(inbound_trace.size(), 36u);  // minted by make()
  EXPECT_EQ(child_seen_trace, inbound_trace);
  EXPECT_EQ(child_seen_id, child_id);
  EXPECT_NE(child_id, inbound_id);
}

TEST_F(Trace, PublishMintsOrContinuesTraceAndReturnsMetaId) {
  app a(url(), bqtest::fast_options());
  auto id1 = a.publish("urn:a:b:c", json{{"n", 1}}).value();
  auto id2 =
      a.publish("urn:a:b:c", json{{"n", 2}}, {.queue = {}, .trace_id = " given ", .hdrs = {}})
          .value();
  EXPECT_NE(id1, id2);
  auto all = bqtest::take_all(broker, "default");
  ASSERT_EQ(all.size(), 2u);
  auto e1 = decode(all[0].body).value();
  auto e2 = decode(all[1].body).value();
  EXPECT_EQ(e1.id(), id1);
  EXPECT_EQ(e2.id(), id2);
  EXPECT_EQ(e2.trace_id(), "given");
  EXPECT_EQ(e1.lang(), "cpp");
  EXPECT_EQ(e1.attempts(), 0);
}

TEST_F(Trace, PublishRejectsABlankUrnAndBadDataWithTypedErrors) {
  app a(url(), bqtest::fast_options());
  EXPECT_EQ(a.publish("  ", json::object()).code(), errc::empty_urn);
  EXPECT_FALSE(a.publish("urn:a:b:c", json::array({1})));
  EXPECT_EQ(memory::depth(broker, "default"), 0u);
}

TEST_F(Trace, AttemptsAreReadThroughTheTransportsReconciliation) {
  const std::string name = broker;
  std::vector<counting_transport*> opened;
  transport_source source = [&]() -> result<std::unique_ptr<transport>> {
    auto t = std::make_unique<counting_transport>(name);
    opened.push_back(t.get());
    return std::unique_ptr<transport>(std::move(t));
  };
  auto o = bqtest::fast_options();
  o.dead_letter = true;
  app a(source, o);
  std::vector<std::int64_t> seen;
  a.handle("urn:a:b:c", [&](message& m) {
    seen.push_back(m.attempts());
    throw std::runtime_error("x");
  });
  (void)a.publish("urn:a:b:c", json::object()).value();
  EXPECT_EQ(a.drain().value(), 1u);
  EXPECT_EQ(seen, (std::vector<std::int64_t>{4}));  // max(0, 5 - 1)
  auto dlq = bqtest::take_all(name, "default.dlq");
  ASSERT_EQ(dlq.size(), 1u);
  EXPECT_EQ(decode(dlq[0].body).value().attempts(), 5);
}

TEST_F(Trace, AFailedDeadLetterPublishPutsTheOriginalBackInsteadOfLosingIt) {
  const std::string name = broker;
  transport_source source = [&]() -> result<std::unique_ptr<transport>> {
    auto t = std::make_unique<counting_transport>(name);
    t->fail_publish_to = "default.dlq";
    return std::unique_ptr<transport>(std::move(t));
  };
  bqtest::log_capture logs;
  auto o = bqtest::fast_options(&logs);
  o.dead_letter = true;
  o.max_attempts = 1;
  app a(source, o);
  a.handle("urn:a:b:c", [&](message&) { throw std::runtime_error("x"); });
  const std::string body =
      R"({"job":"urn:a:b:c","trace_id":"t","data":{},"meta":{"schema_version":1},"attempts":0})";
  bqtest::put_raw(name, "default", body);
  EXPECT_EQ(a.drain("default", 1).value(), 1u);
  auto back = bqtest::take_all(name, "default");
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].body, body);
  EXPECT_TRUE(logs.contains("refused by the test"));
}

TEST_F(Trace, APermanentHeaderRefusalStillDeadLettersTheBody) {
  const std::string name = broker;
  transport_source source = [&]() -> result<std::unique_ptr<transport>> {
    auto t = std::make_unique<counting_transport>(name);
    t->refuse_headers_to = "default.dlq";
    return std::unique_ptr<transport>(std::move(t));
  };
  bqtest::log_capture logs;
  auto o = bqtest::fast_options(&logs);
  o.dead_letter = true;
  app a(source, o);
  const std::string poison = "not json at all";
  bqtest::put_raw(name, "default", poison);
  EXPECT_EQ(a.drain("default", 1).value(), 1u);
  auto dlq = bqtest::take_all(name, "default.dlq");
  ASSERT_EQ(dlq.size(), 1u);
  EXPECT_EQ(dlq[0].body, poison);
  EXPECT_TRUE(bqtest::take_all(name, "default").empty());
  EXPECT_TRUE(logs.contains("retrying without headers"));
}

// message::publish() always continues the inbound trace, so its options have no trace_id:
// passing publish_options (which has one, for app::publish) does not compile.
namespace {
template <class Options>
concept message_publish_takes = requires(const message& m, const json& d, const Options& o) {
  m.publish("urn:x", d, o);
};
template <class T>
concept has_trace_id = requires(T t) {
  t.trace_id;
};
}  // namespace

TEST(TraceOptions, MessagePublishCannotBeGivenATraceId) {
  static_assert(message_publish_takes<continue_publish_options>);
  static_assert(!message_publish_takes<publish_options>);
  static_assert(!has_trace_id<continue_publish_options>);
  static_assert(has_trace_id<publish_options>);
  SUCCEED();
}
