// Live interop with the real Python SDK (PyPI `babelqueue[artemis]`, its ArtemisTransport over
// python-qpid-proton) over the shared Artemis broker (BABELQUEUE_ARTEMIS_URL, see
// tests/artemis/artemis_fixture.hpp). The Python SDK attaches bare links (no `queue`
// capability), so the broker must route new addresses ANYCAST by default (scripts/services.sh
// configures it; wire-brokers §4.4). The peer's interpreter comes from $BABELQUEUE_PEER_PYTHON,
// else build/peer-python.txt (scripts/setup-python-peer.sh with the `artemis` extra). Without a
// peer or a broker the tests skip, except under CI=true / BABELQUEUE_REQUIRE_SERVICES=1, where
// that is a failure.
//
// What the Python SDK 1.24.0 does on Artemis, as these tests pin it (facts for the docs):
//  - It never sends `released`, `modified` or `rejected`: its transport has only `accept`.
//    A retry, an unknown-URN "release" and a shutdown release all re-publish the body (a new
//    message: delivery-count 0, properties rebuilt from the body) and accept the original, at
//    once — a retry backoff or release delay is ignored (no `x-opt-delivery-time`). So a
//    message a Python worker put back never carries a broker count; its body does.
//  - It reads the AMQP `delivery-count` and reconciles max(body attempts, delivery-count)
//    (0-based, no -1), re-encoding the body with the higher count: failed deliveries counted by
//    C++ (`modified{delivery-failed}`) reach the Python handler's `attempts`.
//  - It carries no out-of-band headers: `publish_with_headers` falls back to a plain publish
//    (no `traceparent` / `bq-replay-bypass` application property on the wire) and received
//    application properties are not surfaced to handlers; a Python re-publish drops the
//    headers the C++ producer sent.
//  - It has no delayed publish on Artemis (no `x-opt-delivery-time` anywhere). It consumes a C++
//    delayed publish (`x-opt-delivery-time` long, `bq_delay`) as any message, once the broker
//    releases it at its due time.
//  - Its messages are non-durable, with no `subject` and no `content-type`; the URN is only in
//    the `x-opt-jms-type` annotation (and the body). Everything else of the projection —
//    correlation-id, creation-time, the four bq_* string properties, an amqp-value string body
//    — is the same as the C++ one.
#include "artemis/artemis_fixture.hpp"
#include "interop/python_peer.hpp"

#include <babelqueue/codec.hpp>
#include <babelqueue/runtime/app.hpp>

#include <proton/annotation_key.hpp>
#include <proton/message_id.hpp>
#include <proton/scalar.hpp>
#include <proton/timestamp.hpp>

#include <future>
#include <stdexcept>

using namespace std::chrono_literals;
using babelqueue::json;

namespace {

using bqtest::interop::cases;
using bqtest::interop::cases_json;
using bqtest::interop::envelopes;
using bqtest::interop::seen_message;
using bqtest::interop::seen_of;

std::vector<json> run_peer(const std::string& python, const std::vector<std::string>& args) {
  return bqtest::interop::run_peer(python, "artemis_peer.py", args);
}

/// A string application property of a raw message, "<unset>" when absent, "<type N>" when
/// it is not a string.
std::string prop(const proton::message& m, const std::string& name) {
  if (!m.properties().exists(name)) return "<unset>";
  const proton::scalar v = m.properties().get(name);
  if (v.type() != proton::STRING) return "<type " + std::to_string(v.type()) + ">";
  return proton::get<std::string>(v);
}

/// The `x-opt-jms-type` annotation of a raw message as a string, or "<unset>".
std::string jms_type(const proton::message& m) {
  const proton::annotation_key k{proton::symbol("x-opt-jms-type")};
  if (!m.message_annotations().exists(k)) return "<unset>";
  return proton::get<std::string>(m.message_annotations().get(k));
}

class ArtemisPythonInterop : public bqtest::ArtemisTest {
 protected:
  void SetUp() override {
    bqtest::ArtemisTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    BQ_REQUIRE_PYTHON_PEER(python_);
    babelqueue::artemis::register_transport();
    url_ = bqtest::artemis_url();
    // The Python SDK's URL is artemis://[user:password@]host:port (no query keys).
    peer_url_ = url_.substr(0, url_.find('?'));
  }
  babelqueue::app_options opts(bool failing = false) {
    babelqueue::app_options o;
    o.queue = queue_;
    o.poll_timeout = 300ms;
    if (failing) {
      o.dead_letter = true;
      o.max_attempts = 3;
    }
    return o;
  }
  /// The next message of `queue` as a bare peer sees it, left on the queue: settled
  /// `released` (which Artemis does not count) on a link of its own, closed before returning
  /// so the message cannot stay in that link's prefetch.
  static std::optional<proton::message> peek(const std::string& queue) {
    bqtest::artemis_peer p;
    return p.get(queue, 5s, /*keep=*/true);
  }
  /// Drains `queue` with a C++ App whose catch-all handler records every message.
  std::vector<seen_message> consume_all(const std::string& queue) {
    babelqueue::app app(url_, opts());
    std::vector<seen_message> seen;
    app.handle_unmatched([&](babelqueue::message& m) { seen.push_back(seen_of(m)); });
    auto n = app.drain(queue);
    EXPECT_TRUE(n) << n.error().message;
    return seen;
  }

