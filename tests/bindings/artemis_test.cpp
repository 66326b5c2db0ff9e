// Pure Artemis binding (include/babelqueue/bindings/artemis.hpp): the AMQP 1.0 projection,
// attempts reconciliation, the routing URN and headers read back.
#include <babelqueue/bindings/artemis.hpp>
#include <babelqueue/codec.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace ba = babelqueue::bindings::artemis;
using namespace std::chrono_literals;

namespace {

// The conformance fixture fixtures/order-created.json, compact.
const std::string k_order =
    R"({"job":"urn:babel:orders:created","trace_id":"7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b",)"
    R"("data":{"order_id":1042},"meta":{"id":"f1e2d3c4-b5a6-4789-90ab-cdef01234567",)"
    R"("queue":"orders","lang":"php","schema_version":1,"created_at":1749132727000},"attempts":0})";
// No meta.lang, no meta.created_at, attempts 4.
const std::string k_bare = R"({"job":"urn:babel:t:bare","trace_id":"t-1","data":{},)"
                           R"("meta":{"id":"x","schema_version":1},"attempts":4})";
const std::string k_traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
// 2025-06-05T14:12:07Z, a fixed `now`.
const std::chrono::system_clock::time_point k_now{std::chrono::milliseconds(1749132727000)};

std::vector<std::string> property_names(const ba::message_projection& p) {
  std::vector<std::string> names;
  for (const auto& [k, v] : p.application_properties) names.push_back(k);
  return names;
}

}  // namespace

TEST(ArtemisBinding, ProjectsTheJmsSlotsAndStringProperties) {
  const ba::message_projection p = ba::project(k_order);
  EXPECT_EQ(p.subject, "urn:babel:orders:created");
  ASSERT_NE(p.annotation("x-opt-jms-type"), nullptr);
  EXPECT_EQ(std::get<std::string>(*p.annotation("x-opt-jms-type")), "urn:babel:orders:created");
  EXPECT_EQ(p.annotations.size(), 1U);
  EXPECT_EQ(p.correlation_id, "7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b");
  EXPECT_EQ(p.creation_time_ms, 1749132727000);
  EXPECT_EQ(p.content_type, "application/json");
  EXPECT_TRUE(p.durable);
  const std::vector<std::pair<std::string, std::string>> want = {{"bq_schema_version", "1"},
                                                                 {"bq_source_lang", "php"},
                                                                 {"bq_attempts", "0"},
                                                                 {"bq_app_id", "babelqueue"}};
  EXPECT_EQ(p.application_properties, want);
}

TEST(ArtemisBinding, OptionalMetaIsLeftOutAndAttemptsIsDecimal) {
  const ba::message_projection p = ba::project(k_bare);
  EXPECT_EQ(p.subject, "urn:babel:t:bare");
  EXPECT_EQ(p.correlation_id, "t-1");
  EXPECT_FALSE(p.creation_time_ms);
  EXPECT_EQ(p.property("bq_source_lang"), nullptr) << "empty meta.lang writes none (as Go/Node)";
  ASSERT_NE(p.property("bq_attempts"), nullptr);
  EXPECT_EQ(*p.property("bq_attempts"), "4");

  auto made = babelqueue::make("urn:babel:t:made", babelqueue::json::object({{"k", 1}}));
  ASSERT_TRUE(made);
  made->set_attempts(12);
  const ba::message_projection q = ba::project(babelqueue::encode(*made).value());
  EXPECT_EQ(*q.property("bq_source_lang"), "cpp");
  EXPECT_EQ(*q.property("bq_attempts"), "12");
  EXPECT_EQ(q.creation_time_ms, made->created_at());
}

TEST(ArtemisBinding, PoisonBodyGetsTheFixedPartsOnly) {
  for (const std::string body : {"not json", R"({"job":"urn:x","data":{}})", ""}) {
    const ba::message_projection p = ba::project(body, {{"traceparent", k_traceparent}}, 2s, k_now);
    EXPECT_FALSE(p.subject) << body;
    EXPECT_FALSE(p.correlation_id) << body;
    EXPECT_FALSE(p.creation_time_ms) << body;
    EXPECT_EQ(p.content_type, "application/json");
    EXPECT_TRUE(p.durable);
    EXPECT_EQ(p.annotation("x-opt-jms-type"), nullptr);
    ASSERT_NE(p.annotation("x-opt-delivery-time"), nullptr) << "a requested delay still applies";
    EXPECT_EQ(property_names(p), (std::vector<std::string>{"bq_app_id", "bq_delay", "traceparent"}))
        << body;
  }
}

