// rediss:// against a real redis-server serving TLS: a throwaway CA, server and client
// certificates are made with the openssl CLI once per test process; the server listens on a
// TLS port (and a plain one the assertions use).
#include "redis/redis_fixture.hpp"
#include "redis/tls_certificates.hpp"
#include "support/files.hpp"

#include <babelqueue/runtime/url.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>

using namespace std::chrono_literals;
using babelqueue::condition;
using babelqueue::errc;
using babelqueue::transport_errc;
using babelqueue::test::shell_quote;

using bqtest::cert_dir;
using bqtest::make_certificates;

class RedisTls : public bqtest::RedisTest {
 protected:
  static void SetUpTestSuite() { start_tls(false); }
  static void TearDownTestSuite() {
    server_.reset();
    std::error_code ec;
    std::filesystem::remove_all(cert_dir(), ec);
  }
  static void start_tls(bool auth_clients) {
    if (cert_dir().empty() || !make_certificates(cert_dir(), why_)) return;
    bqtest::redis_server::config c;
    c.tls_dir = cert_dir();
    c.tls_auth_clients = auth_clients;
    start(c);
  }

  babelqueue::redis::options tls_opts() const {
    auto o = opts();
    o.port = static_cast<std::uint16_t>(server_->tls_port());
    o.tls = true;
    o.tls_ca_file = cert_dir() + "/ca.crt";
    return o;
  }
  std::string tls_url(const std::string& query) const {
    return "rediss://127.0.0.1:" + std::to_string(server_->tls_port()) +
           "?connect_timeout=500ms&tls_ca_file=" + cert_dir() + "/ca.crt" + query;
  }
};

TEST_F(RedisTls, PublishReceiveAckOverTls) {
  auto t = open(tls_opts());
  ASSERT_TRUE(t);
  ASSERT_TRUE(t->publish("tq", bqtest::padded_envelope_text(1)));
  ASSERT_TRUE(
      t->publish("tq", bqtest::padded_envelope_text(2), {{"traceparent", "00-abc-def-01"}}));
  // 1 MiB crosses many TLS records in both directions.
  ASSERT_TRUE(t->publish("tq", bqtest::padded_envelope_text(3, 1 << 20)));
  EXPECT_EQ(raw_->llen("tq"), 3);  // the same server, seen over the plain port

  for (long n = 1; n <= 3; ++n) {
    auto m = t->receive("tq", 1s);
    ASSERT_TRUE(m) << m.error().message;
    ASSERT_TRUE(m->has_value());
    EXPECT_EQ(bqtest::envelope_n((*m)->body), n);
    if (n == 2) {
      EXPECT_EQ((*m)->hdrs.at("traceparent"), "00-abc-def-01");
    }
    ASSERT_TRUE(t->ack(**m));
  }
  ASSERT_TRUE(t->flush());
  EXPECT_EQ(raw_->llen("tq"), 0);
  EXPECT_EQ(raw_->llen("tq:processing"), 0);
}

TEST_F(RedisTls, TheUrlSchemeSelectsTls) {
  babelqueue::redis::register_transport();
  auto t = babelqueue::open_transport(tls_url("&tls_server_name=localhost"));
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ((*t)->scheme(), "rediss");
  ASSERT_TRUE((*t)->publish("viaurl", bqtest::padded_envelope_text(7)));
  EXPECT_EQ(raw_->llen("viaurl"), 1);
}

TEST_F(RedisTls, TheSchemeSaysWhetherTlsIsOn) {
  auto tls = open(tls_opts());
  ASSERT_TRUE(tls);
  EXPECT_EQ(tls->scheme(), "rediss");
  auto plain = open(opts());  // the same server's plain port
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->scheme(), "redis");
}

TEST_F(RedisTls, AnUntrustedCertificateIsRefused) {
  auto o = tls_opts();
  o.tls_ca_file = cert_dir() + "/other-ca.crt";
  auto t = babelqueue::redis::redis_transport::open(o);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.code(), transport_errc::unavailable);
  EXPECT_NE(t.error().message.find("certificate verify failed"), std::string::npos)
      << t.error().message;
  // The system trust store does not know the test CA either.
  o.tls_ca_file.clear();
  EXPECT_EQ(babelqueue::redis::redis_transport::open(o).code(), transport_errc::unavailable);
  // Verification off: encrypted but unauthenticated (a test-only setting) connects.
  o.tls_verify = false;
  auto unverified = babelqueue::redis::redis_transport::open(o);
  ASSERT_TRUE(unverified) << unverified.error().message;
  // ... and says so (the app logs it at warn, the CLI on stderr).
  const auto warnings = (*unverified)->security_warnings();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("tls_verify=false"), std::string::npos) << warnings[0];
  EXPECT_TRUE((*babelqueue::redis::redis_transport::open(tls_opts()))->security_warnings().empty());
}

