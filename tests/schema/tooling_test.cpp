// The registry commands in-process (the functions the CLI calls) over registry/cases.txt, so
// the sanitizer builds cover them without the CLI binary. Same expected/ files as
// cli_fixture_test.cpp (stdout and exit code).
#include "support/files.hpp"

#include <babelqueue/schema/tooling.hpp>

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;
namespace schema = babelqueue::schema;

namespace {

const fs::path fixtures = BABELQUEUE_SCHEMA_FIXTURES;

using babelqueue::test::read_file;

std::vector<std::string> split(const std::string& args) {
  std::vector<std::string> out;
  std::istringstream in(args);
  for (std::string word; in >> word;) {
    if (word == "messages/*.json") {
      std::vector<std::string> files;
      for (const auto& e : fs::directory_iterator(fixtures / "messages"))
        files.push_back("messages/" + e.path().filename().string());
      std::sort(files.begin(), files.end());
      out.insert(out.end(), files.begin(), files.end());
    } else {
      out.push_back(word);
    }
  }
  return out;
}

// Runs one `schema <command> …` line; returns false when the line is not representable here.
bool run(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err, int& rc) {
  if (argv.size() < 2 || argv[0] != "schema") return false;
  const std::string& command = argv[1];
  std::string registry = "registry.json";
  std::optional<std::string> output;
  schema::asyncapi_options options;
  std::vector<std::string> positional;
  for (std::size_t i = 2; i < argv.size(); ++i) {
    if (i + 1 < argv.size() && argv[i] == "--registry") {
      registry = argv[++i];
    } else if (i + 1 < argv.size() && argv[i] == "-o") {
      output = argv[++i];
    } else if (i + 1 < argv.size() && argv[i] == "--doc-version") {
      options.version = argv[++i];
    } else if (argv[i].rfind("-", 0) == 0) {
      return false;
    } else {
      positional.push_back(argv[i]);
    }
  }
  if (command == "validate") {
    rc = schema::run_validate(registry, positional, out, err);
  } else if (command == "check") {
    rc = schema::run_check(registry, out, err);
  } else if (command == "export-asyncapi") {
    rc = schema::run_export_asyncapi(registry, output, options, out, err);
  } else if (command == "compat" && positional.size() == 2) {
    rc = schema::run_compat(positional[0], positional[1], out, err);
  } else {
    return false;
  }
  return true;
}

}  // namespace

TEST(SchemaTooling, CasesInProcess) {
  const fs::path previous = fs::current_path();
  fs::current_path(fixtures);  // the cases use paths relative to the fixture registry
  std::ifstream in("cases.txt");
  std::size_t ran = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#' || line.find('\'') != std::string::npos) continue;
    const auto tab = line.find('\t');
    const std::string name = line.substr(0, tab);
    std::ostringstream out, err;
    int rc = -1;
    if (!run(split(line.substr(tab + 1)), out, err, rc)) continue;
    ++ran;
    EXPECT_EQ(std::to_string(rc) + "\n", read_file(fixtures / "expected" / (name + ".rc"))) << name;
    EXPECT_EQ(out.str(), read_file(fixtures / "expected" / (name + ".out"))) << name;
    if (fs::exists(fixtures / "expected" / (name + ".err"))) {
      EXPECT_EQ(err.str(), read_file(fixtures / "expected" / (name + ".err"))) << name;
    }
  }
  fs::current_path(previous);
  EXPECT_GE(ran, 40u);
}
