// Live interop with the real Python SDK (PyPI `babelqueue[sqs]`, its SqsTransport over boto3)
// on the shared ElasticMQ server (BABELQUEUE_SQS_URL, see tests/sqs/sqs_fixture.hpp). Both SDKs
// read the same URL, `sqs://us-east-1?endpoint=http://127.0.0.1:P`. The Python SDK never
// creates queues, so every queue (dead-letter queues included) is created here first. The
// peer's interpreter comes from $BABELQUEUE_PEER_PYTHON, else build/peer-python.txt
// (scripts/setup-python-peer.sh with the `sqs` extra). Without a peer or a server the tests
// skip, except under CI=true / BABELQUEUE_REQUIRE_SERVICES=1, where that is a failure.
//
// What the Python SDK 1.24.0 does on SQS, as these tests pin it (facts for the docs):
//  - The same body bytes and the same MessageAttributes as the C++ projection: the six bq-*
//    attributes (Number for bq-schema-version and bq-created-at) plus out-of-band headers as
//    String attributes. Its handlers see EVERY String/Number attribute as a header, the bq-*
//    ones included; the C++ App surfaces only the out-of-band ones.
//  - It retries by ChangeMessageVisibility (the same message: same body, attempts 0 in it,
//    attributes kept, ApproximateReceiveCount growing); the C++ App retries by re-publishing a
//    copy with attempts + 1 and deleting the original (a new message, receive count 1). Both
//    reconcile max(body, count - 1), so a message retried first by C++ and then by Python sees
//    attempts 1 twice in Python (body 1, count 1; then body 1, count 2 - 1): one extra handler run.
//  - Its dead-letter copy goes to `<queue>-dlq` (`<q>-dlq.fifo` for `<q>.fifo`; a suffix is
//    placed before `.fifo`) as a plain SendMessage: the out-of-band headers of the failed message
//    are dropped. The C++ App forwards them on retries and to the DLQ.
//  - FIFO needs `fifo=1` in its URL (a `.fifo` queue name alone does not make it send
//    MessageGroupId); then MessageGroupId = the queue name, MessageDeduplicationId = meta.id,
//    as in C++.
//  - Its delayed publish: `DelaySeconds` alone (no attribute), refused on FIFO and over 900 s.
//  - URL keys differ: Python reads `visibility_timeout` and `content_dedup` where C++ reads
//    `visibility` and `content_based_dedup`; Python ignores keys it does not know, C++ refuses
//    them.
#include "interop/sqs_python_fixture.hpp"

#include <chrono>
#include <future>
#include <thread>

using namespace std::chrono_literals;
using babelqueue::json;

namespace {

using namespace bqtest::sqs_interop;

}  // namespace

