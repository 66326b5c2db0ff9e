// Live interop with the real Python SDK on the Service Bus STAND-IN (scripts/services.sh:
// Artemis + a CBS responder; BABELQUEUE_ASB_CONNECTION_STRING) — not a Service Bus namespace:
//  - a C++ publish that the official `azure-servicebus` client receives (RECEIVE_AND_DELETE:
//    the stand-in has no PeekLock lock tokens), with the native properties it exposes;
//  - the Python SDK's AsbTransport publishing (over `azure-servicebus`) and the C++ App
//    consuming it, trace_id preserved.
// The Python runtime cannot CONSUME from the stand-in (its AsbTransport peek-locks and
// completes; broker-servers.md), so Python-side consumption is covered by the raw client.
// Delays (ScheduledEnqueueTime) go through the stand-in's scheduling front
// (tests/asb/scheduling_front.hpp), which makes Artemis hold a message whose
// `x-opt-scheduled-enqueue-time` is an AMQP timestamp. The Python SDK's AsbTransport has no
// delayed publish; the azure-servicebus client it uses does (scheduled_enqueue_time_utc), and
// it sends what C++ sends: the annotation as an AMQP timestamp.
#include "asb/asb_fixture.hpp"
#include "asb/scheduling_front.hpp"
#include "interop/python_peer.hpp"

#include <babelqueue/codec.hpp>
#include <babelqueue/runtime/app.hpp>

#include <future>
#include <thread>

using namespace std::chrono_literals;
using babelqueue::json;

namespace {

using bqtest::interop::cases;
using bqtest::interop::cases_json;
using bqtest::interop::wall_ms;

class AsbPythonInterop : public bqtest::AsbTest {
 protected:
  void SetUp() override {
    bqtest::AsbTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    BQ_REQUIRE_PYTHON_PEER(python_);
    babelqueue::asb::register_transport();
    conn_ = bqtest::asb_connection_string();
    url_ = babelqueue::asb::url_from_connection_string(conn_).value();
  }
  std::vector<json> run_peer(const std::vector<std::string>& args) {
    return bqtest::interop::run_peer(python_, "asb_peer.py", args);
  }
  /// Starts the scheduling front; `front_conn_` and `front_url_` lead through it.
  void start_front() {
    std::uint16_t upstream = 0;
    ASSERT_TRUE(bqtest::scheduling_front::through(conn_, 0, &upstream));
    std::string why;
    front_ = bqtest::scheduling_front::start(upstream, why);
    ASSERT_TRUE(front_) << why;
    front_conn_ = *bqtest::scheduling_front::through(conn_, front_->port());
    front_url_ = *bqtest::scheduling_front::through(url_, front_->port());
  }
  std::string python_, conn_, url_, front_conn_, front_url_;
  std::unique_ptr<bqtest::scheduling_front> front_;
};

}  // namespace

TEST_F(AsbPythonInterop, ACppPublishIsReceivedByTheAzureServiceBusSdk) {
  const auto expected = cases();
  std::vector<std::pair<babelqueue::envelope, std::string>> sent;
  {
    babelqueue::app_options o;
    o.queue = queue_;
    babelqueue::app app(url_, o);
    for (const auto& c : expected) {
      auto env = babelqueue::make(c.urn, c.data, {.queue = queue_, .trace_id = c.trace_id}).value();
      auto id = app.publish(env, {.queue = "", .hdrs = c.hdrs});
      ASSERT_TRUE(id) << id.error().message;
      sent.emplace_back(env, babelqueue::encode(env).value());
    }
  }
  auto got = run_peer({"receive", conn_, queue_, std::to_string(expected.size())});
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE(expected[i].urn);
    const json& m = got[i];
    ASSERT_TRUE(m.contains("body")) << m.dump();
    EXPECT_EQ(m["body"], sent[i].second) << "the body byte for byte";
    EXPECT_EQ(m["body_type"], "DATA") << "one data section";
    EXPECT_EQ(m["subject"], expected[i].urn);
    EXPECT_EQ(m["correlation_id"], expected[i].trace_id);
    EXPECT_EQ(m["message_id"], std::string(sent[i].first.id()));
    EXPECT_EQ(m["content_type"], "application/json");
    const json& p = m["properties"];
    EXPECT_EQ(p["bq-schema-version"]["type"], "int") << p.dump();
    EXPECT_EQ(p["bq-schema-version"]["value"], 1);
    EXPECT_EQ(p["bq-created-at"]["type"], "int");
    EXPECT_EQ(p["bq-created-at"]["value"], *sent[i].first.created_at());
    EXPECT_EQ(p["bq-source-lang"]["value"], "cpp");
    for (const auto& [k, v] : expected[i].hdrs) EXPECT_EQ(p[k]["value"], v) << k;
  }
}

