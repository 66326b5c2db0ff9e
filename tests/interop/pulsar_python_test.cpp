// Live interop with the real Python SDK (PyPI `babelqueue[pulsar]`, its PulsarTransport over
// the official pulsar-client) on the shared Pulsar standalone (BABELQUEUE_PULSAR_URL, see
// tests/pulsar/pulsar_fixture.hpp). Both SDKs name a queue `q` the topic
// persistent://public/default/q and share the Shared subscription `babelqueue`. The peer's
// interpreter comes from $BABELQUEUE_PEER_PYTHON, else build/peer-python.txt
// (scripts/setup-python-peer.sh with the `pulsar` extra). Without a peer or a server the tests
// skip, except under CI=true / BABELQUEUE_REQUIRE_SERVICES=1, where that is a failure.
//
// The Python SDK never creates a subscription before it publishes, and its consumer subscribes
// at the pulsar-client default position (Latest): a message published to a topic no
// subscription exists on is kept for nobody. So every subscription Python publishes into or
// reads from is created here first (subscribe(): no consumer is left on it), or by the C++
// transport, which makes sure of `babelqueue` on the first publish to a topic.
//
// What the Python SDK 1.24.0 does on Pulsar, as these tests pin it (facts for the docs):
//  - Same payload bytes and the same six bq-* properties as the C++ projection of that body
//    (bq-schema-version "1", bq-attempts always present), but no event time (0) where C++
//    sets meta.created_at.
//  - Its PulsarTransport carries NO out-of-band headers either way: publish_with_headers
//    silently falls back to a plain publish (traceparent dropped), and its handlers see no
//    headers, not even the traceparent a C++ producer sent (the properties are there, the
//    runtime does not surface them).
//  - Consuming, a valid `bq-attempts` property is authoritative over the body's attempts, then
//    raised to the redelivery count: attempts = max(bq-attempts, redelivery_count). When that
//    differs from the body's value it RE-ENCODES the body with the new attempts before the
//    handler (and any retry / DLQ copy) sees it. It routes on `bq-job`.
//  - It retries by re-publishing a copy with attempts + 1 (bq-attempts mirrored, redelivery
//    count back to 0) and acknowledging the original, as the C++ App does, so a retry
//    handed from one SDK to the other counts 0, 1, 2 with no double count.
//  - Its dead-letter copy goes to the topic `<queue>.dlq` (the C++ name) with the dead_letter
//    block, bq-attempts = the body's, and no out-of-band headers; it creates no subscription
//    there. Its retries drop the out-of-band headers the C++ App forwarded.
//  - Its bq-schema-version gate dead-letters a refused message unchanged and writes the
//    original bq-schema-version ("2") back onto the DLQ copy; the C++ App dead-letters such a
//    message unchanged too, but re-projects its properties from the (version 1) body.
#include "interop/pulsar_python_fixture.hpp"

#include <babelqueue/bindings/pulsar.hpp>
#include <babelqueue/codec.hpp>
#include <babelqueue/runtime/app.hpp>

#include <iostream>
#include <map>
#include <stdexcept>

using namespace std::chrono_literals;
using babelqueue::json;
using bqtest::interop::cases;
using bqtest::interop::cases_json;
using bqtest::interop::envelopes;
using bqtest::interop::of;
using bqtest::interop::seen_message;
using bqtest::interop::wall_ms;
using bqtest::pulsar_interop::fails_urn;
using bqtest::pulsar_interop::idle_consumer;
using bqtest::pulsar_interop::projection;
using bqtest::pulsar_interop::PulsarPythonInterop;
using bqtest::pulsar_interop::string_map;
using bqtest::pulsar_interop::traceparent;
namespace bp = babelqueue::bindings::pulsar;