TEST_F(RedisTls, TheServerNameIsChecked) {
  auto o = tls_opts();
  o.tls_server_name = "localhost";  // a DNS SAN of the certificate
  EXPECT_TRUE(babelqueue::redis::redis_transport::open(o));
  o.tls_server_name = "";  // the host, 127.0.0.1: an IP SAN of the certificate
  EXPECT_TRUE(babelqueue::redis::redis_transport::open(o));
  o.tls_server_name = "redis.example.com";
  auto t = babelqueue::redis::redis_transport::open(o);
  ASSERT_FALSE(t);
  EXPECT_NE(t.error().message.find("certificate verify failed"), std::string::npos)
      << t.error().message;
}

TEST_F(RedisTls, BadFilesAreInvalidArgumentsAtOnce) {
  auto o = tls_opts();
  o.tls_ca_file = cert_dir() + "/missing.crt";
  auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(babelqueue::redis::redis_transport::open(o).code(), condition::invalid_argument);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 500ms);  // not retried to the timeout
  o = tls_opts();
  o.tls_cert_file = cert_dir() + "/client.crt";
  o.tls_key_file = cert_dir() + "/server.key";  // not the certificate's key
  EXPECT_EQ(babelqueue::redis::redis_transport::open(o).code(), condition::invalid_argument);
}

TEST_F(RedisTls, PlainClientOnTheTlsPortFailsWithinItsTimeout) {
  auto o = opts();
  o.port = static_cast<std::uint16_t>(server_->tls_port());
  o.connect_timeout = 300ms;
  auto started = std::chrono::steady_clock::now();
  auto t = babelqueue::redis::redis_transport::open(o);
  EXPECT_FALSE(t);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 3s);
}

TEST_F(RedisTls, ReconnectsOverTlsAfterTheConnectionIsKilled) {
  auto t = open(tls_opts());
  ASSERT_TRUE(t);
  ASSERT_TRUE(t->publish("rq", bqtest::padded_envelope_text(1)));
  raw_->str({"CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"});
  ASSERT_TRUE(t->publish("rq", bqtest::padded_envelope_text(2)));  // reconnects, handshakes again
  EXPECT_EQ(raw_->llen("rq"), 2);
  EXPECT_GE(t->stats().reconnects, 1);
}

TEST(RedisTlsOptions, TlsKeysNeedTheRedissScheme) {
  auto parse = [](const std::string& url) {
    return babelqueue::redis::options_from_url(babelqueue::broker_url::parse(url).value());
  };
  auto o = parse("rediss://cache.example.com:6380/1?tls_ca_file=/etc/ca.pem&tls_verify=true");
  ASSERT_TRUE(o) << o.error().message;
  EXPECT_TRUE(o->tls);
  EXPECT_EQ(o->tls_ca_file, "/etc/ca.pem");
  EXPECT_EQ(o->db, 1);
  EXPECT_FALSE(parse("redis://h").value().tls);
  EXPECT_EQ(parse("redis://h?tls_ca_file=/etc/ca.pem").code(), condition::invalid_argument);
  EXPECT_EQ(parse("rediss://h?tls_cert_file=/c.pem").code(), condition::invalid_argument);
  EXPECT_EQ(parse("rediss://h?tls_nonsense=1").code(), condition::invalid_argument);
}

class RedisMutualTls : public RedisTls {
 protected:
  static void SetUpTestSuite() { start_tls(true); }
};

TEST_F(RedisMutualTls, AClientCertificateIsPresentedWhenRequired) {
  auto o = tls_opts();
  o.connect_timeout = 300ms;
  EXPECT_FALSE(babelqueue::redis::redis_transport::open(o));  // the server wants a certificate
  o.tls_cert_file = cert_dir() + "/client.crt";
  o.tls_key_file = cert_dir() + "/client.key";
  auto t = open(o);
  ASSERT_TRUE(t);
  ASSERT_TRUE(t->publish("mq", bqtest::padded_envelope_text(1)));
  EXPECT_EQ(raw_->llen("mq"), 1);
}