// C++ publishes the payload set twice, through the App and through the bare transport; the
// Python runtime handles each message natively: same URN, trace, data, attempts 0, meta.id,
// the body byte for byte, and the headers — the out-of-band ones (traceparent,
// bq-replay-bypass) and, as the Python SqsTransport surfaces every attribute, the bq-* ones.
TEST_F(SqsPythonInterop, CppPublishesPythonConsumes) {
  const std::string t_queue = queue_ + "-t";
  peer_->create(t_queue);
  const auto expected = cases();
  const auto by_app = envelopes(queue_);
  const auto by_transport = envelopes(t_queue);
  {
    babelqueue::app app(url_, opts());
    for (std::size_t i = 0; i < expected.size(); ++i) {
      auto id = app.publish(by_app[i].first, {.queue = "", .hdrs = expected[i].hdrs});
      ASSERT_TRUE(id) << id.error().message;
    }
    auto t = open();
    ASSERT_TRUE(t);
    for (std::size_t i = 0; i < expected.size(); ++i) {
      auto r = t->publish(t_queue, by_transport[i].second, expected[i].hdrs);
      ASSERT_TRUE(r) << r.error().message;
    }
  }

  auto seen =
      of(run_peer({"consume", peer_url_, queue_ + "," + t_queue, std::to_string(expected.size())}),
         "consume");
  ASSERT_EQ(seen.size(), 2 * expected.size());
  // A standard queue does not promise order: match by queue and URN.
  std::map<std::pair<std::string, std::string>, json> got;
  for (const auto& s : seen) got[{s["queue"].get<std::string>(), s["urn"].get<std::string>()}] = s;
  for (const auto& [queue, sent] :
       {std::pair{queue_, &by_app}, std::pair{t_queue, &by_transport}}) {
    for (std::size_t i = 0; i < expected.size(); ++i) {
      SCOPED_TRACE(queue + " " + expected[i].urn);
      const auto key = std::pair(queue, expected[i].urn);
      ASSERT_TRUE(got.count(key));
      const json& s = got[key];
      const auto& env = (*sent)[i].first;
      EXPECT_EQ(s["trace_id"], expected[i].trace_id);
      EXPECT_EQ(s["data"], expected[i].data);
      EXPECT_EQ(s["attempts"], 0);
      EXPECT_EQ(s["meta"]["lang"], "cpp");
      EXPECT_EQ(s["meta"]["id"], std::string(env.id()));
      EXPECT_EQ(s["raw"], (*sent)[i].second) << "the body byte for byte";
      std::map<std::string, std::string> want = {
          {"bq-job", expected[i].urn},
          {"bq-trace-id", expected[i].trace_id},
          {"bq-message-id", std::string(env.id())},
          {"bq-schema-version", "1"},
          {"bq-source-lang", "cpp"},
          {"bq-created-at", std::to_string(*env.created_at())}};
      for (const auto& [k, v] : expected[i].hdrs) want[k] = v;
      EXPECT_EQ(s["headers"].get<string_map>(), want) << "every attribute is a header in Python";
    }
  }
  const json& with_headers = got[std::pair(queue_, std::string("urn:babel:interop:headers"))];
  EXPECT_EQ(with_headers["headers"]["traceparent"], traceparent);
  EXPECT_EQ(left_in(queue_), 0) << "every message deleted";
  EXPECT_EQ(left_in(t_queue), 0);
}

// A bare boto3 client reads the C++ projection (App and transport publishes alike): the body
// byte for byte (MD5OfBody too), bq-job / bq-trace-id / bq-message-id / bq-source-lang as
// String, bq-schema-version / bq-created-at as Number, the out-of-band headers as String, and
// nothing else.
TEST_F(SqsPythonInterop, Boto3ReadsTheCppMessageAttributes) {
  const auto expected = cases();
  const auto sent = envelopes(queue_);
  {
    babelqueue::app app(url_, opts());
    for (std::size_t i = 0; i < expected.size(); ++i) {
      ASSERT_TRUE(app.publish(sent[i].first, {.queue = "", .hdrs = expected[i].hdrs}));
    }
  }
  auto got =
      of(run_peer({"inspect", peer_url_, queue_, std::to_string(expected.size())}), "inspect");
  ASSERT_EQ(got.size(), expected.size());
  std::map<std::string, json> by_id;
  for (const auto& m : got) {
    ASSERT_TRUE(m.contains("body")) << m.dump();
    by_id[std::string(babelqueue::decode(m["body"].get<std::string>()).value().id())] = m;
  }
  for (std::size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE(expected[i].urn);
    const auto& env = sent[i].first;
    ASSERT_TRUE(by_id.count(std::string(env.id())));
    const json& m = by_id[std::string(env.id())];
    EXPECT_EQ(m["body"], sent[i].second) << "byte for byte";
    EXPECT_EQ(m["md5_of_body"], babelqueue::sqs::detail::md5_hex(sent[i].second));
    EXPECT_EQ(m["attributes"]["ApproximateReceiveCount"], "1");
    std::map<std::string, std::string> want = {
        {"bq-job", "String:" + expected[i].urn},
        {"bq-trace-id", "String:" + expected[i].trace_id},
        {"bq-message-id", "String:" + std::string(env.id())},
        {"bq-schema-version", "Number:1"},
        {"bq-source-lang", "String:cpp"},
        {"bq-created-at", "Number:" + std::to_string(*env.created_at())}};
    for (const auto& [k, v] : expected[i].hdrs) want[k] = "String:" + v;
    EXPECT_EQ(typed_attributes(m["message_attributes"]), want);
  }
  EXPECT_EQ(left_in(queue_), 0);
}