// C++ publishes the payload set twice, through the App and through the bare transport; the
// Python runtime handles each message natively: same URN (routed on bq-job), trace, data,
// attempts 0, meta.id, the payload byte for byte. The pulsar-client message under each
// delivery carries exactly the C++ projection: the six bq-* properties (bq-schema-version
// "1", bq-source-lang "cpp", bq-attempts "0") and the out-of-band headers (traceparent,
// bq-replay-bypass), redelivery count 0 and the event time meta.created_at. The Python
// handlers see none of the headers: its PulsarTransport does not surface them.
TEST_F(PulsarPythonInterop, CppPublishesPythonConsumes) {
  const std::string t_queue = queue_ + "-t";
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
  std::map<std::pair<std::string, std::string>, json> got;
  for (const auto& s : seen) got[{s["queue"].get<std::string>(), s["urn"].get<std::string>()}] = s;
  for (const auto& [queue, sent] :
       {std::pair{queue_, &by_app}, std::pair{t_queue, &by_transport}}) {
    for (std::size_t i = 0; i < expected.size(); ++i) {
      SCOPED_TRACE(queue + " " + expected[i].urn);
      const auto key = std::pair(queue, expected[i].urn);
      ASSERT_TRUE(got.count(key));
      const json& s = got[key];
      const json& d = s["delivery"];
      const auto& env = (*sent)[i].first;
      EXPECT_EQ(s["trace_id"], expected[i].trace_id);
      EXPECT_EQ(s["data"], expected[i].data);
      EXPECT_EQ(s["attempts"], 0);
      EXPECT_EQ(s["meta"]["lang"], "cpp");
      EXPECT_EQ(s["meta"]["id"], std::string(env.id()));
      EXPECT_EQ(d["body"], (*sent)[i].second) << "the payload byte for byte";
      EXPECT_EQ(d["route_urn"], expected[i].urn) << "routed on bq-job";
      EXPECT_EQ(d["redelivery_count"], 0);
      EXPECT_EQ(d["native_attempts"], 0);
      EXPECT_EQ(d["event_timestamp"], *env.created_at()) << "event time = meta.created_at";
      string_map want = {{"bq-job", expected[i].urn},
                         {"bq-trace-id", expected[i].trace_id},
                         {"bq-message-id", std::string(env.id())},
                         {"bq-schema-version", "1"},
                         {"bq-source-lang", "cpp"},
                         {"bq-attempts", "0"}};
      for (const auto& [k, v] : expected[i].hdrs) want[k] = v;
      EXPECT_EQ(d["properties"].get<string_map>(), want) << "as pulsar-client reads them";
      EXPECT_EQ(s["headers"], json::object()) << "the Python runtime surfaces no headers";
      EXPECT_EQ(d["headers"], json::object());
    }
  }
  const json& with_headers = got[std::pair(queue_, std::string("urn:babel:interop:headers"))];
  EXPECT_EQ(with_headers["delivery"]["properties"]["traceparent"], traceparent);
  EXPECT_EQ(peer_->drain(queue_), 0) << "every message acknowledged";
  EXPECT_EQ(peer_->drain(t_queue), 0);
}

