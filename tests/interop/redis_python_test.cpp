// Live interop with the real Python SDK (PyPI `babelqueue[redis]`) over a real redis-server.
// The peer's interpreter comes from $BABELQUEUE_PEER_PYTHON, else build/peer-python.txt
// (written by scripts/setup-python-peer.sh). Without a peer the tests skip, except under CI
// (CI=true), where a missing peer is a failure.
#include "interop/python_peer.hpp"
#include "interop/redis_python_fixture.hpp"
#include "redis/redis_server.hpp"
#include "support/files.hpp"

#include <babelqueue/codec.hpp>
#include <babelqueue/redis/redis_transport.hpp>
#include <babelqueue/runtime/app.hpp>
#if BABELQUEUE_HAVE_REDRIVE
#include <babelqueue/redrive/dead_letters.hpp>
#include <babelqueue/redrive/redrive.hpp>
#include <babelqueue/runtime/url.hpp>
#endif

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

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

// Runs peer.py (the Python side of these tests).
std::vector<json> run_peer(const std::string& python, const std::vector<std::string>& args) {
  return bqtest::interop::run_peer(python, "peer.py", args);
}

class RedisPythonInterop : public bqtest::interop::redis_python_fixture {};

}  // namespace

TEST_F(RedisPythonInterop, PythonPublishesCppConsumes) {
  auto ids = run_peer(python_, {"publish", url_, "interop", cases_json()});
  ASSERT_EQ(ids.size(), cases().size());

  babelqueue::app_options o;
  o.queue = "interop";
  o.poll_timeout = 500ms;
  babelqueue::app app(url_, o);
  std::vector<seen_message> seen;
  app.handle_unmatched([&](babelqueue::message& m) { seen.push_back(seen_of(m)); });
  auto n = app.drain("interop");
  ASSERT_TRUE(n) << n.error().message;
  auto expected = cases();
  ASSERT_EQ(seen.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE(expected[i].urn);
    EXPECT_EQ(seen[i].urn, expected[i].urn);
    EXPECT_EQ(seen[i].trace_id, expected[i].trace_id);
    EXPECT_EQ(seen[i].data, expected[i].data);
    EXPECT_EQ(seen[i].attempts, 0);
    for (const auto& [k, v] : expected[i].hdrs) EXPECT_EQ(seen[i].hdrs[k], v);
    if (expected[i].hdrs.empty()) {
      EXPECT_TRUE(seen[i].hdrs.empty());
    }
  }
  // Exact numbers, not doubles: the 20-digit integer's text survives.
  EXPECT_NE(seen[1].data_text.find("12345678901234567890"), std::string::npos) << seen[1].data_text;
  EXPECT_NE(seen[1].data_text.find("-9223372036854775808"), std::string::npos);
  // Nothing left reserved.
  EXPECT_EQ(bqtest::raw_command(server_->port(), "LLEN interop:processing"), ":0");
}

TEST_F(RedisPythonInterop, CppPublishesPythonConsumes) {
  {
    babelqueue::app_options o;
    o.queue = "interop";
    babelqueue::app app(url_, o);
    for (const auto& c : cases()) {
      babelqueue::publish_options p;
      p.trace_id = c.trace_id;
      p.hdrs = c.hdrs;
      auto id = app.publish(c.urn, c.data, p);
      ASSERT_TRUE(id) << id.error().message;
    }
  }
  auto seen = run_peer(python_, {"consume", url_, "interop", std::to_string(cases().size())});
  auto expected = cases();
  ASSERT_EQ(seen.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE(expected[i].urn);
    EXPECT_EQ(seen[i]["urn"], expected[i].urn);
    EXPECT_EQ(seen[i]["trace_id"], expected[i].trace_id);
    EXPECT_EQ(seen[i]["data"], expected[i].data);
    EXPECT_EQ(seen[i]["attempts"], 0);
    EXPECT_EQ(seen[i]["meta"]["lang"], "cpp");
    for (const auto& [k, v] : expected[i].hdrs) EXPECT_EQ(seen[i]["headers"][k], v);
  }
}

