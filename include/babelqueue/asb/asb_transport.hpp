#pragma once
/// @file asb/asb_transport.hpp
/// @brief `sb://` — Azure Service Bus over AMQP 1.0 (spec "Broker bindings → Azure Service
/// Bus", wire-brokers §2) on Qpid Proton C++, authenticated by SASL ANONYMOUS + a CBS
/// put-token of a SAS token.
///
/// ## Projection (conformance block `asb`)
/// The body is one `data` section holding the envelope bytes (what Go, .NET, Java and Python
/// send; Java refuses `amqp-value` bodies). `properties.subject` = URN, `correlation-id` =
/// `trace_id`, `message-id` = `meta.id` (left out above 128 characters), `content-type`
/// `application/json`; application properties `bq-schema-version` (AMQP int),
/// `bq-source-lang` (string), `bq-created-at` (AMQP long), and on a delayed publish
/// `bq-delay` (long ms) with the message annotation `x-opt-scheduled-enqueue-time` (AMQP
/// timestamp). Out-of-band headers ride as string application properties. The pure
/// projection is include/babelqueue/bindings/asb.hpp.
///
/// ## Delayed publish (ScheduledEnqueueTime)
/// publish_delayed() (transport.hpp) sets ScheduledEnqueueTime to now + delay as the .NET SDK
/// does, in one send: the message annotation `x-opt-scheduled-enqueue-time` = the due time as
/// an AMQP **timestamp** (Unix epoch ms, this host's clock), plus the application property
/// `bq-delay` = the delay in ms as an AMQP long (.NET/Java/Node; wire-brokers §2.1/§2.5). No
/// `$management` schedule-message call, so there is no sequence number to cancel it by. The
/// service holds the message; nothing is kept here: the call returns once it was accepted,
/// like publish(). Millisecond granularity, no cap of this binding (capabilities():
/// delayed_publish, max_delay 0, delay_granularity 0). Service Bus stores scheduled messages
/// durably, so a restart of the service does not lose them. The Python peer 1.24 never delays
/// on Service Bus. release(delay > 0) republishes with the same annotation and property.
/// On the test stand-in (Artemis, which ignores this annotation) a scheduling front in the
/// tests checks the annotation's type and value and makes the broker hold the message
/// (tests/asb/scheduling_front.hpp) — not a Service Bus.
///
/// ## Consume (PeekLock)
/// Each queue gets a receiver with `prefetch` credit (default 1: prefetched messages hold
/// locks that expire); settlement: complete = `accepted`, abandon (release()) =
/// `modified{delivery-failed=true}` (the broker bumps DeliveryCount), native dead-letter
/// (dead_letter_natively()) = `rejected` with `com.microsoft:dead-letter`. The App's
/// dead-letter queue stays `<queue>.dlq` by republish, as Go and Python do.
/// received_message::delivery_count is the SDKs' 1-based DeliveryCount (AMQP header + 1),
/// and reconcile_attempts() = max(body attempts, DeliveryCount − 1); DeliveryCount ≤ 1 keeps
/// the body. A `bq-schema-version` application property other than 1 is refused before any
/// decode (received_message::refused_schema_version: the runtime dead-letters the original
/// bytes), as Python does. Bodies are read from `data` sections, an `amqp-value` string or
/// binary, and a `data` body that is a JSON string literal (the Node adapter's double
/// encoding) is unwrapped once.
///
/// ## Authentication
/// SASL ANONYMOUS, then, before any entity link, a CBS `put-token` on `$cbs` of a SAS token
/// (`SharedAccessSignature sr=…&sig=…&se=…&skn=…`, HMAC-SHA256 with the policy key) for the
/// audience `sb://<host>/` (or `sb://<host>/<entity path>` for an entity-scoped key),
/// renewed every 3/4 of `token_ttl`. A ready SAS token (`sas_token`) is put as it is and
/// cannot be renewed. A refused token is transport_errc::permission.
///
/// ## URL and connection string
/// `sb://<key name>:<key>@<namespace>.servicebus.windows.net[:port]?key=value&…` (the key
/// percent-encoded: base64 has `+`, `/`, `=`), or with `?sas_token=SharedAccessSignature…`
/// instead of the user info. TLS on 5671 with SNI and name check = the host, unless
/// `emulator=true` (the development emulator: plain AMQP, port 5672). From a connection
/// string: options_from_connection_string(), or url_from_connection_string() for the App.
///
/// ## Not verified against a live Service Bus namespace
/// Tested against Apache Artemis with a CBS responder (scripts/services.sh) and the real
/// Python `azure-servicebus` SDK on that stand-in; see docs/transports/asb.md for exactly
/// what that does and does not prove.
///
/// @note Thread-safety: an instance is NOT thread-safe (transport.hpp contract); use one
/// instance per thread (the App does). Its keeper thread is internal and synchronised.