// Python publishes the payload set to two topics (its `publish_with_headers` included). The C++
// App handles each message of the first (URN, trace, data exactly, attempts 0, the payload the
// Python codec wrote byte for byte); the C++ transport receives the second. No out-of-band
// header arrives: the Python PulsarTransport drops them on publish. A bare C++ client on a
// second subscription reads the Python projection: exactly the properties C++ would have made
// of that payload (bq-source-lang "python"), and no event time.
TEST_F(PulsarPythonInterop, PythonPublishesCppConsumes) {
  const std::string t_queue = queue_ + "-t";
  ASSERT_TRUE(subscribe(queue_));
  ASSERT_TRUE(subscribe(t_queue));
  ASSERT_TRUE(peer_->subscribe(queue_, "inspect"));
  const auto expected = cases();
  auto sent = of(run_peer({"publish", peer_url_, queue_ + "," + t_queue, cases_json()}), "publish");
  ASSERT_EQ(sent.size(), 2 * expected.size());

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
    EXPECT_TRUE(s.hdrs.empty()) << "Python's publish_with_headers drops them on Pulsar";
    EXPECT_EQ(s.raw, sent[i]["body"].get<std::string>()) << "as the Python codec wrote it";
    auto env = babelqueue::decode(s.raw);
    ASSERT_TRUE(env);
    EXPECT_EQ(env->lang(), "python");
    EXPECT_EQ(env->id(), sent[i]["id"].get<std::string>());
  }
  // Exact numbers, not doubles: the 20-digit integer's text survives.
  const auto& big = by_urn["urn:babel:interop:big"].data_text;
  EXPECT_NE(big.find("12345678901234567890"), std::string::npos) << big;
  EXPECT_NE(big.find("-9223372036854775808"), std::string::npos) << big;
  EXPECT_EQ(peer_->drain(queue_), 0) << "every message acknowledged";

  auto t = open();
  ASSERT_TRUE(t);
  for (std::size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE("transport " + expected[i].urn);
    auto got = t->receive(t_queue, 10s);
    ASSERT_TRUE(got) << got.error().message;
    ASSERT_TRUE(got->has_value());
    const auto& m = **got;
    EXPECT_EQ(m.body, sent[expected.size() + i]["body"].get<std::string>()) << "in order";
    EXPECT_TRUE(m.hdrs.empty());
    EXPECT_EQ(m.delivery_count, std::optional<std::int64_t>(0));
    EXPECT_FALSE(m.refused_schema_version);
    EXPECT_EQ(t->reconcile_attempts(0, m), 0);
    ASSERT_TRUE(t->ack(m));
  }

  for (std::size_t i = 0; i < expected.size(); ++i) {
    auto m = peer_->get(queue_, 10s, "inspect");
    ASSERT_TRUE(m);
    SCOPED_TRACE("inspect " + expected[i].urn);
    EXPECT_EQ(m->payload, sent[i]["body"].get<std::string>()) << "in order, byte for byte";
    EXPECT_EQ(m->properties, projection(m->payload))
        << "the projection C++ makes of the same payload";
    EXPECT_EQ(bqtest::property_of(*m, "bq-source-lang"), "python");
    EXPECT_EQ(bqtest::property_of(*m, "bq-schema-version"), "1");
    EXPECT_EQ(bqtest::property_of(*m, "bq-attempts"), "0");
    EXPECT_EQ(bqtest::property_of(*m, "bq-trace-id"), expected[i].trace_id);
    EXPECT_EQ(bqtest::property_of(*m, "traceparent"), "<absent>");
    EXPECT_EQ(m->event_time, 0u) << "Python sets no event time";
    EXPECT_EQ(m->redelivery_count, 0);
  }
}

// A retry handed from C++ to Python: the C++ App fails attempt 0 and re-publishes a copy with
// attempts 1 (bq-attempts "1", the traceparent forwarded); the Python runtime fails 1 and 2
// (its own re-publishes: bq-attempts "2", the traceparent dropped) and dead-letters attempts 3
// to `<queue>.dlq`, which the C++ transport reads: the dead_letter block written by Python.
TEST_F(PulsarPythonInterop, CppRetriesArePythonAttempts) {
  ASSERT_TRUE(subscribe(dlq()));
  ASSERT_TRUE(peer_->subscribe(dlq(), "inspect"));
  std::string id;
  {
    babelqueue::app app(url_, opts(true));
    std::vector<std::int64_t> seen;
    app.handle(fails_urn, [&](babelqueue::message& m) {
      seen.push_back(m.attempts());
      throw std::runtime_error("fails in C++");
    });
    auto published = app.publish(
        fails_urn, json{{"n", 8}},
        {.queue = "", .trace_id = "trace-handover", .hdrs = {{"traceparent", traceparent}}});
    ASSERT_TRUE(published) << published.error().message;
    id = *published;
    ASSERT_TRUE(app.drain(queue_, 1));
    EXPECT_EQ(seen, (std::vector<std::int64_t>{0}));
  }
  auto py = of(run_peer({"fail", peer_url_, queue_, "2"}), "fail");
  ASSERT_EQ(py.size(), 1u);
  EXPECT_EQ(py[0]["seen"], json::parse("[1,2]")) << "no double count";
  const json& d = py[0]["deliveries"];
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0]["properties"]["bq-attempts"], "1") << "the C++ retry";
  EXPECT_EQ(d[0]["properties"]["traceparent"], traceparent) << "forwarded by the C++ retry";
  EXPECT_EQ(d[0]["redelivery_count"], 0) << "a new message";
  EXPECT_EQ(d[1]["properties"]["bq-attempts"], "2") << "the Python retry";
  EXPECT_FALSE(d[1]["properties"].contains("traceparent")) << "dropped by the Python retry";
  EXPECT_EQ(d[1]["properties"]["bq-source-lang"], "cpp") << "meta.lang is the producer's";
  EXPECT_EQ(d[1]["redelivery_count"], 0);

  auto t = open();
  ASSERT_TRUE(t);
  auto got = t->receive(dlq(), 10s);
  ASSERT_TRUE(got) << got.error().message;
  ASSERT_TRUE(got->has_value());
  auto env = babelqueue::decode((**got).body);
  ASSERT_TRUE(env) << (**got).body;
  EXPECT_EQ(env->attempts(), 3);
  EXPECT_EQ(env->id(), id);
  EXPECT_EQ(env->trace_id(), "trace-handover");
  EXPECT_EQ(env->lang(), "cpp");
  ASSERT_TRUE(env->dead_letter());
  EXPECT_EQ(env->dead_letter()->reason, "failed");
  EXPECT_EQ(env->dead_letter()->lang, "python");
  EXPECT_EQ(env->dead_letter()->attempts, 3);
  EXPECT_EQ(env->dead_letter()->original_queue, queue_);
  EXPECT_TRUE((**got).hdrs.empty());
  ASSERT_TRUE(t->ack(**got));
  auto raw = peer_->get(dlq(), 10s, "inspect");
  ASSERT_TRUE(raw);
  EXPECT_EQ(raw->properties, projection(raw->payload));
  EXPECT_EQ(bqtest::property_of(*raw, "bq-attempts"), "3");
  EXPECT_EQ(peer_->drain(queue_), 0);
}