// Python publishes the payload set; the C++ App handles each message (URN, trace, data exactly,
// attempts 0, the out-of-band headers and only those). A bare C++ client reads the Python
// projection from a second queue: the same attributes C++ would have sent for that body.
TEST_F(SqsPythonInterop, PythonPublishesCppConsumes) {
  const std::string props_queue = queue_ + "-props";
  peer_->create(props_queue);
  const auto expected = cases();
  auto ids =
      of(run_peer({"publish", peer_url_, queue_ + "," + props_queue, cases_json()}), "publish");
  ASSERT_EQ(ids.size(), 2 * expected.size());

  auto seen = consume(queue_, expected.size());
  ASSERT_EQ(seen.size(), expected.size());
  std::map<std::string, seen_message> by_urn;
  for (auto& s : seen) by_urn[s.urn] = s;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE(expected[i].urn);
    ASSERT_TRUE(by_urn.count(expected[i].urn));
    const auto& s = by_urn[expected[i].urn];
    EXPECT_EQ(s.trace_id, expected[i].trace_id);
    EXPECT_EQ(s.data, expected[i].data);
    EXPECT_EQ(s.attempts, 0);
    EXPECT_EQ(s.hdrs, expected[i].hdrs) << "the out-of-band attributes, not the bq-* ones";
    auto env = babelqueue::decode(s.raw);
    ASSERT_TRUE(env);
    EXPECT_EQ(env->lang(), "python");
    EXPECT_EQ(env->id(), ids[i]["id"].get<std::string>());
  }
  // Exact numbers, not doubles: the 20-digit integer's text survives.
  const auto& big = by_urn["urn:babel:interop:big"].data_text;
  EXPECT_NE(big.find("12345678901234567890"), std::string::npos) << big;
  EXPECT_NE(big.find("-9223372036854775808"), std::string::npos) << big;
  EXPECT_EQ(left_in(queue_), 0) << "every message deleted";

  for (std::size_t i = 0; i < expected.size(); ++i) {
    auto m = peer_->get(props_queue, 5);
    ASSERT_TRUE(m);
    auto env = babelqueue::decode(m->body);
    ASSERT_TRUE(env);
    SCOPED_TRACE(std::string(env->urn()));
    const auto c = std::find_if(expected.begin(), expected.end(),
                                [&](const auto& e) { return e.urn == env->urn(); });
    ASSERT_NE(c, expected.end());
    EXPECT_EQ(env->lang(), "python");
    EXPECT_EQ(m->receive_count, std::optional<std::string>("1"));
    EXPECT_EQ(m->md5_of_body, babelqueue::sqs::detail::md5_hex(m->body));
    const auto attributes = typed_attributes(*m);
    EXPECT_EQ(attributes, typed_attributes(bs::project(m->body, c->hdrs)))
        << "the projection C++ makes of the same body and headers";
    EXPECT_EQ(attributes.at("bq-schema-version"), "Number:1");
    EXPECT_EQ(attributes.at("bq-created-at"), "Number:" + std::to_string(*env->created_at()));
    EXPECT_EQ(attributes.at("bq-source-lang"), "String:python");
    EXPECT_EQ(attributes.at("bq-trace-id"), "String:" + c->trace_id);
  }
  EXPECT_EQ(left_in(props_queue), 0);
}

