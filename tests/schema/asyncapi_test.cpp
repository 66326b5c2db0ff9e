// The AsyncAPI export: shape of the document (AsyncAPI 3.0.0 structure), payload fidelity,
// and the Go rendering.
#include "schema/value_compare.hpp"
#include "support/files.hpp"

#include <babelqueue/codec.hpp>
#include <babelqueue/schema/asyncapi.hpp>
#include <babelqueue/schema/tooling.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

namespace bq = babelqueue;
namespace schema = babelqueue::schema;

namespace {
const std::string fixtures = BABELQUEUE_SCHEMA_FIXTURES;

using babelqueue::test::read_file;
}  // namespace

TEST(AsyncApi, ComponentIds) {
  EXPECT_EQ(schema::asyncapi_component_id("urn:babel:orders:created"), "urn_babel_orders_created");
  EXPECT_EQ(schema::asyncapi_component_id("urn:babel:flags:toggled.v2"),
            "urn_babel_flags_toggled_v2");
  EXPECT_EQ(schema::asyncapi_component_id("a-ç😀_Z9"), "a____Z9");  // -, ç, 😀 each one `_`
  EXPECT_EQ(schema::asyncapi_component_id("a\xff"
                                          "b"),
            "a_b");
}

TEST(AsyncApi, DocumentShape) {
  schema::registry_options strict;
  strict.strict = true;
  auto reg = schema::registry::load(fixtures + "/registry.json", strict).value();
  std::ostringstream out, err;
  ASSERT_EQ(schema::run_export_asyncapi(fixtures + "/registry.json", std::nullopt, {}, out, err),
            0);
  const std::string text = out.str();
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  auto doc = bq::parse_json(text).value();

  // Top level: exactly the AsyncAPI 3.0.0 members bqschema emits.
  ASSERT_TRUE(doc.is_object());
  EXPECT_EQ(doc["asyncapi"], "3.0.0");
  EXPECT_EQ(doc["info"]["title"], "BabelQueue Event Catalog");
  EXPECT_EQ(doc["info"]["version"], "1.0.0");
  EXPECT_EQ(doc.size(), 4u);
  const auto& channels = doc["channels"];
  const auto& messages = doc["components"]["messages"];
  ASSERT_TRUE(channels.is_object());
  ASSERT_TRUE(messages.is_object());
  EXPECT_EQ(channels.size(), reg.urns().size());
  EXPECT_EQ(messages.size(), reg.urns().size());

  const std::regex id_pattern(
      "^[A-Za-z0-9_]+$");  // AsyncAPI component key pattern (3.0: ^[a-zA-Z0-9\.\-_]+$)
  for (const auto& urn : reg.urns()) {
    ASSERT_TRUE(channels.contains(urn)) << urn;
    const auto& ch = channels[urn];
    EXPECT_EQ(ch["address"], urn);
    ASSERT_EQ(ch["messages"].size(), 1u);
    const std::string id = ch["messages"].begin().key();
    EXPECT_TRUE(std::regex_match(id, id_pattern)) << id;
    // Every channel message is a Reference Object resolving into components.messages.
    const std::string ref = ch["messages"][id]["$ref"];
    EXPECT_EQ(ref, "#/components/messages/" + id);
    ASSERT_TRUE(messages.contains(id)) << ref;
    EXPECT_EQ(messages[id]["name"], urn);
    // The payload is the schema file, unchanged in value (x-gdpr-sensitive included).
    auto file = bq::parse_json(*reg.raw_text(urn).value()).value();
    // (Key order differs: bqschema sorts; values compare as JSON.)
    EXPECT_TRUE(schema::detail::json_equal(messages[id]["payload"], file)) << urn;
  }
  EXPECT_EQ(
      messages["urn_babel_users_registered"]["payload"]["properties"]["email"]["x-gdpr-sensitive"],
      "email");

  // Rendering: keys sorted at every level, two-space indent (json.MarshalIndent).
  EXPECT_EQ(text.rfind("{\n  \"asyncapi\": \"3.0.0\",\n  \"channels\": {\n", 0), 0u);
}

TEST(AsyncApi, OutputFileAndOptions) {
  const auto path = std::filesystem::temp_directory_path() / "bq-schema-asyncapi-test.json";
  std::ostringstream out, err, direct, err2;
  schema::asyncapi_options o;
  o.title = "T <&>";
  o.version = "9";
  ASSERT_EQ(schema::run_export_asyncapi(fixtures + "/registry.json", path.string(), o, out, err),
            0);
  EXPECT_TRUE(out.str().empty());
  EXPECT_EQ(err.str(), "wrote " + path.string() + " (12 URN(s))\n");
  ASSERT_EQ(schema::run_export_asyncapi(fixtures + "/registry.json", std::nullopt, o, direct, err2),
            0);
  EXPECT_EQ(read_file(path), direct.str());
  EXPECT_NE(direct.str().find("\"title\": \"T \\u003c\\u0026\\u003e\""), std::string::npos);
  std::filesystem::remove(path);
}

TEST(AsyncApi, GoIndentLayout) {
  auto v = bq::parse_json(R"({"b":[],"a":{"y":[1,2.50,1e21],"x":{}},"c":"\u2028"})").value();
  EXPECT_EQ(schema::go_indent_json(v),
            "{\n  \"a\": {\n    \"x\": {},\n    \"y\": [\n      1,\n      2.5,\n      1e+21\n    "
            "]\n  },\n"
            "  \"b\": [],\n  \"c\": \"\\u2028\"\n}");
}