  std::string python_, url_, peer_url_;
};

}  // namespace

// C++ publishes; the Python runtime handles each message (same URN, trace, data, attempts,
// body byte for byte), and a bare python-qpid-proton receiver reads the projection: an
// amqp-value string body, subject and x-opt-jms-type = URN, correlation-id = trace_id,
// creation-time = created_at, durable, content-type, the bq_* and out-of-band string properties.
TEST_F(ArtemisPythonInterop, CppPublishesPythonConsumes) {
  const std::string props_queue = queue_ + "-props";
  const auto expected = cases();
  const auto work = envelopes(queue_);
  const auto inspected = envelopes(props_queue);
  {
    babelqueue::app app(url_, opts());
    for (std::size_t i = 0; i < expected.size(); ++i) {
      for (const auto* e : {&work[i], &inspected[i]}) {
        auto id = app.publish(e->first, {.queue = "", .hdrs = expected[i].hdrs});
        ASSERT_TRUE(id) << id.error().message;
        EXPECT_EQ(*id, e->first.id());
      }
    }
  }

  auto seen = run_peer(python_, {"consume", peer_url_, queue_, std::to_string(expected.size())});
  ASSERT_EQ(seen.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE(expected[i].urn);
    EXPECT_EQ(seen[i]["urn"], expected[i].urn);
    EXPECT_EQ(seen[i]["trace_id"], expected[i].trace_id);
    EXPECT_EQ(seen[i]["data"], expected[i].data);
    EXPECT_EQ(seen[i]["attempts"], 0);
    EXPECT_EQ(seen[i]["meta"]["lang"], "cpp");
    EXPECT_EQ(seen[i]["meta"]["id"], std::string(work[i].first.id()));
    EXPECT_EQ(seen[i]["raw"], work[i].second) << "the body byte for byte";
    // The Python ArtemisTransport surfaces no application properties to handlers.
    EXPECT_TRUE(seen[i]["headers"].empty()) << seen[i]["headers"].dump();
  }
  EXPECT_EQ(peer_->drain(queue_, 200ms), 0) << "every message accepted";

  auto props =
      run_peer(python_, {"inspect", peer_url_, props_queue, std::to_string(expected.size())});
  ASSERT_EQ(props.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE(expected[i].urn);
    const json& p = props[i];
    ASSERT_TRUE(p.contains("body")) << p.dump();
    const auto& env = inspected[i].first;
    EXPECT_EQ(p["body"]["type"], "str") << "an amqp-value AMQP string (a JMS TextMessage)";
    EXPECT_EQ(p["body"]["value"], inspected[i].second) << "byte for byte";
    EXPECT_EQ(p["inferred"], false) << "an amqp-value section, not data";
    EXPECT_EQ(p["durable"], true);
    EXPECT_EQ(p["delivery_count"], 0);
    EXPECT_EQ(p["subject"], expected[i].urn);
    EXPECT_EQ(p["content_type"], "application/json");
    EXPECT_EQ(p["correlation_id"]["type"], "str");
    EXPECT_EQ(p["correlation_id"]["value"], expected[i].trace_id);
    EXPECT_EQ(p["creation_time_ms"], *env.created_at());
    const json& a = p["annotations"];
    EXPECT_EQ(a["x-opt-jms-type"]["type"], "str") << a.dump();
    EXPECT_EQ(a["x-opt-jms-type"]["value"], expected[i].urn);
    const json& h = p["properties"];
    auto expect_str = [&](const std::string& k, const std::string& v) {
      EXPECT_EQ(h[k]["type"], "str") << k << " " << h.dump();
      EXPECT_EQ(h[k]["value"], v) << k;
    };
    expect_str("bq_schema_version", "1");
    expect_str("bq_source_lang", "cpp");
    expect_str("bq_attempts", "0");
    expect_str("bq_app_id", "babelqueue");
    for (const auto& [k, v] : expected[i].hdrs) expect_str(k, v);
    EXPECT_EQ(h.size(), 4 + expected[i].hdrs.size()) << h.dump();
  }
  EXPECT_EQ(peer_->drain(props_queue, 200ms), 0);
}

