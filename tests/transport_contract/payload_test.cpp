// Contract cases on what a message carries: headers round-trip byte for byte (names at the
// binding's limit, long non-ASCII values); a 1-byte body; a body at the binding's own maximum
// is carried and one byte more is a typed error with nothing sent.
#include "transport_contract/contract_fixture.hpp"

#include <string>

namespace bqcontract {
namespace {

// The longest header name the case uses where the binding sets no limit of its own.
constexpr std::size_t unbounded_name_bytes = 512;

// A value with spaces inside, punctuation and multi-byte UTF-8 (é, €, 😀), `size` bytes long.
std::string header_value(std::size_t size) {
  const std::string unit = "a b=c;d,\"e\" \xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80 ";
  std::string v;
  while (v.size() + unit.size() <= size) v += unit;
  v.append(size - v.size(), 'z');
  return v;
}

TEST_P(TransportContract, HeadersRoundTripByteExact) {
  BQ_CONTRACT_REQUIRE(headers);
  const std::size_t name_bytes = features().max_header_name_bytes != 0
                                     ? features().max_header_name_bytes
                                     : unbounded_name_bytes;
  const babelqueue::headers sent = {
      {"traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
      {"x-Mixed.Case_name-1", header_value(40)},
      {"x-" + std::string(name_bytes - 2, 'n'), header_value(4096)},
  };
  auto& t = transport();
  const std::string body = bqtest::envelope_text(1, "urn:babel:test:item", queue_);
  auto published = t.publish(queue_, body, sent);
  ASSERT_TRUE(published) << published.error().message;
  auto m = next(t);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->body, body);
  for (const auto& [name, value] : sent) {
    auto it = m->hdrs.find(name);
    ASSERT_NE(it, m->hdrs.end()) << "header of " << name.size()
                                 << " bytes lost: " << name.substr(0, 40);
    EXPECT_EQ(it->second, value) << "header " << name.substr(0, 40) << " changed";
  }
  ASSERT_TRUE(t.ack(*m));
}

TEST_P(TransportContract, AHeaderNameOverTheLimitIsATypedErrorAndNothingIsSent) {
  BQ_CONTRACT_REQUIRE(max_header_name_bytes);
  auto& t = transport();
  const std::string name(features().max_header_name_bytes + 1, 'n');
  auto r =
      t.publish(queue_, bqtest::envelope_text(1, "urn:babel:test:item", queue_), {{name, "v"}});
  ASSERT_FALSE(r) << "a header name of " << name.size() << " bytes was accepted";
  EXPECT_EQ(r.code(), babelqueue::transport_errc::invalid_argument) << r.error().message;
  EXPECT_TRUE(nothing_within(t, 1s)) << "the refused message reached the queue";
}

TEST_P(TransportContract, AOneByteBodyTravels) {
  auto& t = transport();
  ASSERT_TRUE(t.publish(queue_, "7"));
  auto m = next(t);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->body, "7");
  ASSERT_TRUE(t.ack(*m));
}

TEST_P(TransportContract, ABodyAtTheMaximumTravels) {
  BQ_CONTRACT_REQUIRE(max_body_bytes);
  auto& t = transport();
  const std::string body(features().max_body_bytes, 'b');
  auto r = t.publish(queue_, body);
  ASSERT_TRUE(r) << r.error().message;
  auto m = next(t);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->body.size(), body.size());
  EXPECT_TRUE(m->body == body) << "the body changed";
  ASSERT_TRUE(t.ack(*m));
}

TEST_P(TransportContract, ABodyOneByteOverTheMaximumIsTooLargeAndNothingIsSent) {
  BQ_CONTRACT_REQUIRE(max_body_bytes);
  auto& t = transport();
  auto r = t.publish(queue_, std::string(features().max_body_bytes + 1, 'b'));
  ASSERT_FALSE(r) << "a body one byte over max_body_bytes was accepted";
  EXPECT_EQ(r.code(), babelqueue::transport_errc::too_large) << r.error().message;
  EXPECT_TRUE(nothing_within(t, 1s)) << "the refused body reached the queue";
}

}  // namespace
}  // namespace bqcontract
