// The contract suite on the live brokers of scripts/services.sh: every scheme (and mode) this
// build has. The URLs come from build/services/services.env (BABELQUEUE_*); a missing one
// skips, or fails under CI / BABELQUEUE_REQUIRE_SERVICES=1.
#include "support/all_transports.hpp"
#include "transport_contract/contract_fixture.hpp"

#include <cstdlib>

#ifdef BQ_HAVE_REDIS_SENTINEL
#include "redis/sentinel_group.hpp"
#endif
#ifdef BQ_HAVE_KAFKA
#include <babelqueue/kafka/reinjector.hpp>

#include <thread>
#endif
#ifdef BQ_HAVE_ASB
#include "asb/scheduling_front.hpp"
#endif

namespace bqcontract {

void register_transports() { bqtest::register_all_transports(); }

namespace {

[[maybe_unused]] std::string sqs_url(const std::string& options) {
  std::string u = bqtest::env_or_empty("BABELQUEUE_SQS_URL");
  if (u.empty()) return u;
  // ElasticMQ checks no signature; the transport still wants credentials to sign with.
  ::setenv("AWS_ACCESS_KEY_ID", "test", 0);
  ::setenv("AWS_SECRET_ACCESS_KEY", "test", 0);
  // Queues made on first use; a 5 s visibility timeout so that a message a closed consumer
  // held comes back within a case.
  return with_option(u, "create_queues=true&visibility=5" + options);
}

#ifdef BQ_HAVE_ASB
// The sb:// URL of the Service Bus stand-in, through its scheduling front (started on first
// use, kept to the process's end; tests/asb/scheduling_front.hpp): Artemis ignores
// ScheduledEnqueueTime (`x-opt-scheduled-enqueue-time`), the front checks that annotation is a
// timestamp and makes the broker hold the message until then, as Service Bus would. Everything
// else passes the front byte for byte.
std::string sb_url(const std::string&) {
  std::string cs = bqtest::env_or_empty("BABELQUEUE_ASB_CONNECTION_STRING");
  if (cs.empty()) return cs;
  auto u = babelqueue::asb::url_from_connection_string(cs);
  if (!u) return {};
  static std::unique_ptr<bqtest::scheduling_front> front;
  if (!front) {
    std::uint16_t upstream = 0;
    if (!bqtest::scheduling_front::through(*u, 0, &upstream)) return *u;
    std::string why;
    front = bqtest::scheduling_front::start(upstream, why);
    if (!front) return *u;  // the delay cases then fail, naming the early delivery
  }
  return bqtest::scheduling_front::through(*u, front->port()).value_or(*u);
}
#endif

#ifdef BQ_HAVE_REDIS_SENTINEL
// `redis+sentinel://` of a Sentinel group (a primary, a replica, three Sentinels) this test
// process starts on first use (tests/redis/sentinel_group.hpp) and keeps to its end; empty
// when redis-server cannot be started.
std::string sentinel_url(const std::string&) {
  static std::unique_ptr<bqtest::sentinel_group> group;
  static std::string why;
  if (!group && why.empty()) {
    group = bqtest::sentinel_group::start({}, why);
    if (!group && why.empty()) why = "the Sentinel group did not start";
  }
  return group ? group->url("?connect_timeout=500ms&command_timeout=5s") : std::string();
}
#endif

#ifdef BQ_HAVE_REDIS
// close() gives back only prefetched messages: one a consumer took and never settled stays
// reserved — in `<queue>:processing` until recover() (owned layout, D6), in `:reserved` until
// its expiry (laravel=1) — for retry_after, 90 s by default.
const std::pair<std::string, std::string> redis_close_gap = {
    "AConsumerClosingWithoutAckGivesTheMessageBack",
    "redis: close() leaves a taken, unsettled message reserved until recover() / the "
    ":reserved expiry (retry_after, 90 s)"};
#endif

#ifdef BQ_HAVE_SQS
// These cases send bodies that are not envelopes; a FIFO queue without content-based
// deduplication needs a MessageDeduplicationId, which the binding takes from the envelope id.
const std::pair<std::string, std::string> sqs_long_name_gap = {
    "AHeaderNameOverTheLimitIsATypedErrorAndNothingIsSent",
    "sqs: the projection (wire-brokers 1.1, conformance sqs.attribute_projection) drops a header "
    "whose name SQS cannot carry and sends the message"};
const std::string sqs_fifo_raw_body_gap =
    "sqs FIFO: a body that is not an envelope has no MessageDeduplicationId (the binding takes "
    "the envelope id), so the server refuses it (HTTP 400)";
#endif

#ifdef BQ_HAVE_KAFKA
// Kafka has no delay of its own (spec §6.4): a delayed publish or release waits on a retry
// tier `<topic>.retry.<n>` until a re-injector — a worker of its own in every SDK (here
// kafka::reinjector, as `babelqueue kafka reinject` runs it; Python's RetryReinjector) —
// moves it back to the work topic. The cases on time get one for their topic, started with
// their URL as a deployment runs one beside its workers, and stopped when the next kafka case
// asks for its URL (or at exit). No other case parks anything, so they run without.
class kafka_reinjector_for_case {
 public:
  kafka_reinjector_for_case(const std::string& url, const std::string& topic) {
    auto o = babelqueue::kafka::options_from_url(babelqueue::broker_url::parse(url).value());
    if (!o) {
      ADD_FAILURE() << o.error().message;
      return;
    }
    auto r = babelqueue::kafka::reinjector::open(std::move(*o), {topic});
    if (!r) {
      ADD_FAILURE() << "kafka re-injector: " << r.error().message;
      return;
    }
    reinjector_ = std::move(*r);
    thread_ = std::thread([this] { (void)reinjector_->run(); });
  }
  ~kafka_reinjector_for_case() {
    if (!reinjector_) return;
    reinjector_->stop();
    thread_.join();
    (void)reinjector_->close();
  }
  kafka_reinjector_for_case(const kafka_reinjector_for_case&) = delete;
  kafka_reinjector_for_case& operator=(const kafka_reinjector_for_case&) = delete;

