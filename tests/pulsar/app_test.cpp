// The D5 runtime rules over pulsar:// (the App on a real Pulsar standalone): retry arithmetic
// with the DLQ topic `<queue>.dlq` carrying attempts 3 and the `dead_letter` block, poison
// bytes dead-lettered unchanged, a refused bq-schema-version dead-lettered unchanged, the
// redelivery count honoured, unknown-URN release, trace_id and headers on every hop, four
// workers sharing one Shared subscription.
#include "pulsar/pulsar_fixture.hpp"

#include <babelqueue/runtime/app.hpp>

#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

using namespace std::chrono_literals;
using babelqueue::json;

namespace {

class PulsarApp : public bqtest::PulsarTest {
 protected:
  void SetUp() override {
    bqtest::PulsarTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    babelqueue::pulsar::register_transport();
    url_ = bqtest::pulsar_url() + "?negative_ack_delay=200ms";
    // The DLQ topic exists before anything is dead-lettered to it (the transport would make
    // sure of its subscription on first publish anyway; the peer reads through it).
    ASSERT_TRUE(peer_->subscribe(dlq()));
  }
  babelqueue::app_options app_opts() {
    babelqueue::app_options o;
    o.queue = queue_;
    o.poll_timeout = 500ms;
    o.dead_letter = true;
    return o;
  }
  std::string dlq() const { return queue_ + ".dlq"; }
  std::string url_;
};

}  // namespace

TEST_F(PulsarApp, RetriesSeeZeroOneTwoAndTheDlqCarriesThree) {
  babelqueue::app app(url_, app_opts());
  std::vector<std::int64_t> seen;
  app.handle("urn:babel:orders:created", [&](babelqueue::message& m) {
    seen.push_back(m.attempts());
    throw std::runtime_error("Payment gateway timeout");
  });
  auto id = app.publish("urn:babel:orders:created", json{{"order_id", 1}},
                        {.queue = "", .trace_id = "trace-pulsar-app", .hdrs = {}});
  ASSERT_TRUE(id) << id.error().message;
  auto n = app.drain();
  ASSERT_TRUE(n) << n.error().message;
  EXPECT_EQ(*n, 3u);
  EXPECT_EQ(seen, (std::vector<std::int64_t>{0, 1, 2}));
  auto raw = peer_->get(dlq(), 10s);
  ASSERT_TRUE(raw) << "dead-lettered to " << dlq();
  auto env = babelqueue::decode(raw->payload).value();
  EXPECT_EQ(env.attempts(), 3);
  EXPECT_EQ(env.id(), *id);
  EXPECT_EQ(env.trace_id(), "trace-pulsar-app");
  ASSERT_TRUE(env.dead_letter());
  EXPECT_EQ(env.dead_letter()->reason, "failed");
  EXPECT_EQ(bqtest::property_of(*raw, "bq-attempts"), "3") << "bq-attempts = the body's";
  EXPECT_EQ(bqtest::property_of(*raw, "bq-trace-id"), "trace-pulsar-app")
      << "trace_id on every hop";
  EXPECT_EQ(bqtest::property_of(*raw, "bq-job"), "urn:babel:orders:created");
  EXPECT_EQ(peer_->drain(queue_), 0) << "nothing left on the work topic";
}

TEST_F(PulsarApp, PoisonBytesAreDeadLetteredUnchanged) {
  ASSERT_TRUE(peer_->subscribe(queue_));
  const std::vector<std::string> garbage = {"not json", R"({"job":"urn:babel:x:y"})",
                                            R"({"schema_version":2,"job":"urn:babel:x:y"})",
                                            std::string("\xff\xfe bytes", 8)};
  for (const auto& g : garbage) ASSERT_TRUE(peer_->send(queue_, g));
  babelqueue::app app(url_, app_opts());
  app.handle("urn:babel:test:item", [](babelqueue::message&) {});
  ASSERT_TRUE(app.drain());
  std::multiset<std::string> got;
  while (auto m = peer_->get(dlq(), 3s)) got.insert(m->payload);
  EXPECT_EQ(got, std::multiset<std::string>(garbage.begin(), garbage.end()))
      << "the original bytes";
}

TEST_F(PulsarApp, ARefusedSchemaVersionPropertyIsDeadLetteredWithoutDecoding) {
  ASSERT_TRUE(peer_->subscribe(queue_));
  const std::string body = bqtest::envelope_text(1);
  ASSERT_TRUE(peer_->send(queue_, body, {{"bq-schema-version", "2"}}));
  babelqueue::app app(url_, app_opts());
  int handled = 0;
  app.handle("urn:babel:test:item", [&](babelqueue::message&) { ++handled; });
  ASSERT_TRUE(app.drain());
  EXPECT_EQ(handled, 0) << "never decoded, never handled";
  auto m = peer_->get(dlq());
  ASSERT_TRUE(m);
  EXPECT_EQ(m->payload, body) << "unchanged";
}

