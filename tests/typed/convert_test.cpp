// typed/convert.hpp with a HAND-WRITTEN binding: the conversion rules (types, widths,
// required/optional, rules), the pointers of failures, and that nothing a bad `data` or a
// bad to_json/from_json does escapes as anything but a typed error.
#include <babelqueue/typed/convert.hpp>

#include <gtest/gtest.h>

#include <limits>
#include <map>
#include <stdexcept>

namespace shop {

struct Line {
  std::string sku;
  std::int16_t qty = 0;
  friend bool operator==(const Line&, const Line&) = default;
  friend void to_json(babelqueue::json& j, const Line& l) { j = {{"sku", l.sku}, {"qty", l.qty}}; }
  friend void from_json(const babelqueue::json& j, Line& l) {
    babelqueue::typed::expect_object(j);
    babelqueue::typed::read_field(j, "sku", l.sku, babelqueue::typed::rules().min_length(2));
    babelqueue::typed::read_field(j, "qty", l.qty, babelqueue::typed::rules().minimum(1));
  }
};

struct Order {
  static constexpr std::string_view urn = "urn:shop:order";
  std::uint64_t id = 0;
  std::optional<double> total;
  std::vector<Line> lines;
  std::map<std::string, int> legacy;  // read with nlohmann's own get(): no path inside it
  friend void to_json(babelqueue::json& j, const Order& o) {
    j = {{"id", o.id}, {"lines", o.lines}};
    babelqueue::typed::write_field(j, "total", o.total);
  }
  friend void from_json(const babelqueue::json& j, Order& o) {
    babelqueue::typed::expect_object(j);
    babelqueue::typed::read_field(j, "id", o.id);
    babelqueue::typed::read_field(j, "total", o.total);
    babelqueue::typed::read_field(j, "lines", o.lines);
    if (j.contains("a/b~c")) o.legacy = j.at("a/b~c").at("x").get<std::map<std::string, int>>();
  }
};

// A binding whose to_json writes a non-object, and one whose conversions throw.
struct Scalar {
  static constexpr std::string_view urn = "urn:shop:scalar";
  friend void to_json(babelqueue::json& j, const Scalar&) { j = 1; }
  friend void from_json(const babelqueue::json&, Scalar&) {}
};
struct Throwing {
  static constexpr std::string_view urn = "urn:shop:throwing";
  friend void to_json(babelqueue::json&, const Throwing&) { throw std::runtime_error("boom"); }
  friend void from_json(const babelqueue::json&, Throwing&) { throw std::logic_error("bad"); }
};

}  // namespace shop

