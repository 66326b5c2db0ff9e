// redrive() and list_dead_letters() over real transports: memory://, sqlite:// (a file) and
// redis:// (a private redis-server), the same cases on each. The publish-failure case uses the
// FAULT-INJECTING wrapper of tests/outbox (a real broker cannot be told to fail one chosen
// publish).
#include "outbox/fault_injecting_transport.hpp"
#include "redis/redis_server.hpp"
#include "support/files.hpp"
#include "support/services.hpp"

#include <babelqueue/codec.hpp>
#include <babelqueue/dead_letter.hpp>
#include <babelqueue/memory/memory_transport.hpp>
#include <babelqueue/redis/redis_transport.hpp>
#include <babelqueue/redrive/dead_letters.hpp>
#include <babelqueue/redrive/redrive.hpp>
#include <babelqueue/runtime/url.hpp>
#include <babelqueue/sqlite/sqlite_transport.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace babelqueue;
using namespace std::chrono_literals;

// A dead-lettered copy of a fresh envelope of `urn` made for `queue` (as the runtime writes it).
std::string dead_lettered(long n, const std::string& queue = "orders",
                          const std::string& urn = "urn:babel:orders:created") {
  json data = json::object();
  data["n"] = n;
  make_options mo;
  mo.queue = queue;
  auto env = make(urn, data, mo).value();
  env.set_attempts(3);
  auto dl = annotate(env, dead_letter_reason::failed, queue, 3, "boom " + std::to_string(n),
                     "std::runtime_error");
  return encode(dl).value();
}

long n_of(const std::string& body) {
  auto env = decode(body);
  if (!env) return -1;
  return env->data().value().value("n", -1L);
}

class Redrive : public ::testing::TestWithParam<std::string> {
 protected:
  static void SetUpTestSuite() {
    memory::register_transport();
    sqlite::register_transport();
    redis::register_transport();
    redis_ = bqtest::redis_server::start({}, redis_why_);
  }
  static void TearDownTestSuite() { redis_.reset(); }

  void SetUp() override {
    const std::string kind = GetParam();
    if (kind == "memory") {
      url_ = "memory://" + bqtest::unique_name("redrive");
    } else if (kind == "sqlite") {
      dir_ = std::filesystem::temp_directory_path() / bqtest::unique_name("redrive-sqlite");
      std::filesystem::create_directories(dir_);
      url_ = "sqlite://" + (dir_ / "q.db").string();
    } else {
      if (!redis_) {
        if (bqtest::under_ci()) FAIL() << "no redis-server: " << redis_why_;
        GTEST_SKIP() << "no redis-server: " << redis_why_;
      }
      url_ =
          "redis://127.0.0.1:" + std::to_string(redis_->port()) + "/" + std::to_string(db_++ % 16);
    }
    t_ = open_transport(url_).value();
    dlq_ = "orders.dlq";  // each test process has its own broker (memory name, file, redis-server)
  }
  void TearDown() override {
    if (t_) (void)t_->close(std::chrono::steady_clock::now() + 1s);
    t_.reset();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  // Every body now in `queue`, in order, left in place.
  std::vector<std::string> contents(const std::string& queue) {
    std::vector<std::string> out;
    for (auto& m : t_->peek(queue, 0, 1000).value()) out.push_back(m.body);
    return out;
  }
  std::vector<std::string> fill_dlq(int count, const std::string& queue = "orders") {
    std::vector<std::string> bodies;
    for (int i = 1; i <= count; ++i) {
      bodies.push_back(dead_lettered(i, queue));
      EXPECT_TRUE(t_->publish(dlq_, bodies.back()));
    }
    return bodies;
  }

  static inline std::unique_ptr<bqtest::redis_server> redis_;
  static inline std::string redis_why_;
  static inline int db_ = 0;
  std::string url_, dlq_;
  std::filesystem::path dir_;
  std::unique_ptr<transport> t_;
};

redrive_options quick() {
  redrive_options o;
  o.receive_timeout = 50ms;
  return o;
}

TEST_P(Redrive, RedrivesEachMessageResetToItsOriginalQueueAndEmptiesTheDlq) {
  auto bodies = fill_dlq(3);
  t_->publish("orders", "{}").value();  // unrelated traffic: stays first in the queue
  auto report = redrive(*t_, dlq_, quick());
  ASSERT_TRUE(report.ok()) << report.error->message;
  EXPECT_EQ(report.redriven, 3u);
  EXPECT_EQ(report.skipped, 0u);
  ASSERT_EQ(report.items.size(), 3u);
  EXPECT_TRUE(contents(dlq_).empty());
  auto out = contents("orders");
  ASSERT_EQ(out.size(), 4u);
  for (int i = 0; i < 3; ++i) {
    const auto& item = report.items[static_cast<std::size_t>(i)];
    auto original = decode(bodies[static_cast<std::size_t>(i)]).value();
    EXPECT_EQ(item.outcome, redrive_outcome::redriven);
    EXPECT_TRUE(item.redriven);
    EXPECT_FALSE(item.bypassed);
    EXPECT_EQ(item.id, original.id());
    EXPECT_EQ(item.trace_id, original.trace_id());
    EXPECT_EQ(item.urn, "urn:babel:orders:created");
    EXPECT_EQ(item.reason, "failed");
    EXPECT_EQ(item.error, "boom " + std::to_string(i + 1));
    EXPECT_EQ(item.from, dlq_);
    EXPECT_EQ(item.to, "orders");
    // Lossless reset: the body is the DLQ body minus dead_letter with attempts 0.
    EXPECT_EQ(out[static_cast<std::size_t>(i) + 1],
              reset_for_redrive(bodies[static_cast<std::size_t>(i)]).value());
    auto env = decode(out[static_cast<std::size_t>(i) + 1]).value();
    EXPECT_FALSE(env.has_dead_letter());
    EXPECT_EQ(env.attempts(), 0);
    EXPECT_EQ(env.trace_id(), original.trace_id());
  }
}

TEST_P(Redrive, DryRunReportsThePlanAndLeavesTheDlqAsItWas) {
  auto bodies = fill_dlq(3);
  auto o = quick();
  o.dry_run = true;
  auto report = redrive(*t_, dlq_, o);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report.redriven, 0u);
  EXPECT_EQ(report.skipped, 3u);
  for (const auto& item : report.items) {
    EXPECT_EQ(item.outcome, redrive_outcome::dry_run);
    EXPECT_EQ(item.to, "orders");
    EXPECT_FALSE(item.redriven);
  }
  EXPECT_EQ(contents(dlq_), bodies);  // same bytes, same order
  EXPECT_TRUE(contents("orders").empty());
}

