#pragma once
// The fixture of the live Pulsar interop tests against the Python SDK (pulsar_python_test.cpp;
// its file comment says what they pin): the peer runner, the subscriptions the Python SDK
// needs made for it, a consumer that keeps a Shared subscription's redelivery counts alive
// between the SDKs, and the C++ App's side of each exchange.
#include "interop/python_peer.hpp"
#include "pulsar/pulsar_fixture.hpp"

#include <babelqueue/bindings/pulsar.hpp>
#include <babelqueue/codec.hpp>
#include <babelqueue/runtime/app.hpp>

#include <map>
#include <string>
#include <vector>

namespace bqtest::pulsar_interop {

using namespace std::chrono_literals;
using babelqueue::json;
using bqtest::interop::cases;
using bqtest::interop::cases_json;
using bqtest::interop::seen_message;
using bqtest::interop::seen_of;
namespace bp = babelqueue::bindings::pulsar;
using string_map = std::map<std::string, std::string>;

inline const std::string traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
inline const std::string fails_urn = "urn:babel:interop:fails";

/// The properties C++ would put on a message with payload `body` and headers `hdrs`.
inline string_map projection(const std::string& body, const babelqueue::headers& hdrs = {}) {
  string_map v;
  for (const auto& [k, val] : bp::project(body, hdrs).properties) v[k] = val;
  return v;
}

/// A consumer on the `babelqueue` subscription of a topic that asks for no message (receiver
/// queue 0), so it never takes one from the others. The broker keeps a Shared subscription's
/// redelivery counts only while some consumer is attached (it clears them when the last one
/// leaves): this one bridges the gap while a message passes from one SDK's consumer to the
/// other's.
class idle_consumer {
 public:
  explicit idle_consumer(const std::string& topic) : client_(bqtest::pulsar_url()) {
    pulsar::ConsumerConfiguration conf;
    conf.setConsumerType(pulsar::ConsumerShared);
    conf.setReceiverQueueSize(0);
    conf.setSubscriptionInitialPosition(pulsar::InitialPositionEarliest);
    const auto r = client_.subscribe(topic, "babelqueue", conf, consumer_);
    EXPECT_EQ(r, pulsar::ResultOk) << pulsar::strResult(r);
    ok_ = r == pulsar::ResultOk;
  }
  ~idle_consumer() {
    if (ok_) consumer_.close();
    client_.close();
  }
  idle_consumer(const idle_consumer&) = delete;
  idle_consumer& operator=(const idle_consumer&) = delete;
  bool ok() const { return ok_; }

 private:
  pulsar::Client client_;
  pulsar::Consumer consumer_;
  bool ok_ = false;
};

class PulsarPythonInterop : public bqtest::PulsarTest {
 protected:
  void SetUp() override {
    bqtest::PulsarTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    BQ_REQUIRE_PYTHON_PEER(python_);
    babelqueue::pulsar::register_transport();
    peer_url_ = bqtest::pulsar_url();
    url_ = peer_url_ + "?negative_ack_delay=200ms";
  }

  /// Runs pulsar_peer.py (commands separated by "--then"); its log lines are echoed, not
  /// returned.
  std::vector<json> run_peer(const std::vector<std::string>& args) {
    return bqtest::interop::run_peer_echoing_logs(python_, "pulsar_peer.py", args);
  }

  /// Creates `subscription` on `topic` (from the earliest message) and leaves no consumer on
  /// it: a message published later is kept for whoever reads that subscription.
  static bool subscribe(const std::string& topic, const std::string& subscription = "babelqueue") {
    return bqtest::pulsar_peer().subscribe(topic, subscription);
  }

  babelqueue::app_options opts(bool failing = false, const std::string& queue = "") {
    babelqueue::app_options o;
    o.queue = queue.empty() ? queue_ : queue;
    // drain() below always names how many messages it expects, so it returns as soon as they
    // were handled; the poll only bounds a failure.
    o.poll_timeout = 10s;
    if (failing) {
      o.dead_letter = true;
      o.max_attempts = 3;
    }
    return o;
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

  std::string dlq() const { return queue_ + ".dlq"; }

  std::string python_, url_, peer_url_;
};

}  // namespace bqtest::pulsar_interop