TEST_F(AsbPythonInterop, ThePythonSdkPublishesAndTheCppAppConsumes) {
  const auto expected = cases();
  auto ids = run_peer({"publish", conn_, queue_, cases_json()});
  ASSERT_EQ(ids.size(), expected.size());
  babelqueue::app_options o;
  o.queue = queue_;
  o.poll_timeout = 300ms;
  babelqueue::app app(url_, o);
  std::vector<json> seen;
  for (const auto& c : expected) {
    app.handle(c.urn, [&](babelqueue::message& m) {
      seen.push_back({{"urn", std::string(m.urn())},
                      {"trace_id", std::string(m.trace_id())},
                      {"data", m.data()},
                      {"attempts", m.attempts()},
                      {"lang", std::string(m.env().lang())}});
    });
  }
  auto n = app.drain();
  ASSERT_TRUE(n) << n.error().message;
  ASSERT_EQ(seen.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE(expected[i].urn);
    EXPECT_EQ(seen[i]["urn"], expected[i].urn);
    EXPECT_EQ(seen[i]["trace_id"], expected[i].trace_id) << "trace_id preserved";
    EXPECT_EQ(seen[i]["data"], expected[i].data);
    EXPECT_EQ(seen[i]["attempts"], 0);
    EXPECT_EQ(seen[i]["lang"], "python");
  }
}

// A C++ delayed publish (4 s) reaches the azure-servicebus client, receiving since before the
// due time, no earlier than 4 s after the publish began; the SDK reads the annotation as its
// ScheduledEnqueueTime (the instant the front saw) and `bq-delay` as an int of 4000.
TEST_F(AsbPythonInterop, ACppScheduledPublishReachesTheAzureSdkAtItsTime) {
  start_front();
  auto t = babelqueue::open_transport(front_url_);
  ASSERT_TRUE(t) << t.error().message;
  const auto env = babelqueue::make("urn:babel:interop:unicode", json{{"n", 1}},
                                    {.queue = queue_, .trace_id = "trace-cpp-scheduled"})
                       .value();
  const std::string body = babelqueue::encode(env).value();
  auto python = std::async(std::launch::async, [&] {
    return run_peer({"receive-timed", conn_, queue_, "1"});
  });
  const auto published_ms = wall_ms();
  auto r = (*t)->publish_delayed(queue_, body, {}, 4s);
  ASSERT_TRUE(r) << r.error().message;
  auto lines = python.get();
  ASSERT_EQ(lines.size(), 2u);
  ASSERT_TRUE(lines[0]["polling_ms"].is_number()) << lines[0].dump();
  EXPECT_LT(lines[0]["polling_ms"].get<std::int64_t>(), published_ms + 4000)
      << "the SDK was not receiving before the due time: 'not before' is unproven";
  const json& m = lines[1];
  ASSERT_TRUE(m.contains("received_ms")) << m.dump();
  EXPECT_GE(m["received_ms"].get<std::int64_t>(), published_ms + 4000 - 100) << "received early";
  EXPECT_EQ(m["body"], body);
  const auto seen = front_->seen();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].amqp_type, 0x83);
  EXPECT_EQ(m["scheduled_ms"], seen[0].value_ms) << "the SDK's ScheduledEnqueueTime";
  EXPECT_EQ(m["properties"]["bq-delay"]["type"], "int");
  EXPECT_EQ(m["properties"]["bq-delay"]["value"], 4000);
}

// The azure-servicebus client's own scheduled send (ServiceBusMessage(scheduled_enqueue_time_utc))
// carries the annotation as an AMQP timestamp of its due time — the type C++ sends — and
// reaches a C++ consumer polling all along only at that time, byte for byte.
TEST_F(AsbPythonInterop, TheAzureSdkScheduledSendReachesCppAtItsTime) {
  start_front();
  auto t = babelqueue::open_transport(url_);
  ASSERT_TRUE(t) << t.error().message;
  std::optional<babelqueue::received_message> got;
  std::int64_t received_ms = 0;
  std::thread consumer([&] {
    const auto until = std::chrono::steady_clock::now() + 40s;
    while (!got && std::chrono::steady_clock::now() < until) {
      auto r = (*t)->receive(queue_, 2s);
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
  auto lines = run_peer({"send-scheduled", front_conn_, queue_, "4000"});
  consumer.join();
  ASSERT_EQ(lines.size(), 1u);
  ASSERT_TRUE(lines[0].contains("due_ms")) << lines[0].dump();
  const auto due = lines[0]["due_ms"].get<std::int64_t>();
  const auto seen = front_->seen();
  ASSERT_EQ(seen.size(), 1u) << "the SDK's send went through the front";
  EXPECT_EQ(seen[0].amqp_type, 0x83) << "the Microsoft SDK sends an AMQP timestamp, as C++";
  EXPECT_NEAR(static_cast<double>(seen[0].value_ms), static_cast<double>(due), 1.0);
  EXPECT_TRUE(seen[0].held) << seen[0].why;
  ASSERT_TRUE(got) << "never delivered";
  EXPECT_GE(received_ms, due - 100) << "delivered before its ScheduledEnqueueTime";
  EXPECT_EQ(got->body, lines[0]["body"].get<std::string>()) << "byte for byte";
  ASSERT_TRUE((*t)->ack(*got));
}
