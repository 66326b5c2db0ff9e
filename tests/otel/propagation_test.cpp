// W3C traceparent propagation on every transport that carries headers (spec
// "Observability" → "W3C traceparent"; the "a test per transport"): through the app
// with the tracing observer and a real SDK, a publish span is the parent of the process span
// of the same message, the message carries uuid_of(its TraceID) in `trace_id`, and a retry
// re-published on the same broker is the parent of the next delivery's span.
//
// memory:// and sqlite:// always run; the servers of scripts/services.sh (Redis, RabbitMQ,
// Kafka, Pulsar, Artemis, the Service Bus stand-in, ElasticMQ for SQS) when their component
// is built and their URL is in the environment
// (BABELQUEUE_REQUIRE_SERVICES=1 / CI=true: a missing one fails).
#include "otel/otel_fixture.hpp"
#include "support/services.hpp"

#include <babelqueue/memory/memory_transport.hpp>
#include <babelqueue/runtime/app.hpp>
#include <babelqueue/runtime/url.hpp>
#include <babelqueue/sqlite/sqlite_transport.hpp>
#ifdef BABELQUEUE_HAVE_REDIS
#include <babelqueue/redis/redis_transport.hpp>
#endif
#ifdef BABELQUEUE_HAVE_RABBITMQ
#include <babelqueue/rabbitmq/rabbitmq_transport.hpp>
#endif
#ifdef BABELQUEUE_HAVE_KAFKA
#include <babelqueue/kafka/kafka_transport.hpp>
#endif
#ifdef BABELQUEUE_HAVE_PULSAR
#include <babelqueue/pulsar/pulsar_transport.hpp>
#endif
#ifdef BABELQUEUE_HAVE_ARTEMIS
#include <babelqueue/artemis/artemis_transport.hpp>
#endif
#ifdef BABELQUEUE_HAVE_ASB
#include <babelqueue/asb/asb_transport.hpp>
#endif
#ifdef BABELQUEUE_HAVE_SQS
#include <babelqueue/sqs/sqs_transport.hpp>
#endif

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

namespace {

using namespace babelqueue;
using namespace std::chrono_literals;

struct broker_case {
  std::string name;
  /// The app URL, or "" when the server is not available (then `service` names it).
  std::function<std::string()> url;
  std::string service;
};

// GoogleTest prints this instead of the object's bytes.
void PrintTo(const broker_case& c, std::ostream* os) { *os << c.name; }

// One database file per test process, in a directory removed when the process exits.
std::string sqlite_url() {
  struct scratch_dir {
    std::filesystem::path path =
        std::filesystem::temp_directory_path() / ("bq-otel-" + std::to_string(::getpid()));
    scratch_dir() { std::filesystem::create_directories(path); }
    ~scratch_dir() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  };
  static const scratch_dir dir;
  return "sqlite://" + (dir.path / "queue.db").string();
}

std::string with_query(const std::string& url, const std::string& query) {
  if (url.empty()) return url;
  return url + (url.find('?') == std::string::npos ? "?" : "&") + query;
}

std::vector<broker_case> cases() {
  std::vector<broker_case> c;
  c.push_back({"memory", [] { return "memory://" + bqtest::unique_name("otel"); }, ""});
  c.push_back({"sqlite", [] { return sqlite_url(); }, ""});
#ifdef BABELQUEUE_HAVE_REDIS
  c.push_back({"redis", [] { return bqtest::env_or_empty("BABELQUEUE_REDIS_URL"); }, "redis"});
#endif
#ifdef BABELQUEUE_HAVE_RABBITMQ
  c.push_back(
      {"rabbitmq", [] { return bqtest::env_or_empty("BABELQUEUE_RABBITMQ_URL"); }, "rabbitmq"});
#endif
#ifdef BABELQUEUE_HAVE_KAFKA
  c.push_back({"kafka",
               [] {
                 const auto bootstrap = bqtest::env_or_empty("BABELQUEUE_KAFKA_BOOTSTRAP");
                 if (bootstrap.empty()) return std::string();
                 return "kafka://" + bootstrap + "?group=" + bqtest::unique_name("otel-group") +
                        "&rdkafka.session.timeout.ms=6000&rdkafka.heartbeat.interval.ms=500";
               },
               "kafka"});
#endif
#ifdef BABELQUEUE_HAVE_PULSAR
  c.push_back({"pulsar",
               [] {
                 return with_query(bqtest::env_or_empty("BABELQUEUE_PULSAR_URL"),
                                   "negative_ack_delay=200ms");
               },
               "pulsar"});
#endif
#ifdef BABELQUEUE_HAVE_ARTEMIS
  c.push_back(
      {"artemis", [] { return bqtest::env_or_empty("BABELQUEUE_ARTEMIS_URL"); }, "artemis"});
#endif
#ifdef BABELQUEUE_HAVE_ASB
  c.push_back({"asb",
               [] {
                 const auto cs = bqtest::env_or_empty("BABELQUEUE_ASB_CONNECTION_STRING");
                 if (cs.empty()) return std::string();
                 return asb::url_from_connection_string(cs).value();
               },
               "artemis (the Service Bus stand-in)"});
#endif
#ifdef BABELQUEUE_HAVE_SQS
  c.push_back({"sqs",
               [] {
                 // ElasticMQ checks no signature; the signer still wants credentials.
                 ::setenv("AWS_ACCESS_KEY_ID", "test", 0);
                 ::setenv("AWS_SECRET_ACCESS_KEY", "test", 0);
                 return with_query(bqtest::env_or_empty("BABELQUEUE_SQS_URL"),
                                   "create_queues=true");
               },
               "sqs"});
#endif
  return c;
}

class Propagation : public ::testing::TestWithParam<broker_case> {
 protected:
  void SetUp() override {
    memory::register_transport();
    sqlite::register_transport();
#ifdef BABELQUEUE_HAVE_REDIS
    redis::register_transport();
#endif
#ifdef BABELQUEUE_HAVE_RABBITMQ
    rabbitmq::register_transport();
#endif
#ifdef BABELQUEUE_HAVE_KAFKA
    kafka::register_transport();
#endif
#ifdef BABELQUEUE_HAVE_PULSAR
    pulsar::register_transport();
#endif
#ifdef BABELQUEUE_HAVE_ARTEMIS
    artemis::register_transport();
#endif
#ifdef BABELQUEUE_HAVE_ASB
    asb::register_transport();
#endif
#ifdef BABELQUEUE_HAVE_SQS
    sqs::register_transport();
#endif
    url_ = GetParam().url();
    if (url_.empty()) {
      if (bqtest::services_required()) {
        FAIL() << "no server for " << GetParam().name << ": scripts/services.sh start "
               << GetParam().service;
      }
      GTEST_SKIP() << "no server for " << GetParam().name << " (scripts/services.sh start "
                   << GetParam().service << ")";
    }
    queue_ = bqtest::unique_name("bq-otel");
  }