// Python publishes; the C++ App handles each message. The bare C++ peer reads the Python
// projection from a second queue: the same contract sections, but no subject, no
// content-type, non-durable, and the out-of-band headers of the `headers` case dropped.
TEST_F(ArtemisPythonInterop, PythonPublishesCppConsumes) {
  const std::string props_queue = queue_ + "-props";
  auto ids = run_peer(python_, {"publish", peer_url_, queue_ + "," + props_queue, cases_json()});
  const auto expected = cases();
  ASSERT_EQ(ids.size(), 2 * expected.size());

  auto seen = consume_all(queue_);
  ASSERT_EQ(seen.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE(expected[i].urn);
    EXPECT_EQ(seen[i].urn, expected[i].urn);
    EXPECT_EQ(seen[i].trace_id, expected[i].trace_id);
    EXPECT_EQ(seen[i].data, expected[i].data);
    EXPECT_EQ(seen[i].attempts, 0);
    // The Python SDK's Artemis transport has no publish_with_headers: the runtime falls back
    // to a plain publish and the headers never reach the wire.
    EXPECT_TRUE(seen[i].hdrs.empty());
  }
  // Exact numbers, not doubles: the 20-digit integer's text survives.
  EXPECT_NE(seen[1].data_text.find("12345678901234567890"), std::string::npos) << seen[1].data_text;
  EXPECT_NE(seen[1].data_text.find("-9223372036854775808"), std::string::npos);
  EXPECT_EQ(peer_->drain(queue_, 200ms), 0) << "every message accepted";

  for (std::size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE(expected[i].urn);
    auto m = peer_->get(props_queue);
    ASSERT_TRUE(m);
    ASSERT_EQ(m->body().type(), proton::STRING) << "an amqp-value AMQP string";
    auto env = babelqueue::decode(proton::get<std::string>(m->body()));
    ASSERT_TRUE(env);
    EXPECT_EQ(env->id(), ids[expected.size() + i]["id"].get<std::string>());
    EXPECT_EQ(env->lang(), "python");
    EXPECT_EQ(jms_type(*m), expected[i].urn);
    EXPECT_EQ(m->subject(), "") << "Python sets no subject (JMSType)";
    EXPECT_EQ(m->content_type(), "");
    EXPECT_FALSE(m->durable()) << "Python's messages are non-persistent";
    EXPECT_EQ(m->delivery_count(), 0u);
    EXPECT_EQ(proton::get<std::string>(m->correlation_id()), expected[i].trace_id);
    EXPECT_EQ(m->creation_time().milliseconds(), *env->created_at());
    EXPECT_EQ(prop(*m, "bq_schema_version"), "1");
    EXPECT_EQ(prop(*m, "bq_source_lang"), "python");
    EXPECT_EQ(prop(*m, "bq_attempts"), "0");
    EXPECT_EQ(prop(*m, "bq_app_id"), "babelqueue");
    EXPECT_EQ(prop(*m, "traceparent"), "<unset>");
    EXPECT_EQ(prop(*m, "bq-replay-bypass"), "<unset>");
  }
}