// A retry handed from Python to C++: the Python runtime fails attempt 0 of a message C++
// published and re-publishes a copy with attempts 1 (bq-attempts "1"; the traceparent C++ sent
// is dropped); the C++ App sees 1 and 2, then dead-letters attempts 3, which the Python SDK
// reads from `<queue>.dlq` (the subscription the C++ transport made on its first publish there).
TEST_F(PulsarPythonInterop, PythonRetriesAreCppAttempts) {
  const std::string body = bqtest::envelope_text(7, fails_urn, queue_);
  {
    auto t = open();
    ASSERT_TRUE(t);
    ASSERT_TRUE(t->publish(queue_, body, {{"traceparent", traceparent}}));
  }
  auto py = of(run_peer({"fail", peer_url_, queue_, "1"}), "fail");
  ASSERT_EQ(py.size(), 1u);
  EXPECT_EQ(py[0]["seen"], json::parse("[0]"));
  ASSERT_EQ(py[0]["deliveries"].size(), 1u);
  EXPECT_EQ(py[0]["deliveries"][0]["body"], body) << "not rewritten: nothing to reconcile";

  babelqueue::app app(url_, opts(true));
  std::vector<std::int64_t> seen;
  std::vector<std::string> raws;
  std::vector<babelqueue::headers> hdrs;
  app.handle(fails_urn, [&](babelqueue::message& m) {
    seen.push_back(m.attempts());
    raws.emplace_back(m.raw());
    hdrs.push_back(m.hdrs());
    throw std::runtime_error("fails in C++");
  });
  ASSERT_TRUE(app.drain(queue_, 2));
  EXPECT_EQ(seen, (std::vector<std::int64_t>{1, 2}));
  ASSERT_EQ(raws.size(), 2u);
  auto retried = babelqueue::decode(raws[0]);
  ASSERT_TRUE(retried);
  EXPECT_EQ(retried->attempts(), 1) << "the Python retry copy";
  EXPECT_EQ(retried->lang(), "cpp");
  EXPECT_TRUE(hdrs[0].empty()) << "the Python retry dropped the traceparent";

  auto got = of(run_peer({"read-dlq", peer_url_, dlq()}), "read-dlq");
  ASSERT_EQ(got.size(), 1u);
  ASSERT_TRUE(got[0].contains("envelope")) << got[0].dump();
  const json& env = got[0]["envelope"];
  EXPECT_EQ(got[0]["accepts"], true);
  EXPECT_EQ(env["attempts"], 3);
  EXPECT_EQ(env["dead_letter"]["attempts"], 3);
  EXPECT_EQ(env["dead_letter"]["lang"], "cpp");
  EXPECT_EQ(env["dead_letter"]["error"], "fails in C++");
  EXPECT_EQ(got[0]["delivery"]["properties"]["bq-attempts"], "3");
  EXPECT_EQ(peer_->drain(queue_), 0);
}

