// D5: poison (undecodable) and unsupported schema_version go to the DLQ as the ORIGINAL
// bytes, never rewritten; dropped with a log line when dead-lettering is off.
#include "runtime/test_util.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

using namespace babelqueue;

namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(BABELQUEUE_CONFORMANCE_DIR) + "/fixtures/" + name, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

const char binary_body[] = "{\"job\":\"urn:a:b:c\"\x00\xff}";

class Poison : public ::testing::Test {
 protected:
  void SetUp() override { memory::register_transport(); }
  std::string broker = bqtest::unique_broker("poison");
  std::string url() const { return "memory://" + broker; }
  bqtest::log_capture logs;
};

}  // namespace

TEST_F(Poison, UndecodableBodiesReachTheDlqByteForByte) {
  auto o = bqtest::fast_options(&logs);
  o.dead_letter = true;
  auto metrics = std::make_shared<atomic_metrics>();
  o.observers.push_back(metrics);
  app a(url(), o);
  int calls = 0;
  a.handle("urn:a:b:c", [&](message&) { ++calls; });
  const std::vector<std::string> bodies = {
      "not json at all",
      std::string(binary_body, sizeof binary_body - 1),
      "[1,2,3]",
      "",
      R"({"job":"urn:a:b:c","trace_id":"t","data":{},"meta":{"schema_version":1},"attempts":"2"})",
      R"({"job":"   ","trace_id":"t","data":{},"meta":{"schema_version":1},"attempts":0})",
      std::string(20000, '[') + std::string(20000, ']'),
  };
  for (const auto& b : bodies) bqtest::put_raw(broker, "jobs", b, {{"traceparent", "00-p"}});
  EXPECT_EQ(a.drain("jobs").value(), bodies.size());
  EXPECT_EQ(calls, 0);
  auto dlq = bqtest::take_all(broker, "jobs.dlq");
  ASSERT_EQ(dlq.size(), bodies.size());
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    EXPECT_EQ(dlq[i].body, bodies[i]) << i;
    EXPECT_EQ(dlq[i].hdrs.at("bq-dead-letter-reason"), "poison");
    EXPECT_EQ(dlq[i].hdrs.at("traceparent"), "00-p");
  }
  EXPECT_EQ(dlq[0].hdrs.at("bq-dead-letter-error"), "malformed_json");
  EXPECT_EQ(dlq[4].hdrs.at("bq-dead-letter-error"), "invalid_attempts");
  EXPECT_EQ(dlq[5].hdrs.at("bq-dead-letter-error"), "missing_urn");
  auto s = metrics->snapshot();
  EXPECT_EQ(s.rejected, bodies.size());
  EXPECT_EQ(s.dead_lettered_by_reason.at("poison"), bodies.size());
  EXPECT_EQ(s.rejected_by_reason.at("malformed_json"), 5u);
  EXPECT_EQ(memory::depth(broker, "jobs"), 0u);
  EXPECT_EQ(memory::in_flight(broker, "jobs"), 0u);
}

TEST_F(Poison, UnsupportedSchemaVersionIsNotHandledAndKeepsItsBytes) {
  auto o = bqtest::fast_options(&logs);
  o.dead_letter = true;
  app a(url(), o);
  int calls = 0;
  a.handle("urn:babel:orders:created", [&](message&) { ++calls; });
  const std::string v2 = fixture("invalid-unknown-schema-version.json");  // pretty-printed
  ASSERT_FALSE(v2.empty());
  bqtest::put_raw(broker, "orders", v2);
  EXPECT_EQ(a.drain("orders").value(), 1u);
  EXPECT_EQ(calls, 0);
  auto dlq = bqtest::take_all(broker, "orders.dlq");
  ASSERT_EQ(dlq.size(), 1u);
  EXPECT_EQ(dlq[0].body, v2);
  EXPECT_EQ(dlq[0].hdrs.at("bq-dead-letter-error"), "unsupported_schema_version");
}

TEST_F(Poison, DroppedWithALogLineWhenDeadLetteringIsOff) {
  app a(url(), bqtest::fast_options(&logs));
  bqtest::put_raw(broker, "default", "{oops");
  EXPECT_EQ(a.drain().value(), 1u);
  EXPECT_EQ(memory::depth(broker, "default"), 0u);
  EXPECT_EQ(memory::depth(broker, "default.dlq"), 0u);
  EXPECT_TRUE(logs.contains("malformed_json"));
  EXPECT_TRUE(logs.contains("dropping"));
}

TEST_F(Poison, ForbiddenKeysAreDroppedWithAWarningNotRejected) {
  app a(url(), bqtest::fast_options(&logs));
  int calls = 0;
  a.handle("urn:a:b:c", [&](message&) { ++calls; });
  bqtest::put_raw(
      broker, "default",
      R"({"job":"urn:a:b:c","trace_id":"t","data":{},"meta":{"schema_version":1,"ts":5},"attempts":0,"timestamp":1})");
  EXPECT_EQ(a.drain().value(), 1u);
  EXPECT_EQ(calls, 1);
}
