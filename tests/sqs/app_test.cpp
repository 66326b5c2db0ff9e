// The D5 runtime rules over sqs:// (the App on ElasticMQ): retry arithmetic with the DLQ
// (`<queue>-dlq`, the legal name of the contract's `<queue>.dlq`) carrying attempts 3,
// poison bytes dead-lettered unchanged, a refused bq-schema-version dead-lettered
// unchanged, SQS's receive count honoured, unknown-URN release, trace_id and headers on
// every hop, four workers sharing a queue.
#include "sqs/sqs_fixture.hpp"

#include <babelqueue/runtime/app.hpp>

#include <atomic>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>

using namespace std::chrono_literals;
using babelqueue::json;

namespace {

class SqsApp : public bqtest::SqsTest {
 protected:
  void SetUp() override {
    bqtest::SqsTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    babelqueue::sqs::register_transport();
    url_ = bqtest::sqs_url() + "&create_queues=true";
  }
  babelqueue::app_options app_opts() {
    babelqueue::app_options o;
    o.queue = queue_;
    o.poll_timeout = 300ms;
    o.dead_letter = true;
    return o;
  }
  std::string dlq() const { return queue_ + "-dlq"; }
  std::string url_;
};

}  // namespace

TEST_F(SqsApp, RetriesSeeZeroOneTwoAndTheDlqCarriesThree) {
  babelqueue::app app(url_, app_opts());
  std::vector<std::int64_t> seen;
  app.handle("urn:babel:orders:created", [&](babelqueue::message& m) {
    seen.push_back(m.attempts());
    throw std::runtime_error("Payment gateway timeout");
  });
  auto id = app.publish("urn:babel:orders:created", json{{"order_id", 1}},
                        {.queue = "", .trace_id = "trace-sqs-app", .hdrs = {}});
  ASSERT_TRUE(id) << id.error().message;
  auto n = app.drain();
  ASSERT_TRUE(n) << n.error().message;
  EXPECT_EQ(*n, 3u);
  EXPECT_EQ(seen, (std::vector<std::int64_t>{0, 1, 2}));
  EXPECT_EQ(peer_->drain(queue_), 0);
  auto raw = peer_->get(dlq());
  ASSERT_TRUE(raw) << "dead-lettered to " << dlq();
  auto env = babelqueue::decode(raw->body).value();
  EXPECT_EQ(env.attempts(), 3);
  EXPECT_EQ(env.id(), *id);
  EXPECT_EQ(env.trace_id(), "trace-sqs-app");
  ASSERT_TRUE(env.dead_letter());
  EXPECT_EQ(env.dead_letter()->reason, "failed");
  EXPECT_EQ(bqtest::attribute_of(*raw, "bq-trace-id"), "trace-sqs-app") << "trace_id on every hop";
  EXPECT_EQ(bqtest::attribute_of(*raw, "bq-job"), "urn:babel:orders:created");
}

TEST_F(SqsApp, PoisonBytesAreDeadLetteredUnchanged) {
  const std::vector<std::string> garbage = {"not json", R"({"job":"urn:babel:x:y"})",
                                            R"({"schema_version":2,"job":"urn:babel:x:y"})"};
  for (const auto& g : garbage) ASSERT_TRUE(peer_->send(queue_, g));
  babelqueue::app app(url_, app_opts());
  app.handle("urn:babel:test:item", [](babelqueue::message&) {});
  ASSERT_TRUE(app.drain());
  std::multiset<std::string> got;
  while (auto m = peer_->get(dlq())) got.insert(m->body);
  EXPECT_EQ(got, std::multiset<std::string>(garbage.begin(), garbage.end()))
      << "the original bytes";
  EXPECT_EQ(peer_->drain(queue_), 0);
}

TEST_F(SqsApp, ARefusedSchemaVersionAttributeIsDeadLetteredWithoutDecoding) {
  const std::string body = bqtest::envelope_text(1);
  ASSERT_TRUE(peer_->send(queue_, body, {{"bq-schema-version", "Number", "2"}}));
  babelqueue::app app(url_, app_opts());
  int handled = 0;
  app.handle("urn:babel:test:item", [&](babelqueue::message&) { ++handled; });
  ASSERT_TRUE(app.drain());
  EXPECT_EQ(handled, 0) << "never decoded, never handled";
  auto m = peer_->get(dlq());
  ASSERT_TRUE(m);
  EXPECT_EQ(m->body, body) << "unchanged";
}

TEST_F(SqsApp, TheReceiveCountCountsTowardsTheLimit) {
  // Two failed deliveries elsewhere (released by another consumer): body attempts 0,
  // ApproximateReceiveCount 3 on the next delivery = attempts 2. One more failure is 3.
  {
    auto t = open();
    ASSERT_TRUE(t->publish(queue_, bqtest::envelope_text(5)));
    for (int i = 0; i < 2; ++i) {
      auto got = t->receive(queue_, 5s);
      ASSERT_TRUE(got && got->has_value());
      ASSERT_TRUE(t->release(**got));
    }
  }
  babelqueue::app app(url_, app_opts());
  std::vector<std::int64_t> seen;
  app.handle("urn:babel:test:item", [&](babelqueue::message& m) {
    seen.push_back(m.attempts());
    throw std::runtime_error("boom");
  });
  ASSERT_TRUE(app.drain());
  EXPECT_EQ(seen, (std::vector<std::int64_t>{2}));
  auto raw = peer_->get(dlq());
  ASSERT_TRUE(raw);
  EXPECT_EQ(babelqueue::decode(raw->body)->attempts(), 3);
}

TEST_F(SqsApp, AnUnknownUrnIsReleasedUnchanged) {
  auto o = app_opts();
  o.on_unknown_urn = babelqueue::unknown_urn_strategy::release;
  o.max_attempts = 100;
  babelqueue::app app(url_, o);
  app.handle("urn:babel:test:item", [](babelqueue::message&) {});
  const std::string stranger = bqtest::envelope_text(1, "urn:babel:other:thing");
  {
    auto t = open();
    ASSERT_TRUE(t->publish(queue_, stranger, {{"traceparent", "tp-x"}}));
  }
  ASSERT_TRUE(app.drain());
  auto m = peer_->get(queue_);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->body, stranger) << "same bytes";
  EXPECT_EQ(bqtest::attribute_of(*m, "traceparent"), "tp-x") << "same attributes";
  EXPECT_GE(std::stoi(m->receive_count.value_or("0")), 2) << "released, not deleted";
}

TEST_F(SqsApp, OutOfBandHeadersSurviveARetry) {
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

TEST_F(SqsApp, FourWorkersShareTheQueueAndEachMessageIsHandledOnce) {
  auto o = app_opts();
  o.workers = 4;
  o.max_attempts = 5;
  babelqueue::app app(url_, o);
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
  EXPECT_FALSE(peer_->get(dlq(), 1)) << "nothing dead-lettered";
}