TEST_F(RedisPythonInterop, CppDeadLetterIsReadableByPython) {
  babelqueue::app_options o;
  o.queue = "dl";
  o.dead_letter = true;
  o.max_attempts = 3;
  o.poll_timeout = 300ms;
  babelqueue::app app(url_, o);
  std::vector<std::int64_t> attempts_seen;
  app.handle("urn:babel:interop:fails", [&](babelqueue::message& m) {
    attempts_seen.push_back(m.attempts());
    throw std::runtime_error("payment gateway timeout");
  });
  ASSERT_TRUE(app.publish("urn:babel:interop:fails", json{{"n", 1}}));
  ASSERT_TRUE(app.drain("dl"));
  EXPECT_EQ(attempts_seen, (std::vector<std::int64_t>{0, 1, 2}));

  auto got = run_peer(python_, {"read-dlq", url_, "dl.dlq"});
  ASSERT_EQ(got.size(), 1u);
  ASSERT_TRUE(got[0].contains("envelope")) << got[0].dump();
  const json& env = got[0]["envelope"];
  EXPECT_EQ(got[0]["accepts"], true);
  EXPECT_EQ(env["job"], "urn:babel:interop:fails");
  EXPECT_EQ(env["attempts"], 3);
  const json& dl = env["dead_letter"];
  EXPECT_EQ(dl["reason"], "failed");
  EXPECT_EQ(dl["attempts"], 3);
  EXPECT_EQ(dl["original_queue"], "dl");
  EXPECT_EQ(dl["lang"], "cpp");
  EXPECT_TRUE(dl["error"].is_string());
  EXPECT_TRUE(dl["failed_at"].is_number_integer());
}

TEST_F(RedisPythonInterop, RetryCountsMatchPython) {
  auto py = run_peer(python_, {"failing", url_, "pyfail"});
  ASSERT_EQ(py.size(), 1u);

  babelqueue::app_options o;
  o.queue = "cppfail";
  o.dead_letter = true;
  o.max_attempts = 3;
  o.poll_timeout = 300ms;
  babelqueue::app app(url_, o);
  std::vector<std::int64_t> seen;
  app.handle("urn:babel:interop:fails", [&](babelqueue::message& m) {
    seen.push_back(m.attempts());
    throw std::runtime_error("always fails");
  });
  ASSERT_TRUE(app.publish("urn:babel:interop:fails", json{{"n", 1}}));
  ASSERT_TRUE(app.drain("cppfail"));
  auto t = babelqueue::redis::redis_transport::open([&] {
    babelqueue::redis::options ro;
    ro.port = static_cast<std::uint16_t>(server_->port());
    return ro;
  }());
  ASSERT_TRUE(t);
  auto dlq = (*t)->receive("cppfail.dlq", 1s);
  ASSERT_TRUE(dlq && dlq->has_value());
  auto env = babelqueue::decode((*dlq)->body);
  ASSERT_TRUE(env);

  json cpp_seen = json::array();
  for (auto a : seen) cpp_seen.push_back(a);
  EXPECT_EQ(cpp_seen, py[0]["seen"]);
  EXPECT_EQ(env->attempts(), py[0]["dlq_attempts"].get<std::int64_t>());
  EXPECT_EQ(env->dead_letter()->attempts, py[0]["dlq_block_attempts"].get<std::int64_t>());
  EXPECT_EQ(env->dead_letter()->reason, py[0]["dlq_reason"].get<std::string>());
}

// The reservation-deadline set is shared with the Python SDK (≥ 1.24): a C++ consumer that
// dies holding a message is swept back by a Python consumer after retry_after, and a
// Python consumer that dies is recovered by the C++ recover().
TEST_F(RedisPythonInterop, PythonSweepsAStuckCppReservation) {
  babelqueue::redis::options ro;
  ro.port = static_cast<std::uint16_t>(server_->port());
  ro.retry_after = std::chrono::seconds(1);
  std::string body;
  {
    auto t = babelqueue::redis::redis_transport::open(ro);
    ASSERT_TRUE(t);
    ASSERT_TRUE((*t)->publish(
        "sweep",
        babelqueue::encode(babelqueue::make("urn:babel:interop:big", json{{"n", 1}}).value())
            .value()));
    auto got = (*t)->receive("sweep", 1s);
    ASSERT_TRUE(got && got->has_value());
    body = (*got)->body;
    // "Crash": the instance goes away holding the message (no ack).
  }
  EXPECT_EQ(bqtest::raw_command(server_->port(), "LLEN sweep:processing"), ":1");
  std::this_thread::sleep_for(2200ms);  // past the deadline (whole seconds)
  auto py = run_peer(python_, {"pop", url_, "sweep"});
  ASSERT_EQ(py.size(), 1u);
  EXPECT_EQ(py[0]["body"], body);
  EXPECT_EQ(bqtest::raw_command(server_->port(), "LLEN sweep:processing"), ":0");
}

