// publish_delayed() on pulsar:// against the real standalone (issue #37): the message as the
// broker stores it (deliverAt, read back through the REST admin API's examine-message, which
// shows the metadata no client API exposes) and as a bare consumer gets it (not before its
// time, `bq-delay` mirrored); Key_Shared delays too.
#include "pulsar/pulsar_fixture.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <ctime>
#include <map>
#include <string>
#include <string_view>

using namespace std::chrono_literals;
using bqtest::PulsarTest;

namespace {

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The response headers of a GET on the standalone's web service (BABELQUEUE_PULSAR_ADMIN_URL,
// http://127.0.0.1:<port>), lower-cased names; empty when it does not answer. HTTP/1.0, so
// the server closes the connection after the response.
std::map<std::string, std::string> admin_get_headers(const std::string& path) {
  std::map<std::string, std::string> out;
  const std::string base = bqtest::env_or_empty("BABELQUEUE_PULSAR_ADMIN_URL");
  const auto colon = base.rfind(':');
  if (base.rfind("http://127.0.0.1:", 0) != 0 || colon == std::string::npos) return out;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(std::stoi(base.substr(colon + 1))));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return out;
  std::string response;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    const std::string request = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
    if (::send(fd, request.data(), request.size(), 0) == static_cast<ssize_t>(request.size())) {
      char buf[4096];
      for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) {
        response.append(buf, static_cast<std::size_t>(n));
      }
    }
  }
  ::close(fd);
  std::size_t at = response.find("\r\n");
  if (at == std::string::npos) return out;
  out[":status"] = response.substr(0, at);
  for (at += 2;;) {
    const std::size_t end = response.find("\r\n", at);
    if (end == std::string::npos || end == at) break;
    const std::string line = response.substr(at, end - at);
    if (const auto c = line.find(':'); c != std::string::npos) {
      std::string name = line.substr(0, c);
      for (auto& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      out[name] = line.substr(line.find_first_not_of(' ', c + 1));
    }
    at = end + 2;
  }
  return out;
}

// `2026-12-07T06:56:31.534Z` (how the admin API writes a time; it drops trailing zeros of
// the fraction: `.89Z` is 890 ms) in Unix ms; -1 if malformed.
std::int64_t iso_ms(const std::string& text) {
  std::tm tm{};
  int used = 0;
  if (std::sscanf(text.c_str(), "%d-%d-%dT%d:%d:%d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &used) != 6) {
    return -1;
  }
  std::int64_t ms = 0;
  std::size_t at = static_cast<std::size_t>(used);
  if (at < text.size() && text[at] == '.') {
    int scale = 100;
    for (++at; at < text.size() && std::isdigit(static_cast<unsigned char>(text[at])); ++at) {
      ms += (text[at] - '0') * scale;
      scale /= 10;
    }
  }
  if (text.substr(at) != "Z") return -1;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<std::int64_t>(::timegm(&tm)) * 1000 + ms;
}

const std::string delayed_traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

}  // namespace

