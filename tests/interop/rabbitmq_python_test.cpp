// Live interop with the real Python SDK (PyPI `babelqueue[amqp]`, pika) over the shared
// RabbitMQ node (BABELQUEUE_RABBITMQ_URL, see tests/rabbitmq/rabbitmq_fixture.hpp).
// The peer's interpreter comes from $BABELQUEUE_PEER_PYTHON, else build/peer-python.txt
// (scripts/setup-python-peer.sh with BABELQUEUE_PEER_EXTRAS including `amqp`). Without a
// peer or a node the tests skip, except under CI=true / BABELQUEUE_REQUIRE_SERVICES=1,
// where that is a failure. Every test uses fresh queue names and deletes them.
#include "interop/python_peer.hpp"
#include "rabbitmq/rabbitmq_fixture.hpp"
#include "support/files.hpp"

#include <babelqueue/codec.hpp>
#include <babelqueue/rabbitmq/rabbitmq_transport.hpp>
#include <babelqueue/runtime/app.hpp>

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <future>
#include <sstream>
#include <stdexcept>

using namespace std::chrono_literals;
using babelqueue::json;

namespace {

using babelqueue::test::peer_python;
using babelqueue::test::read_file;
using babelqueue::test::shell_quote;
using bqtest::interop::cases;
using bqtest::interop::cases_json;
using bqtest::interop::seen_message;
using bqtest::interop::seen_of;

// Runs rabbitmq_peer.py (the Python side of these tests).
std::vector<json> run_peer(const std::string& python, const std::vector<std::string>& args) {
  return bqtest::interop::run_peer(python, "rabbitmq_peer.py", args);
}

class RabbitPythonInterop : public bqtest::RabbitTest {
 protected:
  void SetUp() override {
    bqtest::RabbitTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    BQ_REQUIRE_PYTHON_PEER(python_);
    babelqueue::rabbitmq::register_transport();
    url_ = bqtest::rabbitmq_url();
  }
  void TearDown() override {
    if (raw_ && raw_->ok()) {
      for (const auto& q : extra_) raw_->remove(q);
    }
    bqtest::RabbitTest::TearDown();
  }
  /// Another fresh queue name, deleted (with its DLQ) after the test.
  std::string another_queue() {
    std::string q = bqtest::unique_queue("bq-interop");
    extra_.push_back(q);
    extra_.push_back(q + ".dlq");
    return q;
  }
  babelqueue::app_options failing_opts(const std::string& queue) {
    babelqueue::app_options o;
    o.queue = queue;
    o.dead_letter = true;
    o.max_attempts = 3;
    o.poll_timeout = 300ms;
    return o;
  }

  std::string python_;
  std::string url_;
  std::vector<std::string> extra_;
};

}  // namespace

TEST_F(RabbitPythonInterop, CppPublishesPythonConsumes) {
  const std::string props_queue = another_queue();
  std::vector<std::string> ids;
  {
    babelqueue::app_options o;
    o.queue = queue_;
    babelqueue::app app(url_, o);
    for (const auto& q : {queue_, props_queue}) {
      for (const auto& c : cases()) {
        babelqueue::publish_options p;
        p.queue = q;
        p.trace_id = c.trace_id;
        p.hdrs = c.hdrs;
        auto id = app.publish(c.urn, c.data, p);
        ASSERT_TRUE(id) << id.error().message;
        if (q == queue_) ids.push_back(*id);
      }
    }
  }
  auto expected = cases();

  // The Python runtime's handler sees the same message.
  auto seen = run_peer(python_, {"consume", url_, queue_, std::to_string(expected.size())});
  ASSERT_EQ(seen.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE(expected[i].urn);
    EXPECT_EQ(seen[i]["urn"], expected[i].urn);
    EXPECT_EQ(seen[i]["trace_id"], expected[i].trace_id);
    EXPECT_EQ(seen[i]["data"], expected[i].data);
    EXPECT_EQ(seen[i]["attempts"], 0);
    EXPECT_EQ(seen[i]["meta"]["lang"], "cpp");
    EXPECT_EQ(seen[i]["meta"]["id"], ids[i]);
    for (const auto& [k, v] : expected[i].hdrs) EXPECT_EQ(seen[i]["headers"][k], v);
  }
  EXPECT_EQ(raw_->count(queue_), 0);

  // A plain pika consumer reads the property projection with the peers' types.
  auto props = run_peer(python_, {"inspect", url_, props_queue, std::to_string(expected.size())});
  ASSERT_EQ(props.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE(expected[i].urn);
    const json& p = props[i];
    ASSERT_TRUE(p.contains("body")) << p.dump();
    auto env = babelqueue::decode(p["body"].get<std::string>());
    ASSERT_TRUE(env) << p["body"];
    EXPECT_EQ(env->data().value(), expected[i].data);
    EXPECT_EQ(p["content_type"], "application/json");
    EXPECT_EQ(p["content_encoding"], "utf-8");
    EXPECT_EQ(p["delivery_mode"], 2);
    EXPECT_EQ(p["app_id"], "babelqueue");
    EXPECT_EQ(p["type"], expected[i].urn);
    EXPECT_EQ(p["correlation_id"], expected[i].trace_id);
    EXPECT_EQ(p["message_id"], std::string(env->id()));
    const json& h = p["headers"];
    EXPECT_EQ(h["x-schema-version"]["type"], "int") << h.dump();
    EXPECT_EQ(h["x-schema-version"]["value"], env->schema_version());
    EXPECT_EQ(h["x-attempts"]["type"], "int") << h.dump();
    EXPECT_EQ(h["x-attempts"]["value"], 0);
    EXPECT_EQ(h["x-source-lang"]["type"], "str") << h.dump();
    EXPECT_EQ(h["x-source-lang"]["value"], "cpp");
    for (const auto& [k, v] : expected[i].hdrs) {
      EXPECT_EQ(h[k]["type"], "str") << k;
      EXPECT_EQ(h[k]["value"], v) << k;
    }
    EXPECT_EQ(h.size(), 3 + expected[i].hdrs.size()) << h.dump();
  }
}