TEST_P(Redrive, SelectToQueueMaxAndBypass) {
  std::vector<std::string> bodies = fill_dlq(2);
  const std::string other = dead_lettered(7, "billing", "urn:babel:billing:charged");
  t_->publish(dlq_, other).value();
  fill_dlq(2);  // two more orders after it
  // sqlite orders by (available_at ms, id): a message put back in the same millisecond as
  // the last publish would sort by id, ahead of the one not taken. Let the clock move on.
  std::this_thread::sleep_for(5ms);
  auto o = quick();
  o.select = [](const envelope& env) { return env.urn() == "urn:babel:orders:created"; };
  o.to_queue = "sandbox";
  o.bypass = true;
  o.max = 4;  // takes 1, 2, the billing one, 3; leaves the last
  auto report = redrive(*t_, dlq_, o);
  ASSERT_TRUE(report.ok());
  ASSERT_EQ(report.items.size(), 4u);
  EXPECT_EQ(report.redriven, 3u);
  EXPECT_EQ(report.skipped, 1u);
  EXPECT_EQ(report.items[2].outcome, redrive_outcome::unselected);
  EXPECT_EQ(report.items[2].to, "");
  EXPECT_EQ(report.items[0].to, "sandbox");
  EXPECT_TRUE(report.items[0].bypassed);
  // The DLQ keeps the one not taken, then the unselected one put back behind it.
  auto left = contents(dlq_);
  ASSERT_EQ(left.size(), 2u);
  EXPECT_EQ(n_of(left[0]), 2);
  EXPECT_EQ(left[1], other);
  // The redriven copies carry the replay marker.
  auto got = t_->receive("sandbox", 1s).value();
  ASSERT_TRUE(got);
  EXPECT_EQ(got->hdrs.at(std::string(replay_bypass_header)), "1");
  EXPECT_EQ(n_of(got->body), 1);
  t_->ack(*got).value();
}

TEST_P(Redrive, UndecodableAndTargetlessMessagesArePutBackUnchanged) {
  const std::string poison = "not json \xff";
  const std::string no_queue =
      R"({"job":"urn:babel:orders:created","trace_id":"t-1","data":{"n":1},"meta":{"id":"m-1","schema_version":1},"attempts":3})";
  t_->publish(dlq_, poison).value();
  t_->publish(dlq_, no_queue).value();
  auto report = redrive(*t_, dlq_, quick());
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report.redriven, 0u);
  EXPECT_EQ(report.skipped, 2u);
  EXPECT_EQ(report.items[0].outcome, redrive_outcome::undecodable);
  EXPECT_FALSE(report.items[0].detail.empty());
  EXPECT_EQ(report.items[1].outcome, redrive_outcome::no_target);
  EXPECT_EQ(report.items[1].id, "m-1");
  EXPECT_EQ(contents(dlq_), (std::vector<std::string>{poison, no_queue}));
}

