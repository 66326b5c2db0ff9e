#pragma once
// What every live interop test against the Python SDK shares: running a peer script and
// parsing its JSON lines, the payload set both directions exchange (and the C++ envelopes of
// it), what a C++ handler records of a message, the wall clock the peers print, and the checks
// of a C++ delayed publish a Python consumer timed. Header-only, for tests/interop/*_test.cpp.
#include "support/files.hpp"

#include <babelqueue/codec.hpp>
#include <babelqueue/envelope.hpp>
#include <babelqueue/headers.hpp>
#include <babelqueue/json.hpp>
#include <babelqueue/runtime/message.hpp>

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <utility>
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

/// run_peer() for the peers that also print `{"cmd":"log"}` lines (what the Python SDK logged):
/// those are echoed as "[python] …", for a failure's context, and not returned.
inline std::vector<json> run_peer_echoing_logs(const std::string& python, const std::string& script,
                                               const std::vector<std::string>& args) {
  std::vector<json> v;
  for (auto& l : run_peer(python, script, args)) {
    if (l.value("cmd", "") == "log") {
      std::cout << "[python] " << l.dump() << "\n";
    } else {
      v.push_back(std::move(l));
    }
  }
  return v;
}

/// The lines a command of the peer printed (each line is tagged with its command).
inline std::vector<json> of(const std::vector<json>& lines, const std::string& cmd) {
  std::vector<json> v;
  for (const auto& l : lines) {
    if (l.value("cmd", "") == cmd) v.push_back(l);
  }
  return v;
}

/// Unix ms now: the clock the peers print their times in.
inline std::int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
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

/// What the C++ App makes of each case for `queue`: the envelope, and its exact bytes.
inline std::vector<std::pair<babelqueue::envelope, std::string>> envelopes(
    const std::string& queue) {
  std::vector<std::pair<babelqueue::envelope, std::string>> v;
  for (const auto& c : cases()) {
    auto env = babelqueue::make(c.urn, c.data, {.queue = queue, .trace_id = c.trace_id}).value();
    auto bytes = babelqueue::encode(env).value();
    v.emplace_back(std::move(env), std::move(bytes));
  }
  return v;
}

/// What a C++ handler saw of one message.
struct seen_message {
  std::string urn, trace_id, data_text, raw;
  json data;
  babelqueue::headers hdrs;
  std::int64_t attempts = -1;
};

/// A copy of what a handler sees of `m`, kept past the handler (the message's views are not).
inline seen_message seen_of(const babelqueue::message& m) {
  seen_message s;
  s.urn = std::string(m.urn());
  s.trace_id = std::string(m.trace_id());
  s.data_text = std::string(m.data_text());
  s.raw = std::string(m.raw());
  s.data = m.data();
  s.hdrs = m.hdrs();
  s.attempts = m.attempts();
  return s;
}

/// The checks of a C++ delayed publish of `body` (begun at `published_ms`, wall_ms()) that a
/// peer's `consume-timed` received: its first line says when it began polling, its second what
/// it handled and when. Polling must have begun before the due time, or "not before" would be
/// unproven. Fatal failures return from here: wrap the call in ASSERT_NO_FATAL_FAILURE. `lines`
/// is taken by value: a missing key must read as null, not hit a const operator[]'s assertion.
inline void expect_consumed_after_delay(std::vector<json> lines, std::int64_t published_ms,
                                        std::chrono::milliseconds delay, const std::string& body) {
  const std::int64_t due_ms = published_ms + delay.count();
  ASSERT_EQ(lines.size(), 2u);
  ASSERT_TRUE(lines[0]["polling_ms"].is_number()) << lines[0].dump();
  EXPECT_LT(lines[0]["polling_ms"].get<std::int64_t>(), due_ms)
      << "Python was not polling before the due time: 'not before' is unproven";
  EXPECT_GE(lines[1]["handled_ms"].get<std::int64_t>(), due_ms - 100)
      << "handed to Python before its delay";
  EXPECT_EQ(lines[1]["raw"], body) << "byte for byte";
  EXPECT_EQ(lines[1]["attempts"], 0);
}

}  // namespace bqtest::interop
