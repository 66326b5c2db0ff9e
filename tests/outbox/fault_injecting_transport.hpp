#pragma once
// A FAULT-INJECTING transport wrapper (test only): forwards to a real transport, except that
// the publishes whose 1-based sequence numbers are listed fail with `fault` —
// transport_errc::unavailable by default, the broker outage a real memory:// or redis://
// transport cannot be told to produce on a chosen call; e.g. transport_errc::refused for a
// broker that refuses one message (a poison row).
#include <babelqueue/runtime/transport.hpp>

#include <set>
#include <string>

namespace bqtest {

class fault_injecting_transport final : public babelqueue::transport {
 public:
  explicit fault_injecting_transport(babelqueue::transport& real) : real_(real) {}
  std::set<int> fail_publishes;  ///< 1-based publish numbers that fail
  bool fail_every_publish = false;
  babelqueue::transport_errc fault = babelqueue::transport_errc::unavailable;
  int publishes = 0;
  /// receive() calls after this many fail with transport_errc::unavailable (-1 = never).
  int fail_receives_after = -1;
  int receives = 0;
  /// Answers capabilities().peek = false and refuses peek(): a broker that cannot browse.
  bool hide_peek = false;
  /// Answers capabilities().delayed_publish = false: a broker that cannot hold a message
  /// (publish_delayed() then answers transport_errc::not_supported, the seam's default).
  bool hide_delay = false;

  babelqueue::result<void> publish(std::string_view queue, std::string_view body,
                                   const babelqueue::headers& hdrs = {}) override {
    ++publishes;
    if (fail_every_publish || fail_publishes.count(publishes) != 0) {
      return babelqueue::fail(
          make_error_code(fault),
          std::string(fault == babelqueue::transport_errc::unavailable ? "injected outage"
                                                                       : "injected refusal") +
              " on publish " + std::to_string(publishes));
    }
    return real_.publish(queue, body, hdrs);
  }
  babelqueue::result<std::optional<babelqueue::received_message>> receive(
      std::string_view queue, std::chrono::milliseconds timeout) override {
    if (fail_receives_after >= 0 && receives++ >= fail_receives_after) {
      return babelqueue::fail(make_error_code(babelqueue::transport_errc::unavailable),
                              "injected outage on receive " + std::to_string(receives));
    }
    return real_.receive(queue, timeout);
  }
  babelqueue::result<void> ack(const babelqueue::received_message& m) override {
    return real_.ack(m);
  }
  babelqueue::result<void> release(const babelqueue::received_message& m,
                                   std::chrono::milliseconds delay = {}) override {
    return real_.release(m, delay);
  }
  babelqueue::result<void> close(std::chrono::steady_clock::time_point deadline) override {
    return real_.close(deadline);
  }
  babelqueue::result<std::vector<babelqueue::peeked_message>> peek(std::string_view queue,
                                                                   std::size_t offset,
                                                                   std::size_t limit) override {
    if (hide_peek) return babelqueue::transport::peek(queue, offset, limit);
    return real_.peek(queue, offset, limit);
  }
  std::string_view scheme() const noexcept override { return real_.scheme(); }
  babelqueue::transport_capabilities capabilities() const noexcept override {
    auto c = real_.capabilities();
    if (hide_peek) c.peek = false;
    if (hide_delay) {
      c.delayed_publish = false;
      c.max_delay = {};
    }
    return c;
  }

 private:
  babelqueue::transport& real_;
};

}  // namespace bqtest