namespace {

using babelqueue::json;
namespace typed = babelqueue::typed;

static_assert(typed::message_type<shop::Order>);
static_assert(!typed::message_type<shop::Line>);  // no URN
static_assert(!typed::message_type<int>);
static_assert(typed::urn_of<shop::Order>() == "urn:shop:order");

std::string path_of(const std::string& text) {
  auto r = typed::from_data<shop::Order>(json::parse(text));
  EXPECT_FALSE(r) << text;
  return r ? "(converted)" : r.error().path;
}

TEST(TypedConvert, ReadsAndWritesAHandWrittenType) {
  auto r = typed::from_data<shop::Order>(
      json::parse(R"({"id":18446744073709551615,"total":2,"lines":[{"sku":"AB","qty":2.0}]})"));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->id, std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(r->total, 2.0);
  ASSERT_EQ(r->lines.size(), 1u);
  EXPECT_EQ(r->lines[0], (shop::Line{"AB", 2}));  // 2.0 is an integer, as for the validator
  auto back = typed::to_data(*r).value();
  EXPECT_EQ(back["lines"][0]["qty"], 2);
  EXPECT_FALSE(typed::from_data<shop::Order>(json::parse(R"({"id":1,"lines":[]})"))->total);
}

TEST(TypedConvert, FailuresCarryTheRfc6901PointerOfTheValue) {
  EXPECT_EQ(path_of(R"({"lines":[]})"), "/id");          // missing required
  EXPECT_EQ(path_of(R"({"id":-1,"lines":[]})"), "/id");  // negative for unsigned
  EXPECT_EQ(path_of(R"({"id":1.5,"lines":[]})"), "/id");
  EXPECT_EQ(path_of(R"({"id":"1","lines":[]})"), "/id");
  EXPECT_EQ(path_of(R"({"id":1,"total":null,"lines":[]})"), "/total");  // present means present
  EXPECT_EQ(path_of(R"({"id":1,"lines":{}})"), "/lines");
  EXPECT_EQ(
      path_of(
          R"({"id":1,"lines":[{"sku":"AB","qty":1},{"sku":"AB","qty":1},{"sku":"AB","qty":40000}]})"),
      "/lines/2/qty");                                                               // beyond int16
  EXPECT_EQ(path_of(R"({"id":1,"lines":[{"sku":"AB","qty":0}]})"), "/lines/0/qty");  // minimum
  EXPECT_EQ(path_of(R"({"id":1,"lines":[{"sku":"é","qty":1}]})"), "/lines/0/sku");   // 1 code point
  EXPECT_EQ(path_of(R"({"id":1,"lines":[{"sku":"éé","qty":1}, 7]})"), "/lines/1");
  EXPECT_EQ(path_of(R"([1])"), "");
  // nlohmann's own get() inside a from_json: the failure is still typed, at the innermost
  // read_field around it (here the root), with nlohmann's text.
  auto r =
      typed::from_data<shop::Order>(json::parse(R"({"id":1,"lines":[],"a/b~c":{"x":{"k":"v"}}})"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().path, "");
  EXPECT_NE(r.error().message.find("type must be number"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("data for \"urn:shop:order\" does not convert"),
            std::string::npos);
}

TEST(TypedConvert, PointerTokensAreEscaped) {
  typed::conversion_error e({}, "x");
  e.prepend("a/b~c");
  e.prepend("0");
  EXPECT_EQ(e.pointer(), "/0/a~1b~0c");
}

TEST(TypedConvert, BrokenBindingsFailAsTypedErrors) {
  auto s = typed::to_data(shop::Scalar{});
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, babelqueue::make_error_code(babelqueue::errc::invalid_data));
  auto t = typed::to_data(shop::Throwing{});
  ASSERT_FALSE(t);
  EXPECT_NE(t.error().message.find("boom"), std::string::npos);
  auto f = typed::from_data<shop::Throwing>(json::object());
  ASSERT_FALSE(f);
  EXPECT_NE(f.error().message.find("bad"), std::string::npos);
}

TEST(TypedConvert, RulesEnumsAndValueEquality) {
  const json allowed = json::parse(R"([1, "a", {"k":1,"j":2}, null])");
  json v;
  EXPECT_NO_THROW(typed::read(json::parse("1.0"), v, typed::rules().one_of(allowed)));
  EXPECT_NO_THROW(typed::read(json::parse(R"({"j":2,"k":1})"), v, typed::rules().one_of(allowed)));
  EXPECT_THROW(typed::read(json::parse("true"), v, typed::rules().one_of(allowed)),
               typed::conversion_error);
  EXPECT_THROW(typed::read(json::parse("[]"), v, typed::rules().object()), typed::conversion_error);
  std::nullptr_t n;
  EXPECT_NO_THROW(typed::read(json(nullptr), n));
  EXPECT_THROW(typed::read(json(0), n), typed::conversion_error);
  bool b = false;
  EXPECT_THROW(typed::read(json(1), b), typed::conversion_error);
  std::int32_t i = 0;
  EXPECT_THROW(typed::read(json(2147483648LL), i), typed::conversion_error);
  EXPECT_THROW(typed::read(json(1e300), i), typed::conversion_error);
  EXPECT_NO_THROW(typed::read(json(-2147483648LL), i));
  EXPECT_EQ(i, std::numeric_limits<std::int32_t>::min());
}

}  // namespace
