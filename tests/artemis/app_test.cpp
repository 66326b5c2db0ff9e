// The D5 runtime rules over artemis:// (the App on Artemis): retry arithmetic with the DLQ
// carrying 3 in the body and bq_attempts, poison bytes dead-lettered unchanged, the
// broker's delivery-count honoured, unknown-URN release, trace_id as correlation-id on
// every hop, headers surviving a retry.
#include "artemis/artemis_fixture.hpp"

#include <babelqueue/runtime/app.hpp>

#include <proton/binary.hpp>
#include <proton/message_id.hpp>
#include <proton/scalar.hpp>

#include <atomic>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>

using namespace std::chrono_literals;
using babelqueue::json;

namespace {

using bqtest::prop;

class ArtemisApp : public bqtest::ArtemisTest {
 protected:
  babelqueue::app_options app_opts() {
    babelqueue::artemis::register_transport();
    babelqueue::app_options o;
    o.queue = queue_;
    o.poll_timeout = 300ms;
    o.dead_letter = true;
    return o;
  }
};

std::string text_body(const proton::message& m) {
  if (m.body().type() == proton::BINARY) return std::string(proton::get<proton::binary>(m.body()));
  return proton::get<std::string>(m.body());
}

}  // namespace

TEST_F(ArtemisApp, RetriesSeeZeroOneTwoAndTheDlqCarriesThreeInBodyAndProperty) {
  babelqueue::app app(bqtest::artemis_url(), app_opts());
  std::vector<std::int64_t> seen;
  app.handle("urn:babel:orders:created", [&](babelqueue::message& m) {
    seen.push_back(m.attempts());
    throw std::runtime_error("Payment gateway timeout");
  });
  auto id = app.publish("urn:babel:orders:created", json{{"order_id", 1}},
                        {.queue = "", .trace_id = "trace-artemis-1", .hdrs = {}});
  ASSERT_TRUE(id) << id.error().message;
  auto n = app.drain();
  ASSERT_TRUE(n) << n.error().message;
  EXPECT_EQ(*n, 3u);
  EXPECT_EQ(seen, (std::vector<std::int64_t>{0, 1, 2}));
  EXPECT_EQ(peer_->drain(queue_), 0);
  auto dlq = peer_->get(queue_ + ".dlq");
  ASSERT_TRUE(dlq);
  auto env = babelqueue::decode(text_body(*dlq)).value();
  EXPECT_EQ(env.attempts(), 3);
  EXPECT_EQ(env.id(), *id);
  EXPECT_EQ(env.trace_id(), "trace-artemis-1");
  ASSERT_TRUE(env.dead_letter());
  EXPECT_EQ(env.dead_letter()->reason, "failed");
  EXPECT_EQ(prop(*dlq, "bq_attempts"), "3");
  EXPECT_EQ(proton::get<std::string>(dlq->correlation_id()), "trace-artemis-1")
      << "trace_id on every hop";
  EXPECT_EQ(dlq->subject(), "urn:babel:orders:created");
}

TEST_F(ArtemisApp, PoisonBytesAreDeadLetteredUnchanged) {
  const std::vector<std::string> garbage = {"not json", std::string("\xff\xfe\x00 bin", 7),
                                            R"({"job":"urn:babel:x:y"})"};
  for (const auto& g : garbage) {
    proton::message m;
    m.body(proton::binary(g));
    ASSERT_TRUE(peer_->send(queue_, m));
  }
  babelqueue::app app(bqtest::artemis_url(), app_opts());
  app.handle("urn:babel:test:item", [](babelqueue::message&) {});
  ASSERT_TRUE(app.drain());
  for (const auto& g : garbage) {
    auto m = peer_->get(queue_ + ".dlq");
    ASSERT_TRUE(m);
    EXPECT_EQ(text_body(*m), g) << "the original bytes, never re-encoded";
  }
  EXPECT_EQ(peer_->drain(queue_), 0);
}

TEST_F(ArtemisApp, TheBrokersDeliveryCountCountsTowardsTheLimit) {
  // Two failed deliveries elsewhere (a .NET/Node consumer's modified{delivery-failed}):
  // body attempts 0, delivery-count 2. One more failure reaches 3.
  {
    auto t = open();
    ASSERT_TRUE(t);
    ASSERT_TRUE(t->publish(queue_, bqtest::envelope_text(5)));
    for (int i = 0; i < 2; ++i) {
      auto got = t->receive(queue_, 5s);
      ASSERT_TRUE(got && got->has_value());
      ASSERT_TRUE(t->release(**got));
    }
  }
  babelqueue::app app(bqtest::artemis_url(), app_opts());
  std::vector<std::int64_t> seen;
  app.handle("urn:babel:test:item", [&](babelqueue::message& m) {
    seen.push_back(m.attempts());
    throw std::runtime_error("boom");
  });
  ASSERT_TRUE(app.drain());
  EXPECT_EQ(seen, (std::vector<std::int64_t>{2}));
  auto dlq = peer_->get(queue_ + ".dlq");
  ASSERT_TRUE(dlq);
  EXPECT_EQ(babelqueue::decode(text_body(*dlq))->attempts(), 3);
}

TEST_F(ArtemisApp, AnUnknownUrnIsReleasedUnchanged) {
  auto o = app_opts();
  o.on_unknown_urn = babelqueue::unknown_urn_strategy::release;
  // The broker's own release, at once (a backed-off release is a delayed republish:
  // docs/delays.md).
  o.retry = babelqueue::retry_policy::immediate();
  o.max_attempts = 100;
  babelqueue::app app(bqtest::artemis_url(), o);
  app.handle("urn:babel:test:item", [](babelqueue::message&) {});
  const std::string stranger = bqtest::envelope_text(1, "urn:babel:other:thing");
  {
    auto t = open();
    ASSERT_TRUE(t->publish(queue_, stranger, {{"traceparent", "tp-x"}}));
  }
  ASSERT_TRUE(app.drain());
  auto m = peer_->get(queue_);
  ASSERT_TRUE(m);
  EXPECT_EQ(text_body(*m), stranger) << "same bytes";
  EXPECT_EQ(prop(*m, "traceparent"), "tp-x") << "same properties";
  EXPECT_GE(m->delivery_count(), 1u) << "modified{delivery-failed}: the broker counted it";
}

TEST_F(ArtemisApp, OutOfBandHeadersSurviveARetry) {
  babelqueue::app app(bqtest::artemis_url(), app_opts());
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

TEST_F(ArtemisApp, FourWorkersShareTheQueueAndEachMessageIsHandledOnce) {
  // consume() with workers = 4: four transports (four connections, four Proton threads)
  // on one queue, a failure in every tenth message retried; stop once all are done.
  auto o = app_opts();
  o.workers = 4;
  o.max_attempts = 5;
  babelqueue::app app(bqtest::artemis_url(), o);
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
  for (long i = 0; i < n; ++i) {
    ASSERT_TRUE(app.publish("urn:babel:test:item", json{{"n", i}}));
  }
  std::thread stopper([&] {
    for (int i = 0; i < 600 && !app.stop_requested(); ++i) std::this_thread::sleep_for(100ms);
    app.stop();  // a bound, should the test fail
  });
  auto r = app.consume();
  stopper.join();
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(done.load(), n);
  EXPECT_EQ(handled.size(), static_cast<std::size_t>(n));
  for (const auto& [k, count] : handled) EXPECT_EQ(count, 1) << "message " << k;
  EXPECT_EQ(peer_->drain(queue_, 300ms), 0) << "everything settled";
  EXPECT_FALSE(peer_->get(queue_ + ".dlq", 300ms)) << "nothing dead-lettered";
}
