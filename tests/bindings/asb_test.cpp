// Pure Azure Service Bus binding (include/babelqueue/bindings/asb.hpp): the native
// projection and its integer widths, attempts reconciliation, tolerant integer reading and
// headers read back.
#include <babelqueue/bindings/asb.hpp>
#include <babelqueue/codec.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace bs = babelqueue::bindings::asb;
using namespace std::chrono_literals;

namespace {

const std::string k_order =
    R"({"job":"urn:babel:orders:created","trace_id":"7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b",)"
    R"("data":{"order_id":1042},"meta":{"id":"f1e2d3c4-b5a6-4789-90ab-cdef01234567",)"
    R"("queue":"orders","lang":"php","schema_version":1,"created_at":1749132727000},"attempts":0})";
const std::string k_traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
const std::chrono::system_clock::time_point k_now{std::chrono::milliseconds(1749132727000)};

std::string with_id(std::string_view id) {
  return R"({"job":"urn:babel:t:x","trace_id":"t-1","data":{},"meta":{"id":")" + std::string(id) +
         R"(","schema_version":1},"attempts":0})";
}

std::vector<std::string> property_names(const bs::message_projection& p) {
  std::vector<std::string> names;
  for (const auto& [k, v] : p.application_properties) names.push_back(k);
  return names;
}

}  // namespace

TEST(AsbBinding, ProjectsNativeFieldsAndTypedProperties) {
  const bs::message_projection p = bs::project(k_order);
  EXPECT_EQ(p.subject, "urn:babel:orders:created");
  EXPECT_EQ(p.correlation_id, "7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b");
  EXPECT_EQ(p.message_id, "f1e2d3c4-b5a6-4789-90ab-cdef01234567");
  EXPECT_EQ(p.content_type, "application/json");
  EXPECT_FALSE(p.scheduled_enqueue_time_ms);
  EXPECT_EQ(property_names(p),
            (std::vector<std::string>{"bq-schema-version", "bq-source-lang", "bq-created-at"}));
  // Widths as .NET/Java write them (wire-brokers §2.2): int, string, long.
  const bs::property_value* version = p.property("bq-schema-version");
  ASSERT_TRUE(std::holds_alternative<std::int32_t>(*version)) << "AMQP int";
  EXPECT_EQ(std::get<std::int32_t>(*version), 1);
  EXPECT_EQ(std::get<std::string>(*p.property("bq-source-lang")), "php");
  const bs::property_value* created = p.property("bq-created-at");
  ASSERT_TRUE(std::holds_alternative<std::int64_t>(*created)) << "AMQP long";
  EXPECT_EQ(std::get<std::int64_t>(*created), 1749132727000);
  EXPECT_EQ(p.property("bq-attempts"), nullptr) << "DeliveryCount is the native attempts source";
}

TEST(AsbBinding, MessageIdLongerThanServiceBusAllowsIsLeftOut) {
  const std::string max_id(bs::max_message_id, 'a');
  EXPECT_EQ(bs::project(with_id(max_id)).message_id, max_id);
  EXPECT_FALSE(bs::project(with_id(max_id + "a")).message_id) << "left out, never cut";
  EXPECT_FALSE(bs::project(with_id("")).message_id);
  const bs::message_projection p = bs::project(with_id("x"));
  EXPECT_EQ(property_names(p), (std::vector<std::string>{"bq-schema-version"}))
      << "no meta.lang / created_at: none written";
}

TEST(AsbBinding, PoisonBodyGetsTheFixedPartsOnly) {
  for (const std::string body : {"{", R"({"job":"urn:x","trace_id":"t","data":{},"meta":{}})"}) {
    const bs::message_projection p = bs::project(body, {{"traceparent", k_traceparent}}, 3s, k_now);
    EXPECT_FALSE(p.subject) << body;
    EXPECT_FALSE(p.correlation_id) << body;
    EXPECT_FALSE(p.message_id) << body;
    EXPECT_EQ(p.content_type, "application/json");
    EXPECT_EQ(p.scheduled_enqueue_time_ms, 1749132727000 + 3000);
    EXPECT_EQ(property_names(p), (std::vector<std::string>{"bq-delay", "traceparent"})) << body;
  }
}

TEST(AsbBinding, OutOfBandHeadersAreStringsAndContractNamesWin) {
  const bs::message_projection p =
      bs::project(with_id("x"), {{"traceparent", k_traceparent},
                                 {"bq-replay-bypass", "1"},
                                 {"bq-schema-version", "2"},
                                 {"bq-created-at", "1"},  // reserved even though this body has none
                                 {"bq-delay", "5"},
                                 {"bq-source-lang", "go"},
                                 {" ", "x"},
                                 {"empty", ""}});
  EXPECT_EQ(property_names(p),
            (std::vector<std::string>{"bq-schema-version", "bq-replay-bypass", "traceparent"}));
  EXPECT_EQ(std::get<std::int32_t>(*p.property("bq-schema-version")), 1);
  EXPECT_EQ(std::get<std::string>(*p.property("traceparent")), k_traceparent);
}

TEST(AsbBinding, DelaySetsScheduledEnqueueTimeAndALongBqDelay) {
  const bs::message_projection p = bs::project(k_order, {}, 90s, k_now);
  EXPECT_EQ(p.scheduled_enqueue_time_ms, 1749132727000 + 90000);
  const bs::property_value* delay = p.property("bq-delay");
  ASSERT_NE(delay, nullptr);
  ASSERT_TRUE(std::holds_alternative<std::int64_t>(*delay)) << "AMQP long";
  EXPECT_EQ(std::get<std::int64_t>(*delay), 90000);
  EXPECT_EQ(property_names(p).back(), "bq-delay");
  for (const auto none : {0ms, -1ms}) {
    const bs::message_projection q = bs::project(k_order, {}, none, k_now);
    EXPECT_FALSE(q.scheduled_enqueue_time_ms);
    EXPECT_EQ(q.property("bq-delay"), nullptr);
  }
}