  app_options options() {
    app_options o;
    o.queue = queue_;
    // A broker's first receive may wait for a group join or a subscription: drain()
    // stops after max messages, so a long poll costs nothing when messages are there.
    o.poll_timeout = 15s;
    o.observers.push_back(spans.observer());
    return o;
  }

  bqtest::span_recorder spans;
  std::string url_, queue_;
};

TEST_P(Propagation, ThePublishSpanIsTheParentOfTheProcessSpan) {
  app a(url_, options());
  std::string seen_trace_id;
  std::optional<std::string> seen_traceparent;
  a.handle("urn:babel:otel:linked", [&](message& m) {
    seen_trace_id = std::string(m.trace_id());
    if (auto tp = m.header("traceparent")) seen_traceparent = std::string(*tp);
  });
  const std::string id = a.publish("urn:babel:otel:linked", json{{"n", 1}}).value();
  ASSERT_EQ(a.drain(queue_, 1).value(), 1u);

  const auto pub = spans.named("publish urn:babel:otel:linked");
  const auto proc = spans.named("process urn:babel:otel:linked");
  ASSERT_EQ(pub.size(), 1u);
  ASSERT_EQ(proc.size(), 1u);
  EXPECT_EQ(proc[0].trace_id, pub[0].trace_id);
  EXPECT_EQ(proc[0].parent_span_id, pub[0].span_id) << "the traceparent did not travel";
  ASSERT_TRUE(seen_traceparent.has_value());
  EXPECT_EQ(seen_traceparent->substr(3, 32), pub[0].trace_id);
  EXPECT_EQ(seen_traceparent->substr(36, 16), pub[0].span_id);
  EXPECT_EQ(otel::to_hex(otel::trace_id_of(seen_trace_id)), pub[0].trace_id);
  EXPECT_EQ(proc[0].str("messaging.message.id"), id);
  EXPECT_EQ(proc[0].str("messaging.destination.name"), queue_);
}

TEST_P(Propagation, ARetryRepublishedOnTheBrokerIsTheNextDeliverysParent) {
  auto o = options();
  o.max_attempts = 2;
  app a(url_, o);
  int calls = 0;
  a.handle("urn:babel:otel:retried", [&](message&) {
    if (++calls == 1) throw std::runtime_error("first delivery fails");
  });
  (void)a.publish("urn:babel:otel:retried", json::object()).value();
  ASSERT_EQ(a.drain(queue_, 2).value(), 2u);

  const auto pub = spans.named("publish urn:babel:otel:retried");
  const auto proc = spans.named("process urn:babel:otel:retried");
  ASSERT_EQ(pub.size(), 2u);  // app, retry
  ASSERT_EQ(proc.size(), 2u);
  EXPECT_EQ(pub[1].str("messaging.babelqueue.publish_kind"), "retry");
  EXPECT_EQ(pub[1].parent_span_id, proc[0].span_id);
  EXPECT_EQ(proc[1].parent_span_id, pub[1].span_id);
  EXPECT_EQ(proc[1].int64("messaging.babelqueue.attempts"), 1);
  EXPECT_EQ(proc[0].str("messaging.babelqueue.outcome"), "retried");
  EXPECT_EQ(proc[1].str("messaging.babelqueue.outcome"), "acked");
  for (const auto& s : spans.spans()) EXPECT_EQ(s.trace_id, pub[0].trace_id) << s.name;
}

INSTANTIATE_TEST_SUITE_P(transports, Propagation, ::testing::ValuesIn(cases()),
                         [](const auto& p) { return p.param.name; });

}  // namespace
