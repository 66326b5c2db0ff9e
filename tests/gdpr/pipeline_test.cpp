// The opt-in runtime steps end to end on memory://: validate → protect → encode → publish,
// then decode → unprotect → validate → handler; wrong key → retried, then dead-lettered.
#include <babelqueue/gdpr/aes_gcm_cipher.hpp>
#include <babelqueue/gdpr/pipeline.hpp>
#include <babelqueue/memory/memory_transport.hpp>
#include <babelqueue/runtime/app.hpp>
#include <babelqueue/schema/provider.hpp>
#include <babelqueue/uuid.hpp>

#include <gtest/gtest.h>

namespace gdpr = babelqueue::gdpr;
namespace schema = babelqueue::schema;
using babelqueue::json;
using namespace std::chrono_literals;

namespace {

constexpr const char* urn = "urn:babel:users:registered";

// `email` is sensitive AND constrained by enum: ciphertext would fail validation, so this
// schema only passes when validation sees cleartext on both sides.
std::shared_ptr<const schema::provider> provider() {
  auto p = std::make_shared<schema::map_provider>();
  p->add(urn, json::parse(R"({"type": "object", "required": ["user_id", "email"],
      "properties": {"user_id": {"type": "integer", "minimum": 1},
        "email": {"type": "string", "enum": ["alice@example.com", "bob@example.com"], "x-gdpr-sensitive": "email"},
        "tags": {"type": "array", "items": {"type": "string", "x-gdpr-sensitive": true}}},
      "additionalProperties": false})"))
      .value();
  return p;
}

std::shared_ptr<const gdpr::cipher> cipher(char fill) {
  return std::make_shared<gdpr::aes_gcm_cipher>(
      gdpr::aes_gcm_cipher::create(std::string(32, fill)).value());
}

class GdprPipeline : public ::testing::Test {
 protected:
  void SetUp() override { babelqueue::memory::register_transport(); }
  babelqueue::app_options options() const {
    babelqueue::app_options o;
    o.queue = "users";
    o.poll_timeout = 20ms;
    o.max_attempts = 2;
    o.dead_letter = true;
    return o;
  }
  std::string broker = "gdpr-" + babelqueue::uuid_v4();
  std::string url() const { return "memory://" + broker; }
};

}  // namespace

TEST_F(GdprPipeline, ProtectsOnTheWireAndHandsTheHandlerValidatedCleartext) {
  const gdpr::pipeline steps(provider(), cipher('k'));
  babelqueue::app a(url(), options());
  const json data =
      json::parse(R"({"user_id": 7, "email": "alice@example.com", "tags": ["a", "b"]})");
  ASSERT_TRUE(steps.publish(a, urn, data));

  json seen_clear, seen_wire;
  a.handle(urn, steps.wrap([&](babelqueue::message& m, const json& clear) {
    seen_clear = clear;
    seen_wire = m.data();
  }));
  ASSERT_EQ(a.drain().value(), 1u);
  EXPECT_EQ(seen_clear, data);
  ASSERT_TRUE(seen_wire["email"].is_string());
  EXPECT_NE(seen_wire["email"], "alice@example.com");
  EXPECT_NE(seen_wire["tags"][0], "a");
  EXPECT_EQ(seen_wire["user_id"], 7);
}

TEST_F(GdprPipeline, InvalidCleartextIsRefusedBeforeAnythingIsPublished) {
  const gdpr::pipeline steps(provider(), cipher('k'));
  babelqueue::app a(url(), options());
  auto r = steps.publish(a, urn, json::parse(R"({"user_id": 0, "email": "eve@example.com"})"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.code(), schema::errc::invalid_payload);
  EXPECT_EQ(babelqueue::memory::depth(broker, "users"), 0u);
  EXPECT_THROW((void)steps.seal(urn, json::parse(R"({"user_id": 1})")),
               schema::invalid_payload_error);
}

TEST_F(GdprPipeline, WrongKeyIsRetriedThenDeadLettered) {
  const gdpr::pipeline producer(provider(), cipher('k'));
  const gdpr::pipeline consumer(provider(), cipher('w'));
  babelqueue::app a(url(), options());
  ASSERT_TRUE(
      producer.publish(a, urn, json::parse(R"({"user_id": 7, "email": "bob@example.com"})")));
  int calls = 0;
  a.handle(urn, consumer.wrap([&](babelqueue::message&, const json&) { ++calls; }));
  (void)a.drain().value();
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(babelqueue::memory::depth(broker, "users"), 0u);
  EXPECT_EQ(babelqueue::memory::depth(broker, "users.dlq"), 1u);
  json sealed = producer.seal(urn, json::parse(R"({"user_id": 7, "email": "bob@example.com"})"));
  try {
    (void)consumer.open(urn, sealed);
    FAIL() << "expected a decrypt error";
  } catch (const babelqueue::error& e) {
    EXPECT_TRUE(gdpr::is_decrypt_error(e.code())) << e.what();
  }
}

TEST_F(GdprPipeline, UrnWithoutSchemaPassesThroughAndBadMarksAreRefused) {
  auto p = std::make_shared<schema::map_provider>();
  p->add("urn:bad",
         json::parse(R"({"properties": {"x": {"anyOf": [{"x-gdpr-sensitive": true}]}}})"))
      .value();
  const gdpr::pipeline steps(p, cipher('k'));
  const json data = {{"email", "clear@example.com"}};
  EXPECT_EQ(steps.seal("urn:none", data), data);
  EXPECT_EQ(steps.open("urn:none", data), data);
  try {
    (void)steps.seal("urn:bad", json::parse(R"({"x": "secret"})"));
    FAIL() << "expected a gdpr error";
  } catch (const babelqueue::error& e) {
    EXPECT_EQ(e.code(), gdpr::errc::invalid_schema);
  }
  babelqueue::app a(url(), options());
  // A gdpr failure keeps its own code (and data path) through publish().
  EXPECT_EQ(steps.publish(a, "urn:bad", json::parse(R"({"x": "secret"})")).code(),
            gdpr::errc::invalid_schema);
  EXPECT_EQ(babelqueue::memory::depth(broker, "users"), 0u);
}
