// Block `sqs`: the native MessageAttributes projection (`attribute_projection`: ids and
// strings as DataType String, counters as Number) and `attempts = max(body,
// ApproximateReceiveCount − 1)` with the count as SQS sends it, a string that may be absent
// or garbage (`attempts_reconciliation`). Driven through the pure binding
// (include/babelqueue/bindings/sqs.hpp).
#include "../manifest.hpp"

#include <babelqueue/bindings/sqs.hpp>
#include <babelqueue/codec.hpp>

#include <gtest/gtest.h>

namespace {

namespace sqs_binding = babelqueue::bindings::sqs;

conformance::register_block sqs_block{
    "sqs", [](const nlohmann::json& block) {
      const auto& projection = block.at("attribute_projection");
      const std::string file = projection.at("envelope_file");
      auto env = babelqueue::decode(conformance::read_file(conformance::suite_dir() / file));
      ASSERT_TRUE(env) << env.error().message;
      const std::string body = babelqueue::encode(*env).value();

      const std::vector<sqs_binding::attribute> got = sqs_binding::project(body);
      const auto& want = projection.at("message_attributes");
      for (const auto& [key, value] : want.items()) {
        const std::string name = key;  // clang 14 cannot capture a structured binding
        auto it = std::find_if(got.begin(), got.end(),
                               [&](const sqs_binding::attribute& a) { return a.name == name; });
        ASSERT_NE(it, got.end()) << "missing message attribute " << name;
        EXPECT_EQ(it->data_type, value.at("DataType").get<std::string>()) << name;
        EXPECT_EQ(it->string_value, value.at("StringValue").get<std::string>()) << name;
      }
      EXPECT_EQ(got.size(), want.size()) << "no extra message attributes";

      // Out-of-band headers ride as String attributes; a contract name is never overwritten.
      const auto with_headers = sqs_binding::project(
          body, {{"traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
                 {"bq-job", "urn:babel:evil:job"}});
      ASSERT_EQ(with_headers.size(), want.size() + 1);
      EXPECT_EQ(
          with_headers.back(),
          (sqs_binding::attribute{"traceparent", "String",
                                  "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}));

      for (const auto& c : block.at("attempts_reconciliation").at("cases")) {
        const auto& count = c.at("approximate_receive_count");
        std::optional<std::string_view> raw;
        std::string text;
        if (!count.is_null()) {
          text = count.get<std::string>();
          raw = text;
        }
        EXPECT_EQ(sqs_binding::reconcile_attempts(c.at("body_attempts").get<std::int64_t>(), raw),
                  c.at("expected_attempts").get<std::int64_t>())
            << c.at("name").get<std::string>();
      }
    }};

}  // namespace
