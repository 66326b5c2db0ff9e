// Contract case: close(deadline) returns by its deadline when the broker has stopped
// answering. The broker is "stopped" by a test-owned TCP relay (stalling_relay.hpp) between
// the transport and the shared server — equivalent, for the client, to SIGSTOP of the server,
// and harmless to the other tests using that server.
#include "transport_contract/contract_fixture.hpp"
#include "transport_contract/stalling_relay.hpp"

#include <optional>
#include <string>

namespace bqcontract {
namespace {

// `url` with its first `127.0.0.1:<port>` replaced by the relay's port; the upstream port
// in `port`. nullopt when the URL names no such address.
std::optional<std::string> through(const std::string& url, std::uint16_t relay_port,
                                   std::uint16_t& port) {
  const std::string host = "127.0.0.1:";
  const auto at = url.find(host);
  if (at == std::string::npos) return std::nullopt;
  auto end = at + host.size();
  while (end < url.size() && url[end] >= '0' && url[end] <= '9') ++end;
  const std::string digits = url.substr(at + host.size(), end - at - host.size());
  if (digits.empty()) return std::nullopt;
  port = static_cast<std::uint16_t>(std::stoi(digits));
  return url.substr(0, at) + host + std::to_string(relay_port) + url.substr(end);
}

TEST_P(TransportContract, CloseReturnsByItsDeadlineWhenTheBrokerStopsAnswering) {
  if (GetParam().local) BQ_CONTRACT_SKIP("no broker: nothing can stop answering");
  if (!GetParam().relay_faithful) {
    BQ_CONTRACT_SKIP("the client reconnects to addresses the server advertises, past a relay");
  }
  std::uint16_t upstream = 0;
  auto probe = through(url_, 0, upstream);
  ASSERT_TRUE(probe) << "no 127.0.0.1:<port> in " << babelqueue::redact_url(url_);
  {
    stalling_relay relay(upstream);
    ASSERT_NE(relay.port(), 0);
    const std::string relayed = *through(url_, relay.port(), upstream);
    auto* t = open(relayed);
    ASSERT_TRUE(t);
    // Connected and holding an unsettled message: close() has something to give back.
    ASSERT_TRUE(t->publish(queue_, bqtest::envelope_text(1, "urn:babel:test:item", queue_)));
    auto m = next(*t);
    ASSERT_TRUE(m);
    relay.stall();
    const auto budget = 2s;
    const auto started = std::chrono::steady_clock::now();
    (void)t->close(started + budget);  // an error is fine; only the time is the contract
    const auto took = std::chrono::steady_clock::now() - started;
    // 1 s of slack for a loaded 2-core CI machine.
    EXPECT_LE(took, budget + 1s)
        << "close() took " << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
        << " ms with a 2000 ms deadline";
  }  // the relay closes its connections: the broker sees the stalled consumer gone
  // The message was never acked: a healthy consumer gets it back — where a consumer that
  // closes gives it back at all (see AConsumerClosingWithoutAckGivesTheMessageBack).
  if (known_gap("AConsumerClosingWithoutAckGivesTheMessageBack")) return;
  auto again = next(transport(), 30s);
  ASSERT_TRUE(again) << "the message held by the stalled consumer was lost";
  ASSERT_TRUE(transport().ack(*again));
}

}  // namespace
}  // namespace bqcontract