TEST_F(RabbitPythonInterop, PythonPublishesCppConsumes) {
  auto ids = run_peer(python_, {"publish", url_, queue_, cases_json()});
  ASSERT_EQ(ids.size(), cases().size());

  babelqueue::app_options o;
  o.queue = queue_;
  o.poll_timeout = 500ms;
  babelqueue::app app(url_, o);
  std::vector<seen_message> seen;
  app.handle_unmatched([&](babelqueue::message& m) { seen.push_back(seen_of(m)); });
  auto n = app.drain(queue_);
  ASSERT_TRUE(n) << n.error().message;
  auto expected = cases();
  ASSERT_EQ(seen.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE(expected[i].urn);
    EXPECT_EQ(seen[i].urn, expected[i].urn);
    EXPECT_EQ(seen[i].trace_id, expected[i].trace_id);
    EXPECT_EQ(seen[i].data, expected[i].data);
    EXPECT_EQ(seen[i].attempts, 0);
    for (const auto& [k, v] : expected[i].hdrs) EXPECT_EQ(seen[i].hdrs[k], v) << k;
    // The contract x-* headers are derived from the body, not surfaced as headers.
    EXPECT_EQ(seen[i].hdrs.size(), expected[i].hdrs.size());
  }
  // Exact numbers, not doubles: the 20-digit integer's text survives.
  EXPECT_NE(seen[1].data_text.find("12345678901234567890"), std::string::npos) << seen[1].data_text;
  EXPECT_NE(seen[1].data_text.find("-9223372036854775808"), std::string::npos);
  EXPECT_EQ(raw_->count(queue_), 0) << "every message acked";
}

TEST_F(RabbitPythonInterop, CppDeadLetterIsReadableByPython) {
  babelqueue::app app(url_, failing_opts(queue_));
  std::vector<std::int64_t> attempts_seen;
  app.handle("urn:babel:interop:fails", [&](babelqueue::message& m) {
    attempts_seen.push_back(m.attempts());
    throw std::runtime_error("payment gateway timeout");
  });
  babelqueue::publish_options p;
  p.trace_id = "trace-cpp-fails";
  auto id = app.publish("urn:babel:interop:fails", json{{"n", 1}}, p);
  ASSERT_TRUE(id) << id.error().message;
  ASSERT_TRUE(app.drain(queue_));
  EXPECT_EQ(attempts_seen, (std::vector<std::int64_t>{0, 1, 2}));

  auto got = run_peer(python_, {"read-dlq", url_, queue_ + ".dlq"});
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
  EXPECT_EQ(got[0]["headers"]["x-attempts"], "3");  // pika's table, stringified by the SDK
  EXPECT_EQ(raw_->count(queue_ + ".dlq"), 0) << "Python acked it";
}

TEST_F(RabbitPythonInterop, PythonDeadLetterIsReadableByCpp) {
  auto py = run_peer(python_, {"failing", url_, queue_});
  ASSERT_EQ(py.size(), 1u);
  EXPECT_EQ(py[0]["seen"], json::parse("[0,1,2]"));

  auto t = open();
  ASSERT_TRUE(t);
  auto got = t->receive(queue_ + ".dlq", 2s);
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
  EXPECT_EQ(m.delivery_count, std::optional<std::int64_t>(3)) << "x-attempts read as an integer";
  EXPECT_EQ(t->reconcile_attempts(env->attempts(), m), 3);
  EXPECT_TRUE(m.hdrs.empty()) << "only contract headers on Python's DLQ copy";
  ASSERT_TRUE(t->ack(m));
  EXPECT_EQ(raw_->count(queue_), 0);
}

