// `babelqueue schema …` run as a process against the checked-in fixture registry: stdout,
// exit code and (when expected/<case>.err exists) stderr must match expected/ byte for byte.
// The cases are registry/cases.txt. BABELQUEUE_SCHEMA_REGENERATE=1 rewrites expected/ (review
// the diff before committing it).
#include "support/files.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

const fs::path fixtures = BABELQUEUE_SCHEMA_FIXTURES;

struct cli_case {
  std::string name;
  std::string args;
};

std::vector<cli_case> load_cases() {
  std::vector<cli_case> out;
  std::ifstream in(fixtures / "cases.txt");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const auto tab = line.find('\t');
    if (tab == std::string::npos) continue;
    out.push_back({line.substr(0, tab), line.substr(tab + 1)});
  }
  return out;
}

using babelqueue::test::read_file;

class SchemaCli : public ::testing::TestWithParam<cli_case> {};

TEST_P(SchemaCli, MatchesExpected) {
  const auto& c = GetParam();
  const fs::path tmp =
      fs::temp_directory_path() / ("bq-schema-cli-" + c.name + "-" + std::to_string(::getpid()));
  // The shell expands messages/*.json; LC_ALL=C makes that order byte-wise.
  const std::string command = "cd '" + fixtures.string() + "' && LC_ALL=C '" + BABELQUEUE_CLI_PATH +
                              "' " + c.args + " >'" + tmp.string() + ".out' 2>'" + tmp.string() +
                              ".err' </dev/null";
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status)) << command;
  const int rc = WEXITSTATUS(status);
  const std::string out = read_file(tmp.string() + ".out");
  const std::string err = read_file(tmp.string() + ".err");
  fs::remove(tmp.string() + ".out");
  fs::remove(tmp.string() + ".err");

  const fs::path expected = fixtures / "expected" / c.name;
  if (const char* regen = std::getenv("BABELQUEUE_SCHEMA_REGENERATE");
      regen && std::string(regen) == "1") {
    std::ofstream(expected.string() + ".out", std::ios::binary) << out;
    std::ofstream(expected.string() + ".rc", std::ios::binary) << rc << "\n";
    if (!err.empty()) std::ofstream(expected.string() + ".err", std::ios::binary) << err;
    GTEST_SKIP() << "regenerated " << expected;
  }
  ASSERT_TRUE(fs::exists(expected.string() + ".rc")) << "no expected output for " << c.name;
  EXPECT_EQ(std::to_string(rc) + "\n", read_file(expected.string() + ".rc"))
      << c.args << "\nstderr: " << err;
  EXPECT_EQ(out, read_file(expected.string() + ".out")) << c.args;
  if (fs::exists(expected.string() + ".err")) {
    EXPECT_EQ(err, read_file(expected.string() + ".err")) << c.args;
  } else {
    EXPECT_TRUE(rc == 2 || err.empty()) << "unexpected stderr: " << err;
  }
}

INSTANTIATE_TEST_SUITE_P(Registry, SchemaCli, ::testing::ValuesIn(load_cases()),
                         [](const auto& param_info) {
                           std::string n = param_info.param.name;
                           for (auto& ch : n)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

TEST(SchemaCliHelp, CompatHelpSaysWhereItDiffersFromBqschema) {
  const fs::path tmp = fs::temp_directory_path() / ("bq-schema-help-" + std::to_string(::getpid()));
  const std::string command =
      std::string("'") + BABELQUEUE_CLI_PATH + "' schema compat --help >'" + tmp.string() + "'";
  ASSERT_EQ(std::system(command.c_str()), 0);
  const std::string help = read_file(tmp);
  fs::remove(tmp);
  EXPECT_NE(help.find("Differs from bqschema"), std::string::npos) << help;
  EXPECT_NE(help.find("property removed"), std::string::npos);
}

}  // namespace
