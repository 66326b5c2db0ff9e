// The contract suite on the live brokers of scripts/services.sh: every scheme (and mode) this
// build has. The URLs come from build/services/services.env (BABELQUEUE_*); a missing one
// skips, or fails under CI / BABELQUEUE_REQUIRE_SERVICES=1.
#include "transport_contract/contract_fixture.hpp"

#include <cstdlib>

#ifdef BQ_HAVE_REDIS
#include <babelqueue/redis/redis_transport.hpp>
#endif
#ifdef BQ_HAVE_REDIS_SENTINEL
#include "redis/sentinel_group.hpp"
#endif
#ifdef BQ_HAVE_RABBITMQ
#include <babelqueue/rabbitmq/rabbitmq_transport.hpp>
#endif
#ifdef BQ_HAVE_KAFKA
#include <babelqueue/kafka/kafka_transport.hpp>
#endif
#ifdef BQ_HAVE_ARTEMIS
#include <babelqueue/artemis/artemis_transport.hpp>
#endif
#ifdef BQ_HAVE_ASB
#include <babelqueue/asb/asb_transport.hpp>
#endif
#ifdef BQ_HAVE_SQS
#include <babelqueue/sqs/sqs_transport.hpp>
#endif
#ifdef BQ_HAVE_PULSAR
#include <babelqueue/pulsar/pulsar_transport.hpp>
#endif

namespace bqcontract {

void register_transports() {
#ifdef BQ_HAVE_REDIS
  babelqueue::redis::register_transport();
#endif
#ifdef BQ_HAVE_RABBITMQ
  babelqueue::rabbitmq::register_transport();
#endif
#ifdef BQ_HAVE_KAFKA
  babelqueue::kafka::register_transport();
#endif
#ifdef BQ_HAVE_ARTEMIS
  babelqueue::artemis::register_transport();
#endif
#ifdef BQ_HAVE_ASB
  babelqueue::asb::register_transport();
#endif
#ifdef BQ_HAVE_SQS
  babelqueue::sqs::register_transport();
#endif
#ifdef BQ_HAVE_PULSAR
  babelqueue::pulsar::register_transport();
#endif
}

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
                 .url =
                     [](const std::string& id) {
                       const std::string b = bqtest::env_or_empty("BABELQUEUE_KAFKA_BOOTSTRAP");
                       if (b.empty()) return b;
                       // One consumer group per case; short session timeouts so that a
                       // closed consumer's partitions move within seconds.
                       return "kafka://" + b + "?group=" + id +
                              "&rdkafka.session.timeout.ms=6000"
                              "&rdkafka.heartbeat.interval.ms=500";
                     },
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
  all.push_back({.name = "sb",
                 .service = "artemis",
                 .url =
                     [](const std::string&) {
                       const std::string cs =
                           bqtest::env_or_empty("BABELQUEUE_ASB_CONNECTION_STRING");
                       if (cs.empty()) return cs;
                       auto u = babelqueue::asb::url_from_connection_string(cs);
                       return u ? *u : std::string();
                     },
                 .known_gaps = {{"ReleaseWithADelayIsNotSeenBeforeIt",
                                 "the Service Bus stand-in (Artemis) ignores "
                                 "x-opt-scheduled-enqueue-time (docs/transports/asb.md)"}}});
#endif
#ifdef BQ_HAVE_SQS
  all.push_back({.name = "sqs",
                 .service = "sqs",
                 .url = [](const std::string&) { return sqs_url(""); },
                 .known_gaps = {sqs_long_name_gap}});
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
