#pragma once
// The fixture of the live SQS interop tests (sqs_python_test.cpp): the peer script runner, the
// C++ App options, the C++ envelopes of the payload set, queue counters and a recording C++
// consumer. Header-only; included by that one test file.
#include "interop/python_peer.hpp"
#include "sqs/sqs_fixture.hpp"

#include <babelqueue/codec.hpp>
#include <babelqueue/runtime/app.hpp>

#include <algorithm>
#include <iostream>
#include <map>
#include <stdexcept>

namespace bqtest::sqs_interop {

using namespace std::chrono_literals;
using babelqueue::json;
using steady = std::chrono::steady_clock;

/// Unix ms now (the peer prints the same clock's times).
inline std::int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}
using bqtest::interop::cases;
using bqtest::interop::cases_json;
using bqtest::interop::seen_message;
namespace bs = babelqueue::bindings::sqs;
using string_map = std::map<std::string, std::string>;

inline const std::string traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

/// The lines a command of the peer printed (each line is tagged with its command).
inline std::vector<json> of(const std::vector<json>& lines, const std::string& cmd) {
  std::vector<json> v;
  for (const auto& l : lines) {
    if (l.value("cmd", "") == cmd) v.push_back(l);
  }
  return v;
}

/// The MessageAttributes of a raw message by name: "<type>:<value>".
inline std::map<std::string, std::string> typed_attributes(
    const babelqueue::sqs::detail::wire_message& m) {
  std::map<std::string, std::string> v;
  for (const auto& a : m.attributes) v[a.name] = a.data_type + ":" + a.string_value;
  return v;
}

/// The same, from bindings::sqs::project().
inline std::map<std::string, std::string> typed_attributes(
    const std::vector<bs::attribute>& attributes) {
  std::map<std::string, std::string> v;
  for (const auto& a : attributes) v[a.name] = a.data_type + ":" + a.string_value;
  return v;
}

/// The same, as the peer's `inspect` prints them.
inline std::map<std::string, std::string> typed_attributes(const json& message_attributes) {
  std::map<std::string, std::string> v;
  for (const auto& [k, a] : message_attributes.items()) {
    v[k] = a["type"].get<std::string>() + ":" + a["value"].get<std::string>();
  }
  return v;
}

class SqsPythonInterop : public bqtest::SqsTest {
 protected:
  void SetUp() override {
    bqtest::SqsTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    BQ_REQUIRE_PYTHON_PEER(python_);
    babelqueue::sqs::register_transport();
    peer_url_ = bqtest::sqs_url();
    url_ = peer_url_ + "&create_queues=true";
  }

  /// Runs sqs_peer.py (commands separated by "--then"); its log lines are echoed, not returned.
  std::vector<json> run_peer(const std::vector<std::string>& args) {
    std::vector<json> v;
    for (auto& l : bqtest::interop::run_peer(python_, "sqs_peer.py", args)) {
      if (l.value("cmd", "") == "log") {
        std::cout << "[python] " << l.dump() << "\n";
      } else {
        v.push_back(std::move(l));
      }
    }
    return v;
  }

  babelqueue::app_options opts(bool failing = false, const std::string& queue = "") {
    babelqueue::app_options o;
    o.queue = queue.empty() ? queue_ : queue;
    // drain() below always names how many messages it expects, so it returns as soon as they
    // were handled; the long poll only bounds a failure (SQS's longest).
    o.poll_timeout = 20s;
    if (failing) {
      o.dead_letter = true;
      o.max_attempts = 3;
    }
    return o;
  }

  /// What the C++ App makes of each case for `queue`: the envelope, and its exact bytes.
  static std::vector<std::pair<babelqueue::envelope, std::string>> envelopes(
      const std::string& queue) {
    std::vector<std::pair<babelqueue::envelope, std::string>> v;
    for (const auto& c : cases()) {
      auto env = babelqueue::make(c.urn, c.data, {.queue = queue, .trace_id = c.trace_id}).value();
      auto bytes = babelqueue::encode(env).value();
      v.emplace_back(std::move(env), std::move(bytes));
    }
    return v;
  }

  /// Messages still in `queue`, visible or not: a deleted message is gone, a released or
  /// received-but-unsettled one is counted. -1 when the queue cannot be read.
  int left_in(const std::string& queue) {
    auto u = peer_->url(queue);
    if (!u) return -1;
    auto a = peer_->api().get_queue_attributes(*u, 10s);
    if (!a) return -1;
    int n = 0;
    for (const char* k : {"ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible",
                          "ApproximateNumberOfMessagesDelayed"}) {
      if (!a->contains(k)) return -1;
      n += std::stoi((*a)[k].get<std::string>());
    }
    return n;
  }

  /// Drains `n` messages of `queue` with a C++ App whose catch-all handler records each.
  std::vector<seen_message> consume(const std::string& queue, std::size_t n) {
    babelqueue::app app(url_, opts(false, queue));
    std::vector<seen_message> seen;
    app.handle_unmatched([&](babelqueue::message& m) {
      seen_message s;
      s.urn = std::string(m.urn());
      s.trace_id = std::string(m.trace_id());
      s.data_text = std::string(m.data_text());
      s.raw = std::string(m.raw());
      s.data = m.data();
      s.hdrs = m.hdrs();
      s.attempts = m.attempts();
      seen.push_back(std::move(s));
    });
    auto got = app.drain(queue, n);
    EXPECT_TRUE(got) << got.error().message;
    return seen;
  }

  std::string python_, url_, peer_url_;
};

}  // namespace bqtest::sqs_interop
