#pragma once
// GoogleTest support for the sb:// live tests: the Service Bus STAND-IN of scripts/services.sh
// (Apache Artemis with SASL ANONYMOUS and a CBS responder that verifies SAS tokens:
// BABELQUEUE_ASB_CONNECTION_STRING, BABELQUEUE_ASB_CBS_LOG) — not a Service Bus namespace —
// unique queue names, and a bare anonymous AMQP 1.0 peer to read and forge raw messages.
//
// Without the service the tests skip, except when BABELQUEUE_REQUIRE_SERVICES=1 or CI=true.

#include "amqp10/client.hpp"
#include "support/services.hpp"

#include <babelqueue/asb/asb_transport.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>

namespace bqtest {

inline std::string asb_connection_string() {
  return env_or_empty("BABELQUEUE_ASB_CONNECTION_STRING");
}

/// A bare anonymous AMQP client on the stand-in's broker (no CBS, no link capability).
class asb_peer {
 public:
  using clock = std::chrono::steady_clock;
  asb_peer() {
    auto o = babelqueue::asb::options_from_connection_string(asb_connection_string()).value();
    babelqueue::amqp10::client_config c;
    c.host = o.host;
    c.port = o.port;
    c.name = "peer";
    client_ = babelqueue::amqp10::client::open(c).value();
  }
  bool send(const std::string& queue, proton::message m) {
    std::vector<proton::message> one;
    one.push_back(std::move(m));
    return static_cast<bool>(
        client_->send(queue, std::move(one), clock::now() + std::chrono::seconds(10)));
  }
  std::optional<proton::message> get(const std::string& queue,
                                     std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    auto in = client_->receive(queue, clock::now() + timeout);
    if (!in || !*in) return std::nullopt;
    (void)client_->settle((*in)->ref, babelqueue::amqp10::outcome::accept);
    return std::move((*in)->message);
  }

 private:
  std::unique_ptr<babelqueue::amqp10::client> client_;
};

class AsbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    BQ_REQUIRE_SERVICE(asb_connection_string(), "Service Bus stand-in", "artemis");
    queue_ = unique_name("bq-asb");
    peer_ = std::make_unique<asb_peer>();
  }
  babelqueue::result<babelqueue::asb::options> options(const std::string& extra_query = "") {
    auto url = babelqueue::asb::url_from_connection_string(asb_connection_string());
    if (!url) return babelqueue::fail(url.error());
    std::string u = *url;
    if (!extra_query.empty()) u += (u.find('?') == std::string::npos ? "?" : "&") + extra_query;
    auto parsed = babelqueue::broker_url::parse(u);
    if (!parsed) return babelqueue::fail(parsed.error());
    return babelqueue::asb::options_from_url(*parsed);
  }
  std::unique_ptr<babelqueue::asb::asb_transport> open(const std::string& extra_query = "") {
    auto o = options(extra_query);
    EXPECT_TRUE(o) << o.error().message;
    if (!o) return nullptr;
    auto t = babelqueue::asb::asb_transport::open(*o);
    EXPECT_TRUE(t) << t.error().message;
    if (!t) return nullptr;
    return std::move(*t);
  }
  std::string queue_;
  std::unique_ptr<asb_peer> peer_;
};

}  // namespace bqtest
