// Live OpenTelemetry interop with the real Python SDK (PyPI `babelqueue[redis,otel]` 1.24.0 and
// opentelemetry-sdk, tests/interop/otel_peer.py) over a real Redis server (BABELQUEUE_REDIS_URL
// from scripts/services.sh). Both sides record their spans with their SDK's in-memory exporter,
// so the test compares the ids each SDK actually recorded:
//  - a Python `publish <urn>` span is the parent of the C++ `process <urn>` span (the W3C
//    `traceparent` rides in the Redis `__bq_frame` header frame), and the reverse;
//  - without headers, the envelope trace_id alone puts both sides in the same trace, with the
//    same synthetic parent span id (UUID and non-UUID trace_ids);
//  - trace_id_of / uuid_of / the synthetic span id agree with the Python functions on a table
//    of strings (and differ only where the Python docs say so: bytes.fromhex skips spaces).
// Without a peer (or one without the `otel` extra) or, for the OtelPythonInterop tests, a Redis
// URL the tests skip, except under CI / BABELQUEUE_REQUIRE_SERVICES=1, where they fail.
#include "interop/python_peer.hpp"
#include "otel/otel_fixture.hpp"
#include "support/files.hpp"
#include "support/services.hpp"

#include <babelqueue/otel/trace_id.hpp>
#include <babelqueue/otel/tracing.hpp>
#include <babelqueue/redis/redis_transport.hpp>
#include <babelqueue/runtime/app.hpp>

#include <gtest/gtest.h>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

using namespace std::chrono_literals;
using babelqueue::json;

namespace {

using bqtest::recorded_span;
using bqtest::span_recorder;

// The trace_ids of the header-less tests: a lowercase and an uppercase UUID, non-UUIDs.
const std::vector<std::string> plain_trace_ids = {"4bf92f35-77b3-4da6-a3ce-929d0e0e4736",
                                                  "4BF92F35-77B3-4DA6-A3CE-929D0E0E4736",
                                                  "not-a-uuid", "ORDER-42"};

// 32 hex digits as the canonical UUID text (8-4-4-4-12): what uuid_of() must print for them.
std::string uuid_text(const std::string& hex) {
  return hex.substr(0, 8) + "-" + hex.substr(8, 4) + "-" + hex.substr(12, 4) + "-" +
         hex.substr(16, 4) + "-" + hex.substr(20);
}

// A W3C traceparent of the span: `00-<trace>-<span>-<flags>`, with the sampled flag set (both
// SDKs also set the level-2 "random trace id" flag 0x02 today: the flags are not compared).
void expect_traceparent(const std::string& traceparent, const std::string& trace_hex,
                        const std::string& span_hex) {
  ASSERT_EQ(traceparent.size(), 55u) << traceparent;
  EXPECT_EQ(traceparent.substr(0, 53), "00-" + trace_hex + "-" + span_hex + "-") << traceparent;
  EXPECT_EQ(std::stoi(traceparent.substr(53), nullptr, 16) & 1, 1) << traceparent;
}

// The one span named `name` among `spans` (a test failure, and an empty span, otherwise).
template <class Spans>
recorded_span only_span(const Spans& spans, const std::string& name) {
  std::vector<recorded_span> found;
  for (const auto& s : spans) {
    if (s.name == name) found.push_back(s);
  }
  EXPECT_EQ(found.size(), 1u) << name;
  return found.empty() ? recorded_span{} : found.front();
}

// The one Python span named `name` in the peer's "spans" array.
json only_py_span(const json& spans, const std::string& name) {
  std::vector<json> found;
  for (const auto& s : spans) {
    if (s["name"] == name) found.push_back(s);
  }
  EXPECT_EQ(found.size(), 1u) << name << " in " << spans.dump();
  return found.empty() ? json::object() : found.front();
}

// A stored Redis value as the `__bq_frame` it must be: {"__bq_frame":1,"headers":{…},"body":…}.
json parse_frame(const std::string& stored) {
  auto frame = babelqueue::parse_json(stored);
  EXPECT_TRUE(frame.has_value()) << stored;
  if (!frame || !frame->is_object()) return json::object();
  EXPECT_EQ((*frame)["__bq_frame"], 1) << stored;
  EXPECT_TRUE((*frame)["headers"].is_object()) << stored;
  EXPECT_TRUE((*frame)["body"].is_string()) << stored;
  return *frame;
}

// The Python peer with its OpenTelemetry SDK; no broker (the trace_id mapping tests).
class OtelPythonMapping : public ::testing::Test {
 protected:
  void SetUp() override {
    BQ_REQUIRE_PYTHON_PEER(python_);
    // A venv made before the `otel` extra joined setup-python-peer.sh lacks the SDK: say so
    // instead of failing on a traceback.
    std::string probe = babelqueue::test::shell_quote(python_) +
                        " -c 'import babelqueue.otel, opentelemetry.sdk.trace' >/dev/null 2>&1";
    if (std::system(probe.c_str()) != 0) {
      if (bqtest::services_required()) FAIL() << "the Python peer has no OpenTelemetry SDK";
      GTEST_SKIP() << "the Python peer has no OpenTelemetry SDK: re-run "
                      "scripts/setup-python-peer.sh (its `otel` extra)";
    }
  }

