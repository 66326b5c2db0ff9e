// The tracing observer (tracing.hpp) on the runtime with memory://, recorded by a real
// opentelemetry-cpp SDK (in-memory exporter): span names, kinds, parents, the spec's
// attributes, trace_id adoption, traceparent injection/extraction, retries, dead-letters,
// unknown URNs, poison, and a malformed traceparent.
#include "otel/otel_fixture.hpp"
#include "runtime/test_util.hpp"

#include <babelqueue/memory/memory_transport.hpp>
#include <babelqueue/runtime/app.hpp>

#include <gtest/gtest.h>
#include <opentelemetry/trace/scope.h>

#include <stdexcept>
#include <string>

namespace {

using namespace babelqueue;
using bqtest::recorded_span;
using opentelemetry::trace::SpanKind;
using opentelemetry::trace::StatusCode;

class Tracing : public ::testing::Test {
 protected:
  void SetUp() override { memory::register_transport(); }
  app_options options(otel::tracing_options t = {}) {
    auto o = bqtest::fast_options();
    o.observers.push_back(spans.observer(std::move(t)));
    return o;
  }
  std::string url() const { return "memory://" + broker; }

  bqtest::span_recorder spans;
  std::string broker = bqtest::unique_broker("otel");
};

// The W3C traceparent of a span: version 00, its ids, flags.
std::string traceparent_of(const recorded_span& s, const char* flags = "01") {
  return "00-" + s.trace_id + "-" + s.span_id + "-" + flags;
}

TEST_F(Tracing, PublishThenProcessOneTraceParentAndChild) {
  app a(url(), options());
  std::string seen_trace_id, seen_traceparent;
  a.handle("urn:babel:orders:created", [&](message& m) {
    seen_trace_id = std::string(m.trace_id());
    seen_traceparent = m.header("traceparent").value_or("");
  });
  const std::string id = a.publish("urn:babel:orders:created", json{{"order_id", 1042}}).value();
  ASSERT_EQ(a.drain().value(), 1u);

  const auto pub = spans.named("publish urn:babel:orders:created");
  const auto proc = spans.named("process urn:babel:orders:created");
  ASSERT_EQ(pub.size(), 1u);
  ASSERT_EQ(proc.size(), 1u);
  const auto& p = pub[0];
  const auto& c = proc[0];
  EXPECT_EQ(p.kind, SpanKind::kProducer);
  EXPECT_EQ(c.kind, SpanKind::kConsumer);
  EXPECT_EQ(p.parent_span_id, bqtest::root_parent);  // no active span: a root
  EXPECT_EQ(c.trace_id, p.trace_id);
  EXPECT_EQ(c.parent_span_id, p.span_id);
  // The runtime minted no trace of its own: the message carries the publish span's TraceID.
  EXPECT_EQ(otel::to_hex(otel::trace_id_of(seen_trace_id)), p.trace_id);
  EXPECT_EQ(seen_trace_id.size(), 36u);
  // The SDK (1.28) sets the W3C random-trace-id flag (0x02) beside sampled (0x01).
  EXPECT_EQ(seen_traceparent.substr(0, 53), traceparent_of(p).substr(0, 53));

  EXPECT_EQ(p.str("messaging.system"), "babelqueue");
  EXPECT_EQ(p.str("messaging.operation"), "publish");
  EXPECT_EQ(p.str("messaging.destination.name"), "default");
  EXPECT_EQ(p.str("messaging.babelqueue.urn"), "urn:babel:orders:created");
  EXPECT_EQ(p.str("messaging.babelqueue.publish_kind"), "app");
  EXPECT_EQ(p.str("messaging.message.id"), id);
  EXPECT_EQ(p.str("messaging.message.conversation_id"), seen_trace_id);
  EXPECT_EQ(p.status, StatusCode::kUnset);

  EXPECT_EQ(c.str("messaging.system"), "babelqueue");
  EXPECT_EQ(c.str("messaging.operation"), "process");
  EXPECT_EQ(c.str("messaging.destination.name"), "default");
  EXPECT_EQ(c.str("messaging.message.id"), id);
  EXPECT_EQ(c.str("messaging.message.conversation_id"), seen_trace_id);
  EXPECT_EQ(c.int64("messaging.babelqueue.attempts"), 0);
  EXPECT_EQ(c.str("messaging.babelqueue.outcome"), "acked");
  EXPECT_EQ(c.status, StatusCode::kUnset);
}

TEST_F(Tracing, AnActiveSpanIsTheParentAndItsTraceIsStamped) {
  app a(url(), options());
  std::string seen_trace_id;
  a.handle("urn:a:b:c", [&](message& m) { seen_trace_id = std::string(m.trace_id()); });
  auto outer = spans.tracer()->StartSpan("checkout");
  {
    opentelemetry::trace::Scope scope(outer);
    (void)a.publish("urn:a:b:c", json::object()).value();
  }
  outer->End();
  ASSERT_EQ(a.drain().value(), 1u);
  const auto checkout = spans.named("checkout").at(0);
  const auto pub = spans.named("publish urn:a:b:c").at(0);
  EXPECT_EQ(pub.parent_span_id, checkout.span_id);
  EXPECT_EQ(pub.trace_id, checkout.trace_id);
  EXPECT_EQ(otel::to_hex(otel::trace_id_of(seen_trace_id)), checkout.trace_id);
}

TEST_F(Tracing, AnExplicitTraceIdIsKeptAndThePublishSpanJoinsIt) {
  app a(url(), options());
  std::string seen;
  a.handle("urn:a:b:c", [&](message& m) { seen = std::string(m.trace_id()); });
  (void)a.publish("urn:a:b:c", json::object(), {.queue = "", .trace_id = "ORDER-42", .hdrs = {}})
      .value();
  ASSERT_EQ(a.drain().value(), 1u);
  EXPECT_EQ(seen, "ORDER-42");
  const auto pub = spans.named("publish urn:a:b:c").at(0);
  EXPECT_EQ(pub.trace_id, "8ecba4d3760868861bfb0dde1b9eca43");  // trace_id_of("ORDER-42")
  EXPECT_EQ(pub.parent_span_id, "be4e45003ff969c2");            // its synthetic parent
  const auto proc = spans.named("process urn:a:b:c").at(0);
  EXPECT_EQ(proc.parent_span_id, pub.span_id);  // the traceparent header still links them
}

TEST_F(Tracing, WithoutATraceparentTheProcessSpanHangsOffTheTraceIdParent) {
  app a(url(), options());
  a.handle("urn:a:b:c", [](message&) {});
  auto env = make("urn:a:b:c", json::object(), {"default", "not-a-uuid"}).value();
  bqtest::put_raw(broker, "default", encode(env).value());
  ASSERT_EQ(a.drain().value(), 1u);
  const auto proc = spans.named("process urn:a:b:c").at(0);
  EXPECT_EQ(proc.trace_id, "2184a32a3bae6ad756d745ec8678ad6a");
  EXPECT_EQ(proc.parent_span_id, "8649efbf89835216");
}

TEST_F(Tracing, AMalformedTraceparentIsIgnoredWithADebugNote) {
  std::vector<std::string> notes;
  std::mutex m;
  otel::tracing_options t;
  t.on_debug = [&](std::string_view s) {
    std::lock_guard lock(m);
    notes.emplace_back(s);
  };
  app a(url(), options(std::move(t)));
  int handled = 0;
  a.handle("urn:a:b:c", [&](message&) { ++handled; });
  auto env = make("urn:a:b:c", json::object(), {"default", "not-a-uuid"}).value();
  for (const std::string bad :
       {"garbage", "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
        "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
        "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra"}) {
    bqtest::put_raw(broker, "default", encode(env).value(), {{"traceparent", bad}});
  }
  ASSERT_EQ(a.drain().value(), 5u);
  EXPECT_EQ(handled, 5);
  for (const auto& proc : spans.named("process urn:a:b:c")) {
    EXPECT_EQ(proc.trace_id, "2184a32a3bae6ad756d745ec8678ad6a");
    EXPECT_EQ(proc.parent_span_id, "8649efbf89835216");
    EXPECT_EQ(proc.str("messaging.babelqueue.outcome"), "acked");
  }
  EXPECT_EQ(notes.size(), 5u);
  EXPECT_NE(notes.at(0).find("garbage"), std::string::npos);
}

TEST_F(Tracing, AForeignTraceparentIsTheParentAndTracestateIsKept) {
  app a(url(), options());
  std::string downstream_state;
  a.handle("urn:a:b:c", [&](message& m) {
    (void)m.publish("urn:a:b:next", json::object(), {.queue = "next", .hdrs = {}}).value();
  });
  auto env = make("urn:a:b:c", json::object(), {"default", "not-a-uuid"}).value();
  bqtest::put_raw(broker, "default", encode(env).value(),
                  {{"traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
                   {"tracestate", "vendor=opaque"}});
  ASSERT_EQ(a.drain().value(), 1u);
  const auto proc = spans.named("process urn:a:b:c").at(0);
  EXPECT_EQ(proc.trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(proc.parent_span_id, "00f067aa0ba902b7");
  // The handler's publish is a child of the process span; it forwards the trace state.
  const auto next = spans.named("publish urn:a:b:next").at(0);
  EXPECT_EQ(next.parent_span_id, proc.span_id);
  EXPECT_EQ(next.str("messaging.babelqueue.publish_kind"), "message");
  const auto sent = bqtest::take_all(broker, "next");
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].hdrs.at("tracestate"), "vendor=opaque");
  EXPECT_EQ(sent[0].hdrs.at("traceparent").substr(0, 53), traceparent_of(next).substr(0, 53));
  // message::publish keeps the inbound trace_id (GR-4): no adoption.
  EXPECT_EQ(decode(sent[0].body).value().trace_id(), "not-a-uuid");
}

TEST_F(Tracing, RetriesAndTheDeadLetterAreVisible) {
  auto o = options();
  o.max_attempts = 2;
  o.dead_letter = true;
  app a(url(), o);
  a.handle("urn:a:b:fails", [](message&) { throw std::runtime_error("boom"); });
  (void)a.publish("urn:a:b:fails", json::object()).value();
  ASSERT_EQ(a.drain().value(), 2u);

  const auto procs = spans.named("process urn:a:b:fails");
  ASSERT_EQ(procs.size(), 2u);
  const auto pubs = spans.named("publish urn:a:b:fails");
  ASSERT_EQ(pubs.size(), 3u);  // app, retry, dead_letter
  EXPECT_EQ(pubs[1].str("messaging.babelqueue.publish_kind"), "retry");
  EXPECT_EQ(pubs[1].int64("messaging.babelqueue.attempts"), 1);
  EXPECT_EQ(pubs[1].parent_span_id, procs[0].span_id);
  EXPECT_EQ(pubs[2].str("messaging.babelqueue.publish_kind"), "dead_letter");
  EXPECT_EQ(pubs[2].str("messaging.destination.name"), "default.dlq");
  EXPECT_EQ(pubs[2].int64("messaging.babelqueue.attempts"), 2);
  EXPECT_EQ(pubs[2].parent_span_id, procs[1].span_id);
  // The second delivery is the retry's child: one trace from publish to dead-letter.
  EXPECT_EQ(procs[1].parent_span_id, pubs[1].span_id);
  for (const auto& s : spans.spans()) EXPECT_EQ(s.trace_id, pubs[0].trace_id) << s.name;

  EXPECT_EQ(procs[0].int64("messaging.babelqueue.attempts"), 0);
  EXPECT_EQ(procs[0].str("messaging.babelqueue.outcome"), "retried");
  EXPECT_EQ(procs[0].int64("messaging.babelqueue.next_attempts"), 1);
  EXPECT_EQ(procs[0].status, StatusCode::kError);
  EXPECT_EQ(procs[0].status_description, "boom");
  EXPECT_EQ(procs[0].first_exception.at("exception.type"), "std::runtime_error");
  EXPECT_EQ(procs[0].first_exception.at("exception.message"), "boom");
  EXPECT_EQ(procs[1].int64("messaging.babelqueue.attempts"), 1);
  EXPECT_EQ(procs[1].str("messaging.babelqueue.outcome"), "dead_lettered");
  EXPECT_EQ(procs[1].str("messaging.babelqueue.dead_letter.reason"), "failed");
  EXPECT_EQ(procs[1].str("messaging.babelqueue.dead_letter.queue"), "default.dlq");
  EXPECT_EQ(procs[1].status, StatusCode::kError);
}

TEST_F(Tracing, AnUnknownUrnUnderFailIsAnErrorSpan) {
  auto o = options();
  o.max_attempts = 1;
  o.dead_letter = true;
  app a(url(), o);
  (void)a.publish("urn:a:b:nobody", json::object()).value();
  ASSERT_EQ(a.drain().value(), 1u);
  const auto proc = spans.named("process urn:a:b:nobody").at(0);
  EXPECT_EQ(proc.status, StatusCode::kError);
  EXPECT_EQ(proc.str("messaging.babelqueue.unknown_urn"), "fail");
  EXPECT_EQ(proc.str("messaging.babelqueue.dead_letter.reason"), "unknown_urn");
  EXPECT_EQ(proc.first_exception.at("exception.type"), "babelqueue::unknown_urn");
}

TEST_F(Tracing, PoisonHasAProcessSpanToo) {
  auto o = options();
  o.dead_letter = true;
  app a(url(), o);
  bqtest::put_raw(broker, "default", "{not json",
                  {{"traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}});
  ASSERT_EQ(a.drain().value(), 1u);
  const auto proc = spans.named("process").at(0);
  EXPECT_EQ(proc.kind, SpanKind::kConsumer);
  EXPECT_EQ(proc.trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(proc.str("messaging.babelqueue.outcome"), "rejected");
  EXPECT_EQ(proc.str("messaging.babelqueue.rejection"), "malformed_json");
  EXPECT_EQ(proc.status, StatusCode::kError);
  const auto dlq = spans.named("publish").at(0);
  EXPECT_EQ(dlq.str("messaging.babelqueue.publish_kind"), "dead_letter");
  EXPECT_EQ(dlq.parent_span_id, proc.span_id);
}

TEST_F(Tracing, OffSwitchesAndTheNoopProvider) {
  // inject off: nothing written; extract off: the trace_id parent even with a header.
  otel::tracing_options t;
  t.inject = false;
  t.extract = false;
  app a(url(), options(std::move(t)));
  std::optional<std::string> tp;
  a.handle("urn:a:b:c", [&](message& m) { tp = m.header("traceparent"); });
  (void)a.publish("urn:a:b:c", json::object()).value();
  ASSERT_EQ(a.drain().value(), 1u);
  EXPECT_FALSE(tp.has_value());

  // The API's no-op provider (no SDK installed globally): no spans, no header, the minted
  // UUIDv4 trace_id stays.
  auto o = bqtest::fast_options();
  o.observers.push_back(otel::make_tracing());
  app b("memory://" + bqtest::unique_broker("noop"), o);
  std::string trace;
  b.handle("urn:a:b:c", [&](message& m) {
    tp = m.header("traceparent");
    trace = std::string(m.trace_id());
  });
  (void)b.publish("urn:a:b:c", json::object()).value();
  ASSERT_EQ(b.drain().value(), 1u);
  EXPECT_FALSE(tp.has_value());
  EXPECT_EQ(trace.size(), 36u);
}

TEST_F(Tracing, ATransportWithoutHeadersStillCorrelatesByTraceId) {
  // sqlite-less stand-in: the memory transport refusing headers is in the runtime tests;
  // here: headers off by inject=false already proves the trace_id path end to end.
  otel::tracing_options t;
  t.inject = false;
  app a(url(), options(std::move(t)));
  a.handle("urn:a:b:c", [](message&) {});
  (void)a.publish("urn:a:b:c", json::object()).value();
  ASSERT_EQ(a.drain().value(), 1u);
  const auto pub = spans.named("publish urn:a:b:c").at(0);
  const auto proc = spans.named("process urn:a:b:c").at(0);
  EXPECT_EQ(proc.trace_id, pub.trace_id);       // same trace through trace_id alone
  EXPECT_NE(proc.parent_span_id, pub.span_id);  // but no exact span link
}

}  // namespace