TEST_F(PulsarApp, TheRedeliveryCountCountsTowardsTheLimit) {
  // Two negative acks by another consumer: body attempts 0, redelivery count 2 on the next
  // delivery = attempts 2 (no -1). One more failure is 3: the DLQ. The broker keeps a Shared
  // subscription's redelivery counts only while the subscription has a consumer, so the other
  // consumer holds its third delivery until the App's workers are subscribed, then goes.
  auto t = open("receiver_queue=1");
  ASSERT_TRUE(t);
  ASSERT_TRUE(t->publish(queue_, bqtest::envelope_text(5)));
  for (int i = 0; i < 3; ++i) {
    auto got = t->receive(queue_, 10s);
    ASSERT_TRUE(got) << got.error().message;
    ASSERT_TRUE(got->has_value()) << "delivery " << i;
    EXPECT_EQ((*got)->delivery_count, i);
    if (i < 2) {
      ASSERT_TRUE(t->release(**got));
    }
  }
  babelqueue::app app(url_, app_opts());
  std::mutex m;
  std::vector<std::int64_t> seen;
  app.handle("urn:babel:test:item", [&](babelqueue::message& msg) {
    std::lock_guard lk(m);
    seen.push_back(msg.attempts());
    throw std::runtime_error("boom");
  });
  std::thread consumer([&] { (void)app.consume(); });
  std::this_thread::sleep_for(1500ms);  // the App's workers subscribe
  t.reset();                            // the held delivery goes back, its count kept
  auto raw = peer_->get(dlq(), 20s);
  app.stop();
  consumer.join();
  ASSERT_TRUE(raw);
  EXPECT_EQ(babelqueue::decode(raw->payload)->attempts(), 3);
  std::lock_guard lk(m);
  EXPECT_EQ(seen, (std::vector<std::int64_t>{2}));
}

TEST_F(PulsarApp, AnUnknownUrnIsReleasedUnchanged) {
  auto o = app_opts();
  o.on_unknown_urn = babelqueue::unknown_urn_strategy::release;
  o.max_attempts = 100;
  babelqueue::app app(url_, o);
  app.handle("urn:babel:test:item", [](babelqueue::message&) {});
  const std::string stranger = bqtest::envelope_text(1, "urn:babel:other:thing");
  ASSERT_TRUE(peer_->subscribe(queue_));
  {
    auto t = open();
    ASSERT_TRUE(t->publish(queue_, stranger, {{"traceparent", "tp-x"}}));
  }
  ASSERT_TRUE(app.drain());
  auto m = peer_->get(queue_, 10s);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->payload, stranger) << "same bytes";
  EXPECT_EQ(bqtest::property_of(*m, "traceparent"), "tp-x") << "same properties";
  // Released (a negative ack), never acknowledged: it is back. (Its redelivery count may
  // still be 0: the App's consumer closed before the ack's 200 ms delay had passed, and a
  // consumer's close hands its unsettled messages back without counting.)
}

TEST_F(PulsarApp, OutOfBandHeadersSurviveARetry) {
  babelqueue::app app(url_, app_opts());
  std::vector<std::string> seen;
  int calls = 0;
  app.handle("urn:babel:test:item", [&](babelqueue::message& m) {
    auto it = m.hdrs().find("tenant");
    seen.push_back(it == m.hdrs().end() ? "<none>" : it->second);
    if (++calls == 1) throw std::runtime_error("once");
  });
  ASSERT_TRUE(app.publish("urn:babel:test:item", json{{"n", 1}},
                          {.queue = "", .trace_id = "", .hdrs = {{"tenant", "acme"}}}));
  ASSERT_TRUE(app.drain());
  EXPECT_EQ(seen, (std::vector<std::string>{"acme", "acme"}));
}

TEST_F(PulsarApp, FourWorkersShareTheSubscriptionAndEachMessageIsHandledOnce) {
  auto o = app_opts();
  o.workers = 4;
  o.max_attempts = 5;
  babelqueue::app app(url_ + "&receiver_queue=20", o);
  constexpr int n = 200;
  std::mutex m;
  std::map<long, int> handled;
  std::atomic<int> done{0};
  app.handle("urn:babel:test:item", [&](babelqueue::message& msg) {
    const long k = msg.data().at("n").get<long>();
    if (k % 10 == 0 && msg.attempts() == 0) throw std::runtime_error("first try fails");
    {
      std::lock_guard lk(m);
      ++handled[k];
    }
    if (++done == n) app.stop();
  });
  std::vector<babelqueue::outgoing_message> batch;
  for (long i = 0; i < n; ++i) batch.push_back({bqtest::envelope_text(i), {}});
  {
    auto t = open();
    ASSERT_TRUE(t->publish_batch(queue_, batch));
  }
  std::thread stopper([&] {
    for (int i = 0; i < 600 && !app.stop_requested(); ++i) std::this_thread::sleep_for(100ms);
    app.stop();
  });
  auto r = app.consume();
  stopper.join();
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(done.load(), n);
  EXPECT_EQ(handled.size(), static_cast<std::size_t>(n));
  for (const auto& [k, count] : handled) EXPECT_EQ(count, 1) << "message " << k;
  EXPECT_EQ(peer_->drain(queue_), 0) << "everything settled";
  EXPECT_FALSE(peer_->get(dlq(), 1s)) << "nothing dead-lettered";
}