// The C++ App fails a message until its DLQ (attempts 0, 1, 2); the Python SDK reads the SQS
// queue `<queue>-dlq` (where the C++ transport maps `<queue>.dlq`): attempts 3, the
// dead_letter block, and the traceparent the C++ App forwarded.
TEST_F(SqsPythonInterop, CppDeadLetterIsReadableByPython) {
  babelqueue::app app(url_, opts(true));
  std::vector<std::int64_t> attempts_seen;
  app.handle("urn:babel:interop:fails", [&](babelqueue::message& m) {
    attempts_seen.push_back(m.attempts());
    throw std::runtime_error("payment gateway timeout");
  });
  auto id = app.publish(
      "urn:babel:interop:fails", json{{"n", 1}},
      {.queue = "", .trace_id = "trace-cpp-fails", .hdrs = {{"traceparent", traceparent}}});
  ASSERT_TRUE(id) << id.error().message;
  ASSERT_TRUE(app.drain(queue_, 3));
  EXPECT_EQ(attempts_seen, (std::vector<std::int64_t>{0, 1, 2}));
  auto t = open();
  ASSERT_TRUE(t);
  EXPECT_EQ(t->native_name(queue_ + ".dlq"), queue_ + "-dlq");

  auto got = of(run_peer({"read-dlq", peer_url_, queue_ + "-dlq"}), "read-dlq");
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
  EXPECT_EQ(got[0]["headers"]["traceparent"], traceparent) << "forwarded by the C++ App";
  EXPECT_EQ(got[0]["headers"]["bq-source-lang"], "cpp");
  EXPECT_EQ(got[0]["headers"]["bq-trace-id"], "trace-cpp-fails");
  EXPECT_EQ(left_in(queue_ + "-dlq"), 0) << "Python deleted it";
  EXPECT_EQ(left_in(queue_), 0);
}

// The Python App fails a message until its DLQ (attempts 0, 1, 2: ChangeMessageVisibility
// releases) and writes `<queue>-dlq`; C++ consumes it as `<queue>.dlq` through its transport:
// the same body with attempts 3 and the dead_letter block. The Python dead-letter write is a
// plain SendMessage: the traceparent the Python producer sent is gone.
TEST_F(SqsPythonInterop, PythonDeadLetterIsReadableByCpp) {
  peer_->create(queue_ + "-dlq");
  auto py = of(run_peer({"failing", peer_url_, queue_}), "failing");
  ASSERT_EQ(py.size(), 1u);
  EXPECT_EQ(py[0]["seen"], json::parse("[0,1,2]"));
  EXPECT_EQ(left_in(queue_), 0) << "the original was deleted";

  auto t = open();
  ASSERT_TRUE(t);
  auto got = t->receive(queue_ + ".dlq", 20s);
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
  EXPECT_EQ(m.delivery_count, std::optional<std::int64_t>(1)) << "a fresh message";
  EXPECT_EQ(t->reconcile_attempts(env->attempts(), m), 3);
  EXPECT_TRUE(m.hdrs.empty()) << "the Python DLQ write drops the out-of-band headers";
  // Put it back (ChangeMessageVisibility 0) and read it raw: the Python projection.
  ASSERT_TRUE(t->release(m));
  auto raw = peer_->get(queue_ + "-dlq", 5);
  ASSERT_TRUE(raw);
  EXPECT_EQ(raw->body, m.body);
  EXPECT_EQ(raw->receive_count, std::optional<std::string>("2")) << "released, not re-sent";
  EXPECT_EQ(bqtest::attribute_of(*raw, "bq-source-lang"), "python");
  EXPECT_EQ(bqtest::attribute_of(*raw, "bq-job"), "urn:babel:interop:fails");
  EXPECT_EQ(bqtest::attribute_of(*raw, "traceparent"), "<unset>");
  EXPECT_EQ(typed_attributes(*raw), typed_attributes(bs::project(raw->body)));
}