// The C++ App fails a message until its DLQ (attempts 0, 1, 2 through re-publishes); the
// Python SDK reads `<queue>.dlq` with its ArtemisTransport: attempts 3 and the dead_letter block.
TEST_F(ArtemisPythonInterop, CppDeadLetterIsReadableByPython) {
  babelqueue::app app(url_, opts(true));
  std::vector<std::int64_t> attempts_seen;
  app.handle("urn:babel:interop:fails", [&](babelqueue::message& m) {
    attempts_seen.push_back(m.attempts());
    throw std::runtime_error("payment gateway timeout");
  });
  auto id = app.publish("urn:babel:interop:fails", json{{"n", 1}},
                        {.queue = "", .trace_id = "trace-cpp-fails", .hdrs = {}});
  ASSERT_TRUE(id) << id.error().message;
  ASSERT_TRUE(app.drain(queue_));
  EXPECT_EQ(attempts_seen, (std::vector<std::int64_t>{0, 1, 2}));

  auto got = run_peer(python_, {"read-dlq", peer_url_, queue_ + ".dlq"});
  ASSERT_EQ(got.size(), 1u);
  ASSERT_TRUE(got[0].contains("envelope")) << got[0].dump();
  const json& env = got[0]["envelope"];
  EXPECT_EQ(got[0]["accepts"], true);
  EXPECT_EQ(env["job"], "urn:babel:interop:fails");
  EXPECT_EQ(env["trace_id"], "trace-cpp-fails");
  EXPECT_EQ(env["meta"]["id"], *id);
  EXPECT_EQ(env["attempts"], 3);
  const json& dl = env["dead_letter"];
  EXPECT_EQ(dl["reason"], "failed");
  EXPECT_EQ(dl["attempts"], 3);
  EXPECT_EQ(dl["original_queue"], queue_);
  EXPECT_EQ(dl["lang"], "cpp");
  EXPECT_EQ(dl["error"], "payment gateway timeout");
  EXPECT_TRUE(dl["failed_at"].is_number_integer());
  EXPECT_EQ(peer_->drain(queue_ + ".dlq", 200ms), 0) << "Python accepted it";
  EXPECT_EQ(peer_->drain(queue_, 200ms), 0);
}

// The Python App fails a message until its DLQ; C++ reads `<queue>.dlq`: attempts 3 in the
// body and in bq_attempts, the dead_letter block, delivery-count 0 (Python re-published it).
TEST_F(ArtemisPythonInterop, PythonDeadLetterIsReadableByCpp) {
  auto py = run_peer(python_, {"failing", peer_url_, queue_});
  ASSERT_EQ(py.size(), 1u);
  EXPECT_EQ(py[0]["seen"], json::parse("[0,1,2]"));

  auto raw = peek(queue_ + ".dlq");
  ASSERT_TRUE(raw);
  EXPECT_EQ(prop(*raw, "bq_attempts"), "3");
  EXPECT_EQ(prop(*raw, "bq_source_lang"), "python");
  EXPECT_EQ(jms_type(*raw), "urn:babel:interop:fails");
  EXPECT_EQ(proton::get<std::string>(raw->correlation_id()), "trace-py-fails");

  auto t = open();
  ASSERT_TRUE(t);
  auto got = t->receive(queue_ + ".dlq", 5s);
  ASSERT_TRUE(got) << got.error().message;
  ASSERT_TRUE(got->has_value());
  const auto& m = **got;
  EXPECT_TRUE(babelqueue::accepts(m.body)) << m.body;
  auto env = babelqueue::decode(m.body);
  ASSERT_TRUE(env) << m.body;
  EXPECT_EQ(env->urn(), "urn:babel:interop:fails");
  EXPECT_EQ(env->trace_id(), "trace-py-fails");
  EXPECT_EQ(env->id(), py[0]["id"].get<std::string>());
  EXPECT_EQ(env->attempts(), 3);
  ASSERT_TRUE(env->dead_letter());
  EXPECT_EQ(env->dead_letter()->reason, "failed");
  EXPECT_EQ(env->dead_letter()->attempts, 3);
  EXPECT_EQ(env->dead_letter()->original_queue, queue_);
  EXPECT_EQ(env->dead_letter()->lang, "python");
  EXPECT_EQ(env->dead_letter()->error, std::optional<std::string>("always fails"));
  EXPECT_EQ(m.delivery_count, std::optional<std::int64_t>(0)) << "a fresh message";
  EXPECT_EQ(t->reconcile_attempts(env->attempts(), m), 3);
  EXPECT_TRUE(m.hdrs.empty());
  ASSERT_TRUE(t->ack(m));
  EXPECT_EQ(peer_->drain(queue_, 200ms), 0);
}