// The C++ transport releases a message twice (negative acks: redelivered with counts 1, 2),
// then closes with its third delivery unsettled (an idle consumer keeps the subscription's
// redelivery count alive meanwhile). The Python runtime reads attempts =
// max(bq-attempts 0, redelivery count 2) = 2 — and re-encodes the body with attempts 2 before
// its handler sees it. One failure makes 3: it dead-letters to `<queue>.dlq`, read by C++.
TEST_F(PulsarPythonInterop, CppReleasesAreCountedByPython) {
  ASSERT_TRUE(subscribe(dlq()));
  const std::string body = bqtest::envelope_text(9, fails_urn, queue_);
  idle_consumer idle(queue_);
  ASSERT_TRUE(idle.ok());
  {
    auto t = open();
    ASSERT_TRUE(t);
    ASSERT_TRUE(t->publish(queue_, body));
    for (std::int64_t i = 0; i <= 2; ++i) {
      auto got = t->receive(queue_, 10s);
      ASSERT_TRUE(got && got->has_value());
      EXPECT_EQ((**got).delivery_count, std::optional<std::int64_t>(i));
      if (i < 2) {
        ASSERT_TRUE(t->release(**got));
      }
    }
    ASSERT_TRUE(t->close(std::chrono::steady_clock::now() + 5s));
  }

  auto py = of(run_peer({"fail", peer_url_, queue_, "1"}), "fail");
  ASSERT_EQ(py.size(), 1u);
  EXPECT_EQ(py[0]["seen"], json::parse("[2]")) << "the redelivery count, not the body's 0";
  ASSERT_EQ(py[0]["deliveries"].size(), 1u);
  const json& d = py[0]["deliveries"][0];
  EXPECT_EQ(d["redelivery_count"], 2);
  EXPECT_EQ(d["native_attempts"], 2);
  EXPECT_EQ(d["properties"]["bq-attempts"], "0");
  const auto rewritten = babelqueue::decode(d["body"].get<std::string>());
  ASSERT_TRUE(rewritten);
  EXPECT_NE(d["body"], body) << "Python re-encodes the reconciled attempts into the body";
  EXPECT_EQ(rewritten->attempts(), 2);

  auto r = open();
  ASSERT_TRUE(r);
  auto got = r->receive(dlq(), 10s);
  ASSERT_TRUE(got) << got.error().message;
  ASSERT_TRUE(got->has_value());
  auto env = babelqueue::decode((**got).body);
  ASSERT_TRUE(env);
  EXPECT_EQ(env->attempts(), 3);
  ASSERT_TRUE(env->dead_letter());
  EXPECT_EQ(env->dead_letter()->attempts, 3);
  EXPECT_EQ(env->dead_letter()->lang, "python");
  ASSERT_TRUE(r->ack(**got));
  EXPECT_EQ(peer_->drain(queue_), 0);
}