// A message the Python SDK released twice (its handler failed attempts 0 and 1; each retry a
// ChangeMessageVisibility, never a re-send) reaches the C++ App as the SAME message: the body
// C++ published (attempts 0 in it), its attributes, ApproximateReceiveCount 3 — reconciled to
// attempts max(0, 3 - 1) = 2. One more failure dead-letters it with attempts 3, which Python
// reads from `<queue>-dlq`.
TEST_F(SqsPythonInterop, PythonReleasesAreCountedByCpp) {
  const std::string body = bqtest::envelope_text(7, "urn:babel:interop:fails", queue_);
  {
    auto t = open();
    ASSERT_TRUE(t);
    ASSERT_TRUE(t->publish(queue_, body, {{"traceparent", traceparent}}));
  }
  auto py = of(run_peer({"fail", peer_url_, queue_, "2"}), "fail");
  ASSERT_EQ(py.size(), 1u);
  EXPECT_EQ(py[0]["seen"], json::parse("[0,1]"));
  EXPECT_EQ(py[0]["native"], json::parse("[0,1]")) << "ApproximateReceiveCount - 1";

  babelqueue::app app(url_, opts(true));
  std::vector<std::int64_t> seen;
  std::optional<std::int64_t> count;
  std::string raw;
  babelqueue::headers hdrs;
  app.handle("urn:babel:interop:fails", [&](babelqueue::message& m) {
    seen.push_back(m.attempts());
    count = m.delivery().delivery_count;
    raw = std::string(m.raw());
    hdrs = m.hdrs();
    throw std::runtime_error("fails in C++");
  });
  ASSERT_TRUE(app.drain(queue_, 1));
  EXPECT_EQ(seen, (std::vector<std::int64_t>{2}));
  EXPECT_EQ(count, std::optional<std::int64_t>(3));
  EXPECT_EQ(raw, body) << "the same message, not a Python re-publish";
  EXPECT_EQ(hdrs, (babelqueue::headers{{"traceparent", traceparent}}));

  auto got = of(run_peer({"read-dlq", peer_url_, queue_ + "-dlq"}), "read-dlq");
  ASSERT_EQ(got.size(), 1u);
  ASSERT_TRUE(got[0].contains("envelope")) << got[0].dump();
  EXPECT_EQ(got[0]["envelope"]["attempts"], 3);
  EXPECT_EQ(got[0]["envelope"]["dead_letter"]["attempts"], 3);
  EXPECT_EQ(got[0]["envelope"]["dead_letter"]["lang"], "cpp");
  EXPECT_EQ(got[0]["envelope"]["dead_letter"]["error"], "fails in C++");
  EXPECT_EQ(got[0]["headers"]["traceparent"], traceparent);
  EXPECT_EQ(left_in(queue_), 0);
}

// The other way: the C++ transport releases a message twice (ChangeMessageVisibility 0); the
// Python runtime's next delivery reads ApproximateReceiveCount 3 as attempts 2, so one failure
// dead-letters it to `<queue>-dlq` with attempts 3; C++ reads it as `<queue>.dlq`.
TEST_F(SqsPythonInterop, CppReleasesAreCountedByPython) {
  peer_->create(queue_ + "-dlq");
  auto t = open();
  ASSERT_TRUE(t);
  ASSERT_TRUE(t->publish(queue_, bqtest::envelope_text(9, "urn:babel:interop:fails", queue_)));
  for (std::int64_t i = 1; i <= 2; ++i) {
    auto got = t->receive(queue_, 20s);
    ASSERT_TRUE(got && got->has_value());
    EXPECT_EQ((**got).delivery_count, std::optional<std::int64_t>(i));
    ASSERT_TRUE(t->release(**got));
  }
  ASSERT_TRUE(t->close(std::chrono::steady_clock::now() + 5s));

  auto py = of(run_peer({"fail", peer_url_, queue_, "1"}), "fail");
  ASSERT_EQ(py.size(), 1u);
  EXPECT_EQ(py[0]["seen"], json::parse("[2]")) << "the receive count, not the body's 0";

  auto r = open();
  ASSERT_TRUE(r);
  auto got = r->receive(queue_ + ".dlq", 20s);
  ASSERT_TRUE(got && got->has_value());
  auto env = babelqueue::decode((**got).body);
  ASSERT_TRUE(env);
  EXPECT_EQ(env->attempts(), 3);
  ASSERT_TRUE(env->dead_letter());
  EXPECT_EQ(env->dead_letter()->attempts, 3);
  EXPECT_EQ(env->dead_letter()->lang, "python");
  ASSERT_TRUE(r->ack(**got));
  EXPECT_EQ(left_in(queue_), 0);
}