// A message retried by one SDK continues its count in the other: Python fails attempt 0 and
// re-publishes attempts 1 (a new message: delivery-count 0, bq_attempts "1"); C++ fails 1 and
// 2 and dead-letters 3; Python reads the DLQ.
TEST_F(ArtemisPythonInterop, RetryHandsOverFromPythonToCpp) {
  {
    babelqueue::app app(url_, opts());
    ASSERT_TRUE(app.publish("urn:babel:interop:fails", json{{"n", 7}},
                            {.queue = "", .trace_id = "trace-handover", .hdrs = {}}));
  }
  auto py = run_peer(python_, {"fail", peer_url_, queue_, "1"});
  ASSERT_EQ(py.size(), 1u);
  EXPECT_EQ(py[0]["seen"], json::parse("[0]"));

  auto raw = peek(queue_);
  ASSERT_TRUE(raw);
  EXPECT_EQ(raw->delivery_count(), 0u) << "Python retries by re-publishing, not by releasing";
  EXPECT_EQ(prop(*raw, "bq_attempts"), "1");
  EXPECT_EQ(prop(*raw, "bq_source_lang"), "cpp") << "rebuilt from the body";
  EXPECT_EQ(raw->subject(), "") << "Python's projection: no subject";
  EXPECT_FALSE(raw->durable()) << "the C++ message was durable, Python's copy is not";

  babelqueue::app app(url_, opts(true));
  std::vector<std::int64_t> seen;
  std::vector<std::string> traces;
  app.handle("urn:babel:interop:fails", [&](babelqueue::message& m) {
    seen.push_back(m.attempts());
    traces.emplace_back(m.trace_id());
    throw std::runtime_error("fails in C++");
  });
  ASSERT_TRUE(app.drain(queue_));
  EXPECT_EQ(seen, (std::vector<std::int64_t>{1, 2}));
  EXPECT_EQ(traces, (std::vector<std::string>{"trace-handover", "trace-handover"}));

  auto got = run_peer(python_, {"read-dlq", peer_url_, queue_ + ".dlq"});
  ASSERT_EQ(got.size(), 1u);
  ASSERT_TRUE(got[0].contains("envelope")) << got[0].dump();
  EXPECT_EQ(got[0]["accepts"], true);
  EXPECT_EQ(got[0]["envelope"]["attempts"], 3);
  EXPECT_EQ(got[0]["envelope"]["trace_id"], "trace-handover");
  EXPECT_EQ(got[0]["envelope"]["dead_letter"]["lang"], "cpp");
  EXPECT_EQ(got[0]["envelope"]["dead_letter"]["attempts"], 3);
}

// The other way: the C++ App fails attempt 0 and re-publishes attempts 1; the Python App sees
// 1 and 2 and dead-letters 3; C++ reads the DLQ.
TEST_F(ArtemisPythonInterop, RetryHandsOverFromCppToPython) {
  {
    babelqueue::app app(url_, opts(true));
    std::vector<std::int64_t> seen;
    app.handle("urn:babel:interop:fails", [&](babelqueue::message& m) {
      seen.push_back(m.attempts());
      throw std::runtime_error("fails in C++");
    });
    ASSERT_TRUE(app.publish("urn:babel:interop:fails", json{{"n", 8}},
                            {.queue = "", .trace_id = "trace-handover-2", .hdrs = {}}));
    ASSERT_TRUE(app.drain(queue_, 1));
    EXPECT_EQ(seen, (std::vector<std::int64_t>{0}));
  }
  auto py = run_peer(python_, {"fail", peer_url_, queue_, "2"});
  ASSERT_EQ(py.size(), 1u);
  EXPECT_EQ(py[0]["seen"], json::parse("[1,2]"));

  auto dlq = peer_->get(queue_ + ".dlq");
  ASSERT_TRUE(dlq);
  auto env = babelqueue::decode(proton::get<std::string>(dlq->body()));
  ASSERT_TRUE(env);
  EXPECT_EQ(env->attempts(), 3);
  EXPECT_EQ(env->trace_id(), "trace-handover-2");
  ASSERT_TRUE(env->dead_letter());
  EXPECT_EQ(env->dead_letter()->lang, "python");
  EXPECT_EQ(env->dead_letter()->attempts, 3);
  EXPECT_EQ(env->dead_letter()->original_queue, queue_);
  EXPECT_EQ(prop(*dlq, "bq_attempts"), "3");
  EXPECT_EQ(peer_->drain(queue_, 200ms), 0);
}

