// Live interop with the real Python SDK (PyPI `babelqueue[kafka]`, confluent-kafka) over the
// shared Kafka broker (BABELQUEUE_KAFKA_BOOTSTRAP, see tests/kafka/kafka_fixture.hpp). Both
// sides of a test share its consumer group, so a record one SDK committed is not seen again
// by the other. The peer's interpreter comes from $BABELQUEUE_PEER_PYTHON, else
// build/peer-python.txt (scripts/setup-python-peer.sh, whose default extras include
// `kafka`). Without a peer or a broker the tests skip, except under CI=true /
// BABELQUEUE_REQUIRE_SERVICES=1, where that is a failure.
#include "interop/python_peer.hpp"
#include "kafka/kafka_fixture.hpp"

#include <babelqueue/codec.hpp>
#include <babelqueue/runtime/app.hpp>

#include <iostream>
#include <stdexcept>

using namespace std::chrono_literals;
using babelqueue::json;

namespace {

using babelqueue::test::peer_python;
using bqtest::interop::cases;
using bqtest::interop::cases_json;
using bqtest::interop::seen_message;
using bqtest::interop::seen_of;
using bqtest::interop::wall_ms;

const std::string later_urn = "urn:babel:interop:later";

std::vector<json> run_peer(const std::string& python, const std::vector<std::string>& args) {
  return bqtest::interop::run_peer(python, "kafka_peer.py", args);
}

class KafkaPythonInterop : public bqtest::KafkaTest {
 protected:
  void SetUp() override {
    bqtest::KafkaTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    BQ_REQUIRE_PYTHON_PEER(python_);
    babelqueue::kafka::register_transport();
    url_ = bqtest::kafka_url(group_);
    tiers_url_ = bqtest::kafka_url(group_, "&retry_topics=1s");
    peer_url_ = "kafka://" + bqtest::kafka_bootstrap() + "?group=" + group_ + "&tiers=1000";
  }
  babelqueue::app_options opts(bool failing = false) {
    babelqueue::app_options o;
    o.queue = topic_;
    o.poll_timeout = 8s;
    if (failing) {
      o.dead_letter = true;
      o.max_attempts = 3;
    }
    return o;
  }
  /// The peer's URL with the tiers of the delay cases (1 s, 4 s).
  std::string tiers_peer_url() const {
    return "kafka://" + bqtest::kafka_bootstrap() + "?group=" + group_ + "&tiers=1000,4000";
  }
  std::string python_, url_, tiers_url_, peer_url_;
};

}  // namespace

TEST_F(KafkaPythonInterop, CppPublishesPythonConsumes) {
  const std::string inspect_topic = topic_ + "-inspect";
  std::vector<std::string> ids;
  {
    babelqueue::app app(url_, opts());
    for (const auto& q : {topic_, inspect_topic}) {
      for (const auto& c : cases()) {
        babelqueue::publish_options p;
        p.queue = q;
        p.trace_id = c.trace_id;
        p.hdrs = c.hdrs;
        auto id = app.publish(c.urn, c.data, p);
        ASSERT_TRUE(id) << id.error().message;
        if (q == topic_) ids.push_back(*id);
      }
    }
  }
  const auto expected = cases();
  auto seen = run_peer(python_, {"consume", peer_url_, topic_, std::to_string(expected.size())});
  ASSERT_EQ(seen.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE(expected[i].urn);
    EXPECT_EQ(seen[i]["urn"], expected[i].urn);
    EXPECT_EQ(seen[i]["trace_id"], expected[i].trace_id);
    EXPECT_EQ(seen[i]["data"], expected[i].data);
    EXPECT_EQ(seen[i]["attempts"], 0);
    EXPECT_EQ(seen[i]["meta"]["lang"], "cpp");
    EXPECT_EQ(seen[i]["meta"]["id"], ids[i]);
    // The Python SDK's Kafka transport does not surface record headers to handlers
    // (wire-core §9.1); they are on the wire, as the plain consumer below shows.
    EXPECT_TRUE(seen[i]["headers"].empty()) << seen[i]["headers"].dump();
  }

  // A plain confluent-kafka consumer reads the record: value, bq- headers, CreateTime, no key.
  auto recs =
      run_peer(python_, {"inspect", peer_url_, inspect_topic, std::to_string(expected.size())});
  ASSERT_EQ(recs.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE(expected[i].urn);
    const json& r = recs[i];
    ASSERT_TRUE(r.contains("value")) << r.dump();
    auto env = babelqueue::decode(r["value"].get<std::string>());
    ASSERT_TRUE(env);
    EXPECT_TRUE(r["key"].is_null());
    EXPECT_EQ(r["timestamp_type"], 1) << "TIMESTAMP_CREATE_TIME";
    EXPECT_EQ(r["timestamp"], *env->created_at());
    std::map<std::string, std::string> h;
    for (const auto& kv : r["headers"]) h[kv[0].get<std::string>()] = kv[1].get<std::string>();
    EXPECT_EQ(h["bq-job"], expected[i].urn);
    EXPECT_EQ(h["bq-trace-id"], expected[i].trace_id);
    EXPECT_EQ(h["bq-message-id"], std::string(env->id()));
    EXPECT_EQ(h["bq-schema-version"], "1");
    EXPECT_EQ(h["bq-source-lang"], "cpp");
    EXPECT_EQ(h["bq-attempts"], "0");
    for (const auto& [k, v] : expected[i].hdrs) EXPECT_EQ(h[k], v) << k;
    EXPECT_EQ(h.size(), 6 + expected[i].hdrs.size());
  }
}