 private:
  std::unique_ptr<babelqueue::kafka::reinjector> reinjector_;
  std::thread thread_;
};

std::string kafka_url(const std::string& id) {
  static std::unique_ptr<kafka_reinjector_for_case> running;
  running.reset();
  std::string b = bqtest::env_or_empty("BABELQUEUE_KAFKA_BOOTSTRAP");
  if (b.empty()) return b;
  // One consumer group per case; short session timeouts so that a closed consumer's
  // partitions move within seconds. Tiers for the delays of the cases on time (1 s, 2 s,
  // 5 s): 2 s parks on the 5 s tier and still comes due at 2 s (bq-delay).
  std::string url = "kafka://" + b + "?group=" + id +
                    "&rdkafka.session.timeout.ms=6000"
                    "&rdkafka.heartbeat.interval.ms=500"
                    "&retry_topics=1s,5s,10s";
  const std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  const std::string on_time[] = {
      "ADelayedPublishIsNotSeenBeforeItsTime", "DelaysComeDueInTheirOwnOrder",
      "ADelayedBatchIsNotSeenBeforeItsTime", "AppRetriesAreSpacedByThePolicy",
      "ReleaseWithADelayIsNotSeenBeforeIt"};
  for (const auto& c : on_time) {
    if (name.starts_with(c + "/")) running = std::make_unique<kafka_reinjector_for_case>(url, id);
  }
  return url;
}
#endif

std::vector<target> broker_targets() {
  std::vector<target> all;
#ifdef BQ_HAVE_REDIS
  all.push_back({.name = "redis",
                 .service = "redis",
                 .url = env_url("BABELQUEUE_REDIS_URL"),
                 .known_gaps = {redis_close_gap}});
  all.push_back({.name = "redis_laravel",
                 .service = "redis",
                 .url = env_url("BABELQUEUE_REDIS_URL", "laravel=1"),
                 .known_gaps = {redis_close_gap}});
  // A queue's keys must share one slot: a hash-tagged name.
  all.push_back({.name = "redis_cluster",
                 .service = "redis-cluster",
                 .url = env_url("BABELQUEUE_REDIS_CLUSTER_URL"),
                 .queue = [](const std::string& id) { return "{" + id + "}"; },
                 .relay_faithful = false,
                 .known_gaps = {redis_close_gap}});
#endif
#ifdef BQ_HAVE_REDIS_SENTINEL
  all.push_back({.name = "redis_sentinel",
                 .service = "(redis-server on PATH: the test starts its own Sentinel group)",
                 .url = sentinel_url,
                 .relay_faithful = false,
                 .known_gaps = {redis_close_gap}});
#endif
#ifdef BQ_HAVE_RABBITMQ
  all.push_back({.name = "amqp", .service = "rabbitmq", .url = env_url("BABELQUEUE_RABBITMQ_URL")});
#endif
#ifdef BQ_HAVE_KAFKA
  all.push_back({.name = "kafka",
                 .service = "kafka",
                 .url = kafka_url,
                 .relay_faithful = false,
                 .known_gaps = {{"WorkersOnOneQueueGetEachMessageOnce",
                                 "kafka: under ctest -j2 a call of three consumers joining one "
                                 "group did not return (60 s loop bound, killed at 180 s) after "
                                 "a GroupCoordinator request timed out; 17 s alone; open"}}});
#endif
#ifdef BQ_HAVE_ARTEMIS
  all.push_back(
      {.name = "artemis", .service = "artemis", .url = env_url("BABELQUEUE_ARTEMIS_URL")});
#endif
#ifdef BQ_HAVE_ASB
  all.push_back({.name = "sb", .service = "artemis", .url = sb_url});
#endif
#ifdef BQ_HAVE_SQS
  all.push_back({.name = "sqs",
                 .service = "sqs",
                 .url = [](const std::string&) { return sqs_url(""); },
                 .known_gaps = {sqs_long_name_gap}});
  // FIFO: SQS (AWS and ElasticMQ alike) refuses a per-message DelaySeconds on a FIFO queue
  // (only the queue's own delay applies), so fifo=true declares no delayed_publish and a delay
  // is not_supported, nothing sent — never a silently dropped delay. The two timing cases skip
  // on that capability; ABadDelayIsRefusedAndNothingIsSent checks the not_supported.
  all.push_back({.name = "sqs_fifo",
                 .service = "sqs",
                 .url = [](const std::string&) { return sqs_url("&fifo=true"); },
                 .queue = [](const std::string& id) { return id + ".fifo"; },
                 .known_gaps = {sqs_long_name_gap,
                                {"AOneByteBodyTravels", sqs_fifo_raw_body_gap},
                                {"ABodyAtTheMaximumTravels", sqs_fifo_raw_body_gap}}});
#endif
#ifdef BQ_HAVE_PULSAR
  all.push_back({.name = "pulsar",
                 .service = "pulsar",
                 .url = env_url("BABELQUEUE_PULSAR_URL", "negative_ack_delay=200ms"),
                 .relay_faithful = false});
#endif
  return all;
}

}  // namespace

INSTANTIATE_TEST_SUITE_P(Brokers, TransportContract, ::testing::ValuesIn(broker_targets()),
                         target_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(TransportContract);

}  // namespace bqcontract
