// Cross-SDK proof: the C++ validator and the Python SDK's (PyPI `babelqueue`,
// babelqueue.schema.validate_schema) agree on valid/invalid for the 7 conformance
// `payload_schema` cases and for every registry fixture message — and, where both say
// invalid, on the first violation's path and reason code.
//
// Where the peers themselves disagree the case is named below with the behaviour chosen:
//  - const/enum `1` vs `1.0`: Go/bqschema compare numbers by value (equal); Python compares
//    type-strictly at the top level (int 1 != float 1.0) and PHP uses `===`. babelqueue-cpp
//    follows Go (decision D8: Go/bqschema keyword semantics), so these cases are VALID here
//    and invalid in Python — asserted exactly, so a change on either side is noticed.
//  - minLength bytes vs characters: Go/bqschema <= 0.4.0 count UTF-8 bytes ("çé" passes
//    minLength 3), Python/PHP count code points. babelqueue-cpp counts code points (D8), so it
//    AGREES with Python here (names-bytes-vs-chars is invalid in both; Go would say valid).
//
// The peer interpreter: $BABELQUEUE_PEER_PYTHON, else build/peer-python.txt (written by
// scripts/setup-python-peer.sh). Without it the test is skipped — unless CI=true, where a
// missing peer is a failure.
#include "support/files.hpp"

#include <babelqueue/codec.hpp>
#include <babelqueue/schema/conformance.hpp>
#include <babelqueue/schema/registry.hpp>

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace bq = babelqueue;
namespace schema = babelqueue::schema;
namespace fs = std::filesystem;

namespace {

const fs::path fixtures = BABELQUEUE_SCHEMA_FIXTURES;

using babelqueue::test::in_ci;
using babelqueue::test::peer_python;
using babelqueue::test::read_file;

struct expectation {
  bool cpp_valid;
  bool python_valid;
  const char* why;
};

// The named divergences: fixture message → (C++ verdict, Python verdict, reason).
const std::map<std::string, expectation> divergences = {
    {"registry/levels-one-point-zero.json",
     {true, false,
      "enum [1,…] vs 1.0 and enum [1,2,3] vs 3.0: equal by value (Go, chosen) / type-strict "
      "(Python)"}},
    {"registry/payments-valid.json",
     {true, false, "const 3 vs 3.0: equal by value (Go, chosen) / type-strict (Python)"}},
};

}  // namespace

TEST(SchemaPythonPeer, ValidatorsAgree) {
  const std::string python = peer_python();
  if (python.empty() || !fs::exists(python)) {
    if (in_ci())
      FAIL() << "CI=true but the Python peer is missing: run scripts/setup-python-peer.sh";
    GTEST_SKIP()
        << "Python peer not found: set BABELQUEUE_PEER_PYTHON to a python with `pip install "
           "babelqueue` (or run scripts/setup-python-peer.sh)";
  }

  // What C++ says, and the request for Python.
  std::map<std::string, schema::report> cpp;
  auto manifest_text = read_file(fs::path(BABELQUEUE_CONFORMANCE_DIR) / "manifest.json");
  auto manifest = bq::parse_json(manifest_text).value();
  // (Hold the result: a range-for over `.value()` of a temporary would dangle.)
  const auto block_results = schema::run_payload_schema(manifest["payload_schema"]).value();
  for (const auto& r : block_results) cpp.emplace("payload_schema/" + r.name, r.details);

  auto reg = schema::registry::load(fixtures / "registry.json").value();
  bq::json request = {
      {"manifest", (fs::path(BABELQUEUE_CONFORMANCE_DIR) / "manifest.json").string()},
      {"registry", bq::json::array()}};
  std::vector<fs::path> messages;
  for (const auto& entry : fs::directory_iterator(fixtures / "messages"))
    messages.push_back(entry.path());
  std::sort(messages.begin(), messages.end());
  for (const auto& file : messages) {
    auto env = bq::parse_json(read_file(file)).value();
    std::string urn = env.value("job", "");
    if (urn.empty()) urn = env.value("urn", "");
    const auto* entry = reg.entry(urn);
    if (entry == nullptr) continue;  // unregistered / no URN: nothing to compare
    const std::string name = "registry/" + file.filename().string();
    auto doc = reg.load_schema(urn).value();
    cpp.emplace(name, doc->validate(env.contains("data") ? env["data"] : bq::json(nullptr)));
    request["registry"].push_back({{"name", name},
                                   {"schema_file", entry->resolved.string()},
                                   {"envelope_file", file.string()}});
  }
  ASSERT_GE(request["registry"].size(), 25u);

  const fs::path tmp = fs::temp_directory_path() / ("bq-schema-peer-" + std::to_string(::getpid()));
  std::ofstream(tmp.string() + ".in") << request.dump();
  const std::string command = "'" + python + "' '" + BABELQUEUE_SCHEMA_PEER_SCRIPT + "' '" +
                              tmp.string() + ".in' >'" + tmp.string() + ".out' 2>'" + tmp.string() +
                              ".err'";
  const int status = std::system(command.c_str());
  const std::string out = read_file(tmp.string() + ".out"), err = read_file(tmp.string() + ".err");
  for (const char* ext : {".in", ".out", ".err"}) fs::remove(tmp.string() + ext);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    if (!in_ci() && err.find("No module named 'babelqueue'") != std::string::npos)
      GTEST_SKIP() << python << " has no babelqueue package";
    FAIL() << "peer failed: " << command << "\n" << err;
  }
  auto answer = bq::parse_json(out).value();
  std::cout << "[ peer     ] Python babelqueue " << answer["version"].get<std::string>() << ", "
            << cpp.size() << " cases\n";
  const auto& results = answer["results"];
  ASSERT_EQ(results.size(), cpp.size());

  std::size_t agreed = 0, diverged = 0;
  for (const auto& [name, report] : cpp) {
    ASSERT_TRUE(results.contains(name)) << name;
    const bool py_valid = results[name]["valid"].get<bool>();
    const bool cpp_valid = report.ok();
    if (auto d = divergences.find(name); d != divergences.end()) {
      EXPECT_EQ(cpp_valid, d->second.cpp_valid) << name << ": " << d->second.why;
      EXPECT_EQ(py_valid, d->second.python_valid) << name << ": " << d->second.why;
      std::cout << "[ diverge  ] " << name << ": C++ " << (cpp_valid ? "valid" : "invalid")
                << ", Python " << (py_valid ? "valid" : "invalid") << " — " << d->second.why
                << "\n";
      ++diverged;
      continue;
    }
    EXPECT_EQ(cpp_valid, py_valid) << name << ": C++ says " << report.summary() << "; Python says "
                                   << results[name]["violation"].dump();
    if (!cpp_valid && !py_valid) {
      // Same traversal order: Python's first violation is report.first().
      EXPECT_EQ(report.first()->reason_text(), results[name]["violation"].get<std::string>())
          << name;
    }
    ++agreed;
  }
  EXPECT_EQ(diverged, divergences.size());
  std::cout << "[ peer     ] " << agreed << " agree, " << diverged << " named divergences\n";
}
