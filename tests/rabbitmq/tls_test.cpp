// amqps:// against the shared node's TLS listener, which REQUIRES a client certificate
// (scripts/services.sh: verify_peer + fail_if_no_peer_cert, throwaway CA).
#include "rabbitmq/rabbitmq_fixture.hpp"

using namespace std::chrono_literals;
using babelqueue::transport_errc;

namespace {

class RabbitTls : public bqtest::RabbitTest {
 protected:
  void SetUp() override {
    bqtest::RabbitTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    tls_url_ = bqtest::env_or_empty("BABELQUEUE_RABBITMQ_TLS_URL");
    ca_ = bqtest::env_or_empty("BABELQUEUE_RABBITMQ_TLS_CA");
    cert_ = bqtest::env_or_empty("BABELQUEUE_RABBITMQ_TLS_CERT");
    key_ = bqtest::env_or_empty("BABELQUEUE_RABBITMQ_TLS_KEY");
    ASSERT_FALSE(tls_url_.empty() || ca_.empty() || cert_.empty() || key_.empty())
        << "services.sh exports BABELQUEUE_RABBITMQ_TLS_URL/_CA/_CERT/_KEY";
    babelqueue::rabbitmq::register_transport();
  }
  babelqueue::result<std::unique_ptr<babelqueue::transport>> open_tls(const std::string& query) {
    return babelqueue::open_transport(tls_url_ + "?connect_timeout=3s&" + query);
  }
  std::string tls_url_, ca_, cert_, key_;
};

}  // namespace

TEST_F(RabbitTls, AVerifiedConnectionWithAClientCertificateRoundTrips) {
  auto t = open_tls("tls_ca_file=" + ca_ + "&tls_cert_file=" + cert_ + "&tls_key_file=" + key_);
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ((*t)->scheme(), "amqps");
  const std::string body = bqtest::envelope_text(1);
  ASSERT_TRUE((*t)->publish(queue_, body));
  auto got = (*t)->receive(queue_, 5s);
  ASSERT_TRUE(got && got->has_value()) << (got ? "" : got.error().message);
  EXPECT_EQ((*got)->body, body);
  ASSERT_TRUE((*t)->ack(**got));
}

TEST_F(RabbitTls, WithoutTheClientCertificateTheServerRefuses) {
  auto t = open_tls("tls_ca_file=" + ca_);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.code(), transport_errc::unavailable) << t.error().message;
}

TEST_F(RabbitTls, AnUntrustedServerCertificateIsRefused) {
  // The system trust store does not know the throwaway CA.
  auto t = open_tls("tls_cert_file=" + cert_ + "&tls_key_file=" + key_);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.code(), transport_errc::unavailable) << t.error().message;
}

TEST_F(RabbitTls, TheServerNameIsChecked) {
  const std::string files =
      "tls_ca_file=" + ca_ + "&tls_cert_file=" + cert_ + "&tls_key_file=" + key_;
  auto wrong = open_tls(files + "&tls_server_name=not-the-server.example");
  ASSERT_FALSE(wrong);
  EXPECT_EQ(wrong.code(), transport_errc::unavailable) << wrong.error().message;
  auto right = open_tls(files + "&tls_server_name=localhost");
  EXPECT_TRUE(right) << right.error().message;
}

TEST_F(RabbitTls, UnreadableCertificateFilesAreInvalidArguments) {
  auto t = open_tls("tls_ca_file=/nonexistent/ca.pem");
  ASSERT_FALSE(t);
  EXPECT_EQ(t.code(), transport_errc::invalid_argument) << t.error().message;
}