TEST_P(Redrive, AMessageNamingAnotherQueueIsRefusedUnlessTheOperatorAllowsIt) {
  // dead_letter.original_queue is data anyone who can write to orders.dlq can set: by
  // default only `orders` (the DLQ's own queue) is a target.
  const std::string foreign = dead_lettered(1, "billing", "urn:babel:billing:charged");
  const std::string own = dead_lettered(2);
  t_->publish(dlq_, foreign).value();
  t_->publish(dlq_, own).value();
  auto report = redrive(*t_, dlq_, quick());
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report.redriven, 1u);
  EXPECT_EQ(report.skipped, 1u);
  ASSERT_EQ(report.items.size(), 2u);
  EXPECT_EQ(report.items[0].outcome, redrive_outcome::refused_target);
  EXPECT_EQ(report.items[0].to, "billing");
  EXPECT_NE(report.items[0].detail.find("'orders'"), std::string::npos) << report.items[0].detail;
  EXPECT_EQ(to_string(redrive_outcome::refused_target), "refused_target");
  EXPECT_TRUE(contents("billing").empty());
  EXPECT_EQ(contents(dlq_), (std::vector<std::string>{foreign}));  // put back unchanged
  EXPECT_EQ(contents("orders").size(), 1u);

  auto allowed = quick();
  allowed.allowed_queues = {"billing"};
  EXPECT_EQ(redrive(*t_, dlq_, allowed).redriven, 1u);
  EXPECT_EQ(contents("billing").size(), 1u);
}

TEST_P(Redrive, ADlqNotNamedAfterItsQueueNeedsAnAllowedQueueOrAnyTarget) {
  const std::string other_dlq = "dead-letters";
  t_->publish(other_dlq, dead_lettered(1)).value();
  auto refused = redrive(*t_, other_dlq, quick());
  ASSERT_EQ(refused.items.size(), 1u);
  EXPECT_EQ(refused.items[0].outcome, redrive_outcome::refused_target);
  EXPECT_NE(refused.items[0].detail.find("does not say its queue"), std::string::npos)
      << refused.items[0].detail;
  auto any = quick();
  any.allow_any_target = true;
  EXPECT_EQ(redrive(*t_, other_dlq, any).redriven, 1u);
  EXPECT_EQ(contents("orders").size(), 1u);
}

TEST_P(Redrive, APublishFailureMidwayPutsBackEveryMessageNotRedriven) {
  auto bodies = fill_dlq(4);
  bqtest::fault_injecting_transport faulty(*t_);
  faulty.fail_publishes = {2};  // the second re-publish fails
  auto report = redrive(faulty, dlq_, quick());
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.error->code, make_error_code(transport_errc::unavailable));
  ASSERT_EQ(report.items.size(), 4u);
  EXPECT_EQ(report.items[0].outcome, redrive_outcome::redriven);
  EXPECT_EQ(report.items[1].outcome, redrive_outcome::failed);
  EXPECT_EQ(report.items[2].outcome, redrive_outcome::not_processed);
  EXPECT_EQ(report.items[3].outcome, redrive_outcome::not_processed);
  EXPECT_EQ(report.items[3].id, decode(bodies[3]).value().id());
  EXPECT_EQ(report.redriven, 1u);
  // Nothing lost: one in orders, the other three back in the DLQ, unchanged and in order.
  ASSERT_EQ(contents("orders").size(), 1u);
  EXPECT_EQ(contents(dlq_), (std::vector<std::string>{bodies[1], bodies[2], bodies[3]}));
  // A second run finishes the job.
  auto again = redrive(*t_, dlq_, quick());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again.redriven, 3u);
  EXPECT_EQ(contents("orders").size(), 4u);
}

TEST_P(Redrive, AReceiveFailureWhileDrainingPutsBackWhatWasTaken) {
  auto bodies = fill_dlq(3);
  std::this_thread::sleep_for(5ms);  // sqlite: see SelectToQueueMaxAndBypass
  bqtest::fault_injecting_transport faulty(*t_);
  faulty.fail_receives_after = 2;  // the broker goes away after two messages were taken
  auto report = redrive(faulty, dlq_, quick());
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.error->code, make_error_code(transport_errc::unavailable));
  ASSERT_EQ(report.items.size(), 2u);
  EXPECT_EQ(report.items[0].outcome, redrive_outcome::not_processed);
  EXPECT_EQ(report.items[1].outcome, redrive_outcome::not_processed);
  EXPECT_EQ(report.redriven, 0u);
  // Nothing published, nothing lost: the two taken are back behind the one never taken.
  EXPECT_TRUE(contents("orders").empty());
  EXPECT_EQ(contents(dlq_), (std::vector<std::string>{bodies[2], bodies[0], bodies[1]}));
}

