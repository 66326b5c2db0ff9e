#pragma once
// What every live interop test against the Python SDK shares: running a peer script and
// parsing its JSON lines, the payload set both directions exchange, and what a C++ handler
// records of a message. Header-only, for tests/interop/*_python_test.cpp.
#include "support/files.hpp"

#include <babelqueue/codec.hpp>
#include <babelqueue/headers.hpp>
#include <babelqueue/json.hpp>

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

namespace bqtest::interop {

using babelqueue::json;

/// Runs tests/interop/<script> with the peer's interpreter; its stdout lines parsed as JSON
/// (a line that is not JSON, or a non-zero exit, is a test failure).
inline std::vector<json> run_peer(const std::string& python, const std::string& script,
                                  const std::vector<std::string>& args) {
  using babelqueue::test::shell_quote;
  std::string cmd = shell_quote(python) + " " +
                    shell_quote(std::string(BABELQUEUE_SOURCE_DIR) + "/tests/interop/" + script);
  for (const auto& a : args) cmd += " " + shell_quote(a);
  cmd += " 2>&1";
  std::vector<json> lines;
  const auto [out, rc] = babelqueue::test::run_command(cmd);
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    auto j = babelqueue::parse_json(line);
    if (j)
      lines.push_back(*j);
    else
      ADD_FAILURE() << "peer output: " << line;
  }
  EXPECT_EQ(rc, 0) << out;
  return lines;
}

/// One message of the payload set.
struct test_case {
  std::string urn;
  json data;
  std::string trace_id;
  babelqueue::headers hdrs;
};

/// The payload set: the conformance fixture's unicode-and-numbers `data`, a 20-digit integer
/// and INT64_MIN, U+2028/U+2029, and a message with out-of-band headers.
inline std::vector<test_case> cases() {
  auto fixture =
      babelqueue::parse_json(babelqueue::test::read_file(std::string(BABELQUEUE_CONFORMANCE_DIR) +
                                                         "/fixtures/unicode-and-numbers.json"))
          .value();
  std::vector<test_case> v;
  v.push_back(
      {"urn:babel:interop:unicode", fixture["data"], fixture["trace_id"].get<std::string>(), {}});
  v.push_back(
      {"urn:babel:interop:big",
       babelqueue::parse_json(R"({"big":12345678901234567890,"neg":-9223372036854775808})").value(),
       "trace-big",
       {}});
  v.push_back({"urn:babel:interop:ls", json{{"s", "line\u2028sep\u2029para"}}, "trace-ls", {}});
  v.push_back({"urn:babel:interop:headers",
               json{{"k", "v"}},
               "trace-headers",
               {{"traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
                {"bq-replay-bypass", "1"}}});
  return v;
}

/// cases() as the peers' `publish` command reads them.
inline std::string cases_json() {
  json spec = json::array();
  for (const auto& c : cases()) {
    json h = json::object();
    for (const auto& [k, v] : c.hdrs) h[k] = v;
    spec.push_back({{"urn", c.urn}, {"data", c.data}, {"trace_id", c.trace_id}, {"headers", h}});
  }
  return babelqueue::to_canonical_json(spec).value();
}

/// What a C++ handler saw of one message.
struct seen_message {
  std::string urn, trace_id, data_text, raw;
  json data;
  babelqueue::headers hdrs;
  std::int64_t attempts = -1;
};

}  // namespace bqtest::interop