// A retry handed from C++ to Python: the C++ App fails attempt 0 and re-publishes a copy with
// attempts 1 (a new message, receive count 1); Python's failures release it natively, and
// max(body, count - 1) reads 1 again on its second delivery (body 1, count 2): the Python
// handler sees 1, 1, 2, then dead-letters attempts 3. C++ reads the DLQ.
TEST_F(SqsPythonInterop, RetryHandsOverFromCppToPython) {
  peer_->create(queue_ + "-dlq");
  {
    babelqueue::app app(url_, opts(true));
    std::vector<std::int64_t> seen;
    app.handle("urn:babel:interop:fails", [&](babelqueue::message& m) {
      seen.push_back(m.attempts());
      throw std::runtime_error("fails in C++");
    });
    ASSERT_TRUE(app.publish("urn:babel:interop:fails", json{{"n", 8}},
                            {.queue = "", .trace_id = "trace-handover", .hdrs = {}}));
    ASSERT_TRUE(app.drain(queue_, 1));
    EXPECT_EQ(seen, (std::vector<std::int64_t>{0}));
  }
  auto py = of(run_peer({"fail", peer_url_, queue_, "3"}), "fail");
  ASSERT_EQ(py.size(), 1u);
  EXPECT_EQ(py[0]["seen"], json::parse("[1,1,2]"));
  EXPECT_EQ(py[0]["native"], json::parse("[0,1,2]"))
      << "the C++ retry was a new message: its receive count started at 1";

  auto t = open();
  ASSERT_TRUE(t);
  auto got = t->receive(queue_ + ".dlq", 20s);
  ASSERT_TRUE(got && got->has_value());
  auto env = babelqueue::decode((**got).body);
  ASSERT_TRUE(env);
  EXPECT_EQ(env->attempts(), 3);
  EXPECT_EQ(env->trace_id(), "trace-handover");
  ASSERT_TRUE(env->dead_letter());
  EXPECT_EQ(env->dead_letter()->lang, "python");
  EXPECT_EQ(env->dead_letter()->attempts, 3);
  EXPECT_EQ(env->dead_letter()->original_queue, queue_);
  ASSERT_TRUE(t->ack(**got));
  EXPECT_EQ(left_in(queue_), 0);
}

// FIFO, C++ to Python: six messages the C++ App publishes to `<queue>.fifo` arrive in order;
// the Python runtime handles the first three, a bare boto3 client reads the rest with their
// FIFO ids: MessageGroupId = the queue name, MessageDeduplicationId = meta.id.
TEST_F(SqsPythonInterop, FifoOrderCppToPython) {
  const std::string fq = queue_ + ".fifo";
  peer_->create(fq);
  std::vector<std::string> ids;
  {
    babelqueue::app app(url_, opts(false, fq));
    for (int i = 0; i < 6; ++i) {
      auto id =
          app.publish("urn:babel:interop:seq", json{{"n", i}},
                      {.queue = "", .trace_id = "trace-seq-" + std::to_string(i), .hdrs = {}});
      ASSERT_TRUE(id) << id.error().message;
      ids.push_back(*id);
    }
  }
  const std::string fifo_url = peer_url_ + "&fifo=1";
  auto lines = run_peer({"consume", fifo_url, fq, "3", "--then", "inspect", fifo_url, fq, "3"});
  auto seen = of(lines, "consume");
  auto raw = of(lines, "inspect");
  ASSERT_EQ(seen.size(), 3u);
  ASSERT_EQ(raw.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(seen[i]["data"]["n"], i) << "in order";
    EXPECT_EQ(seen[i]["meta"]["id"], ids[i]);
    EXPECT_EQ(seen[i]["trace_id"], "trace-seq-" + std::to_string(i));
  }
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(raw[i].contains("body")) << raw[i].dump();
    auto env = babelqueue::decode(raw[i]["body"].get<std::string>());
    ASSERT_TRUE(env);
    EXPECT_EQ(env->id(), ids[3 + i]) << "in order";
    EXPECT_EQ(raw[i]["attributes"]["MessageGroupId"], fq);
    EXPECT_EQ(raw[i]["attributes"]["MessageDeduplicationId"], ids[3 + i]);
  }
  EXPECT_EQ(left_in(fq), 0);
}

