// One test per manifest block: run it when a component registered a runner for it, else
// SKIP with "not covered" (a block this SDK did not run is never reported as passing).
#include "manifest.hpp"

#include <gtest/gtest.h>

#include <set>

namespace {

std::vector<std::string> block_names() {
  std::vector<std::string> names;
  try {
    for (const auto& [key, value] : conformance::manifest().items()) {
      if (value.is_object() || value.is_array()) names.push_back(key);
    }
  } catch (const std::exception&) {
    names.push_back(std::string("unreadable_manifest"));
  }
  return names;
}

class Block : public ::testing::TestWithParam<std::string> {};

TEST_P(Block, Conforms) {
  const std::string& name = GetParam();
  ASSERT_NE(name, "unreadable_manifest")
      << "cannot read " << conformance::suite_dir() / "manifest.json";
  auto& registry = conformance::block_registry();
  auto it = registry.find(name);
  if (it == registry.end()) {
    GTEST_SKIP()
        << "conformance block '" << name
        << "' not covered: its component is not built in this configuration or not implemented yet";
  }
  it->second(conformance::manifest()[name]);
}

INSTANTIATE_TEST_SUITE_P(Manifest, Block, ::testing::ValuesIn(block_names()),
                         [](const auto& p) { return p.param; });

TEST(Manifest, EveryBlockIsKnown) {
  // Catches a new manifest block silently never being looked at: the list below is what
  // this runner has been designed for; a new one must be added here and given a runner.
  const std::set<std::string> known = {"cases",    "idempotency",   "sqs",     "asb",
                                       "pulsar",   "kafka",         "artemis", "redis",
                                       "rabbitmq", "payload_schema"};
  for (const auto& name : block_names()) EXPECT_TRUE(known.count(name)) << "unknown block " << name;
}

}  // namespace
