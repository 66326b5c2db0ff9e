// Generated types (babelqueue_generate_messages in tests/typed/CMakeLists.txt) against the
// validator: for every schema of three registries — the registry examples of tests/schema,
// the conformance suite's payload_schema block, and examples/registry — data the validator
// accepts converts to the struct and back to JSON that is still valid and equal in value,
// and data it rejects fails conversion at one of the pointers the validator reports.
#include "conformance_messages.hpp"  // namespace conf
#include "example_messages.hpp"      // namespace example
#include "registry_messages.hpp"     // namespace reg
#include "support/files.hpp"

#include <babelqueue/codec.hpp>
#include <babelqueue/schema/codegen.hpp>
#include <babelqueue/schema/document.hpp>
#if BABELQUEUE_HAVE_GDPR
#include <babelqueue/gdpr/sensitive_paths.hpp>
#endif

#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>

namespace {

using babelqueue::json;
namespace schema = babelqueue::schema;
namespace typed = babelqueue::typed;

// What the mapping promises (schema/codegen.hpp), checked at compile time.
using example::OrdersPlaced;
static_assert(std::is_same_v<decltype(OrdersPlaced::order_id), std::int64_t>);  // minimum only
static_assert(std::is_same_v<decltype(OrdersPlaced::LinesItem::qty), std::int32_t>);  // 1..1000
static_assert(std::is_same_v<decltype(OrdersPlaced::priority), std::optional<std::int32_t>>);
static_assert(std::is_same_v<decltype(OrdersPlaced::placed_at), std::string>);  // date-time
static_assert(
    std::is_same_v<decltype(OrdersPlaced::currency), std::optional<OrdersPlaced::Currency>>);
static_assert(std::is_same_v<decltype(OrdersPlaced::customer), OrdersPlaced::Customer>);
static_assert(std::is_same_v<decltype(OrdersPlaced::lines), std::vector<OrdersPlaced::LinesItem>>);
static_assert(
    std::is_same_v<decltype(OrdersPlaced::tags), std::optional<std::vector<std::string>>>);
static_assert(
    std::is_same_v<decltype(reg::FlagsToggledV2::cleared), std::optional<std::nullptr_t>>);
static_assert(std::is_same_v<decltype(reg::FlagsToggledV2::weird_key_q), std::optional<bool>>);
static_assert(std::is_same_v<decltype(reg::LevelsSet::level), std::optional<json>>);  // mixed enum
static_assert(std::is_same_v<decltype(reg::MetricsReported::count), std::optional<std::int32_t>>);
static_assert(std::is_same_v<decltype(reg::MetricsReported::labels), std::optional<json>>);
static_assert(std::is_same_v<decltype(reg::ShippingDispatched::parcels),
                             std::optional<std::vector<std::vector<std::int64_t>>>>);
static_assert(
    std::is_same_v<decltype(reg::BatchIds::value), std::vector<std::int64_t>>);  // root array
static_assert(std::is_same_v<decltype(reg::MiscOpen::value), json>);  // no type at the root
static_assert(OrdersPlaced::urn == "urn:babel:orders:placed");
static_assert(typed::message_type<OrdersPlaced> && typed::message_type<reg::MiscOpen>);

struct tally {
  int valid = 0;
  int rejected_by_conversion = 0;
  int rejected_by_validation_only = 0;
};

// The property every generated type must have for `data` (see the file comment).
template <class T>
void check_against_validator(const json& data, tally& t) {
  SCOPED_TRACE(std::string(T::urn) + " " + data.dump());
  const auto doc = schema::document::parse(T::schema).value();
  const auto report = doc.validate(data);
  auto converted = typed::from_data<T>(data);
  if (report.ok()) {
    ++t.valid;
    ASSERT_TRUE(converted) << converted.error().message << " at " << converted.error().path;
    const json back = *converted;
    EXPECT_TRUE(doc.validate(back).ok()) << doc.validate(back).summary();
    EXPECT_TRUE(typed::detail::same_value(back, data)) << back.dump();
    auto again = typed::from_data<T>(back);
    ASSERT_TRUE(again);
    EXPECT_EQ(*again, *converted);
    if (data.is_object()) {
      EXPECT_TRUE(typed::to_data(*converted));
    }
    return;
  }
  std::set<std::string> pointers;
  for (const auto& v : report.violations()) pointers.insert(v.pointer);
  if (!converted) {
    ++t.rejected_by_conversion;
    EXPECT_EQ(converted.error().code, babelqueue::make_error_code(babelqueue::errc::invalid_data));
    EXPECT_EQ(pointers.count(converted.error().path), 1u)
        << "conversion failed at \"" << converted.error().path << "\" ("
        << converted.error().message << "), the validator reports: " << report.summary();
    return;
  }
  // The one keyword conversion deliberately does not enforce: unknown members are kept (D4).
  ++t.rejected_by_validation_only;
  for (const auto& v : report.violations())
    EXPECT_EQ(v.reason, "additional_not_allowed") << report.summary();
}

// Runs check_against_validator with the type of `urn` in the tuple; false when none has it.
template <class... T>
bool check_urn(std::tuple<T...>*, std::string_view urn, const json& data, tally& t) {
  return ((T::urn == urn && (check_against_validator<T>(data, t), true)) || ...);
}

json parse(const std::string& text) { return babelqueue::parse_json(text).value(); }

TEST(TypedCodegen, RegistryExampleMessagesRoundTripOrFailAtTheValidatorsPath) {
  const std::filesystem::path dir =
      std::filesystem::path(BABELQUEUE_SOURCE_DIR) / "tests/schema/registry/messages";
  tally t;
  int skipped = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const json message = parse(babelqueue::test::read_file(entry.path()));
    std::string urn;
    if (message.contains("job") && message["job"].is_string()) urn = message["job"];
    if (urn.empty() && message.contains("urn") && message["urn"].is_string()) urn = message["urn"];
    const json data = message.contains("data") ? message["data"] : json();
    if (!check_urn(static_cast<reg::all_messages*>(nullptr), urn, data, t)) ++skipped;
  }
  // 36 files: two name no registered URN (no-urn, unregistered).
  EXPECT_EQ(skipped, 2);
  EXPECT_GE(t.valid, 14);
  EXPECT_GE(t.rejected_by_conversion, 14);
  RecordProperty("valid", t.valid);
  RecordProperty("rejected_by_conversion", t.rejected_by_conversion);
  RecordProperty("rejected_by_validation_only", t.rejected_by_validation_only);
}