// FIFO, Python to C++: six messages the Python SDK (`fifo=1`) publishes arrive at the C++ App
// in order; its FIFO ids follow the same rule as the C++ ones (group = queue, dedup = meta.id);
// without `fifo=1` its publish to a `.fifo` queue is refused (no MessageGroupId).
TEST_F(SqsPythonInterop, FifoOrderPythonToCpp) {
  const std::string fq = queue_ + ".fifo";
  const std::string fq2 = queue_ + "-ids.fifo";
  peer_->create(fq);
  peer_->create(fq2);
  const std::string fifo_url = peer_url_ + "&fifo=1";
  auto lines =
      run_peer({"publish-seq", fifo_url, fq, "6", "--then", "publish-seq", fifo_url, fq2, "2",
                "--then", "inspect", fifo_url, fq2, "2", "--then", "try-publish", peer_url_, fq2});
  auto ids = of(lines, "publish-seq");
  auto raw = of(lines, "inspect");
  ASSERT_EQ(ids.size(), 8u);
  ASSERT_EQ(raw.size(), 2u);
  // Without `fifo=1` the Python SDK sends no MessageGroupId, even to a `.fifo` queue.
  auto plain = of(lines, "try-publish");
  ASSERT_EQ(plain.size(), 1u);
  EXPECT_EQ(plain[0]["code"], "MissingParameter") << plain[0].dump();
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(raw[i]["attributes"]["MessageGroupId"], fq2);
    EXPECT_EQ(raw[i]["attributes"]["MessageDeduplicationId"], ids[6 + i]["id"]);
  }

  auto seen = consume(fq, 6);
  ASSERT_EQ(seen.size(), 6u);
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(seen[i].data, (json{{"n", i}})) << "in order";
    EXPECT_EQ(babelqueue::decode(seen[i].raw)->id(), ids[i]["id"].get<std::string>());
    EXPECT_EQ(seen[i].trace_id, "trace-seq-" + std::to_string(i));
  }
  EXPECT_EQ(left_in(fq), 0) << "all six deleted";
  EXPECT_EQ(left_in(fq2), 0);
}

// Both SDKs name a queue's dead-letter queue alike (`orders-dlq`, `jobs-dlq.fifo`, a custom
// suffix before `.fifo`), and read the URL keys they share alike; the keys only one of them
// knows are where they part (see the file comment).
TEST_F(SqsPythonInterop, DeadLetterNamesAndUrlKeysAgree) {
  const std::string shared = "&fifo=1&group_id=g1&wait_time=5&prefix=http://h/000000000000";
  auto lines =
      run_peer({"dlq-names", "orders,jobs.fifo", "-", "--then", "dlq-names", "orders,jobs.fifo",
                "-x", "--then", "url-options", peer_url_ + shared, "--then", "url-options",
                peer_url_ + "&visibility=7&content_based_dedup=true", "--then", "url-options",
                peer_url_ + "&visibility_timeout=7&content_dedup=1"});
  auto names = of(lines, "dlq-names");
  auto parsed = of(lines, "url-options");
  ASSERT_EQ(names.size(), 4u);
  ASSERT_EQ(parsed.size(), 3u);

  auto plain = open();
  auto suffixed = open("dlq_suffix=-x");
  ASSERT_TRUE(plain && suffixed);
  for (std::size_t i = 0; i < 4; ++i) {
    const auto& t = i < 2 ? plain : suffixed;
    const auto q = names[i]["queue"].get<std::string>();
    EXPECT_EQ(names[i]["dlq"], t->native_name(q + ".dlq")) << q;
  }
  EXPECT_EQ(names[0]["dlq"], "orders-dlq");
  EXPECT_EQ(names[1]["dlq"], "jobs-dlq.fifo");
  EXPECT_EQ(names[3]["dlq"], "jobs-x.fifo");

  auto cpp =
      babelqueue::sqs::options_from_url(babelqueue::broker_url::parse(peer_url_ + shared).value());
  ASSERT_TRUE(cpp) << cpp.error().message;
  EXPECT_EQ(parsed[0]["region"], cpp->region);
  EXPECT_EQ(parsed[0]["endpoint"], cpp->endpoint);
  EXPECT_EQ(parsed[0]["prefix"], cpp->prefix);
  EXPECT_EQ(parsed[0]["fifo"], cpp->fifo);
  EXPECT_EQ(parsed[0]["group_id"], cpp->group_id);
  EXPECT_EQ(parsed[0]["wait_time"], cpp->wait_time);
  // C++'s names: Python ignores them.
  EXPECT_TRUE(parsed[1]["visibility_timeout"].is_null()) << parsed[1].dump();
  EXPECT_EQ(parsed[1]["content_dedup"], false);
  // Python's names: C++ refuses them.
  EXPECT_EQ(parsed[2]["visibility_timeout"], 7);
  EXPECT_EQ(parsed[2]["content_dedup"], true);
  auto refused = babelqueue::sqs::options_from_url(
      babelqueue::broker_url::parse(peer_url_ + "&visibility_timeout=7&content_dedup=1").value());
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().reason(), "invalid_argument") << refused.error().message;
}

