#pragma once
/// @file artemis/artemis_transport.hpp
/// @brief `artemis://` and `artemis+ssl://` — Apache ActiveMQ Artemis over AMQP 1.0 (spec
/// "Broker bindings → Apache ActiveMQ Artemis", wire-brokers §4) on Qpid Proton C++.
///
/// ## Projection (what the Go, Python, .NET and Node peers send, plus two C++ additions)
/// The body is one `amqp-value` section holding the envelope as an AMQP string (Artemis
/// maps it to a JMS TextMessage, which the Java SDK reads). The URN rides in the
/// `x-opt-jms-type` message annotation (the contract) AND in `properties.subject` (what
/// Artemis really maps to JMSType, §4.2); `correlation-id` = `trace_id`, `creation-time` =
/// `meta.created_at`, `content-type` `application/json`, and the application properties
/// `bq_schema_version`, `bq_source_lang`, `bq_attempts`, `bq_app_id` as strings (JMS-legal
/// names). Messages are `durable` by default (JMS sends persistent ones); `durable=false`
/// sends non-durable ones as the peers do, which a broker restart loses (options::durable).
/// Out-of-band headers (`traceparent`, `bq-replay-bypass`, ...) are string application
/// properties; the contract names win.
/// The pure projection is include/babelqueue/bindings/artemis.hpp.
///
/// ## Routing without the broker's defaults
/// Stock Artemis creates a MULTICAST address for a bare link to a new name, where a message
/// with no subscriber is dropped. Every link this transport opens carries the `queue`
/// capability (sender target and receiver source, as Qpid JMS does for a Queue), so the
/// broker auto-creates an ANYCAST address and queue `<queue>`: delivery never depends on
/// `default-address-routing-type`. Peers that attach bare links still need the ANYCAST
/// defaults (or pre-created queues) on the broker.
///
/// ## Publish
/// Every publish is sent unsettled and returns once the broker settled it `accepted`
/// (`rejected`, `released` or `modified` is transport_errc::refused; a lost connection is
/// transport_errc::unavailable "unconfirmed", never silently resent). publish_batch() keeps
/// up to the link credit in flight and returns once every message is accepted.
///
/// ## Delayed publish
/// publish_delayed() (transport.hpp) sends one message with the publish projection plus the
/// message annotation `x-opt-delivery-time` = the absolute due time in Unix epoch ms (now +
/// delay, this host's clock) as an AMQP **long**, mirrored on the string application property
/// `bq_delay` = the delay in ms (wire-brokers §4.1/§4.6; what the .NET and Node peers send).
/// A long, not an AMQP timestamp: Artemis schedules only on a numeric annotation and delivers
/// a timestamp-typed one at once (pinned live by tests/artemis/delay_test.cpp). The broker
/// holds the message (its scheduled-delivery queue) and nothing is kept here: the call returns
/// once the broker accepted it, like publish(). Millisecond granularity, no cap of this
/// binding (capabilities(): delayed_publish, max_delay 0, delay_granularity 0). A durable
/// message (the default) is journaled with its due time, so a broker restart keeps the
/// schedule; a `durable=false` one is lost with the restart, as any non-durable message.
/// The Python peer 1.24 never delays on Artemis (it consumes delayed messages as any other).
///
/// ## Consume and settlement
/// receive() attaches one receiver per queue with `prefetch` credit; credit is given back as
/// messages are settled, so at most `prefetch` unsettled messages per queue are held.
/// ack() = `accepted`. release() with no delay = `modified{delivery-failed=true}`: the
/// broker puts the message back and counts the failed delivery (AMQP `delivery-count` + 1;
/// plain `released` would not count, §4.5). release() with a delay republishes the same
/// bytes with the same properties scheduled by `x-opt-delivery-time`, then accepts the
/// original (the broker's counter restarts at 0; the body's attempts are unchanged).
/// received_message::delivery_count is the AMQP header `delivery-count` (0-based), and
/// reconcile_attempts() = max(body attempts, delivery-count) (conformance `artemis`).
/// The App's dead-letter queue is `<queue>.dlq` by republish, never AMQP `rejected` (which
/// moves the message to Artemis's own `DLQ` address without the `dead_letter` block).
///
/// ## Connection loss
/// One AMQP connection per instance, driven by Proton's connection engine on the calling
/// thread inside each call (no hand-off to another thread), and by a keeper thread while no
/// call is in progress (heartbeats, settlements not yet written). A lost connection fails the
/// publishes it had in flight (unavailable, "unconfirmed"); messages received on it and not yet
/// settled cannot be settled any more (ack/release: unavailable — the broker redelivers them). The
/// next publish or receive reconnects with exponential backoff (`reconnect_backoff_min`…`_max`, ±50
/// % jitter), within its own timeout; receivers are attached again. A refused login is
/// transport_errc::permission at once.
///
/// ## URL
/// `artemis[+ssl]://[user[:password]@]host[:port]?key=value&…` (port 5672, 5671 for
/// `+ssl`). With a user, SASL PLAIN (allowed over plain TCP: Artemis's default acceptors
/// are plain); without, SASL ANONYMOUS. `artemis+ssl://` takes the same `tls_*` keys as
/// `amqps://` (CA file, client certificate, server name, verify). Keys = the `options`
/// fields; unknown keys are transport_errc::invalid_argument.
///
/// @note Thread-safety: an instance is NOT thread-safe (transport.hpp contract); use one
/// instance per thread (the App does). Its keeper thread is internal and synchronised.

