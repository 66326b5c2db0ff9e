#pragma once
// The fixture of the live SQS interop tests (sqs_python_test.cpp): the peer script runner, the
// C++ App options, the MessageAttributes in comparable form, queue counters and a recording C++
// consumer (the rest is interop/python_peer.hpp). Header-only; included by that one test file.
#include "interop/python_peer.hpp"
#include "sqs/sqs_fixture.hpp"

#include <babelqueue/codec.hpp>
#include <babelqueue/runtime/app.hpp>

#include <algorithm>
#include <map>
#include <stdexcept>

namespace bqtest::sqs_interop {

using namespace std::chrono_literals;
using babelqueue::json;
using steady = std::chrono::steady_clock;
using bqtest::interop::cases;
using bqtest::interop::cases_json;
using bqtest::interop::envelopes;
using bqtest::interop::expect_consumed_after_delay;
using bqtest::interop::of;
using bqtest::interop::seen_message;
using bqtest::interop::seen_of;
using bqtest::interop::wall_ms;
namespace bs = babelqueue::bindings::sqs;
using string_map = std::map<std::string, std::string>;

inline const std::string traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

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
    return bqtest::interop::run_peer_echoing_logs(python_, "sqs_peer.py", args);
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
    app.handle_unmatched([&](babelqueue::message& m) { seen.push_back(seen_of(m)); });
    auto got = app.drain(queue, n);
    EXPECT_TRUE(got) << got.error().message;
    return seen;
  }

  std::string python_, url_, peer_url_;
};

}  // namespace bqtest::sqs_interop