// A C++ delayed publish (DelaySeconds 5) reaches the Python runtime, polling since before the
// due time (it starts first), no earlier than 5 s after the publish began; byte for byte.
TEST_F(SqsPythonInterop, ACppDelayedPublishReachesPythonAfterItsDelay) {
  auto t = open();
  ASSERT_TRUE(t);
  const std::string body = envelopes(queue_).front().second;
  auto python = std::async(std::launch::async, [&] {
    return run_peer({"consume-timed", peer_url_, queue_, "1"});
  });
  const auto published_ms = wall_ms();
  auto r = t->publish_delayed(queue_, body, {}, 5s);
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_NO_FATAL_FAILURE(
      expect_consumed_after_delay(of(python.get(), "consume-timed"), published_ms, 5s, body));
  EXPECT_EQ(left_in(queue_), 0);
}

// The Python SDK's delayed publish reaches a C++ consumer polling all along only after its
// delay, byte for byte; both SDKs refuse a per-message delay on a FIFO queue.
TEST_F(SqsPythonInterop, APythonDelayedPublishReachesCppAfterItsDelay) {
  const std::string fifo_queue = queue_ + ".fifo";
  peer_->create(fifo_queue);
  auto t = open();
  ASSERT_TRUE(t);
  std::optional<babelqueue::received_message> got;
  std::int64_t received_ms = 0;
  std::thread consumer([&] {
    const auto until = steady::now() + 40s;
    while (!got && steady::now() < until) {
      auto r = t->receive(queue_, 5s);
      if (!r) {
        ADD_FAILURE() << r.error().message;
        return;
      }
      if (r->has_value()) {
        received_ms = wall_ms();
        got = std::move(**r);
      }
    }
  });
  auto lines = run_peer({"publish-delayed", peer_url_, queue_, "4", "--then", "publish-delayed",
                         peer_url_ + "&fifo=1", fifo_queue, "1"});
  consumer.join();
  auto sent = of(lines, "publish-delayed");
  ASSERT_EQ(sent.size(), 2u);
  ASSERT_TRUE(sent[0].contains("before_ms")) << sent[0].dump();
  ASSERT_TRUE(got) << "never delivered";
  EXPECT_GE(received_ms, sent[0]["before_ms"].get<std::int64_t>() + 4000 - 100)
      << "delivered before its DelaySeconds";
  EXPECT_EQ(got->body, sent[0]["body"].get<std::string>()) << "byte for byte";
  EXPECT_EQ(got->delivery_count, 1);
  ASSERT_TRUE(t->ack(*got));
  EXPECT_EQ(sent[1].value("error", ""), "BabelQueueError") << sent[1].dump();
  EXPECT_NE(sent[1].value("message", "").find("FIFO"), std::string::npos);
  auto cpp = t->publish_delayed(fifo_queue, sent[0]["body"].get<std::string>(), {}, 1s);
  ASSERT_FALSE(cpp);
  EXPECT_EQ(cpp.code(), babelqueue::transport_errc::not_supported);
}
