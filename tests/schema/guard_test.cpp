// Producer guard: check / validate / invalid_payload_error, and the envelope form.
#include <babelqueue/codec.hpp>
#include <babelqueue/schema/guard.hpp>

#include <gtest/gtest.h>

namespace bq = babelqueue;
namespace schema = babelqueue::schema;

namespace {

class failing_provider final : public schema::provider {
 public:
  bq::result<schema::schema_ptr> find(std::string_view) const override {
    return bq::fail(schema::errc::io, "disk on fire");
  }
};

schema::map_provider orders() {
  return schema::map_provider::from_text(
             {{"urn:babel:orders:created",
               R"({"type":"object","required":["order_id"],"properties":{"order_id":{"type":"integer","minimum":1}},"additionalProperties":false})"}})
      .value();
}

}  // namespace

TEST(Guard, CheckReturnsEveryViolation) {
  auto p = orders();
  auto ok = schema::check(p, "urn:babel:orders:created", bq::json{{"order_id", 7}}).value();
  EXPECT_TRUE(ok.ok());
  auto bad =
      schema::check(p, "urn:babel:orders:created", bq::json{{"order_id", 0}, {"x", 1}}).value();
  ASSERT_EQ(bad.violations().size(), 2u);
  EXPECT_EQ(bad.first()->reason_text(), "order_id: below_minimum");
  // No schema registered: opt-in, nothing checked.
  EXPECT_TRUE(schema::check(p, "urn:babel:other", bq::json::array()).value().ok());
}

TEST(Guard, ValidateThrowsTypedErrorWithUrnAndViolations) {
  auto p = orders();
  EXPECT_NO_THROW(schema::validate(p, "urn:babel:orders:created", bq::json{{"order_id", 1}}));
  try {
    schema::validate(p, "urn:babel:orders:created", bq::json{{"x", 1}});
    FAIL() << "no throw";
  } catch (const schema::invalid_payload_error& e) {
    EXPECT_EQ(e.urn(), "urn:babel:orders:created");
    EXPECT_EQ(e.code(), schema::errc::invalid_payload);
    ASSERT_EQ(e.report().violations().size(), 2u);
    EXPECT_EQ(e.report().first()->reason, "missing_required");
    EXPECT_EQ(e.info().message,
              "data for \"urn:babel:orders:created\" does not match its URN schema: "
              "additional property \"x\" is not allowed; missing required property \"order_id\"");
    EXPECT_EQ(
        std::string(e.what()).rfind("invalid_payload: data for \"urn:babel:orders:created\"", 0),
        0u);
  }
  // Caught as the SDK's base error too.
  EXPECT_THROW(schema::validate(p, "urn:babel:orders:created", bq::json{}), bq::error);
}

TEST(Guard, LookupFailureIsAnErrorNotASkip) {
  failing_provider p;
  auto r = schema::check(p, "urn:x", bq::json::object());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.code(), schema::errc::io);
  EXPECT_EQ(r.error().message, "schema: lookup \"urn:x\": disk on fire");
  try {
    schema::validate(p, "urn:x", bq::json::object());
    FAIL();
  } catch (const schema::invalid_payload_error&) {
    FAIL() << "a lookup failure is not an invalid payload";
  } catch (const bq::error& e) {
    EXPECT_EQ(e.code(), schema::errc::io);
  }
}

TEST(Guard, EnvelopeForm) {
  auto p = orders();
  auto good = bq::make("urn:babel:orders:created", bq::json{{"order_id", 5}}).value();
  EXPECT_NO_THROW(schema::validate(p, good));
  auto bad =
      bq::decode(
          std::string_view(
              R"({"urn":"urn:babel:orders:created","trace_id":"t","data":{"order_id":1.5},"meta":{"schema_version":1},"attempts":0})"))
          .value();
  EXPECT_THROW(schema::validate(p, bad), schema::invalid_payload_error);
}
