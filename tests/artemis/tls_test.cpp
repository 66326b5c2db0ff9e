// artemis+ssl:// against the shared broker's TLS acceptor (scripts/services.sh: a PKCS12
// keystore signed by a throwaway CA, server names DNS:localhost and IP:127.0.0.1; no client
// certificate required).
#include "artemis/artemis_fixture.hpp"

using namespace std::chrono_literals;
using babelqueue::transport_errc;

namespace {

class ArtemisTls : public bqtest::ArtemisTest {
 protected:
  void SetUp() override {
    bqtest::ArtemisTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    tls_url_ = bqtest::env_or_empty("BABELQUEUE_ARTEMIS_TLS_URL");
    ca_ = bqtest::env_or_empty("BABELQUEUE_ARTEMIS_TLS_CA");
    cert_ = bqtest::env_or_empty("BABELQUEUE_ARTEMIS_TLS_CERT");
    key_ = bqtest::env_or_empty("BABELQUEUE_ARTEMIS_TLS_KEY");
    ASSERT_FALSE(tls_url_.empty() || ca_.empty() || cert_.empty() || key_.empty())
        << "services.sh exports BABELQUEUE_ARTEMIS_TLS_URL/_CA/_CERT/_KEY";
    babelqueue::artemis::register_transport();
  }
  babelqueue::result<std::unique_ptr<babelqueue::transport>> open_tls(const std::string& query) {
    return babelqueue::open_transport(tls_url_ + "?connect_timeout=3s&" + query);
  }
  std::string tls_url_, ca_, cert_, key_;
};

}  // namespace

TEST_F(ArtemisTls, AVerifiedConnectionRoundTrips) {
  auto t = open_tls("tls_ca_file=" + ca_);
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ((*t)->scheme(), "artemis+ssl");
  const std::string body = bqtest::envelope_text(1);
  ASSERT_TRUE((*t)->publish(queue_, body));
  auto got = (*t)->receive(queue_, 5s);
  ASSERT_TRUE(got && got->has_value()) << (got ? "" : got.error().message);
  EXPECT_EQ((*got)->body, body);
  ASSERT_TRUE((*t)->ack(**got));
}

TEST_F(ArtemisTls, AClientCertificateIsPresentedWhenGiven) {
  auto t = open_tls("tls_ca_file=" + ca_ + "&tls_cert_file=" + cert_ + "&tls_key_file=" + key_);
  ASSERT_TRUE(t) << t.error().message;
  ASSERT_TRUE((*t)->publish(queue_, bqtest::envelope_text(2)));
}

TEST_F(ArtemisTls, AnUntrustedServerCertificateIsRefused) {
  // The system trust store does not know the throwaway CA.
  auto t = open_tls("tls_server_name=localhost");
  ASSERT_FALSE(t);
  EXPECT_EQ(t.code(), transport_errc::unavailable) << t.error().message;
}

TEST_F(ArtemisTls, TheServerNameIsChecked) {
  auto wrong = open_tls("tls_ca_file=" + ca_ + "&tls_server_name=not-the-server.example");
  ASSERT_FALSE(wrong);
  EXPECT_EQ(wrong.code(), transport_errc::unavailable) << wrong.error().message;
  auto unverified = open_tls("tls_verify=false&tls_server_name=not-the-server.example");
  ASSERT_TRUE(unverified) << "tls_verify=false (test only) accepts any certificate: "
                          << unverified.error().message;
  const auto warnings = (*unverified)->security_warnings();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("tls_verify=false"), std::string::npos) << warnings[0];
}

TEST_F(ArtemisTls, PlainAmqpToTheTlsPortFails) {
  auto url = babelqueue::broker_url::parse(tls_url_).value();
  auto t = babelqueue::open_transport(
      "artemis://admin:admin@127.0.0.1:" + std::to_string(*url.port) + "?connect_timeout=2s");
  ASSERT_FALSE(t);
  EXPECT_EQ(t.code(), transport_errc::unavailable) << t.error().message;
}
