// bindings/sqs.hpp: the MessageAttributes projection and the peers' merge rules for
// out-of-band headers, the receive count, the bq-schema-version gate, SQS name rules and
// the dead-letter name mapping, FIFO ids. (The conformance block `sqs` covers the
// manifest's cases; these cover the rules around them.)
#include <babelqueue/bindings/sqs.hpp>

#include <gtest/gtest.h>

namespace bs = babelqueue::bindings::sqs;

namespace {

std::string envelope(std::string id = "f1e2d3c4-b5a6-4789-90ab-cdef01234567", int attempts = 0) {
  return R"({"job":"urn:babel:orders:created","trace_id":"t-1","data":{},"meta":{"id":")" + id +
         R"(","queue":"orders","created_at":1749132727000,"lang":"php","schema_version":1},"attempts":)" +
         std::to_string(attempts) + "}";
}

std::vector<std::string> names(const std::vector<bs::attribute>& a) {
  std::vector<std::string> out;
  for (const auto& x : a) out.push_back(x.name);
  return out;
}

}  // namespace

TEST(SqsBinding, ContractAttributesComeFirstThenHeadersInByteOrderUpToTen) {
  babelqueue::headers h;
  for (char c = 'a'; c <= 'f'; ++c) h[std::string("h-") + c] = "v";
  const auto a = bs::project(envelope(), h);
  ASSERT_EQ(a.size(), 10u) << "SQS's limit";
  EXPECT_EQ(names(a), (std::vector<std::string>{"bq-job", "bq-trace-id", "bq-message-id",
                                                "bq-schema-version", "bq-source-lang",
                                                "bq-created-at", "h-a", "h-b", "h-c", "h-d"}));
}

TEST(SqsBinding, BlankAndIllegalHeaderNamesAreSkippedAndContractNamesWin) {
  const auto a = bs::project(envelope(), {{"", "x"},
                                          {"blank", "  "},
                                          {"bq-trace-id", "forged"},
                                          {"AWS.thing", "x"},
                                          {"has space", "x"},
                                          {"a..b", "x"},
                                          {"ok.name_1-2", "y"}});
  EXPECT_EQ(a.back(), (bs::attribute{"ok.name_1-2", "String", "y"}));
  EXPECT_EQ(a.size(), 7u);
  for (const auto& x : a) {
    if (x.name == "bq-trace-id") {
      EXPECT_EQ(x.string_value, "t-1");
    }
  }
}

TEST(SqsBinding, AnUndecodableBodyGetsItsHeadersOnly) {
  EXPECT_EQ(bs::project("not json", {{"traceparent", "tp"}}),
            (std::vector<bs::attribute>{{"traceparent", "String", "tp"}}));
  EXPECT_TRUE(bs::project("").empty());
}

TEST(SqsBinding, HeadersReadBackLeaveTheContractAttributesOut) {
  const auto h = bs::headers_from_attributes({{"bq-job", "String", "urn:x:y:z"},
                                              {"traceparent", "String", "tp"},
                                              {"n", "Number", "3"},
                                              {"e", "String", ""}});
  EXPECT_EQ(h, (babelqueue::headers{{"n", "3"}, {"traceparent", "tp"}}));
}

TEST(SqsBinding, TheReceiveCountIsDigitsOnly) {
  EXPECT_EQ(bs::receive_count_of("3"), 3);
  EXPECT_EQ(bs::receive_count_of(""), std::nullopt);
  EXPECT_EQ(bs::receive_count_of(" 3"), std::nullopt);
  EXPECT_EQ(bs::receive_count_of("-3"), std::nullopt);
  EXPECT_EQ(bs::receive_count_of("3x"), std::nullopt);
  EXPECT_EQ(bs::receive_count_of("99999999999999999999"), std::nullopt);
  EXPECT_EQ(bs::reconcile_attempts(0, std::optional<std::int64_t>{}), 0);
  EXPECT_EQ(bs::reconcile_attempts(1, std::optional<std::int64_t>{0}), 1);
}

TEST(SqsBinding, TheSchemaGateAcceptsAbsentBlankOrExactlyOne) {
  EXPECT_TRUE(bs::schema_version_accepted(std::nullopt));
  EXPECT_TRUE(bs::schema_version_accepted(""));
  EXPECT_TRUE(bs::schema_version_accepted(" \t\r\n"));
  EXPECT_TRUE(bs::schema_version_accepted("1"));
  EXPECT_FALSE(bs::schema_version_accepted("2"));
  EXPECT_FALSE(bs::schema_version_accepted("01"));
  EXPECT_FALSE(bs::schema_version_accepted(" 1"));
  EXPECT_FALSE(bs::schema_version_accepted("1.0"));
}

TEST(SqsBinding, QueueNamesFollowSqsRules) {
  EXPECT_TRUE(bs::is_valid_queue_name("orders"));
  EXPECT_TRUE(bs::is_valid_queue_name("orders-dlq"));
  EXPECT_TRUE(bs::is_valid_queue_name("jobs_1.fifo"));
  EXPECT_FALSE(bs::is_valid_queue_name("orders.dlq"));
  EXPECT_FALSE(bs::is_valid_queue_name(""));
  EXPECT_FALSE(bs::is_valid_queue_name(".fifo"));
  EXPECT_FALSE(bs::is_valid_queue_name(std::string(81, 'a')));
  EXPECT_TRUE(bs::is_valid_queue_name(std::string(75, 'a') + ".fifo"));
  EXPECT_TRUE(bs::is_fifo("a.fifo"));
  EXPECT_FALSE(bs::is_fifo(".fifo"));
}

TEST(SqsBinding, TheContractDlqNameMapsToALegalName) {
  EXPECT_EQ(bs::native_queue_name("orders.dlq"), "orders-dlq");
  EXPECT_EQ(bs::native_queue_name("jobs.fifo.dlq"), "jobs-dlq.fifo");
  EXPECT_EQ(bs::native_queue_name("orders"), "orders");
  EXPECT_EQ(bs::native_queue_name(".dlq"), ".dlq");
  EXPECT_EQ(bs::native_queue_name("orders.dlq", {.suffix = "_dead", .queue = ""}), "orders_dead");
  EXPECT_EQ(bs::native_queue_name("orders.dlq", {.suffix = "", .queue = ""}), "orders.dlq");
  EXPECT_EQ(bs::native_queue_name("orders.dlq", {.suffix = "-dlq", .queue = "all-dead"}),
            "all-dead");
}

TEST(SqsBinding, FifoIdsAreTheGroupAndMetaId) {
  auto ids = bs::fifo_ids_for("orders.fifo", envelope());
  EXPECT_EQ(ids.group_id, "orders.fifo");
  EXPECT_EQ(ids.deduplication_id, "f1e2d3c4-b5a6-4789-90ab-cdef01234567");
  EXPECT_EQ(bs::fifo_ids_for("orders.fifo", envelope(), "tenant-7").group_id, "tenant-7");
  EXPECT_EQ(bs::fifo_ids_for("orders.fifo", "garbage").deduplication_id, "");
  EXPECT_EQ(bs::fifo_ids_for("orders.fifo", envelope(std::string(129, 'a'))).deduplication_id, "")
      << "longer than SQS allows: none rather than cut";
}