TEST(AsbBinding, ReconcileIsMaxOfBodyAndOneBasedDeliveryCountMinusOne) {
  EXPECT_EQ(bs::reconcile_attempts(0, std::nullopt), 0);
  EXPECT_EQ(bs::reconcile_attempts(0, 1), 0);
  EXPECT_EQ(bs::reconcile_attempts(0, 3), 2);
  EXPECT_EQ(bs::reconcile_attempts(2, 5), 4);
  EXPECT_EQ(bs::reconcile_attempts(5, 2), 5) << "never lowers the body";
  EXPECT_EQ(bs::reconcile_attempts(3, 0), 3);
  EXPECT_EQ(bs::reconcile_attempts(3, -4), 3);
  // A raw AMQP client reads the 0-based header: first delivery header 0 = DeliveryCount 1.
  EXPECT_EQ(bs::delivery_count_from_header(0), 1);
  EXPECT_EQ(bs::reconcile_attempts(0, bs::delivery_count_from_header(0)), 0);
  EXPECT_EQ(bs::reconcile_attempts(0, bs::delivery_count_from_header(2)), 2);
  EXPECT_EQ(bs::delivery_count_from_header(std::numeric_limits<std::uint32_t>::max()),
            std::int64_t{4294967296});
}

TEST(AsbBinding, IntegerPropertiesAreReadInAnyWidthOrAsDecimalText) {
  EXPECT_EQ(bs::integer_of(std::int8_t{-1}), -1);
  EXPECT_EQ(bs::integer_of(std::uint8_t{1}), 1);
  EXPECT_EQ(bs::integer_of(std::int16_t{-300}), -300);
  EXPECT_EQ(bs::integer_of(std::uint16_t{65535}), 65535);
  EXPECT_EQ(bs::integer_of(std::int32_t{1}), 1);
  EXPECT_EQ(bs::integer_of(std::uint32_t{4000000000U}), 4000000000);
  EXPECT_EQ(bs::integer_of(std::int64_t{1749132727000}), 1749132727000);
  EXPECT_EQ(bs::integer_of(std::uint64_t{1749132727000}), 1749132727000);
  EXPECT_EQ(bs::integer_of(std::numeric_limits<std::uint64_t>::max()), std::nullopt);
  EXPECT_EQ(bs::integer_of(1749132727000.0), 1749132727000) << "an integral double (JS peers)";
  EXPECT_EQ(bs::integer_of(1.0F), 1);
  EXPECT_EQ(bs::integer_of(1.5), std::nullopt);
  EXPECT_EQ(bs::integer_of(std::nan("")), std::nullopt);
  EXPECT_EQ(bs::integer_of(std::numeric_limits<double>::infinity()), std::nullopt);
  EXPECT_EQ(bs::integer_of(9.3e18), std::nullopt);
  EXPECT_EQ(bs::integer_of(-9223372036854775808.0), std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(bs::integer_of(true), std::nullopt);
  EXPECT_EQ(bs::integer_of('7'), std::nullopt) << "an AMQP char is not an integer";
  EXPECT_EQ(bs::integer_of(std::string("1749132727000")), 1749132727000);
  EXPECT_EQ(bs::integer_of(std::string_view(" +7 ")), 7);
  EXPECT_EQ(bs::integer_of("-3"), -3);
  EXPECT_EQ(bs::integer_of(""), std::nullopt);
  EXPECT_EQ(bs::integer_of("1.0"), std::nullopt);
  EXPECT_EQ(bs::integer_of("4x"), std::nullopt);
  EXPECT_EQ(bs::integer_of("99999999999999999999"), std::nullopt);
  EXPECT_EQ(bs::integer_of(bs::property_value{std::int32_t{1}}), 1);
  EXPECT_EQ(bs::integer_of(bs::property_value{std::int64_t{2}}), 2);
  EXPECT_EQ(bs::integer_of(bs::property_value{std::string("3")}), 3);
  using received = std::variant<std::monostate, bool, std::uint16_t, double, std::string>;
  EXPECT_EQ(bs::integer_of(received{}), std::nullopt);
  EXPECT_EQ(bs::integer_of(received{true}), std::nullopt);
  EXPECT_EQ(bs::integer_of(received{std::uint16_t{8}}), 8);
  EXPECT_EQ(bs::integer_of(received{8.0}), 8);
}

TEST(AsbBinding, HeadersReadBackWithoutTheContractNames) {
  const bs::message_projection p =
      bs::project(k_order, {{"traceparent", k_traceparent}, {"tracestate", "v=1"}}, 1s, k_now);
  EXPECT_EQ(bs::headers_from_properties(p.application_properties),
            (babelqueue::headers{{"traceparent", k_traceparent}, {"tracestate", "v=1"}}));
  // A non-contract integer property is not a header; plain string pairs work too.
  const std::vector<std::pair<std::string, bs::property_value>> mixed = {
      {"count", std::int64_t{3}}, {"bq-created-at", std::int64_t{1}}, {"k", std::string("v")}};
  EXPECT_EQ(bs::headers_from_properties(mixed), (babelqueue::headers{{"k", "v"}}));
  const std::vector<std::pair<const char*, const char*>> raw = {{"bq-delay", "5"}, {"a", "b"}};
  EXPECT_EQ(bs::headers_from_properties(raw), (babelqueue::headers{{"a", "b"}}));
}