TEST_F(KafkaPythonInterop, PythonPublishesCppConsumes) {
  auto ids = run_peer(python_, {"publish", peer_url_, topic_, cases_json()});
  ASSERT_EQ(ids.size(), cases().size());
  babelqueue::app app(url_, opts());
  std::vector<seen_message> seen;
  app.handle_unmatched([&](babelqueue::message& m) { seen.push_back(seen_of(m)); });
  const auto expected = cases();
  auto n = app.drain(topic_, expected.size());
  ASSERT_TRUE(n) << n.error().message;
  ASSERT_EQ(seen.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE(expected[i].urn);
    EXPECT_EQ(seen[i].urn, expected[i].urn);
    EXPECT_EQ(seen[i].trace_id, expected[i].trace_id);
    EXPECT_EQ(seen[i].data, expected[i].data);
    EXPECT_EQ(seen[i].attempts, 0);
    // The Python SDK's Kafka producer writes the six bq- headers only, no out-of-band ones
    // (wire-core §9.1); the bq- ones are derived from the body, not surfaced.
    EXPECT_TRUE(seen[i].hdrs.empty());
  }
  EXPECT_NE(seen[1].data_text.find("12345678901234567890"), std::string::npos) << seen[1].data_text;
}

TEST_F(KafkaPythonInterop, CppDeadLetterIsReadableByPython) {
  babelqueue::app app(url_, opts(true));
  std::vector<std::int64_t> attempts_seen;
  app.handle("urn:babel:interop:fails", [&](babelqueue::message& m) {
    attempts_seen.push_back(m.attempts());
    throw std::runtime_error("payment gateway timeout");
  });
  babelqueue::publish_options p;
  p.trace_id = "trace-cpp-fails";
  auto id = app.publish("urn:babel:interop:fails", json{{"n", 1}}, p);
  ASSERT_TRUE(id) << id.error().message;
  ASSERT_TRUE(app.drain(topic_, 3));
  EXPECT_EQ(attempts_seen, (std::vector<std::int64_t>{0, 1, 2}));

  auto got = run_peer(python_, {"read-dlq", peer_url_, topic_ + ".dlq"});
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
  EXPECT_EQ(dl["original_queue"], topic_);
  EXPECT_EQ(dl["lang"], "cpp");
  EXPECT_EQ(dl["error"], "payment gateway timeout");
}

TEST_F(KafkaPythonInterop, PythonDeadLetterIsReadableByCpp) {
  auto py = run_peer(python_, {"failing", peer_url_, topic_});
  ASSERT_EQ(py.size(), 1u);
  EXPECT_EQ(py[0]["seen"], json::parse("[0,1,2]"));
  auto t = open();
  ASSERT_TRUE(t);
  auto m = next(*t, topic_ + ".dlq");
  ASSERT_TRUE(m);
  EXPECT_TRUE(babelqueue::accepts(m->body)) << m->body;
  auto env = babelqueue::decode(m->body);
  ASSERT_TRUE(env) << m->body;
  EXPECT_EQ(env->urn(), "urn:babel:interop:fails");
  EXPECT_EQ(env->trace_id(), "trace-py-fails");
  EXPECT_EQ(env->id(), py[0]["id"].get<std::string>());
  EXPECT_EQ(env->attempts(), 3);
  ASSERT_TRUE(env->dead_letter());
  EXPECT_EQ(env->dead_letter()->reason, "failed");
  EXPECT_EQ(env->dead_letter()->attempts, 3);
  EXPECT_EQ(env->dead_letter()->original_queue, topic_);
  EXPECT_EQ(env->dead_letter()->lang, "python");
  EXPECT_EQ(m->delivery_count, std::optional<std::int64_t>(3))
      << "bq-attempts on Python's DLQ copy";
  EXPECT_EQ(t->reconcile_attempts(env->attempts(), *m), 3);
  ASSERT_TRUE(t->ack(*m));
}