#include <babelqueue/export/asb.hpp>
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
namespace asb {

/// Options of an sb:// transport. Query keys = the field names, except the SAS policy (the
/// URL's user info) and `host`/`port`.
struct BABELQUEUE_ASB_EXPORT options {
  std::string host;           ///< the namespace FQDN (the AMQP open hostname and SNI)
  std::uint16_t port = 5671;  ///< 5672 without TLS
  /// The development emulator (connection string `UseDevelopmentEmulator=true`): sets `tls`
  /// false (plain AMQP, port 5672), as the emulator speaks no TLS.
  bool emulator = false;
  /// TLS to the namespace (URL `tls=false` turns it off; so does `emulator=true`). Without
  /// it the SAS token travels in clear text: only for a local emulator or stand-in
  /// (security_warnings() says so for any other host).
  bool tls = true;
  std::string key_name;   ///< SharedAccessKeyName
  std::string key;        ///< SharedAccessKey (the HMAC key, as given)
  std::string sas_token;  ///< a ready SharedAccessSignature instead of the key pair
  /// EntityPath: the entity an entity-scoped key is for (the token audience then names it).
  std::string entity_path;
  /// Lifetime of each generated token; renewed at 3/4 of it.
  std::chrono::seconds token_ttl{std::chrono::hours(1)};

  std::chrono::milliseconds connect_timeout{std::chrono::seconds(10)};
  std::chrono::milliseconds operation_timeout{std::chrono::seconds(30)};
  std::chrono::milliseconds idle_timeout{std::chrono::seconds(60)};
  /// Receiver credit per queue (1..1000): messages locked ahead of receive().
  std::int64_t prefetch = 1;
  std::chrono::milliseconds reconnect_backoff_min{200};
  std::chrono::milliseconds reconnect_backoff_max{std::chrono::seconds(10)};

  /// TLS settings (with `tls`): CA file (empty = the system trust store), the name checked
  /// (empty = host), verification (off = test only).
  std::string tls_ca_file;
  std::string tls_server_name;
  bool tls_verify = true;
};

/// Reads options from an `sb://` URL. transport_errc::invalid_argument on unknown keys,
/// malformed values or missing credentials.
BABELQUEUE_ASB_EXPORT result<options> options_from_url(const broker_url& url);

/// Reads options from a Service Bus connection string (asb/connection_string.hpp).
BABELQUEUE_ASB_EXPORT result<options> options_from_connection_string(
    std::string_view connection_string);

/// The `sb://` URL of a connection string (secrets percent-encoded), for app("sb://...").
BABELQUEUE_ASB_EXPORT result<std::string> url_from_connection_string(
    std::string_view connection_string);

struct BABELQUEUE_ASB_EXPORT transport_stats {
  std::int64_t connects = 0;
  std::int64_t published = 0;
  std::int64_t delivered = 0;
  std::int64_t tokens_put = 0;  ///< CBS tokens the broker accepted (renewals included)
};

class BABELQUEUE_ASB_EXPORT asb_transport final : public transport {
 public:
  /// Checks the options, connects and puts the first token (transport_errc::unavailable /
  /// permission).
  static result<std::unique_ptr<asb_transport>> open(options opts);
  ~asb_transport() override;

  result<void> publish(std::string_view queue, std::string_view body,
                       const headers& hdrs = {}) override;
  result<void> publish_batch(std::string_view queue,
                             std::span<const outgoing_message> messages) override;
  result<std::optional<received_message>> receive(std::string_view queue,
                                                  std::chrono::milliseconds timeout) override;
  /// Complete (`accepted`).
  result<void> ack(const received_message& message) override;
  /// delay 0: Abandon (`modified{delivery-failed=true}`); delay > 0: the same bytes and
  /// properties scheduled by `x-opt-scheduled-enqueue-time`, then Complete.
  result<void> release(const received_message& message,
                       std::chrono::milliseconds delay = {}) override;
  /// Service Bus's own dead-lettering into `<queue>/$DeadLetterQueue`: `rejected` with
  /// `com.microsoft:dead-letter` and DeadLetterReason / DeadLetterErrorDescription.
  result<void> dead_letter_natively(const received_message& message, std::string_view reason,
                                    std::string_view description);
  result<void> close(std::chrono::steady_clock::time_point deadline) override;
  /// Cannot browse: not_supported (closed after close()).
  result<std::vector<peeked_message>> peek(std::string_view queue, std::size_t offset,
                                           std::size_t limit) override;

  /// max(body attempts, DeliveryCount − 1).
  std::int64_t reconcile_attempts(std::int64_t body_attempts,
                                  const received_message& message) const override;

  std::string_view scheme() const noexcept override { return "sb"; }
  std::vector<std::string> security_warnings() const override;
  transport_capabilities capabilities() const noexcept override {
    // No .ordered: Service Bus orders only within sessions, which this binding does not use.
    // Delays are the service's own, in ms, with no limit of their own.
    return {.native_delay = true, .headers = true, .delivery_count = true, .delayed_publish = true};
  }

  const options& config() const noexcept { return opts_; }
  transport_stats stats() const noexcept;

 protected:
  /// One send with ScheduledEnqueueTime = now + delay (see "Delayed publish").
  result<void> publish_later(std::string_view queue, std::string_view body, const headers& hdrs,
                             std::chrono::milliseconds delay) override;

 private:
  struct impl;
  explicit asb_transport(options opts);
  options opts_;
  std::unique_ptr<impl> impl_;
};

/// Registers the `sb` scheme with the URL factory (url.hpp). Idempotent.
BABELQUEUE_ASB_EXPORT void register_transport();

}  // namespace asb
}  // namespace v1
}  // namespace babelqueue