TEST_P(Redrive, ListingABrokerThatCannotPeekNeedsReceiveAndRelease) {
  auto bodies = fill_dlq(3);
  bqtest::fault_injecting_transport no_peek(*t_);  // capability-hiding wrapper (test only)
  no_peek.hide_peek = true;
  auto refused = list_dead_letters(no_peek, dlq_);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, make_error_code(transport_errc::not_supported));
  dead_letter_list_options o;
  o.receive_and_release = true;
  o.receive_timeout = 50ms;
  auto listed = list_dead_letters(no_peek, dlq_, o).value();
  ASSERT_EQ(listed.size(), 3u);
  EXPECT_EQ(listed[0].body, bodies[0]);
  EXPECT_EQ(listed[2].body, bodies[2]);
  // Released in order: all three still there, in their order.
  EXPECT_EQ(contents(dlq_), bodies);
}

TEST_P(Redrive, ListingPeeksWithoutConsumingOrReordering) {
  auto bodies = fill_dlq(5);
  t_->publish(dlq_, "garbage").value();
  auto all = list_dead_letters(*t_, dlq_).value();
  ASSERT_EQ(all.size(), 6u);
  EXPECT_TRUE(all[0].decodable);
  EXPECT_EQ(all[0].id, decode(bodies[0]).value().id());
  EXPECT_EQ(all[0].reason, "failed");
  EXPECT_EQ(all[0].error, "boom 1");
  EXPECT_EQ(all[0].exception, "std::runtime_error");
  EXPECT_EQ(all[0].original_queue, "orders");
  EXPECT_EQ(all[0].attempts, 3);
  EXPECT_GT(all[0].failed_at, 0);
  EXPECT_FALSE(all[5].decodable);
  EXPECT_EQ(all[5].body, "garbage");
  dead_letter_list_options page;
  page.offset = 2;
  page.limit = 2;
  auto two = list_dead_letters(*t_, dlq_, page).value();
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0].body, bodies[2]);
  EXPECT_EQ(two[1].body, bodies[3]);
  // The queue is exactly as before: the next receive gets the first message.
  auto got = t_->receive(dlq_, 1s).value();
  ASSERT_TRUE(got);
  EXPECT_EQ(got->body, bodies[0]);
  if (got->delivery_count) {
    EXPECT_EQ(*got->delivery_count, 1);
  }
  t_->ack(*got).value();
}

INSTANTIATE_TEST_SUITE_P(Transports, Redrive, ::testing::Values("memory", "sqlite", "redis"),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

TEST(RedriveReset, KeepsEveryByteButAttemptsAndTheDeadLetterBlock) {
  // Unknown keys, key order and exact number text survive (D4).
  const std::string in =
      R"({"job":"urn:babel:orders:created","trace_id":"t","data":{"big":123456789012345678901234,"p":1.10,"e":1E2},"meta":{"id":"m","queue":"orders","schema_version":1,"x_custom":[1,2]},"attempts":4,"x_top":{"k":"v"},"dead_letter":{"reason":"failed","error":"e","exception":null,"failed_at":1,"original_queue":"orders","attempts":4,"lang":"go"}})";
  const std::string want =
      R"({"job":"urn:babel:orders:created","trace_id":"t","data":{"big":123456789012345678901234,"p":1.10,"e":1E2},"meta":{"id":"m","queue":"orders","schema_version":1,"x_custom":[1,2]},"attempts":0,"x_top":{"k":"v"}})";
  EXPECT_EQ(reset_for_redrive(in).value(), want);
  EXPECT_FALSE(reset_for_redrive("[1]"));
}

TEST(RedriveReset, TheConformanceDeadLetteredFixtureLosesOnlyItsBlock) {
  const std::string text = babelqueue::test::read_file(std::string(BABELQUEUE_CONFORMANCE_DIR) +
                                                       "/fixtures/dead-lettered.json");
  auto reset = decode(reset_for_redrive(text).value()).value();
  auto original = decode(text).value();
  EXPECT_FALSE(reset.has_dead_letter());
  EXPECT_EQ(reset.attempts(), 0);
  EXPECT_EQ(reset.id(), original.id());
  EXPECT_EQ(reset.data_text(), original.data_text());
  EXPECT_EQ(reset.meta_text(), original.meta_text());
}

TEST(RedriveArguments, AnEmptyDlqNameIsAnError) {
  memory::register_transport();
  auto t = open_transport("memory://" + bqtest::unique_name("args")).value();
  auto report = redrive(*t, "");
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.error->code, make_error_code(transport_errc::invalid_argument));
}

}  // namespace