// A message retried by one SDK continues its count in the other: Python fails attempt 0
// and republishes attempts 1; C++ fails 1 and 2 and dead-letters 3; Python reads the DLQ.
TEST_F(KafkaPythonInterop, RetryHandsOverFromPythonToCpp) {
  {
    babelqueue::app app(url_, opts());
    babelqueue::publish_options p;
    p.trace_id = "trace-handover";
    ASSERT_TRUE(app.publish("urn:babel:interop:fails", json{{"n", 7}}, p));
  }
  auto py = run_peer(python_, {"fail-once", peer_url_, topic_});
  ASSERT_EQ(py.size(), 1u);
  EXPECT_EQ(py[0]["seen"], json::parse("[0]"));

  // Python parked attempts 1 on .retry.1; the C++ re-injector brings it back, and the C++
  // runtime retries through the same tier names.
  bqtest::running_reinjector reinjector(tiers_url_, topic_);
  babelqueue::app app(tiers_url_, opts(true));
  std::vector<std::int64_t> seen;
  std::vector<std::string> traces;
  app.handle("urn:babel:interop:fails", [&](babelqueue::message& m) {
    seen.push_back(m.attempts());
    traces.emplace_back(m.trace_id());
    throw std::runtime_error("fails in C++");
  });
  ASSERT_TRUE(app.drain(topic_, 2));
  EXPECT_EQ(seen, (std::vector<std::int64_t>{1, 2}));
  EXPECT_EQ(traces, (std::vector<std::string>{"trace-handover", "trace-handover"}));

  auto got = run_peer(python_, {"read-dlq", peer_url_, topic_ + ".dlq"});
  ASSERT_EQ(got.size(), 1u);
  ASSERT_TRUE(got[0].contains("envelope")) << got[0].dump();
  EXPECT_EQ(got[0]["accepts"], true);
  EXPECT_EQ(got[0]["envelope"]["attempts"], 3);
  EXPECT_EQ(got[0]["envelope"]["trace_id"], "trace-handover");
  auto dlq = raw_->read_all(topic_ + ".dlq", 1);
  ASSERT_EQ(dlq.size(), 1u);
  EXPECT_EQ(dlq[0].header("bq-attempts"), "3");
}

