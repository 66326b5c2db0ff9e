#pragma once
// GoogleTest support for the sqs:// tests: the shared ElasticMQ server started by
// scripts/services.sh (BABELQUEUE_SQS_URL / _ENDPOINT / _CTL), unique queue names per test,
// and a "peer": the SDK's own SQS API layer (sqs/api.hpp) used raw — it creates queues,
// sends messages with hand-made attributes and reads messages with every field, as a bare
// AWS SDK client (boto3, the Go/Java SDKs) would.
//
// ElasticMQ checks no signatures: the fixture sets AWS_ACCESS_KEY_ID/SECRET to `test` when
// they are unset. Without the service the live tests skip, except when
// BABELQUEUE_REQUIRE_SERVICES=1 or CI=true, where they fail.
#include "sqs/api.hpp"
#include "support/services.hpp"

#include <babelqueue/codec.hpp>
#include <babelqueue/runtime/url.hpp>
#include <babelqueue/sqs/sqs_transport.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

namespace bqtest {

/// `sqs://us-east-1?endpoint=http://127.0.0.1:P` of the shared server, or empty.
inline std::string sqs_url() { return env_or_empty("BABELQUEUE_SQS_URL"); }
inline std::string sqs_endpoint() { return env_or_empty("BABELQUEUE_SQS_ENDPOINT"); }

#define BQ_REQUIRE_SQS() BQ_REQUIRE_SERVICE(bqtest::sqs_url(), "SQS server (ElasticMQ)", "sqs")

inline void default_test_credentials() {
  ::setenv("AWS_ACCESS_KEY_ID", "test", 0);
  ::setenv("AWS_SECRET_ACCESS_KEY", "test", 0);
}

/// A bare SQS client on the shared server (see the file comment).
class sqs_peer {
 public:
  sqs_peer() {
    babelqueue::sqs::detail::api_options o;
    o.endpoint = sqs_endpoint();
    o.region = "us-east-1";
    o.creds = {"test", "test", ""};
    api_ = std::make_unique<babelqueue::sqs::detail::api>(o);
  }

  /// Creates `name` (FIFO by its suffix) and returns its URL.
  std::string create(const std::string& name,
                     std::vector<std::pair<std::string, std::string>> attributes = {}) {
    if (name.ends_with(".fifo")) attributes.emplace_back("FifoQueue", "true");
    auto r = api_->create_queue(name, attributes, std::chrono::seconds(10));
    EXPECT_TRUE(r) << r.error().message;
    return r ? *r : std::string();
  }

  std::optional<std::string> url(const std::string& name) {
    auto r = api_->get_queue_url(name, std::chrono::seconds(10));
    if (!r) return std::nullopt;
    return *r;
  }

  /// Sends a raw message with the given attributes.
  bool send(const std::string& name, const std::string& body,
            const std::vector<babelqueue::bindings::sqs::attribute>& attributes = {}) {
    auto u = url(name);
    if (!u) return false;
    babelqueue::sqs::detail::send_entry e;
    e.body = body;
    e.attributes = &attributes;
    auto r = api_->send_message(*u, e, std::chrono::seconds(10));
    EXPECT_TRUE(r) << r.error().message;
    return static_cast<bool>(r);
  }

  /// The next raw message of `name` within `wait_seconds`, deleted unless `keep`.
  std::optional<babelqueue::sqs::detail::wire_message> get(const std::string& name,
                                                           int wait_seconds = 2,
                                                           bool keep = false) {
    auto u = url(name);
    if (!u) return std::nullopt;
    auto r = api_->receive_message(*u, 1, wait_seconds, std::nullopt, std::chrono::seconds(10));
    if (!r || r->empty()) return std::nullopt;
    auto m = std::move(r->front());
    if (!keep) (void)api_->delete_message(*u, m.receipt_handle, std::chrono::seconds(10));
    return m;
  }

  /// Messages currently takeable from `name` (drains it).
  int drain(const std::string& name, int wait_seconds = 1) {
    int n = 0;
    while (get(name, wait_seconds)) ++n;
    return n;
  }

  babelqueue::sqs::detail::api& api() { return *api_; }

 private:
  std::unique_ptr<babelqueue::sqs::detail::api> api_;
};

/// The value of attribute `name` of a raw message, or "<unset>".
inline std::string attribute_of(const babelqueue::sqs::detail::wire_message& m,
                                const std::string& name, std::string* type = nullptr) {
  for (const auto& a : m.attributes) {
    if (a.name == name) {
      if (type != nullptr) *type = a.data_type;
      return a.string_value;
    }
  }
  return "<unset>";
}

class SqsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    BQ_REQUIRE_SQS();
    default_test_credentials();
    queue_ = unique_name("bq-sqs");
    peer_ = std::make_unique<sqs_peer>();
    peer_->create(queue_);
  }

  std::unique_ptr<babelqueue::sqs::sqs_transport> open(const std::string& query = "") {
    auto url = sqs_url() + (query.empty() ? "" : "&" + query);
    auto o = babelqueue::sqs::options_from_url(babelqueue::broker_url::parse(url).value());
    EXPECT_TRUE(o) << o.error().message;
    if (!o) return nullptr;
    auto t = babelqueue::sqs::sqs_transport::open(*o);
    EXPECT_TRUE(t) << t.error().message;
    if (!t) return nullptr;
    return std::move(*t);
  }

  std::string queue_;
  std::unique_ptr<sqs_peer> peer_;
};

}  // namespace bqtest