#include <babelqueue/export/artemis.hpp>
#include <babelqueue/result.hpp>
#include <babelqueue/runtime/transport.hpp>
#include <babelqueue/runtime/url.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace babelqueue {
inline namespace v1 {
namespace artemis {

/// Options of an artemis transport; each field but host/port/username/password/tls is the
/// URL query key of the same name. Every timeout is finite.
struct BABELQUEUE_ARTEMIS_EXPORT options {
  std::string host = "127.0.0.1";
  std::uint16_t port = 5672;  ///< 5671 is the default for artemis+ssl://
  /// Empty: SASL ANONYMOUS. Otherwise SASL PLAIN with the password.
  std::string username;
  std::string password;

  /// Bound of one TCP connect plus the SASL/AMQP (and TLS) handshake.
  std::chrono::milliseconds connect_timeout{std::chrono::seconds(5)};
  /// Bound of publish (until accepted), publish_batch, ack and release, reconnects included.
  std::chrono::milliseconds operation_timeout{std::chrono::seconds(10)};
  /// AMQP idle timeout announced to the broker (Proton then sends empty frames at half of
  /// the broker's); 0 = none.
  std::chrono::milliseconds idle_timeout{std::chrono::seconds(30)};
  /// Link credit of each receiver = unsettled messages held per queue (1..10000).
  std::int64_t prefetch = 64;
  /// Reconnect backoff: first pause, and the cap it doubles up to.
  std::chrono::milliseconds reconnect_backoff_min{100};
  std::chrono::milliseconds reconnect_backoff_max{std::chrono::seconds(5)};
  /// The AMQP header `durable` of every message this instance sends (publish, publish_batch,
  /// a delayed release's republish, the App's dead-letter republish). true (the default): the
  /// broker journals each message before it accepts it, so it survives a broker restart and
  /// an awaited publish waits for the journal. false: non-durable, as the Go, Python, .NET
  /// and Node peers send — faster, but lost on a broker restart.
  bool durable = true;

  /// TLS (set by the `artemis+ssl://` scheme, not a query key).
  bool tls = false;
  std::string tls_ca_file;      ///< PEM CA bundle to trust; empty = the system trust store
  std::string tls_cert_file;    ///< client certificate chain (PEM); needs tls_key_file
  std::string tls_key_file;     ///< the client certificate's private key (PEM)
  std::string tls_server_name;  ///< the name checked in the certificate; empty = host
  /// Verify the server's certificate and name. Off accepts any certificate (test only).
  bool tls_verify = true;
};

/// Reads options from an `artemis://` or `artemis+ssl://` URL. transport_errc::invalid_argument
/// on unknown keys, malformed values, or `tls_*` keys on `artemis://`.
BABELQUEUE_ARTEMIS_EXPORT result<options> options_from_url(const broker_url& url);

/// Counters of one instance (for tests, benchmarks and operators).
struct BABELQUEUE_ARTEMIS_EXPORT transport_stats {
  std::int64_t connects = 0;   ///< connections opened, the first included
  std::int64_t published = 0;  ///< messages the broker accepted
  std::int64_t delivered = 0;  ///< messages received from the broker
};

/// The `artemis` transport. See the file comment for guarantees and thread-safety.
class BABELQUEUE_ARTEMIS_EXPORT artemis_transport final : public transport {
 public:
  /// Checks the options (the rules of options_from_url()), then connects once
  /// (transport_errc::unavailable when the broker cannot be reached within connect_timeout,
  /// transport_errc::permission for refused credentials).
  static result<std::unique_ptr<artemis_transport>> open(options opts);

  ~artemis_transport() override;

  result<void> publish(std::string_view queue, std::string_view body,
                       const headers& hdrs = {}) override;
  result<void> publish_batch(std::string_view queue,
                             std::span<const outgoing_message> messages) override;
  result<std::optional<received_message>> receive(std::string_view queue,
                                                  std::chrono::milliseconds timeout) override;
  /// `accepted`.
  result<void> ack(const received_message& message) override;
  /// delay 0: `modified{delivery-failed=true}`; delay > 0: scheduled republish, then
  /// `accepted`.
  result<void> release(const received_message& message,
                       std::chrono::milliseconds delay = {}) override;
  result<void> close(std::chrono::steady_clock::time_point deadline) override;
  /// Cannot browse: not_supported (closed after close()).
  result<std::vector<peeked_message>> peek(std::string_view queue, std::size_t offset,
                                           std::size_t limit) override;

  /// max(body attempts, delivery-count).
  std::int64_t reconcile_attempts(std::int64_t body_attempts,
                                  const received_message& message) const override;

  std::string_view scheme() const noexcept override {
    return opts_.tls ? "artemis+ssl" : "artemis";
  }
  std::vector<std::string> security_warnings() const override;
  transport_capabilities capabilities() const noexcept override {
    // Delays are the broker's own, in ms, with no limit of their own (see "Delayed publish").
    return {.native_delay = true,
            .headers = true,
            .delivery_count = true,
            .ordered = true,
            .delayed_publish = true};
  }

  const options& config() const noexcept { return opts_; }
  transport_stats stats() const noexcept;

 protected:
  /// One send scheduled by `x-opt-delivery-time` (see "Delayed publish").
  result<void> publish_later(std::string_view queue, std::string_view body, const headers& hdrs,
                             std::chrono::milliseconds delay) override;

 private:
  struct impl;
  explicit artemis_transport(options opts);
  options opts_;
  std::unique_ptr<impl> impl_;
};

/// Registers the `artemis` and `artemis+ssl` schemes with the URL factory (url.hpp).
/// Idempotent.
BABELQUEUE_ARTEMIS_EXPORT void register_transport();

}  // namespace artemis
}  // namespace v1
}  // namespace babelqueue