// Failed deliveries the broker counted (C++ release = modified{delivery-failed}, twice) reach
// the Python handler: its transport reconciles max(body 0, delivery-count 2) = 2, so one more
// failure dead-letters the message with attempts 3.
TEST_F(ArtemisPythonInterop, BrokerCountedFailuresReachPython) {
  auto t = open();
  ASSERT_TRUE(t);
  const std::string body = bqtest::envelope_text(9, "urn:babel:interop:fails", queue_);
  ASSERT_TRUE(t->publish(queue_, body));
  for (std::int64_t i = 0; i < 2; ++i) {
    auto got = t->receive(queue_, 5s);
    ASSERT_TRUE(got && got->has_value());
    EXPECT_EQ((**got).delivery_count, std::optional<std::int64_t>(i));
    ASSERT_TRUE(t->release(**got));
  }
  ASSERT_TRUE(t->close(std::chrono::steady_clock::now() + 5s));

  auto py = run_peer(python_, {"fail", peer_url_, queue_, "1"});
  ASSERT_EQ(py.size(), 1u);
  EXPECT_EQ(py[0]["seen"], json::parse("[2]")) << "the broker's delivery-count, not the body's 0";

  auto dlq = peer_->get(queue_ + ".dlq");
  ASSERT_TRUE(dlq);
  auto env = babelqueue::decode(proton::get<std::string>(dlq->body()));
  ASSERT_TRUE(env);
  EXPECT_EQ(env->attempts(), 3);
  ASSERT_TRUE(env->dead_letter());
  EXPECT_EQ(env->dead_letter()->attempts, 3);
  EXPECT_EQ(env->dead_letter()->lang, "python");
  EXPECT_EQ(dlq->delivery_count(), 0u);
  EXPECT_EQ(peer_->drain(queue_, 200ms), 0);
}

// The Python SDK has no native release on Artemis: its unknown-URN `release` re-publishes the
// body and accepts the original. The copy is back at once (the 30 s release delay is ignored),
// the broker did not count a delivery, and the C++ producer's headers and durability are gone.
TEST_F(ArtemisPythonInterop, PythonReleasesByRepublishing) {
  babelqueue::app app(url_, opts());
  const auto e = babelqueue::make("urn:babel:interop:unknown", json{{"n", 10}},
                                  {.queue = queue_, .trace_id = "trace-release"})
                     .value();
  const std::string bytes = babelqueue::encode(e).value();
  ASSERT_TRUE(app.publish(
      e, {.queue = "",
          .hdrs = {{"traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}}));

  auto py = run_peer(python_, {"release-unknown", peer_url_, queue_});
  ASSERT_EQ(py.size(), 1u);
  EXPECT_EQ(py[0]["processed"], 1);

  auto m = peer_->get(queue_, 2s);
  ASSERT_TRUE(m) << "not delayed: the copy is there at once";
  EXPECT_EQ(proton::get<std::string>(m->body()), bytes) << "the same bytes";
  EXPECT_EQ(m->delivery_count(), 0u) << "a new message, not `released`/`modified`";
  EXPECT_EQ(prop(*m, "traceparent"), "<unset>") << "the out-of-band header is lost";
  EXPECT_FALSE(m->durable());
  EXPECT_EQ(jms_type(*m), "urn:babel:interop:unknown");
  EXPECT_EQ(proton::get<std::string>(m->correlation_id()), "trace-release");
  EXPECT_FALSE(m->message_annotations().exists(
      proton::annotation_key(proton::symbol("x-opt-delivery-time"))));
  EXPECT_EQ(peer_->drain(queue_, 200ms), 0);
}

// A C++ delayed publish (x-opt-delivery-time, 4 s) reaches the Python runtime, polling since
// before the due time (it starts first: an interpreter start takes seconds here), no earlier
// than 4 s after the publish began; byte for byte. (No Python-delayed direction: see the top.)
TEST_F(ArtemisPythonInterop, ACppDelayedPublishReachesPythonAfterItsDelay) {
  auto t = open();
  ASSERT_TRUE(t);
  const std::string body = envelopes(queue_).front().second;
  auto python = std::async(std::launch::async, [&] {
    return run_peer(python_, {"consume-timed", peer_url_, queue_, "1"});
  });
  const auto published_ms = bqtest::interop::wall_ms();
  auto r = t->publish_delayed(queue_, body, {}, 4s);
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_NO_FATAL_FAILURE(
      bqtest::interop::expect_consumed_after_delay(python.get(), published_ms, 4s, body));
  EXPECT_FALSE(peer_->get(queue_, 500ms)) << "consumed once";
}
