// The headers table of a received delivery → babelqueue::headers and x-attempts, without a
// broker: every AMQP field kind a peer may write (wire-core §8), built as rabbitmq-c hands it
// over.
#include "rabbitmq/message.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace rd = babelqueue::rabbitmq::detail;

namespace {

amqp_table_entry_t entry(const char* key, amqp_field_value_t value) {
  amqp_table_entry_t e{};
  e.key = amqp_cstring_bytes(key);
  e.value = value;
  return e;
}

amqp_field_value_t decimal(std::uint8_t places, std::uint32_t value) {
  amqp_field_value_t v{};
  v.kind = AMQP_FIELD_KIND_DECIMAL;
  v.value.decimal.decimals = places;
  v.value.decimal.value = value;
  return v;
}

rd::received_headers read(std::vector<amqp_table_entry_t>& entries) {
  amqp_basic_properties_t props{};
  props._flags = AMQP_BASIC_HEADERS_FLAG;
  props.headers.num_entries = static_cast<int>(entries.size());
  props.headers.entries = entries.data();
  return rd::read_headers(props);
}

}  // namespace

TEST(RabbitmqFields, DecimalsAreWrittenExactly) {
  std::vector<amqp_table_entry_t> entries = {
      entry("whole", decimal(0, 7)), entry("cents", decimal(2, 12345)),
      entry("small", decimal(3, 5)), entry("just_under_one", decimal(2, 99)),
      entry("zero", decimal(2, 0)),  entry("all_places", decimal(3, 123)),
  };
  const auto h = read(entries).out_of_band;
  EXPECT_EQ(h.at("whole"), "7");
  EXPECT_EQ(h.at("cents"), "123.45");
  EXPECT_EQ(h.at("small"), "0.005");
  EXPECT_EQ(h.at("just_under_one"), "0.99");
  EXPECT_EQ(h.at("zero"), "0.00");
  EXPECT_EQ(h.at("all_places"), "0.123");
}

TEST(RabbitmqFields, AttemptsOfEveryIntegerWidthAndAsText) {
  amqp_field_value_t i8{};
  i8.kind = AMQP_FIELD_KIND_I8;
  i8.value.i8 = 3;
  std::vector<amqp_table_entry_t> small = {entry("x-attempts", i8)};
  EXPECT_EQ(read(small).attempts, 3);

  amqp_field_value_t text{};
  text.kind = AMQP_FIELD_KIND_UTF8;
  text.value.bytes = amqp_cstring_bytes("4");
  std::vector<amqp_table_entry_t> as_text = {entry("x-attempts", text)};
  EXPECT_EQ(read(as_text).attempts, 4);

  text.value.bytes = amqp_cstring_bytes("4x");
  std::vector<amqp_table_entry_t> not_a_number = {entry("x-attempts", text)};
  EXPECT_FALSE(read(not_a_number).attempts.has_value());
}

TEST(RabbitmqFields, NoTableReadsAsEmpty) {
  amqp_basic_properties_t props{};
  const auto r = rd::read_headers(props);
  EXPECT_TRUE(r.out_of_band.empty());
  EXPECT_FALSE(r.attempts.has_value());
}

TEST(RabbitmqFields, TheBrokersDeadLetterAnnotationsAreNotHeaders) {
  // What RabbitMQ adds when a wait queue dead-letters a delayed publish onto its queue
  // (3.13+ also writes x-last-death-*): none of it was sent, so none of it is handed out.
  amqp_field_value_t text{};
  text.kind = AMQP_FIELD_KIND_UTF8;
  text.value.bytes = amqp_cstring_bytes("bq.delay.1000ms.orders");
  amqp_field_value_t array{};
  array.kind = AMQP_FIELD_KIND_ARRAY;
  amqp_field_value_t sent{};
  sent.kind = AMQP_FIELD_KIND_UTF8;
  sent.value.bytes = amqp_cstring_bytes("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
  std::vector<amqp_table_entry_t> entries = {
      entry("x-death", array),
      entry("x-first-death-queue", text),
      entry("x-first-death-reason", text),
      entry("x-first-death-exchange", text),
      entry("x-last-death-queue", text),
      entry("x-last-death-reason", text),
      entry("x-last-death-exchange", text),
      entry("traceparent", sent),
      entry("x-deathly", text),  // a header someone sent: kept
  };
  EXPECT_EQ(read(entries).out_of_band,
            (babelqueue::headers{{"traceparent", std::string(rd::view_of(sent.value.bytes))},
                                 {"x-deathly", "bq.delay.1000ms.orders"}}));
}