TEST_F(RabbitPythonInterop, RetryCountsMatchPython) {
  const std::string py_queue = another_queue();
  auto py = run_peer(python_, {"failing", url_, py_queue});
  ASSERT_EQ(py.size(), 1u);

  babelqueue::app app(url_, failing_opts(queue_));
  std::vector<std::int64_t> seen;
  app.handle("urn:babel:interop:fails", [&](babelqueue::message& m) {
    seen.push_back(m.attempts());
    throw std::runtime_error("always fails");
  });
  ASSERT_TRUE(app.publish("urn:babel:interop:fails", json{{"n", 1}}));
  ASSERT_TRUE(app.drain(queue_));

  json cpp_seen = json::array();
  for (auto a : seen) cpp_seen.push_back(a);
  EXPECT_EQ(cpp_seen, py[0]["seen"]);
  EXPECT_EQ(cpp_seen, json::parse("[0,1,2]"));

  // Both DLQ copies: attempts 3 in the body, the dead_letter block and x-attempts.
  for (const auto& q : {py_queue + ".dlq", queue_ + ".dlq"}) {
    SCOPED_TRACE(q);
    auto m = raw_->get(q);
    ASSERT_TRUE(m);
    auto env = babelqueue::decode(m->body);
    ASSERT_TRUE(env) << m->body;
    EXPECT_EQ(env->attempts(), 3);
    ASSERT_TRUE(env->dead_letter());
    EXPECT_EQ(env->dead_letter()->attempts, 3);
    EXPECT_EQ(env->dead_letter()->reason, "failed");
    ASSERT_EQ(m->headers.count("x-attempts"), 1u);
    const amqp_field_value_t& v = m->headers["x-attempts"];
    std::int64_t x = v.kind == AMQP_FIELD_KIND_I32   ? v.value.i32
                     : v.kind == AMQP_FIELD_KIND_I64 ? v.value.i64
                     : v.kind == AMQP_FIELD_KIND_I8  ? v.value.i8
                                                     : -1;
    EXPECT_EQ(x, 3) << "kind " << static_cast<int>(v.kind);
    EXPECT_FALSE(raw_->get(q)) << "one dead letter only";
  }
}

// A message retried by one SDK continues its count in the other: Python fails attempt 0
// and republishes attempts 1; C++ fails 1 and 2 and dead-letters 3; Python reads the DLQ.
TEST_F(RabbitPythonInterop, RetryHandsOverFromPythonToCpp) {
  {
    babelqueue::app_options o;
    o.queue = queue_;
    babelqueue::app app(url_, o);
    babelqueue::publish_options p;
    p.trace_id = "trace-handover";
    ASSERT_TRUE(app.publish("urn:babel:interop:fails", json{{"n", 7}}, p));
  }
  auto py = run_peer(python_, {"fail-once", url_, queue_});
  ASSERT_EQ(py.size(), 1u);
  EXPECT_EQ(py[0]["seen"], json::parse("[0]"));

  babelqueue::app app(url_, failing_opts(queue_));
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

  auto got = run_peer(python_, {"read-dlq", url_, queue_ + ".dlq"});
  ASSERT_EQ(got.size(), 1u);
  ASSERT_TRUE(got[0].contains("envelope")) << got[0].dump();
  EXPECT_EQ(got[0]["accepts"], true);
  EXPECT_EQ(got[0]["envelope"]["attempts"], 3);
  EXPECT_EQ(got[0]["envelope"]["trace_id"], "trace-handover");
  EXPECT_EQ(got[0]["envelope"]["dead_letter"]["lang"], "cpp");
  EXPECT_EQ(got[0]["envelope"]["dead_letter"]["attempts"], 3);
  EXPECT_EQ(got[0]["headers"]["x-attempts"], "3");
}

// A C++ delayed publish (this SDK's wait queue, dead-lettered onto the queue when due) reaches
// the Python runtime after its delay, byte for byte, and not before: Python polls the queue
// from before the due time. The Python SDK 1.24 has no RabbitMQ delay of its own, so this is
// the one direction.
TEST_F(RabbitPythonInterop, ACppDelayedPublishReachesPythonAfterItsDelay) {
  auto t = open();
  ASSERT_TRUE(t);
  extra_.push_back(babelqueue::rabbitmq::wait_queue_name(queue_, 4s));
  const std::string body = bqtest::envelope_text(1, "urn:babel:interop:unicode", queue_);
  auto python = std::async(std::launch::async, [&] {
    return run_peer(python_, {"consume-timed", url_, queue_, "1"});
  });
  const auto published_ms = bqtest::interop::wall_ms();
  auto r = t->publish_delayed(queue_, body, {}, 4s);
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_NO_FATAL_FAILURE(
      bqtest::interop::expect_consumed_after_delay(python.get(), published_ms, 4s, body));
  EXPECT_EQ(raw_->count(queue_), 0) << "consumed once";
}