// The tiers are one protocol: a record the C++ runtime parked on .retry.1 is moved back by
// the Python SDK's RetryReinjector, headers and bytes intact.
TEST_F(KafkaPythonInterop, PythonsReinjectorReturnsACppTierRecord) {
  babelqueue::app app(tiers_url_, opts(true));
  std::vector<std::int64_t> seen;
  app.handle("urn:babel:interop:fails", [&](babelqueue::message& m) {
    seen.push_back(m.attempts());
    if (m.attempts() == 0) throw std::runtime_error("once");
  });
  babelqueue::publish_options p;
  p.trace_id = "trace-tiers";
  p.hdrs = {{"traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}};
  ASSERT_TRUE(app.publish("urn:babel:interop:fails", json{{"n", 3}}, p));
  ASSERT_TRUE(app.drain(topic_, 1));
  ASSERT_EQ(raw_->read_all(topic_ + ".retry.1", 1).size(), 1u) << "parked by C++";
  auto py = run_peer(python_, {"reinject", peer_url_, topic_, "6"});
  ASSERT_EQ(py.size(), 1u);
  ASSERT_TRUE(app.drain(topic_, 1));
  EXPECT_EQ(seen, (std::vector<std::int64_t>{0, 1}));
  auto work = raw_->read_all(topic_, 2);
  ASSERT_EQ(work.size(), 2u);
  EXPECT_EQ(work[1].header("traceparent"),
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
  EXPECT_EQ(work[1].header("bq-attempts"), "1");
  EXPECT_FALSE(work[1].header("bq-delay"));
}

// Delayed publish (§6.4) across the SDKs, both ways, on tiers 1 s and 4 s: a 3 s delay parks
// on `.retry.2` in either SDK (the smallest tier that holds it) with `bq-delay` = "3000" (the
// delay asked for, ms) and `bq-original-topic`; the other SDK's re-injector brings it back and
// its runtime handles it no earlier than 3 s after the publish. (Python's re-injector waits the
// tier's own 4 s; ours waits bq-delay from the record's timestamp.)
TEST_F(KafkaPythonInterop, ACppDelayedPublishReachesPythonNoEarlierThanItsDelay) {
  auto t = open("&retry_topics=1s,4s");
  ASSERT_TRUE(t);
  auto env =
      babelqueue::make(later_urn, json{{"n", 9}}, {.queue = topic_, .trace_id = "trace-cpp-later"})
          .value();
  const std::string body = babelqueue::encode(env).value();
  const auto published_ms = wall_ms();
  ASSERT_TRUE(t->publish_delayed(topic_, body, {}, 3s));
  auto parked = raw_->read_all(topic_ + ".retry.2", 1);
  ASSERT_EQ(parked.size(), 1u);
  EXPECT_EQ(parked[0].header("bq-delay"), "3000");
  EXPECT_EQ(parked[0].header("bq-original-topic"), topic_);

  auto seen = run_peer(python_, {"delayed-consume", tiers_peer_url(), topic_, "1"});
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0]["urn"], later_urn);
  EXPECT_EQ(seen[0]["trace_id"], "trace-cpp-later");
  EXPECT_EQ(seen[0]["id"], std::string(env.id()));
  EXPECT_EQ(seen[0]["attempts"], 0);
  EXPECT_EQ(seen[0]["data"], (json{{"n", 9}}));
  const auto waited = seen[0]["seen_ms"].get<std::int64_t>() - published_ms;
  EXPECT_GE(waited, 3000) << "Python handled it " << waited << " ms after the publish";
  std::cout << "[kafka interop] C++ 3 s delay handled by Python after " << waited << " ms\n";
}

TEST_F(KafkaPythonInterop, APythonDelayedPublishReachesCppNoEarlierThanItsDelay) {
  auto py = run_peer(python_, {"publish-delayed", tiers_peer_url(), topic_, "3000"});
  ASSERT_EQ(py.size(), 1u);
  const auto before_ms = py[0]["before_ms"].get<std::int64_t>();
  auto parked = raw_->read_all(topic_ + ".retry.2", 1);
  ASSERT_EQ(parked.size(), 1u) << "Python parks 3 s on the 4 s tier too";
  EXPECT_EQ(parked[0].value, py[0]["body"].get<std::string>());
  EXPECT_EQ(parked[0].header("bq-delay"), "3000");
  EXPECT_EQ(parked[0].header("bq-original-topic"), topic_);
  EXPECT_EQ(parked[0].header("bq-attempts"), "0");

  const std::string tiers = "&retry_topics=1s,4s";
  bqtest::running_reinjector reinjector(bqtest::kafka_url(group_, tiers), topic_);
  auto t = open(tiers);
  ASSERT_TRUE(t);
  auto m = next(*t, topic_, 30s);
  ASSERT_TRUE(m) << "never came back";
  // The record's timestamp is Python's meta.created_at, taken after before_ms: the C++
  // re-injector returns it at that + 3000 or later.
  const auto waited = wall_ms() - before_ms;
  EXPECT_GE(waited, 3000) << "C++ received it " << waited << " ms after Python began the publish";
  std::cout << "[kafka interop] Python 3 s delay received by C++ after " << waited << " ms\n";
  EXPECT_EQ(m->body, py[0]["body"].get<std::string>()) << "byte for byte";
  auto env = babelqueue::decode(m->body);
  ASSERT_TRUE(env) << m->body;
  EXPECT_EQ(env->urn(), later_urn);
  EXPECT_EQ(env->trace_id(), "trace-py-later");
  EXPECT_TRUE(m->hdrs.empty()) << "bq-delay and bq-original-topic stay on the tier";
  EXPECT_EQ(t->reconcile_attempts(env->attempts(), *m), 0);
  ASSERT_TRUE(t->ack(*m));
}