// The other way: a bare pulsar-client consumer (Python) negatively acknowledges a message
// twice and exits with its third delivery unsettled; the C++ App's next delivery reads
// redelivery count 2 as attempts 2 (no -1), so one failure dead-letters it with attempts 3.
// (The idle consumer keeps the count alive between the two processes.)
TEST_F(PulsarPythonInterop, PythonNacksAreCountedByCpp) {
  const std::string body = bqtest::envelope_text(11, fails_urn, queue_);
  idle_consumer idle(queue_);
  ASSERT_TRUE(idle.ok());
  {
    auto t = open();
    ASSERT_TRUE(t);
    ASSERT_TRUE(t->publish(queue_, body));
  }
  auto py = of(run_peer({"nack", peer_url_, queue_, "2"}), "nack");
  ASSERT_EQ(py.size(), 1u);
  EXPECT_EQ(py[0]["redelivery_counts"], json::parse("[0,1,2]"));

  babelqueue::app app(url_, opts(true));
  std::vector<std::int64_t> seen;
  std::optional<std::int64_t> count;
  app.handle(fails_urn, [&](babelqueue::message& m) {
    seen.push_back(m.attempts());
    count = m.delivery().delivery_count;
    throw std::runtime_error("fails in C++");
  });
  ASSERT_TRUE(app.drain(queue_, 1));
  EXPECT_EQ(seen, (std::vector<std::int64_t>{2}));
  EXPECT_EQ(count, std::optional<std::int64_t>(2));
  auto m = peer_->get(dlq(), 10s);
  ASSERT_TRUE(m);
  auto env = babelqueue::decode(m->payload);
  ASSERT_TRUE(env);
  EXPECT_EQ(env->attempts(), 3);
  ASSERT_TRUE(env->dead_letter());
  EXPECT_EQ(env->dead_letter()->lang, "cpp");
  EXPECT_EQ(bqtest::property_of(*m, "bq-attempts"), "3");
}

// The C++ App fails a message until its DLQ (attempts 0, 1, 2); the Python SDK reads the topic
// `<queue>.dlq` through its PulsarTransport: attempts 3, the dead_letter block, bq-attempts
// "3", and (on the bare message) the traceparent the C++ App forwarded.
TEST_F(PulsarPythonInterop, CppDeadLetterIsReadableByPython) {
  babelqueue::app app(url_, opts(true));
  std::vector<std::int64_t> attempts_seen;
  app.handle(fails_urn, [&](babelqueue::message& m) {
    attempts_seen.push_back(m.attempts());
    throw std::runtime_error("payment gateway timeout");
  });
  auto id = app.publish(
      fails_urn, json{{"n", 1}},
      {.queue = "", .trace_id = "trace-cpp-fails", .hdrs = {{"traceparent", traceparent}}});
  ASSERT_TRUE(id) << id.error().message;
  ASSERT_TRUE(app.drain(queue_, 3));
  EXPECT_EQ(attempts_seen, (std::vector<std::int64_t>{0, 1, 2}));

  auto got = of(run_peer({"read-dlq", peer_url_, dlq()}), "read-dlq");
  ASSERT_EQ(got.size(), 1u);
  ASSERT_TRUE(got[0].contains("envelope")) << got[0].dump();
  const json& env = got[0]["envelope"];
  const json& d = got[0]["delivery"];
  EXPECT_EQ(got[0]["accepts"], true);
  EXPECT_EQ(env["job"], fails_urn);
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
  EXPECT_EQ(d["route_urn"], fails_urn);
  EXPECT_EQ(d["redelivery_count"], 0);
  EXPECT_EQ(d["properties"]["bq-attempts"], "3") << "bq-attempts = the body's";
  EXPECT_EQ(d["properties"]["bq-job"], fails_urn);
  EXPECT_EQ(d["properties"]["bq-source-lang"], "cpp");
  EXPECT_EQ(d["properties"]["bq-trace-id"], "trace-cpp-fails");
  EXPECT_EQ(d["properties"]["traceparent"], traceparent) << "forwarded by the C++ App";
  const auto body = d["body"].get<std::string>();
  EXPECT_TRUE(babelqueue::accepts(body));
  EXPECT_EQ(peer_->drain(queue_), 0);
  EXPECT_EQ(peer_->drain(dlq()), 0) << "Python acknowledged it";
}