  std::vector<json> peer(const std::vector<std::string>& args) {
    return bqtest::interop::run_peer(python_, "otel_peer.py", args);
  }

  std::string python_;
};

// ... and a Redis server, on a queue of its own.
class OtelPythonInterop : public OtelPythonMapping {
 protected:
  void SetUp() override {
    OtelPythonMapping::SetUp();
    if (IsSkipped() || HasFailure()) return;
    url_ = bqtest::env_or_empty("BABELQUEUE_REDIS_URL");
    BQ_REQUIRE_SERVICE(url_, "Redis server (BABELQUEUE_REDIS_URL)", "redis");
    babelqueue::redis::register_transport();
    queue_ = bqtest::unique_name("otel-interop");
  }

  babelqueue::app_options options(const span_recorder& rec,
                                  babelqueue::otel::tracing_options t = {}) const {
    babelqueue::app_options o;
    o.queue = queue_;
    o.poll_timeout = 300ms;
    o.observers.push_back(rec.observer(std::move(t)));
    return o;
  }

  std::string url_, queue_;
  const std::string urn_ = "urn:babel:interop:traced";
};

// 1. Python otel.publish → C++ consumer: the C++ process span is a child of the Python publish
// span (same TraceID, parent = its span id), and the message's trace_id is uuid_of(TraceID).
TEST_F(OtelPythonInterop, PythonPublishSpanIsParentOfCppProcessSpan) {
  auto lines = peer({"publish", url_, queue_, urn_});
  ASSERT_EQ(lines.size(), 1u);
  const json& py = lines[0];
  const json py_publish = only_py_span(py["spans"], "publish " + urn_);
  ASSERT_FALSE(py_publish.empty());
  const std::string trace_hex = py_publish["trace_id"];
  const std::string span_hex = py_publish["span_id"];
  EXPECT_EQ(py_publish["kind"], "PRODUCER");
  EXPECT_EQ(py_publish["parent_span_id"], "");
  // Python names the URN as the destination (C++ names the queue, by design).
  EXPECT_EQ(py_publish["attributes"]["messaging.destination.name"], urn_);
  EXPECT_EQ(py_publish["attributes"]["messaging.message.id"], py["id"]);
  EXPECT_EQ(py["trace_id"], uuid_text(trace_hex));

  // On the wire: the Python transport framed the envelope with the publish span's traceparent.
  ASSERT_EQ(py["stored"].size(), 1u);
  const std::string stored = py["stored"][0];
  EXPECT_EQ(stored.rfind(R"({"__bq_frame":1,"headers":{"traceparent":")", 0), 0u) << stored;
  const json frame = parse_frame(stored);
  const std::string traceparent = frame["headers"].value("traceparent", "");
  expect_traceparent(traceparent, trace_hex, span_hex);

  span_recorder rec;
  babelqueue::app app(url_, options(rec));
  std::string seen_trace_id;
  babelqueue::headers seen_headers;
  app.handle(urn_, [&](babelqueue::message& m) {
    seen_trace_id = std::string(m.trace_id());
    seen_headers = m.hdrs();
  });
  auto n = app.drain(queue_);
  ASSERT_TRUE(n) << n.error().message;
  ASSERT_EQ(*n, 1u);

  const recorded_span process = only_span(rec.spans(), "process " + urn_);
  EXPECT_EQ(process.kind, opentelemetry::trace::SpanKind::kConsumer);
  EXPECT_EQ(process.trace_id, trace_hex);
  EXPECT_EQ(process.parent_span_id, span_hex);
  EXPECT_EQ(process.str("messaging.destination.name"), queue_);
  EXPECT_EQ(process.str("messaging.message.id"), py["id"].get<std::string>());
  EXPECT_EQ(process.str("messaging.message.conversation_id"), uuid_text(trace_hex));
  EXPECT_EQ(process.str("messaging.babelqueue.outcome"), "acked");
  // The trace_id the handler saw names the same trace.
  EXPECT_EQ(seen_trace_id, uuid_text(trace_hex));
  EXPECT_EQ(babelqueue::otel::to_hex(babelqueue::otel::trace_id_of(seen_trace_id)), trace_hex);
  EXPECT_EQ(seen_headers["traceparent"], traceparent);
}

// 2. C++ app::publish (tracing observer) → Python consumer with otel.wrap_handler: the Python
// process span is a child of the C++ publish span. The C++ transport writes the frame.
TEST_F(OtelPythonInterop, CppPublishSpanIsParentOfPythonProcessSpan) {
  span_recorder rec;
  std::string id;
  {
    babelqueue::app app(url_, options(rec));
    auto published = app.publish(urn_, json{{"from", "cpp"}});
    ASSERT_TRUE(published) << published.error().message;
    id = *published;
  }
  const recorded_span publish = only_span(rec.spans(), "publish " + urn_);
  EXPECT_EQ(publish.kind, opentelemetry::trace::SpanKind::kProducer);
  EXPECT_EQ(publish.parent_span_id, bqtest::root_parent);
  EXPECT_EQ(publish.str("messaging.destination.name"), queue_);
  EXPECT_EQ(publish.str("messaging.babelqueue.urn"), urn_);
  EXPECT_EQ(publish.str("messaging.message.id"), id);

  auto lines = peer({"consume", url_, queue_, urn_, "1"});
  ASSERT_EQ(lines.size(), 1u);
  const json& py = lines[0];

  // On the wire: the frame, in the key order both SDKs write, with the publish span's context.
  ASSERT_EQ(py["stored"].size(), 1u);
  const std::string stored = py["stored"][0];
  EXPECT_EQ(stored.rfind(R"({"__bq_frame":1,"headers":{"traceparent":")", 0), 0u) << stored;
  const json frame = parse_frame(stored);
  const std::string traceparent = frame["headers"].value("traceparent", "");
  expect_traceparent(traceparent, publish.trace_id, publish.span_id);
  auto body = babelqueue::parse_json(frame.value("body", ""));
  ASSERT_TRUE(body) << stored;
  EXPECT_EQ((*body)["trace_id"], uuid_text(publish.trace_id));

  ASSERT_EQ(py["seen"].size(), 1u);
  EXPECT_EQ(py["seen"][0]["trace_id"], uuid_text(publish.trace_id));
  EXPECT_EQ(py["seen"][0]["id"], id);
  EXPECT_EQ(py["seen"][0]["headers"]["traceparent"], traceparent);

  const json process = only_py_span(py["spans"], "process " + urn_);
  ASSERT_FALSE(process.empty());
  EXPECT_EQ(process["kind"], "CONSUMER");
  EXPECT_EQ(process["trace_id"], publish.trace_id);
  EXPECT_EQ(process["parent_span_id"], publish.span_id);
  EXPECT_EQ(process["parent_remote"], true);
  EXPECT_EQ(process["attributes"]["messaging.destination.name"], queue_);
  EXPECT_EQ(process["attributes"]["messaging.message.id"], id);
  EXPECT_EQ(process["attributes"]["messaging.message.conversation_id"],
            uuid_text(publish.trace_id));
}

// 3a. Python app.publish without OpenTelemetry (a bare envelope, no frame) → C++ consumer: the
// process span's TraceID is Python's trace_id_of(trace_id) and its parent Python's synthetic
// span id, for UUID and non-UUID trace_ids; the trace_id itself arrives unchanged.
TEST_F(OtelPythonInterop, HeaderlessPythonMessageJoinsTheSameTrace) {
  auto expected = peer({"trace-ids", babelqueue::to_canonical_json(json(plain_trace_ids)).value()});
  ASSERT_EQ(expected.size(), plain_trace_ids.size());

  span_recorder rec;
  babelqueue::app app(url_, options(rec));
  std::vector<std::string> seen;
  app.handle(urn_, [&](babelqueue::message& m) {
    seen.emplace_back(m.trace_id());
    EXPECT_TRUE(m.hdrs().empty());
  });
  for (std::size_t i = 0; i < plain_trace_ids.size(); ++i) {
    const std::string& trace_id = plain_trace_ids[i];
    SCOPED_TRACE(trace_id);
    auto lines = peer({"plain", url_, queue_, urn_, trace_id});
    ASSERT_EQ(lines.size(), 1u);
    ASSERT_EQ(lines[0]["stored"].size(), 1u);
    EXPECT_EQ(lines[0]["stored"][0].get<std::string>().find("__bq_frame"), std::string::npos);

    auto n = app.drain(queue_);
    ASSERT_TRUE(n) << n.error().message;
    ASSERT_EQ(*n, 1u);
    ASSERT_EQ(seen.size(), i + 1);
    EXPECT_EQ(seen[i], trace_id);

    const auto processes = rec.named("process " + urn_);
    ASSERT_EQ(processes.size(), i + 1);
    EXPECT_EQ(processes[i].trace_id, expected[i]["trace_id"]);
    EXPECT_EQ(processes[i].parent_span_id, expected[i]["span_id"]);
    EXPECT_EQ(processes[i].str("messaging.message.conversation_id"), trace_id);
  }
}

// 3b. C++ publish with a given trace_id and no traceparent (tracing with inject off) → Python
// wrap_handler: both sides' spans sit in trace_id_of(trace_id) under the same synthetic parent.
TEST_F(OtelPythonInterop, HeaderlessCppMessageJoinsTheSameTrace) {
  span_recorder rec;
  std::vector<std::string> ids;
  {
    babelqueue::otel::tracing_options no_inject;
    no_inject.inject = false;
    babelqueue::app app(url_, options(rec, no_inject));
    for (const auto& trace_id : plain_trace_ids) {
      babelqueue::publish_options p;
      p.trace_id = trace_id;
      auto id = app.publish(urn_, json{{"from", "cpp"}}, p);
      ASSERT_TRUE(id) << id.error().message;
      ids.push_back(*id);
    }
  }
  auto lines = peer({"consume", url_, queue_, urn_, std::to_string(plain_trace_ids.size())});
  ASSERT_EQ(lines.size(), 1u);
  const json& py = lines[0];
  ASSERT_EQ(py["stored"].size(), plain_trace_ids.size());
  ASSERT_EQ(py["seen"].size(), plain_trace_ids.size());
  ASSERT_EQ(py["spans"].size(), plain_trace_ids.size());
  const auto publishes = rec.named("publish " + urn_);
  ASSERT_EQ(publishes.size(), plain_trace_ids.size());

  for (std::size_t i = 0; i < plain_trace_ids.size(); ++i) {
    const std::string& trace_id = plain_trace_ids[i];
    SCOPED_TRACE(trace_id);
    const std::string trace_hex = babelqueue::otel::to_hex(babelqueue::otel::trace_id_of(trace_id));
    const std::string parent_hex =
        babelqueue::otel::to_hex(babelqueue::otel::synthetic_span_id_of(trace_id));
    EXPECT_EQ(py["stored"][i].get<std::string>().find("__bq_frame"), std::string::npos);
    EXPECT_EQ(py["seen"][i]["trace_id"], trace_id);
    EXPECT_EQ(py["seen"][i]["id"], ids[i]);
    EXPECT_TRUE(py["seen"][i]["headers"].empty());

    EXPECT_EQ(publishes[i].trace_id, trace_hex);
    EXPECT_EQ(publishes[i].parent_span_id, parent_hex);
    const json& process = py["spans"][i];
    EXPECT_EQ(process["name"], "process " + urn_);
    EXPECT_EQ(process["attributes"]["messaging.message.conversation_id"], trace_id);
    EXPECT_EQ(process["trace_id"], trace_hex);
    EXPECT_EQ(process["parent_span_id"], parent_hex);
  }
}

// 4. trace_id_of / uuid_of / the synthetic parent's span id, string by string, against the
// live Python functions. `uuid` says which rule applies (its 16 bytes, else SHA-256), so the
// two sides cannot agree on the wrong rule.
TEST_F(OtelPythonMapping, TraceIdMappingMatchesPython) {
  struct row {
    std::string in;
    bool uuid;
  };
  const std::vector<row> table = {
      {"4bf92f35-77b3-4da6-a3ce-929d0e0e4736", true},     // canonical UUID
      {"4BF92F35-77B3-4DA6-A3CE-929D0E0E4736", true},     // uppercase
      {"4bF92f35-77B3-4da6-A3ce-929D0e0E4736", true},     // mixed case
      {"4bf92f3577b34da6a3ce929d0e0e4736", true},         // 32 hex digits, no hyphens
      {"4bf9-2f35-77b3-4da6-a3ce-929d-0e0e-4736", true},  // extra hyphens: still 32 digits
      {"--4bf92f3577b34da6a3ce929d0e0e4736--", true},     // leading / trailing hyphens
      {"00000000000000000000000000000001", true},         // smallest valid id
      {"ffffffff-ffff-ffff-ffff-ffffffffffff", true},     // largest
      {"00000000-0000-0000-0000-000000000000", false},    // nil UUID: never the invalid id
      {"4bf92f3577b34da6a3ce929d0e0e473", false},         // 31 hex digits
      {"4bf92f3577b34da6a3ce929d0e0e47360", false},       // 33 hex digits
      {"4bf92f35-77b3-4da6-a3ce-929d0e0e473", false},     // UUID one digit short
      {"4bf92f35-77b3-4da6-a3ce-929d0e0e473g", false},    // a non-hex digit
      {"0x4bf92f3577b34da6a3ce929d0e0e47", false},        // 0x prefix, 32 characters
      {"{4bf92f35-77b3-4da6-a3ce-929d0e0e4736}", false},  // braces
      {"\u00e94bf92f3577b34da6a3ce929d0e0e473", false},   // é + 31 digits: 32 characters in Python
      {"not-a-uuid", false},
      {"ORDER-42", false},
      {"", false},
      {"\u00e9", false},                   // é
      {"trace-\u20ac-\U0001f600", false},  // € and an emoji
      {"-", false},
  };
  json inputs = json::array();
  for (const auto& r : table) inputs.push_back(r.in);
  auto lines = peer({"trace-ids", babelqueue::to_canonical_json(inputs).value()});
  ASSERT_EQ(lines.size(), table.size());
  for (std::size_t i = 0; i < table.size(); ++i) {
    const std::string& in = table[i].in;
    SCOPED_TRACE("\"" + in + "\"");
    ASSERT_EQ(lines[i]["in"], in);
    const auto id = babelqueue::otel::trace_id_of(in);
    const std::string hex = babelqueue::otel::to_hex(id);
    EXPECT_EQ(hex, lines[i]["trace_id"]);
    EXPECT_EQ(babelqueue::otel::uuid_of(id), lines[i]["uuid"]);
    EXPECT_EQ(babelqueue::otel::to_hex(babelqueue::otel::synthetic_span_id_of(in)),
              lines[i]["span_id"]);
    if (table[i].uuid) {
      std::string digits;  // the input's hex digits, lowercase
      for (char c : in) {
        if (c != '-') digits += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      }
      EXPECT_EQ(hex, digits);
    } else {
      EXPECT_EQ(hex, lines[i]["sha256"]);
    }
  }
}

// The documented difference (trace_id.hpp): Python's bytes.fromhex skips white space, so 30 hex
// digits with two spaces between byte pairs (32 characters) are a 15-byte id there; C++ (and
// Go) hash the string. Only the synthetic span id (always a hash) still agrees.
TEST_F(OtelPythonMapping, WhitespaceInsideHexIsTheDocumentedPythonDifference) {
  const std::string spaced = "4bf92f35 77b34da6 a3ce929d0e0e47";
  ASSERT_EQ(spaced.size(), 32u);
  auto lines = peer({"trace-ids", babelqueue::to_canonical_json(json::array({spaced})).value()});
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["trace_id"], "004bf92f3577b34da6a3ce929d0e0e47");
  const std::string cpp = babelqueue::otel::to_hex(babelqueue::otel::trace_id_of(spaced));
  // C++ hashed it, as any other non-UUID string.
  EXPECT_EQ(cpp, lines[0]["sha256"]);
  EXPECT_NE(cpp, lines[0]["trace_id"]);
  EXPECT_EQ(babelqueue::otel::to_hex(babelqueue::otel::synthetic_span_id_of(spaced)),
            lines[0]["span_id"]);
}

}  // namespace