TEST_F(PulsarTest, ADelayedPublishSetsDeliverAtOnceAndMirrorsTheDelay) {
  auto t = open();
  ASSERT_TRUE(t);
  const auto caps = t->capabilities();
  EXPECT_TRUE(caps.delayed_publish);
  EXPECT_EQ(caps.max_delay, 0ms);
  EXPECT_EQ(caps.delay_granularity, 0ms);
  const std::string body = bqtest::envelope_text(1, "urn:babel:test:later", queue_);
  const auto before = now_ms();
  const auto sent = std::chrono::steady_clock::now();
  ASSERT_TRUE(t->publish_delayed(queue_, body, {{"traceparent", delayed_traceparent}}, 3s));
  const auto after = now_ms();

  // As the broker stores it: deliver_at_time = the call's wall clock + 3 s (computed before the
  // producer and the subscription were made on this first publish), bq-delay = "3000".
  std::string topic_path = t->topic_of(queue_);  // persistent://public/default/<queue>
  topic_path.replace(0, std::string_view("persistent://").size(), "persistent/");
  auto stored = admin_get_headers("/admin/v2/" + topic_path +
                                  "/examinemessage?initialPosition=earliest&messagePosition=1");
  ASSERT_NE(stored[":status"].find(" 200"), std::string::npos) << stored[":status"];
  ASSERT_TRUE(stored.count("x-pulsar-deliver-at-time")) << "no deliverAt on the stored message";
  const auto deliver_at = iso_ms(stored["x-pulsar-deliver-at-time"]);
  EXPECT_GE(deliver_at, before + 3000) << stored["x-pulsar-deliver-at-time"];
  EXPECT_LE(deliver_at, after + 3000) << stored["x-pulsar-deliver-at-time"];
  EXPECT_NE(stored["x-pulsar-property"].find(R"("bq-delay":"3000")"), std::string::npos)
      << stored["x-pulsar-property"];

  // As a bare consumer of the Shared subscription gets it: not before its time, same bytes,
  // the delay mirrored next to the projection and the header.
  EXPECT_FALSE(peer_->get(queue_, 2s)) << "arrived within 2 s of a 3 s delay";
  auto got = peer_->get(queue_, 15s);
  ASSERT_TRUE(got) << "never arrived";
  EXPECT_GE(std::chrono::steady_clock::now() - sent, 2900ms);
  EXPECT_GE(now_ms(), deliver_at);
  EXPECT_EQ(got->payload, body);
  EXPECT_EQ(bqtest::property_of(*got, "bq-delay"), "3000");
  EXPECT_EQ(bqtest::property_of(*got, "bq-job"), "urn:babel:test:later");
  EXPECT_EQ(bqtest::property_of(*got, "bq-attempts"), "0");
  EXPECT_EQ(bqtest::property_of(*got, "traceparent"), delayed_traceparent);
  EXPECT_EQ(got->properties.size(), 8u) << "six bq- properties, bq-delay, traceparent";
  EXPECT_EQ(got->redelivery_count, 0);
}

// The transport's own consumer: bq-delay is the broker's business, not a header the handler
// sees; publish_after() is the same call under its first name.
TEST_F(PulsarTest, ADelayedMessageReachesTheTransportWithItsHeadersOnly) {
  auto t = open();
  ASSERT_TRUE(t);
  const std::string body = bqtest::envelope_text(2, "urn:babel:test:later", queue_);
  ASSERT_TRUE(t->publish_after(queue_, body, 1s, {{"traceparent", delayed_traceparent}}));
  auto m = t->receive(queue_, 15s);
  ASSERT_TRUE(m) << m.error().message;
  ASSERT_TRUE(m->has_value());
  EXPECT_EQ((*m)->body, body);
  EXPECT_EQ((*m)->hdrs, (babelqueue::headers{{"traceparent", delayed_traceparent}}));
  ASSERT_TRUE(t->ack(**m));
  EXPECT_EQ(t->publish_after(queue_, body, -1ms).code(),
            babelqueue::transport_errc::invalid_argument);
}

// Key_Shared subscriptions hold a delayed message too (Pulsar dispatches it at once only on
// Exclusive and Failover ones, which the transport refuses: unit_test.cpp).
TEST_F(PulsarTest, AKeySharedSubscriptionHoldsADelayedMessage) {
  auto t = open("subscription_type=key_shared");
  ASSERT_TRUE(t);
  ASSERT_TRUE(t->capabilities().delayed_publish);
  const std::string body = bqtest::envelope_text(3, "urn:babel:test:later", queue_);
  const auto sent = std::chrono::steady_clock::now();
  ASSERT_TRUE(t->publish_delayed(queue_, body, {}, 2s));
  auto early = t->receive(queue_, 1s);
  ASSERT_TRUE(early) << early.error().message;
  EXPECT_FALSE(early->has_value()) << "arrived within 1 s of a 2 s delay";
  auto m = t->receive(queue_, 15s);
  ASSERT_TRUE(m) << m.error().message;
  ASSERT_TRUE(m->has_value());
  EXPECT_GE(std::chrono::steady_clock::now() - sent, 1900ms);
  EXPECT_EQ((*m)->body, body);
  ASSERT_TRUE(t->ack(**m));
}
