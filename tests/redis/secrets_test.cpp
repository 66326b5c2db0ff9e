// No secret in any error, log line or metric label: a failing open, a refused AUTH and a
// reconnect that meets a changed password, each with a password in the URL, are checked by
// searching every text the SDK produced for the secret. A refused AUTH is `permission`.
#include "redis/redis_fixture.hpp"

#include <babelqueue/runtime/app.hpp>
#include <babelqueue/runtime/logging.hpp>
#include <babelqueue/runtime/url.hpp>

#include <mutex>

using namespace std::chrono_literals;
using babelqueue::transport_errc;

namespace {

constexpr const char* secret = "s3cretPW-7f1d";
constexpr const char* wrong_secret = "wr0ngPW-19ac";

// Every text an error_info carries, as a user would print or log it.
std::string everything(const babelqueue::error_info& e) {
  std::string out = std::string(e.reason()) + "|" + e.message + "|" + e.path;
  if (e.native) out += "|" + e.native->source + "|" + e.native->text;
  out += "|" + std::string(babelqueue::error(e).what());
  return out;
}

class RedisSecrets : public bqtest::RedisTest {
 protected:
  void SetUp() override {
    bqtest::RedisTest::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    ASSERT_EQ(raw_->str({"ACL", "SETUSER", "alice", "on", std::string(">") + secret, "~*", "&*",
                         "+@all"}),
              "OK");
  }
  void TearDown() override {
    if (raw_) raw_->str({"ACL", "DELUSER", "alice"});
  }
  std::string url(const char* password) const {
    return "redis://alice:" + std::string(password) +
           "@127.0.0.1:" + std::to_string(server_->port()) +
           "?connect_timeout=500ms&command_timeout=1s";
  }
};

TEST_F(RedisSecrets, RefusedAuthIsPermissionAndNamesNoSecret) {
  babelqueue::redis::register_transport();
  auto t = babelqueue::open_transport(url(wrong_secret));
  ASSERT_FALSE(t);
  EXPECT_EQ(t.code(), transport_errc::permission) << t.error().message;
  EXPECT_EQ(t.code(), babelqueue::condition::permission);
  EXPECT_EQ(everything(t.error()).find(wrong_secret), std::string::npos) << everything(t.error());
}

TEST_F(RedisSecrets, UnreachableBrokerErrorNamesNoSecret) {
  babelqueue::redis::register_transport();
  auto t = babelqueue::open_transport("redis://alice:" + std::string(secret) +
                                      "@127.0.0.1:1?connect_timeout=200ms");
  ASSERT_FALSE(t);
  EXPECT_EQ(t.code(), transport_errc::unavailable) << t.error().message;
  EXPECT_EQ(everything(t.error()).find(secret), std::string::npos) << everything(t.error());
}

TEST_F(RedisSecrets, ReconnectAfterPasswordChangeLogsNoSecret) {
  babelqueue::redis::register_transport();
  std::mutex m;
  std::string logged;
  babelqueue::app_options o;
  o.queue = "secrets";
  o.poll_timeout = 100ms;
  o.observers.push_back(babelqueue::observer_from_log_sink(
      [&](babelqueue::log_level, std::string_view line) {
        std::lock_guard lock(m);
        logged.append(line).append("\n");
      },
      babelqueue::log_level::debug));
  babelqueue::app a(url(secret), o);
  a.handle("urn:babel:test:item", [](babelqueue::message&) {});
  ASSERT_TRUE(a.publish("urn:babel:test:item", {{"n", 1}}));

  // The password changes and every connection of alice is dropped: the next reconnect of
  // the publisher and of the consumer meets WRONGPASS.
  ASSERT_EQ(raw_->str({"ACL", "SETUSER", "alice", "resetpass", std::string(">") + wrong_secret}),
            "OK");
  raw_->integer({"CLIENT", "KILL", "USER", "alice"});
  auto again = a.publish("urn:babel:test:item", {{"n", 2}});
  ASSERT_FALSE(again);
  EXPECT_EQ(everything(again.error()).find(secret), std::string::npos);
  EXPECT_EQ(again.code(), transport_errc::permission) << again.error().message;

  std::thread stopper([&] {
    std::this_thread::sleep_for(600ms);
    a.stop();
  });
  auto consumed = a.consume();
  stopper.join();
  // consume() could not open its worker transport (WRONGPASS): a typed error, no secret.
  if (!consumed) {
    EXPECT_EQ(everything(consumed.error()).find(secret), std::string::npos);
  }
  std::lock_guard lock(m);
  EXPECT_EQ(logged.find(secret), std::string::npos) << logged;
  EXPECT_EQ(logged.find(wrong_secret), std::string::npos) << logged;
}

TEST(RedactUrl, HidesPasswordsAndSecretOptions) {
  using babelqueue::redact_url;
  EXPECT_EQ(redact_url("redis://user:s3cret@127.0.0.1:6379/2"),
            "redis://user:***@127.0.0.1:6379/2");
  EXPECT_EQ(redact_url("redis://:s3cret@h"), "redis://:***@h");
  EXPECT_EQ(redact_url("redis://h:1?timeout=5s&password=s3cret"),
            "redis://h:1?timeout=5s&password=***");
  EXPECT_EQ(redact_url("sqs://eu-west-1?access_key=AKIA&secret_key=xyz&queue_prefix=a"),
            "sqs://eu-west-1?access_key=***&secret_key=***&queue_prefix=a");
  EXPECT_EQ(redact_url("rediss://h?tls_key_file=/etc/k.pem"), "rediss://h?tls_key_file=/etc/k.pem");
  EXPECT_EQ(redact_url("asb://ns?sas_key=abc%3D&token=t"), "asb://ns?sas_key=***&token=***");
  EXPECT_EQ(redact_url("redis://u:p@ss@h/0#frag"), "redis://u:***@h/0");
  EXPECT_EQ(redact_url("user:s3cret@host"), "***@host");
  EXPECT_EQ(redact_url("memory://orders"), "memory://orders");
  auto parsed = babelqueue::broker_url::parse("redis://u:pw@h:1?auth_token=x&db=1").value();
  EXPECT_EQ(parsed.redacted(), "redis://u:***@h:1?auth_token=***&db=1");
}

}  // namespace
