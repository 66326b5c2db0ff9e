#pragma once
// GoogleTest support for the artemis:// tests: the shared Artemis broker started by
// scripts/services.sh (URLs in BABELQUEUE_ARTEMIS_*), unique queue names per test, and a
// "peer" AMQP 1.0 client to look at (and forge) messages exactly as a bare peer would.
//
// The peer client is the SDK's own Proton layer (amqp10::client) opened WITHOUT the `queue`
// link capability and without the Artemis projection: it hands over raw proton::message
// values and sends what the test builds, as the Go/Python/.NET/Node peers' bare links do.
//
// Without the service the live tests skip, except when BABELQUEUE_REQUIRE_SERVICES=1 or
// CI=true (scripts/test.sh sets it), where they fail.

#include "amqp10/client.hpp"
#include "support/services.hpp"

#include <babelqueue/artemis/artemis_transport.hpp>
#include <babelqueue/codec.hpp>
#include <babelqueue/envelope.hpp>
#include <babelqueue/runtime/url.hpp>

#include <gtest/gtest.h>
#include <proton/message.hpp>
#include <proton/scalar.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>

namespace bqtest {

/// `artemis://admin:admin@127.0.0.1:P` of the shared broker, or empty.
inline std::string artemis_url() { return env_or_empty("BABELQUEUE_ARTEMIS_URL"); }

#define BQ_REQUIRE_ARTEMIS() BQ_REQUIRE_SERVICE(bqtest::artemis_url(), "Artemis", "artemis")

/// A bare AMQP 1.0 client on the shared broker (see the file comment).
class artemis_peer {
 public:
  using clock = std::chrono::steady_clock;

  /// `queue_capability`: attach with the `queue` capability (anycast) — off = a bare link,
  /// which routes by the broker's defaults as the peers' links do.
  explicit artemis_peer(bool queue_capability = true) {
    auto o =
        babelqueue::artemis::options_from_url(babelqueue::broker_url::parse(artemis_url()).value())
            .value();
    babelqueue::amqp10::client_config c;
    c.host = o.host;
    c.port = o.port;
    c.username = o.username;
    c.password = o.password;
    c.name = "peer";
    if (queue_capability) c.link_capabilities = {proton::symbol("queue")};
    client_ = babelqueue::amqp10::client::open(c).value();
  }

  /// Sends one raw message; true when the broker accepted it.
  bool send(const std::string& queue, proton::message m) {
    std::vector<proton::message> one;
    one.push_back(std::move(m));
    return static_cast<bool>(
        client_->send(queue, std::move(one), clock::now() + std::chrono::seconds(10)));
  }

  /// The next raw message of `queue` within `timeout`, accepted (removed) unless `keep`.
  std::optional<proton::message> get(const std::string& queue,
                                     std::chrono::milliseconds timeout = std::chrono::seconds(5),
                                     bool keep = false) {
    auto in = client_->receive(queue, clock::now() + timeout);
    if (!in || !*in) return std::nullopt;
    (void)client_->settle((*in)->ref, keep ? babelqueue::amqp10::outcome::release
                                           : babelqueue::amqp10::outcome::accept);
    return std::move((*in)->message);
  }

  /// Messages currently takeable from `queue` (drains it: counts by receiving).
  int drain(const std::string& queue,
            std::chrono::milliseconds wait = std::chrono::milliseconds(500)) {
    int n = 0;
    while (get(queue, wait)) ++n;
    return n;
  }

 private:
  std::unique_ptr<babelqueue::amqp10::client> client_;
};

class ArtemisTest : public ::testing::Test {
 protected:
  void SetUp() override {
    BQ_REQUIRE_ARTEMIS();
    queue_ = unique_name("bq-artemis");
    peer_ = std::make_unique<artemis_peer>();
  }

  std::unique_ptr<babelqueue::artemis::artemis_transport> open(const std::string& query = "") {
    auto url = artemis_url() + (query.empty() ? "" : "?" + query);
    auto o = babelqueue::artemis::options_from_url(babelqueue::broker_url::parse(url).value());
    EXPECT_TRUE(o) << o.error().message;
    if (!o) return nullptr;
    auto t = babelqueue::artemis::artemis_transport::open(*o);
    EXPECT_TRUE(t) << t.error().message;
    if (!t) return nullptr;
    return std::move(*t);
  }

  std::string queue_;
  std::unique_ptr<artemis_peer> peer_;
};

/// An application property of a message as a string, "<unset>" when it has none.
inline std::string prop(const proton::message& m, const std::string& name) {
  if (!m.properties().exists(name)) return "<unset>";
  return proton::get<std::string>(m.properties().get(name));
}

}  // namespace bqtest