TEST(ArtemisBinding, OutOfBandHeadersFollowAsStringsAndContractNamesWin) {
  const ba::message_projection p =
      ba::project(k_order, {{"traceparent", k_traceparent},
                            {"tracestate", "v=1"},
                            {"bq-replay-bypass", "1"},
                            {"bq_attempts", "9"},
                            {"bq_app_id", "HIJACK"},
                            {"bq_delay", "5000"},  // reserved even with no delay
                            {"", "blank name"},
                            {"blank-value", " \t"}});
  EXPECT_EQ(property_names(p), (std::vector<std::string>{
                                   "bq_schema_version", "bq_source_lang", "bq_attempts",
                                   "bq_app_id", "bq-replay-bypass", "traceparent", "tracestate"}));
  EXPECT_EQ(*p.property("bq_attempts"), "0");
  EXPECT_EQ(*p.property("bq_app_id"), "babelqueue");
  EXPECT_EQ(*p.property("traceparent"), k_traceparent);
  EXPECT_EQ(*p.property("bq-replay-bypass"), "1");
  EXPECT_EQ(p.annotation("x-opt-delivery-time"), nullptr);
}

TEST(ArtemisBinding, DelaySchedulesWithAnAbsoluteLongAndMirrorsBqDelay) {
  const ba::message_projection p = ba::project(k_order, {}, 1500ms, k_now);
  const ba::annotation_value* at = p.annotation("x-opt-delivery-time");
  ASSERT_NE(at, nullptr);
  ASSERT_TRUE(std::holds_alternative<std::int64_t>(*at)) << "an AMQP long, not a string";
  EXPECT_EQ(std::get<std::int64_t>(*at), 1749132727000 + 1500);
  ASSERT_NE(p.property("bq_delay"), nullptr);
  EXPECT_EQ(*p.property("bq_delay"), "1500");
  // x-opt-jms-type stays first.
  EXPECT_EQ(p.annotations.front().first, "x-opt-jms-type");

  for (const auto none : {0ms, -5ms}) {
    const ba::message_projection q = ba::project(k_order, {}, none, k_now);
    EXPECT_EQ(q.annotation("x-opt-delivery-time"), nullptr);
    EXPECT_EQ(q.property("bq_delay"), nullptr);
  }
  const ba::message_projection far =
      ba::project(k_order, {}, std::chrono::milliseconds::max(), k_now);
  EXPECT_EQ(std::get<std::int64_t>(*far.annotation("x-opt-delivery-time")),
            std::numeric_limits<std::int64_t>::max())
      << "saturates instead of overflowing";
}

TEST(ArtemisBinding, ReconcileIsMaxOfBodyAndZeroBasedDeliveryCount) {
  EXPECT_EQ(ba::reconcile_attempts(0, std::nullopt), 0);
  EXPECT_EQ(ba::reconcile_attempts(3, std::nullopt), 3);
  EXPECT_EQ(ba::reconcile_attempts(0, 0), 0);
  EXPECT_EQ(ba::reconcile_attempts(0, 2), 2) << "no -1";
  EXPECT_EQ(ba::reconcile_attempts(2, 5), 5);
  EXPECT_EQ(ba::reconcile_attempts(5, 1), 5) << "never lowers the body";
  EXPECT_EQ(ba::reconcile_attempts(4, -1), 4);
}

TEST(ArtemisBinding, RoutingUrnPrefersJmsTypeThenSubject) {
  using sv = std::string_view;
  EXPECT_EQ(ba::routing_urn(sv("urn:a"), sv("urn:b")), sv("urn:a"));
  EXPECT_EQ(ba::routing_urn(std::nullopt, sv("urn:b")), sv("urn:b"));
  EXPECT_EQ(ba::routing_urn(sv(" \t"), sv("urn:b")), sv("urn:b")) << "blank counts as absent";
  EXPECT_EQ(ba::routing_urn(sv(""), sv("")), std::nullopt);
  EXPECT_EQ(ba::routing_urn(std::nullopt, std::nullopt), std::nullopt);
  EXPECT_EQ(ba::routing_urn(sv("  urn:a  "), std::nullopt), sv("  urn:a  ")) << "untrimmed (D3a)";
}

TEST(ArtemisBinding, HeadersReadBackWithoutTheContractNames) {
  const ba::message_projection p =
      ba::project(k_order, {{"traceparent", k_traceparent}, {"bq-replay-bypass", "1"}}, 1s, k_now);
  const babelqueue::headers back = ba::headers_from_properties(p.application_properties);
  EXPECT_EQ(back, (babelqueue::headers{{"bq-replay-bypass", "1"}, {"traceparent", k_traceparent}}));

  // Any range of string-like pairs (what the Proton layer hands over).
  const std::vector<std::pair<std::string_view, std::string_view>> raw = {
      {"bq_schema_version", "1"}, {"x-custom", ""}, {"JMSXGroupID", "g"}};
  EXPECT_EQ(ba::headers_from_properties(raw),
            (babelqueue::headers{{"JMSXGroupID", "g"}, {"x-custom", ""}}));
}