// The Python App fails a message it published until its DLQ (attempts 0, 1, 2: re-publishes)
// and writes `<queue>.dlq` (no subscription of its own there: made here first); the C++
// transport consumes it: attempts 3 and the dead_letter block written by Python. The
// traceparent the Python producer passed never reached the wire.
TEST_F(PulsarPythonInterop, PythonDeadLetterIsReadableByCpp) {
  ASSERT_TRUE(subscribe(queue_));
  ASSERT_TRUE(subscribe(dlq()));
  ASSERT_TRUE(peer_->subscribe(dlq(), "inspect"));
  auto py = of(run_peer({"failing", peer_url_, queue_}), "failing");
  ASSERT_EQ(py.size(), 1u);
  EXPECT_EQ(py[0]["seen"], json::parse("[0,1,2]"));
  const json& d = py[0]["deliveries"];
  ASSERT_EQ(d.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(d[i]["properties"]["bq-attempts"], std::to_string(i));
    EXPECT_FALSE(d[i]["properties"].contains("traceparent")) << "never published";
  }

  auto t = open();
  ASSERT_TRUE(t);
  auto got = t->receive(dlq(), 10s);
  ASSERT_TRUE(got) << got.error().message;
  ASSERT_TRUE(got->has_value());
  const auto& m = **got;
  EXPECT_TRUE(babelqueue::accepts(m.body)) << m.body;
  auto env = babelqueue::decode(m.body);
  ASSERT_TRUE(env) << m.body;
  EXPECT_EQ(env->urn(), fails_urn);
  EXPECT_EQ(env->trace_id(), "trace-py-fails");
  EXPECT_EQ(env->id(), py[0]["id"].get<std::string>());
  EXPECT_EQ(env->lang(), "python");
  EXPECT_EQ(env->attempts(), 3);
  ASSERT_TRUE(env->dead_letter());
  EXPECT_EQ(env->dead_letter()->reason, "failed");
  EXPECT_EQ(env->dead_letter()->attempts, 3);
  EXPECT_EQ(env->dead_letter()->original_queue, queue_);
  EXPECT_EQ(env->dead_letter()->lang, "python");
  EXPECT_EQ(env->dead_letter()->error, std::optional<std::string>("always fails"));
  EXPECT_EQ(env->dead_letter()->exception, std::optional<std::string>("RuntimeError"));
  EXPECT_EQ(m.delivery_count, std::optional<std::int64_t>(0));
  EXPECT_EQ(t->reconcile_attempts(env->attempts(), m), 3);
  EXPECT_TRUE(m.hdrs.empty());
  ASSERT_TRUE(t->ack(m));

  auto raw = peer_->get(dlq(), 10s, "inspect");
  ASSERT_TRUE(raw);
  EXPECT_EQ(raw->payload, m.body);
  EXPECT_EQ(raw->properties, projection(raw->payload)) << "the C++ projection of its body";
  EXPECT_EQ(bqtest::property_of(*raw, "bq-attempts"), "3");
  EXPECT_EQ(bqtest::property_of(*raw, "bq-source-lang"), "python");
  EXPECT_EQ(peer_->drain(queue_), 0);
}

// A message a bare pulsar-client producer (Python) sends with bq-schema-version "2" (a valid
// version-1 body otherwise) is never decoded or handled by the C++ App: it is dead-lettered
// with its payload unchanged. Python reads the DLQ copy: the same bytes, and the properties the
// C++ App wrote — re-projected from the body, so bq-schema-version reads "1" there, plus the
// poison markers.
TEST_F(PulsarPythonInterop, SchemaVersion2FromPythonIsDeadLetteredUnchangedByCpp) {
  ASSERT_TRUE(subscribe(queue_));
  auto sent = of(run_peer({"send-raw", peer_url_, queue_, "2"}), "send-raw");
  ASSERT_EQ(sent.size(), 1u);
  const auto body = sent[0]["body"].get<std::string>();

  babelqueue::app app(url_, opts(true));
  int handled = 0;
  app.handle(fails_urn, [&](babelqueue::message&) { ++handled; });
  auto n = app.drain(queue_, 1);
  ASSERT_TRUE(n) << n.error().message;
  EXPECT_EQ(*n, 1u);
  EXPECT_EQ(handled, 0) << "never decoded, never handled";

  auto got = of(run_peer({"inspect", peer_url_, dlq(), "1", "babelqueue"}), "inspect");
  ASSERT_EQ(got.size(), 1u);
  ASSERT_TRUE(got[0].contains("payload")) << got[0].dump();
  EXPECT_EQ(got[0]["payload"], body) << "unchanged";
  auto props = got[0]["properties"].get<string_map>();
  auto want = projection(body);
  want["bq-dead-letter-reason"] = "poison";
  want["bq-dead-letter-error"] = "unsupported_schema_version";
  EXPECT_EQ(props, want);
  EXPECT_EQ(props["bq-schema-version"], "1") << "the C++ App re-projects the (v1) body";
  EXPECT_EQ(peer_->drain(queue_), 0);
}

