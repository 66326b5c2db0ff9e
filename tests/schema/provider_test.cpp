// map_provider, registry (lenient and strict) and the lazy, caching dir_provider.
#include <babelqueue/schema/registry.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

namespace bq = babelqueue;
namespace schema = babelqueue::schema;
namespace fs = std::filesystem;

namespace {

class temp_dir {
 public:
  temp_dir() {
    std::random_device rd;
    path_ =
        fs::temp_directory_path() / ("bq-schema-" + std::to_string(rd()) + std::to_string(rd()));
    fs::create_directories(path_);
  }
  ~temp_dir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  fs::path write(const std::string& rel, const std::string& text) const {
    auto p = path_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }

 private:
  fs::path path_;
};

const std::string fixtures = BABELQUEUE_SCHEMA_FIXTURES;

}  // namespace

TEST(MapProvider, FindAndNoneRegistered) {
  auto p = schema::map_provider::from_text({{"urn:a", R"({"type":"object"})"}}).value();
  auto found = p.find("urn:a").value();
  ASSERT_TRUE(found);
  EXPECT_FALSE(found->validate(bq::json::array()).ok());
  EXPECT_EQ(p.find("urn:b").value(), nullptr);
  EXPECT_EQ(p.size(), 1u);
}

TEST(MapProvider, BadSchemasAreTypedErrors) {
  auto text = schema::map_provider::from_text({{"urn:a", "[1]"}});
  ASSERT_FALSE(text);
  EXPECT_EQ(text.code(), schema::errc::invalid_schema);
  EXPECT_NE(text.error().message.find("urn:a"), std::string::npos);
  auto broken = schema::map_provider::from_text({{"urn:a", "{"}});
  ASSERT_FALSE(broken);
  EXPECT_EQ(broken.code(), bq::errc::malformed_json);
  auto value = schema::map_provider::from_json({{"urn:a", bq::json("object")}});
  ASSERT_FALSE(value);
  EXPECT_EQ(value.code(), schema::errc::invalid_schema);
}

TEST(Registry, FixtureRegistryLoads) {
  schema::registry_options strict;
  strict.strict = true;
  auto reg = schema::registry::load(fixtures + "/registry.json", strict).value();
  auto urns = reg.urns();
  ASSERT_EQ(urns.size(), 12u);
  EXPECT_TRUE(std::is_sorted(urns.begin(), urns.end()));
  for (const auto& urn : urns) EXPECT_TRUE(reg.load_schema(urn).has_value()) << urn;
  // "./schemas/../schemas/open-any.json" is cleaned like Go's filepath.Join.
  EXPECT_EQ(reg.entry("urn:babel:misc:open")->resolved.filename(), "open-any.json");
  EXPECT_EQ(reg.load_schema("urn:babel:nobody").value(), nullptr);
}

TEST(Registry, StrictVersusLenientManifests) {
  temp_dir dir;
  dir.write("s.json", R"({"type":"object"})");
  const auto dup = dir.write(
      "dup.json", R"({"schemas":[{"urn":"u","schema":"s.json"},{"urn":"u","schema":"t.json"}]})");
  const auto empty = dir.write(
      "empty.json",
      R"({"schemas":[{"urn":"","schema":"s.json"},{"urn":"v","schema":"s.json"},{"schema":"s.json"},7,{"urn":"w","schema":1}]})");
  schema::registry_options strict;
  strict.strict = true;

  auto d = schema::registry::load(dup, strict);
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().message, "registry: urn \"u\" is declared more than once");
  auto lenient_dup = schema::registry::load(dup).value();  // last wins
  EXPECT_EQ(lenient_dup.entry("u")->schema, "t.json");

  auto e = schema::registry::load(empty, strict);
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().message, "registry: entry 0 has an empty urn");
  auto lenient_empty = schema::registry::load(empty).value();  // unusable entries skipped
  EXPECT_EQ(lenient_empty.urns(), std::vector<std::string>{"v"});

  for (const char* text : {"[]", "\"x\"", "{\"schemas\":5}", "not json", ""}) {
    auto p = dir.write("m.json", text);
    auto r = schema::registry::load(p, strict);
    EXPECT_FALSE(r) << text;
  }
  auto missing = schema::registry::load(dir.path() / "nope.json");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.code(), schema::errc::io);
  EXPECT_NE(missing.error().message.find("no such file or directory"), std::string::npos);
}

TEST(DirProvider, LazyCachedAndHealsAfterFix) {
  temp_dir dir;
  const auto manifest = dir.write(
      "reg/registry.json",
      R"({"schemas":[{"urn":"urn:ok","schema":"s/ok.json"},{"urn":"urn:late","schema":"s/late.json"},
                     {"urn":"urn:abs","schema":")" +
          (dir.path() / "abs.json").string() + R"("}]})");
  dir.write("reg/s/ok.json", R"({"type":"object","required":["a"]})");
  dir.write("abs.json", R"({"type":"string"})");
  auto p = schema::dir_provider::open(manifest).value();

  // Unknown URN: skip. Missing file: error, not cached.
  EXPECT_EQ(p.find("urn:unknown").value(), nullptr);
  auto late = p.find("urn:late");
  ASSERT_FALSE(late);
  EXPECT_EQ(late.code(), schema::errc::io);
  dir.write("reg/s/late.json", "[]");
  auto not_object = p.find("urn:late");
  ASSERT_FALSE(not_object);
  EXPECT_EQ(not_object.code(), schema::errc::invalid_schema);
  dir.write("reg/s/late.json", R"({"type":"integer"})");
  ASSERT_TRUE(p.find("urn:late").value());

  auto first = p.find("urn:ok").value();
  ASSERT_TRUE(first);
  // Cached: a change on disk is not seen, and the same object is returned (copies share it).
  dir.write("reg/s/ok.json", "garbage");
  auto copy = p;
  EXPECT_EQ(copy.find("urn:ok").value(), first);
  EXPECT_TRUE(p.find("urn:abs").value());
}

TEST(DirProvider, ConcurrentFirstUse) {
  schema::dir_provider p(fixtures + "/registry.json");
  const auto urns = p.registry().urns();
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int round = 0; round < 50; ++round)
        for (const auto& urn : urns) {
          auto s = p.find(urn);
          if (!s || !*s) ++errors;
        }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(errors.load(), 0);
}

TEST(DirProvider, ThrowingConstructor) {
  EXPECT_THROW(schema::dir_provider("/nonexistent/registry.json"), bq::error);
}
