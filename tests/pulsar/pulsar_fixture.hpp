#pragma once
// GoogleTest support for the pulsar:// tests: the shared Pulsar standalone started by
// scripts/services.sh (BABELQUEUE_PULSAR_URL / _ADMIN_URL / _CTL), unique topic names per
// test, and a "peer": the Pulsar C++ client used raw — it sends messages with hand-made
// properties and reads messages with every field, as a bare Pulsar client of another SDK
// would. Without the service the live tests skip, except when BABELQUEUE_REQUIRE_SERVICES=1
// or CI=true, where they fail.
#include "support/services.hpp"

#include <babelqueue/codec.hpp>
#include <babelqueue/pulsar/pulsar_transport.hpp>
#include <babelqueue/runtime/url.hpp>

#include <gtest/gtest.h>
#include <pulsar/Client.h>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace bqtest {

/// `pulsar://127.0.0.1:P` of the shared server, or empty.
inline std::string pulsar_url() { return env_or_empty("BABELQUEUE_PULSAR_URL"); }

#define BQ_REQUIRE_PULSAR() BQ_REQUIRE_SERVICE(bqtest::pulsar_url(), "Pulsar standalone", "pulsar")

/// One message as a bare client sees it.
struct pulsar_wire_message {
  std::string payload;
  std::map<std::string, std::string> properties;
  int redelivery_count = 0;
  std::uint64_t event_time = 0;
};

/// A bare Pulsar client on the shared server (see the file comment). Topics are bare names
/// (persistent://public/default/<name>); its subscription is `babelqueue` (Shared,
/// earliest) unless told otherwise. get() keeps a consumer open per topic: read with it only
/// topics the code under test does not consume at the same time.
class pulsar_peer {
 public:
  pulsar_peer() : client_(pulsar_url()) {}
  ~pulsar_peer() {
    for (auto& [k, c] : consumers_) c.close();
    for (auto& [k, p] : producers_) p.close();
    client_.close();
  }

  /// Makes sure `subscription` exists on `topic` (so that messages published later are kept)
  /// without staying subscribed: a consumer left open would take its share of a Shared
  /// subscription's messages.
  bool subscribe(const std::string& topic, const std::string& subscription = "babelqueue") {
    pulsar::ConsumerConfiguration conf;
    conf.setConsumerType(pulsar::ConsumerShared);
    conf.setReceiverQueueSize(0);
    conf.setSubscriptionInitialPosition(pulsar::InitialPositionEarliest);
    pulsar::Consumer c;
    const auto r = client_.subscribe(topic, subscription, conf, c);
    EXPECT_EQ(r, pulsar::ResultOk) << pulsar::strResult(r);
    if (r != pulsar::ResultOk) return false;
    c.close();
    return true;
  }

  /// Sends a raw message with the given properties; true once persisted.
  bool send(const std::string& topic, const std::string& payload,
            const std::map<std::string, std::string>& properties = {}) {
    auto* p = producer(topic);
    if (p == nullptr) return false;
    pulsar::MessageBuilder b;
    b.setContent(payload);
    for (const auto& [k, v] : properties) b.setProperty(k, v);
    const auto r = p->send(b.build());
    EXPECT_EQ(r, pulsar::ResultOk) << pulsar::strResult(r);
    return r == pulsar::ResultOk;
  }

  /// The next message of `topic` on `subscription` within `wait`, acknowledged unless `keep`
  /// (then it is negatively acknowledged).
  std::optional<pulsar_wire_message> get(const std::string& topic,
                                         std::chrono::milliseconds wait = std::chrono::seconds(5),
                                         const std::string& subscription = "babelqueue",
                                         bool keep = false) {
    auto* c = consumer(topic, subscription);
    if (c == nullptr) return std::nullopt;
    pulsar::Message m;
    if (c->receive(m, static_cast<int>(wait.count())) != pulsar::ResultOk) return std::nullopt;
    pulsar_wire_message out;
    out.payload = m.getDataAsString();
    for (const auto& [k, v] : m.getProperties()) out.properties[k] = v;
    out.redelivery_count = m.getRedeliveryCount();
    out.event_time = m.getEventTimestamp();
    if (keep) {
      c->negativeAcknowledge(m);
    } else {
      c->acknowledge(m);
    }
    return out;
  }

  /// Acknowledges everything `topic` holds for `subscription`; returns how many.
  int drain(const std::string& topic, const std::string& subscription = "babelqueue") {
    int n = 0;
    while (get(topic, std::chrono::milliseconds(700), subscription)) ++n;
    return n;
  }

 private:
  pulsar::Producer* producer(const std::string& topic) {
    auto it = producers_.find(topic);
    if (it != producers_.end()) return &it->second;
    pulsar::ProducerConfiguration conf;
    conf.setBatchingEnabled(false);
    pulsar::Producer p;
    const auto r = client_.createProducer(topic, conf, p);
    EXPECT_EQ(r, pulsar::ResultOk) << pulsar::strResult(r);
    if (r != pulsar::ResultOk) return nullptr;
    return &producers_.emplace(topic, std::move(p)).first->second;
  }

  pulsar::Consumer* consumer(const std::string& topic, const std::string& subscription) {
    const std::string key = topic + "\n" + subscription;
    auto it = consumers_.find(key);
    if (it != consumers_.end()) return &it->second;
    pulsar::ConsumerConfiguration conf;
    conf.setConsumerType(pulsar::ConsumerShared);
    conf.setSubscriptionInitialPosition(pulsar::InitialPositionEarliest);
    conf.setNegativeAckRedeliveryDelayMs(200);
    pulsar::Consumer c;
    const auto r = client_.subscribe(topic, subscription, conf, c);
    EXPECT_EQ(r, pulsar::ResultOk) << pulsar::strResult(r);
    if (r != pulsar::ResultOk) return nullptr;
    return &consumers_.emplace(key, std::move(c)).first->second;
  }

  pulsar::Client client_;
  std::map<std::string, pulsar::Producer> producers_;
  std::map<std::string, pulsar::Consumer> consumers_;
};

/// The value of a property, or "<absent>".
inline std::string property_of(const pulsar_wire_message& m, const std::string& name) {
  auto it = m.properties.find(name);
  return it == m.properties.end() ? "<absent>" : it->second;
}

/// A fixture with a fresh topic name and the peer.
class PulsarTest : public ::testing::Test {
 protected:
  void SetUp() override {
    BQ_REQUIRE_PULSAR();
    queue_ = unique_name("bq-pulsar");
    peer_ = std::make_unique<pulsar_peer>();
  }

  /// A transport on the shared server; `query` is appended to the URL (`key=value&...`).
  std::unique_ptr<babelqueue::pulsar::pulsar_transport> open(const std::string& query = "") {
    auto url = babelqueue::broker_url::parse(pulsar_url() + "?negative_ack_delay=200ms" +
                                             (query.empty() ? "" : "&" + query));
    EXPECT_TRUE(url) << url.error().message;
    if (!url) return nullptr;
    auto o = babelqueue::pulsar::options_from_url(*url);
    EXPECT_TRUE(o) << o.error().message;
    if (!o) return nullptr;
    auto t = babelqueue::pulsar::pulsar_transport::open(*o);
    EXPECT_TRUE(t) << t.error().message;
    return t ? std::move(*t) : nullptr;
  }

  std::string queue_;
  std::unique_ptr<pulsar_peer> peer_;
};

}  // namespace bqtest