// The reverse: C++ sends a version-1 body with bq-schema-version "2"; the Python App
// (dead-lettering on) routes it under its reserved gate route, never hands it to a handler,
// and writes it to `<queue>.dlq` unchanged with the original bq-schema-version "2" (and bq-job)
// written back. The C++ transport's own gate refuses that DLQ copy in turn.
TEST_F(PulsarPythonInterop, SchemaVersion2FromCppIsDeadLetteredUnchangedByPython) {
  ASSERT_TRUE(subscribe(queue_));
  ASSERT_TRUE(subscribe(dlq()));
  ASSERT_TRUE(peer_->subscribe(dlq(), "inspect"));
  const std::string body = bqtest::envelope_text(3, fails_urn, queue_);
  auto props = projection(body);
  props["bq-schema-version"] = "2";
  ASSERT_TRUE(peer_->send(queue_, body, props));

  auto py = of(run_peer({"gate", peer_url_, queue_, "1"}), "gate");
  ASSERT_EQ(py.size(), 1u);
  EXPECT_EQ(py[0]["handled"], json::array()) << "no handler ran";
  ASSERT_EQ(py[0]["deliveries"].size(), 1u);
  EXPECT_EQ(py[0]["deliveries"][0]["route_urn"],
            "babelqueue:unsupported-schema-version:2?bq-job=urn%3Ababel%3Ainterop%3Afails");

  auto raw = peer_->get(dlq(), 10s, "inspect");
  ASSERT_TRUE(raw);
  EXPECT_EQ(raw->payload, body) << "unchanged";
  EXPECT_EQ(raw->properties, props) << "the original properties, bq-schema-version \"2\" kept";

  auto t = open();
  ASSERT_TRUE(t);
  auto got = t->receive(dlq(), 10s);
  ASSERT_TRUE(got) << got.error().message;
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((**got).body, body);
  EXPECT_EQ((**got).refused_schema_version, std::optional<std::string>("2"));
  ASSERT_TRUE(t->ack(**got));
  EXPECT_EQ(peer_->drain(queue_), 0);
}

// A C++ delayed publish (deliverAt = now + 4 s, `bq-delay` "4000") is held by the broker for
// the Python runtime too (on the same Shared subscription): handled no earlier than 4 s after
// the publish, byte for byte, bq-delay among its properties. (The Python SDK 1.24.0 has no
// Pulsar delay: no other direction.)
TEST_F(PulsarPythonInterop, ACppDelayedPublishReachesPythonNoEarlierThanItsDelay) {
  const std::string later_urn = "urn:babel:interop:later";
  auto t = open();
  ASSERT_TRUE(t);
  auto env =
      babelqueue::make(later_urn, json{{"n", 4}}, {.queue = queue_, .trace_id = "trace-later"})
          .value();
  const std::string body = babelqueue::encode(env).value();
  const auto published_ms = wall_ms();
  ASSERT_TRUE(t->publish_delayed(queue_, body, {{"traceparent", traceparent}}, 4s));
  auto seen = of(run_peer({"later", peer_url_, queue_, "1"}), "later");
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0]["urn"], later_urn);
  EXPECT_EQ(seen[0]["trace_id"], "trace-later");
  EXPECT_EQ(seen[0]["id"], std::string(env.id()));
  EXPECT_EQ(seen[0]["attempts"], 0);
  const json& d = seen[0]["delivery"];
  EXPECT_EQ(d["body"], body) << d.dump();
  auto expected = projection(body, {{"traceparent", traceparent}});
  expected["bq-delay"] = "4000";
  EXPECT_EQ(d["properties"].get<string_map>(), expected);
  const auto waited = seen[0]["seen_ms"].get<std::int64_t>() - published_ms;
  EXPECT_GE(waited, 4000) << "Python handled it " << waited << " ms after the publish";
  std::cout << "[pulsar interop] C++ 4 s delay handled by Python after " << waited << " ms\n";
}