TEST(TypedCodegen, ConformancePayloadSchemaCases) {
  const json manifest = parse(babelqueue::test::read_file(
      std::filesystem::path(BABELQUEUE_CONFORMANCE_DIR) / "manifest.json"));
  tally t;
  int cases = 0;
  for (const auto& c : manifest["payload_schema"]["cases"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    ++cases;
    ASSERT_TRUE(check_urn(static_cast<conf::all_messages*>(nullptr),
                          "urn:babel:conformance:payload", c.value("data", json()), t));
  }
  EXPECT_EQ(cases, 7);
  EXPECT_EQ(t.valid, 2);
  // invalid-additional-property converts (kept for re-emit); the other four do not.
  EXPECT_EQ(t.rejected_by_conversion, 4);
  EXPECT_EQ(t.rejected_by_validation_only, 1);
}

TEST(TypedCodegen, ExampleRegistryCases) {
  const std::string order =
      R"({"order_id":1042,"placed_at":"2026-12-06T23:15:00.123+01:00","currency":"EUR",)"
      R"("customer":{"id":7,"email":"ada@example.com","name":"Ada"},)"
      R"("lines":[{"sku":"A","qty":1},{"sku":"B","qty":1000,"unit_price":0},{"sku":"C","qty":3}],)"
      R"("priority":9,"gift":false,"tags":["x"],"note":"n"})";
  tally t;
  auto* types = static_cast<example::all_messages*>(nullptr);
  const auto with = [&](const std::string& pointer, const json& value) {
    json j = parse(order);
    j[json::json_pointer(pointer)] = value;
    return j;
  };
  ASSERT_TRUE(check_urn(types, OrdersPlaced::urn, parse(order), t));
  ASSERT_TRUE(check_urn(types, OrdersPlaced::urn,
                        parse(R"({"order_id":1,"placed_at":"","customer":{"id":1},"lines":[]})"),
                        t));
  EXPECT_EQ(t.valid, 2);

  // Each invalid variant fails at exactly the pointer given, which the validator reports too.
  const std::vector<std::pair<json, std::string>> invalid{
      {with("/lines/2/qty", "3"), "/lines/2/qty"},
      {with("/lines/2/qty", 0), "/lines/2/qty"},
      {with("/lines/2/qty", 1.5), "/lines/2/qty"},
      {with("/lines/1/sku", ""), "/lines/1/sku"},
      {with("/currency", "GBP"), "/currency"},
      {with("/customer/email", "a"), "/customer/email"},
      {with("/customer/id", nullptr), "/customer/id"},
      {with("/priority", -1), "/priority"},
      {with("/tags/0", 5), "/tags/0"},
      {with("/lines", json::object()), "/lines"},
      {parse(R"({"order_id":1,"placed_at":"x","lines":[]})"), "/customer"},
      {parse(R"({"order_id":1,"placed_at":"x","customer":{},"lines":[]})"), "/customer/id"},
  };
  for (const auto& [data, pointer] : invalid) {
    check_against_validator<OrdersPlaced>(data, t);
    auto r = typed::from_data<OrdersPlaced>(data);
    ASSERT_FALSE(r) << data.dump();
    EXPECT_EQ(r.error().path, pointer) << r.error().message;
  }
  EXPECT_EQ(t.rejected_by_conversion, static_cast<int>(invalid.size()));

  // Out of the declared width (maximum 1000 → std::int32_t), though the validator ignores
  // `maximum`: the only valid data conversion refuses (docs/typed.md, limits).
  auto wide = typed::from_data<OrdersPlaced>(with("/lines/0/qty", 5000000000LL));
  ASSERT_FALSE(wide);
  EXPECT_EQ(wide.error().path, "/lines/0/qty");
  EXPECT_NE(std::string(babelqueue::error(wide.error()).what()).find("(at /lines/0/qty)"),
            std::string::npos);
}

TEST(TypedCodegen, UnknownMembersAreKeptForReEmit) {
  const json data = parse(
      R"({"order_id":1,"x_new":{"deep":[1,2]},"placed_at":"t","customer":{"id":2,"vip":true},)"
      R"("lines":[{"sku":"A","qty":1,"colour":"red"}]})");
  auto order = typed::from_data<OrdersPlaced>(data).value();
  EXPECT_EQ(order.unknown_fields, json::parse(R"({"x_new":{"deep":[1,2]}})"));
  EXPECT_EQ(order.customer.unknown_fields, json::parse(R"({"vip":true})"));
  EXPECT_EQ(order.lines[0].unknown_fields, json::parse(R"({"colour":"red"})"));
  order.order_id = 2;
  const json out = typed::to_data(order).value();
  json expected = data;
  expected["order_id"] = 2;
  EXPECT_TRUE(typed::detail::same_value(out, expected)) << out.dump();
  // Known members first, in schema order, then the unknown ones.
  EXPECT_EQ(out.dump(), R"({"order_id":2,"placed_at":"t","customer":{"id":2,"vip":true},)"
                        R"("lines":[{"sku":"A","qty":1,"colour":"red"}],"x_new":{"deep":[1,2]}})");
}

#if BABELQUEUE_HAVE_GDPR
template <class... T>
void expect_gdpr_paths(std::tuple<T...>*) {
  const auto one = [](auto tag) {
    using type = typename decltype(tag)::type;
    SCOPED_TRACE(std::string(type::urn));
    std::vector<std::string> expected;
    for (const auto& p : babelqueue::gdpr::sensitive_paths(json::parse(type::schema)))
      expected.push_back(p.path);
    const std::vector<std::string> generated(type::gdpr_sensitive_paths.begin(),
                                             type::gdpr_sensitive_paths.end());
    EXPECT_EQ(generated, expected);
    // The GDPR helper plans protection from the list exactly as from the schema.
    auto from_schema = babelqueue::gdpr::field_plan::build(json::parse(type::schema));
    if (!from_schema) return;  // a schema the helper refuses (none in these registries)
    auto from_list = babelqueue::gdpr::field_plan::from_paths(type::gdpr_sensitive_paths);
    ASSERT_TRUE(from_list) << from_list.error().message;
    ASSERT_EQ(from_list->fields().size(), from_schema->fields().size());
    for (std::size_t i = 0; i < from_schema->fields().size(); ++i) {
      EXPECT_EQ(from_list->fields()[i].path, from_schema->fields()[i].path);
      EXPECT_EQ(from_list->fields()[i].steps, from_schema->fields()[i].steps);
    }
  };
  (one(std::type_identity<T>{}), ...);
}

TEST(TypedCodegen, GdprSensitivePathsAreTheGdprHelpersPaths) {
  expect_gdpr_paths(static_cast<reg::all_messages*>(nullptr));
  expect_gdpr_paths(static_cast<example::all_messages*>(nullptr));
  // profile and profile.full_name are both marked: the plan protects profile as one value.
  EXPECT_EQ(reg::UsersRegistered::gdpr_sensitive_paths.size(), 4u);
  EXPECT_EQ(babelqueue::gdpr::field_plan::from_paths(reg::UsersRegistered::gdpr_sensitive_paths)
                ->fields()
                .size(),
            3u);
  const std::array<std::string_view, 1> root{""};
  EXPECT_FALSE(babelqueue::gdpr::field_plan::from_paths(root));
}
#endif

// The command itself, in its per-URN mode (the build uses --single through the CMake
// function, which compiles the result under -Werror for this very test).
TEST(TypedCodegen, CommandWritesOneHeaderPerUrnAndOnlyWhatChanged) {
  const auto out = std::filesystem::path(BABELQUEUE_BINARY_DIR) / "tests/typed/codegen-per-urn";
  std::filesystem::remove_all(out);
  const auto registry = std::filesystem::path(BABELQUEUE_SOURCE_DIR) / "tests/schema/registry";
  std::ostringstream o, e;
  ASSERT_EQ(schema::run_codegen(registry, out, {}, o, e), 0) << e.str();
  EXPECT_EQ(o.str(), "wrote 13 file(s) to " + out.string() + " (12 URN(s))\n");
  EXPECT_TRUE(std::filesystem::exists(out / "orders_created.hpp"));
  EXPECT_TRUE(std::filesystem::exists(out / "flags_toggled_v2.hpp"));
  const auto umbrella = babelqueue::test::read_file(out / "messages.hpp");
  EXPECT_NE(umbrella.find("#include \"users_registered.hpp\""), std::string::npos);
  EXPECT_NE(umbrella.find("using all_messages = std::tuple<BatchIds, CartsUpdated,"),
            std::string::npos);

  const auto before = std::filesystem::last_write_time(out / "orders_created.hpp");
  std::ostringstream o2, e2;
  ASSERT_EQ(schema::run_codegen(registry / "registry.json", out, {}, o2, e2), 0) << e2.str();
  EXPECT_EQ(std::filesystem::last_write_time(out / "orders_created.hpp"), before);

  schema::codegen_options bad;
  bad.language = "go";
  std::ostringstream o3, e3;
  EXPECT_EQ(schema::run_codegen(registry, out, bad, o3, e3), 2);
  EXPECT_EQ(e3.str(), "babelqueue: codegen: unknown language \"go\" (known: cpp)\n");
  bad.language = "cpp";
  bad.name_space = "a::class";
  std::ostringstream o4, e4;
  EXPECT_EQ(schema::run_codegen(registry, out, bad, o4, e4), 2);
  std::ostringstream o5, e5;
  EXPECT_EQ(schema::run_codegen(registry / "nope.json", out, {}, o5, e5), 2);
  EXPECT_NE(e5.str().find("registry: read"), std::string::npos) << e5.str();
}

}  // namespace