TEST_F(RedisPythonInterop, CppRecoversAStuckPythonReservation) {
  babelqueue::redis::options ro;
  ro.port = static_cast<std::uint16_t>(server_->port());
  auto t = babelqueue::redis::redis_transport::open(ro);
  ASSERT_TRUE(t);
  std::string body =
      babelqueue::encode(babelqueue::make("urn:babel:interop:big", json{{"n", 2}}).value()).value();
  ASSERT_TRUE((*t)->publish("pystuck", body));
  auto py = run_peer(python_, {"pop-noack", url_, "pystuck"});
  ASSERT_EQ(py.size(), 1u);
  EXPECT_EQ(py[0]["body"], body);
  EXPECT_EQ(bqtest::raw_command(server_->port(), "LLEN pystuck:processing"), ":1");
  auto young = (*t)->recover("pystuck", 60s);
  ASSERT_TRUE(young) << young.error().message;
  EXPECT_EQ(young->moved, 0);
  EXPECT_EQ(young->stamped, 0);  // Python's member is understood, not re-stamped
  std::this_thread::sleep_for(2100ms);
  auto old = (*t)->recover("pystuck", 1s);
  ASSERT_TRUE(old) << old.error().message;
  EXPECT_EQ(old->moved, 1);
  auto again = (*t)->receive("pystuck", 1s);
  ASSERT_TRUE(again && again->has_value());
  EXPECT_EQ((*again)->body, body);
}

// Delayed publish (redis_transport.hpp, "Delayed publish"). The Python SDK (1.24) delays only
// in its Laravel-compatible layout (`RedisTransport.publish_delayed`: ZADD :delayed
// floor(now)+ceil(delay), member = the body); its owned layout has no delay (it raises). So:
// both directions on laravel=1, and on the owned layout a Python consumer that only reads the
// list gets a C++ delayed message, byte for byte, once a C++ consumer of the queue moved it.
TEST_F(RedisPythonInterop, PythonDelaysOnTheLaravelLayoutCppReceivesWhenDue) {
  const auto start = std::chrono::steady_clock::now();
  auto py = bqtest::interop::run_peer(python_, "laravel_python_peer.py",
                                      {"publish-delayed", url_, "queues:", "pydelay", "2"});
  ASSERT_EQ(py.size(), 1u);
  const std::string body = py[0]["body"];
  const auto score = py[0]["score"].get<double>();
  babelqueue::redis::options ro;
  ro.port = static_cast<std::uint16_t>(server_->port());
  ro.laravel = true;
  auto t = babelqueue::redis::redis_transport::open(ro);
  ASSERT_TRUE(t);
  auto got = (*t)->receive("pydelay", 10s);
  ASSERT_TRUE(got) << got.error().message;
  ASSERT_TRUE(got->has_value()) << "a Python delayed job never reached C++";
  EXPECT_EQ((*got)->body, body) << "the job, byte for byte";
  // Migrated by this SDK no earlier than the score Python wrote (the server's seconds).
  const auto now_s = std::chrono::duration_cast<std::chrono::seconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
  EXPECT_GE(static_cast<double>(now_s), score);
  std::printf("[ delay ] python 2 s delay: C++ received it %lld ms after the peer started\n",
              static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                         std::chrono::steady_clock::now() - start)
                                         .count()));
  ASSERT_TRUE((*t)->ack(**got));
  ASSERT_TRUE((*t)->flush());
  EXPECT_EQ(bqtest::raw_command(server_->port(), "ZCARD queues:pydelay:reserved"), ":0");
}

TEST_F(RedisPythonInterop, CppDelaysOnTheLaravelLayoutPythonConsumesWhenDue) {
  babelqueue::redis::options ro;
  ro.port = static_cast<std::uint16_t>(server_->port());
  ro.laravel = true;
  auto t = babelqueue::redis::redis_transport::open(ro);
  ASSERT_TRUE(t);
  const auto c = cases()[1];  // the 20-digit integer and INT64_MIN
  babelqueue::make_options mo;
  mo.trace_id = c.trace_id;
  const std::string body = babelqueue::encode(babelqueue::make(c.urn, c.data, mo).value()).value();
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE((*t)->publish_delayed("cppdelay", body, {}, 2s));
  EXPECT_EQ(bqtest::raw_command(server_->port(), "ZCARD queues:cppdelay:delayed"), ":1");
  EXPECT_EQ(bqtest::raw_command(server_->port(), "LLEN queues:cppdelay"), ":0");
  auto seen = bqtest::interop::run_peer(python_, "laravel_python_peer.py",
                                        {"consume", url_, "queues:", "cppdelay", "1"});
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - start);
  ASSERT_EQ(seen.size(), 1u) << "the Python runtime did not get the C++ delayed job";
  EXPECT_EQ(seen[0]["urn"], c.urn);
  EXPECT_EQ(seen[0]["trace_id"], c.trace_id);
  EXPECT_EQ(seen[0]["data"], c.data);
  EXPECT_EQ(seen[0]["attempts"], 0);
  EXPECT_GE(took, 2s) << "consumed before its delay";
  std::printf("[ delay ] C++ 2 s delay: the Python runtime had it after %lld ms\n",
              static_cast<long long>(took.count()));
}

TEST_F(RedisPythonInterop, CppDelaysOnTheOwnedLayoutAPythonListReaderGetsTheExactBytes) {
  babelqueue::redis::options ro;
  ro.port = static_cast<std::uint16_t>(server_->port());
  auto t = babelqueue::redis::redis_transport::open(ro);
  ASSERT_TRUE(t);
  const std::string first =
      babelqueue::encode(babelqueue::make("urn:babel:interop:big", json{{"n", 1}}).value()).value();
  const std::string later =
      babelqueue::encode(babelqueue::make("urn:babel:interop:big", json{{"n", 2}}).value()).value();
  const babelqueue::headers hdrs{
      {"traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}};
  ASSERT_TRUE((*t)->publish("owned", first));
  ASSERT_TRUE((*t)->publish_delayed("owned", later, hdrs, 500ms));
  // Python's pop reads the list only: nothing there but `first` until a C++ consumer moves it.
  std::this_thread::sleep_for(700ms);
  auto mine = (*t)->receive("owned", 1s);  // takes `first`, moves `later` to the list
  ASSERT_TRUE(mine && mine->has_value());
  EXPECT_EQ((*mine)->body, first);
  auto py = run_peer(python_, {"pop", url_, "owned"});
  ASSERT_EQ(py.size(), 1u);
  EXPECT_EQ(py[0]["body"], later) << "the Python reader got other bytes than publish() pushes";
  EXPECT_EQ(py[0]["headers"]["traceparent"], hdrs.at("traceparent"));
  EXPECT_EQ(bqtest::raw_command(server_->port(), "EXISTS owned:scheduled"), ":0");
}

#if BABELQUEUE_HAVE_REDRIVE
// Redrive across SDKs: a DLQ written by the Python SDK's runtime is redriven by this SDK with
// the replay marker, and a Python consumer receives the reset message with is_replay() true
// and bq-replay-bypass surfaced — the trace_id and every number intact.
TEST_F(RedisPythonInterop, CppRedrivesAPythonDeadLetterToAPythonConsumerAsAReplay) {
  auto dl = run_peer(python_, {"dead-letter", url_, "pyredrive"});
  ASSERT_EQ(dl.size(), 1u);
  const std::string id = dl[0]["id"];
  auto t = babelqueue::open_transport(url_);
  ASSERT_TRUE(t) << t.error().message;
  auto listed = babelqueue::list_dead_letters(**t, "pyredrive.dlq");
  ASSERT_TRUE(listed);
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].id, id);
  EXPECT_EQ((*listed)[0].reason, "failed");
  EXPECT_EQ((*listed)[0].lang, "python");
  EXPECT_EQ((*listed)[0].original_queue, "pyredrive");

  babelqueue::redrive_options o;
  o.bypass = true;
  o.receive_timeout = 500ms;
  auto report = babelqueue::redrive(**t, "pyredrive.dlq", o);
  ASSERT_TRUE(report.ok()) << report.error->message;
  ASSERT_EQ(report.redriven, 1u);
  EXPECT_EQ(report.items[0].id, id);
  EXPECT_EQ(report.items[0].trace_id, "trace-redrive-interop");
  EXPECT_EQ(report.items[0].to, "pyredrive");
  EXPECT_TRUE(report.items[0].bypassed);
  (void)(*t)->close(std::chrono::steady_clock::now() + 1s);

  auto seen = run_peer(python_, {"consume-replays", url_, "pyredrive", "1"});
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0]["id"], id);
  EXPECT_EQ(seen[0]["trace_id"], "trace-redrive-interop");
  EXPECT_EQ(seen[0]["attempts"], 0);
  EXPECT_EQ(seen[0]["has_dead_letter"], false);
  EXPECT_EQ(seen[0]["is_replay"], true);
  EXPECT_EQ(seen[0]["headers"]["bq-replay-bypass"], "1");
  EXPECT_EQ(seen[0]["data"]["big"].dump(), "12345678901234567890");
}
#endif
