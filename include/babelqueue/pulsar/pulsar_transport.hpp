#pragma once
/// @file pulsar/pulsar_transport.hpp
/// @brief `pulsar://host:port` and `pulsar+ssl://host:port` — Apache Pulsar over the official
/// Apache Pulsar C++ client (spec "Broker bindings → Apache Pulsar", wire-brokers §3).
///
/// ## Projection
/// The payload is the envelope, byte-identical; the event time is `meta.created_at`. String
/// properties `bq-job`, `bq-trace-id`, `bq-message-id`, `bq-schema-version`, `bq-source-lang`,
/// `bq-attempts`, then the out-of-band headers (`traceparent`, ...) as more properties
/// (bindings/pulsar.hpp). A queue `orders` is the topic `persistent://public/default/orders`
/// (`tenant`, `namespace` options), or pass a full topic name as the queue.
///
/// ## Publish
/// publish() returns once the broker persisted the message (its send receipt). Batching on
/// (the default) only packs publish_batch(): publish() flushes at once, so a single publish
/// never waits for a batch to fill. publish_batch() hands every message to the client, which
/// packs them into batches (`batch_max_messages`, `batch_delay`), and returns when all are
/// persisted; the first failure (by position) is the error. Producers are made per topic on
/// first use and kept. A broker that is unreachable is retried by the client (reconnects with
/// backoff) until `operation_timeout`: then the call fails with unavailable (not connected) or
/// timeout.
///
/// A message published to a topic no subscription exists on yet is kept for nobody: Pulsar
/// without retention discards it. So on the first publish to each topic the transport makes
/// sure the durable subscription (`subscription`, default `babelqueue`) exists — it
/// subscribes once and closes — and the queue behaves like a queue even before the first
/// worker starts (`ensure_subscription=false` turns this off).
///
/// ## Delayed publish
/// publish_delayed() (and publish_after(), its older name; publish_batch_delayed() for a batch,
/// one deliverAt for all of it) sends the message at once with the native `deliverAt` = the wall
/// clock when the call began + the delay, in Unix ms (computed once: a producer made on first use
/// or a resend does not move it), and mirrors the requested delay on the property `bq-delay`
/// (decimal ms, the Node/.NET mirror; the Python SDK 1.24.0 has no Pulsar delay). The broker holds
/// it: the subscription's consumers get it once deliverAt has passed, with the same bytes and
/// properties (`bq-delay` is not surfaced in received_message::hdrs). No cap of the binding's own
/// (a namespace's `delayedDeliveryMaxDelayInMillis` refuses a longer one at the broker),
/// millisecond granularity. Pulsar delays only on Shared and Key_Shared subscriptions — Exclusive
/// and Failover dispatch a delayed message at once — so with `subscription_type=exclusive` or
/// `failover` capabilities().delayed_publish is false and a delay is not_supported, nothing
/// sent. Never early needs two things of the deployment: the producer's clock not behind the
/// broker's (deliverAt is absolute), and a broker with
/// `isDelayedDeliveryDeliverAtTimeStrict=true` (Pulsar's default, false, may dispatch up to
/// `delayedDeliveryTickTimeMillis`, 1 s, early). deliverAt is part of the persisted message's
/// metadata, so the due time does not depend on the producer or a consumer staying up.
///
/// ## Consume and settlement
/// receive() reads from a consumer on `subscription` (type `subscription_type`, default
/// Shared), subscribed per queue on first use; a new subscription starts at the earliest
/// message (`initial_position`). delivery_count = the redelivery count (0-based) and
/// reconcile_attempts() = max(body, count) — no −1 (conformance `pulsar`). A message whose
/// `bq-schema-version` property is present, not blank and not "1" is handed out with
/// refused_schema_version set and never decoded (the App dead-letters its bytes unchanged).
/// ack() = acknowledge. release(0) = negativeAcknowledge: the broker delivers it again after
/// `negative_ack_delay` (default 1 s, not the client's 60 s) with the redelivery count + 1.
/// release(delay > 0) republishes the same bytes and properties with `deliverAt` and
/// `bq-delay`, then acknowledges the original (the redelivery count restarts at 0; the
/// body's `attempts` carries the history). The App retries by republishing with
/// attempts + 1 (D4), as the Go and Python SDKs do; its dead-letter copy goes to the topic
/// `<queue>.dlq` with the `dead_letter` block. `max_redeliver` > 0 adds the client's native
/// DeadLetterPolicy (to `<queue>.dlq`, after that many negative acks; such a copy has no
/// `dead_letter` block). close() closes consumers first: what they prefetched and never
/// handed out goes back to the broker at once.
///
/// ## Logging
/// The Pulsar client logs through one process-wide logger (the first client created sets it),
/// so its lines go to one process-wide sink: set_client_log_sink(). Without one, its warnings
/// and errors go to stderr and its informational lines nowhere (stdout stays clean).
///
/// ## URL
/// `pulsar://host[:6650]?key=value&…` or `pulsar+ssl://host[:6651]?…`. Keys = the `options`
/// fields. Unknown keys and bad values fail with condition::invalid_argument, naming the key.
/// Credentials never go in the URL authority: `token` or `token_file`.
///
/// @note Thread-safety: an instance is NOT thread-safe (transport.hpp contract); use one
/// instance per thread (the App does). Each instance has its own Pulsar client (its own
/// connection and I/O thread), so distinct instances share nothing but the logger.

#include <babelqueue/export/pulsar.hpp>
#include <babelqueue/result.hpp>
#include <babelqueue/runtime/logging.hpp>
#include <babelqueue/runtime/transport.hpp>
#include <babelqueue/runtime/url.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace babelqueue {
inline namespace v1 {
namespace pulsar {

/// Subscription types (Pulsar's own).
enum class subscription_kind { shared, key_shared, failover, exclusive };

/// Options of a pulsar transport; each field is the URL query key of the same name, except
/// `host`, `port` and `tls` (the URL's authority and scheme).
struct BABELQUEUE_PULSAR_EXPORT options {
  std::string host = "127.0.0.1";
  std::uint16_t port = 6650;
  /// pulsar+ssl://
  bool tls = false;
  /// The subscription every consumer of this transport joins (the spec's default).
  std::string subscription = "babelqueue";
  /// `shared` (the spec's default: workers share a queue), `key_shared`, `failover`,
  /// `exclusive`.
  subscription_kind subscription_type = subscription_kind::shared;
  /// Where a subscription that does not exist yet starts: `earliest` (queue semantics) or
  /// `latest` (the Pulsar clients' own default).
  std::string initial_position = "earliest";
  std::string tenant = "public";
  std::string namespace_ = "default";  ///< URL key `namespace`
  /// Messages each consumer prefetches (1..1000000; the client's zero-queue consumer cannot
  /// receive with a timeout). Keep it small with many workers on one Shared subscription: a
  /// prefetched message waits for its consumer.
  std::int64_t receiver_queue = 1000;
  /// Redeliver a message not settled within this (0 = never; else >= 10 s, the client's
  /// minimum).
  std::chrono::milliseconds ack_timeout{0};
  /// How long a negatively acknowledged (released) message waits before redelivery.
  std::chrono::milliseconds negative_ack_delay{std::chrono::seconds(1)};
  /// > 0: the client's native DeadLetterPolicy moves a message to `<queue>.dlq` after this
  /// many redeliveries (negative acks / ack timeouts). 0 = off (the App dead-letters).
  std::int64_t max_redeliver = 0;
  /// Make sure `subscription` exists on a topic before the first publish to it (see above).
  bool ensure_subscription = true;
  /// Producer batching for publish_batch() (publish() always sends at once).
  bool batching = true;
  /// Most messages in one batch (1..100000).
  std::int64_t batch_max_messages = 1000;
  /// Longest a batch waits to fill within publish_batch().
  std::chrono::milliseconds batch_delay{std::chrono::milliseconds(10)};
  /// Payload compression: none, lz4, zlib, zstd, snappy.
  std::string compression = "none";
  /// Bound of a connect (TCP + TLS + Pulsar handshake).
  std::chrono::milliseconds connect_timeout{std::chrono::seconds(10)};
  /// Bound of publish (send receipt), producer/consumer creation and lookups; whole seconds
  /// for lookups (the client's granularity).
  std::chrono::milliseconds operation_timeout{std::chrono::seconds(30)};
  /// JWT for token authentication (secret: never logged), or a file holding it.
  std::string token;
  std::string token_file;
  /// TLS (pulsar+ssl:// only): a PEM CA bundle (empty = the system trust store), a client
  /// certificate and key (mutual TLS, both or neither), and verification of the broker's
  /// certificate and host name (off only for tests). `tls_server_name` is not supported by
  /// the Pulsar client and refused.
  std::string tls_ca_file;
  std::string tls_cert_file;
  std::string tls_key_file;
  std::string tls_server_name;
  bool tls_verify = true;
  /// The client's I/O threads (1..16).
  std::int64_t io_threads = 1;
};

/// Reads options from a `pulsar://` or `pulsar+ssl://` URL. condition::invalid_argument on
/// unknown keys or malformed values.
BABELQUEUE_PULSAR_EXPORT result<options> options_from_url(const broker_url& url);

/// Counters of one instance.
struct BABELQUEUE_PULSAR_EXPORT transport_stats {
  std::int64_t published = 0;              ///< messages the broker persisted (send receipts)
  std::int64_t delivered = 0;              ///< messages received
  std::int64_t acked = 0;                  ///< acknowledged
  std::int64_t nacked = 0;                 ///< negatively acknowledged (release without delay)
  std::int64_t producers = 0;              ///< producers created (one per topic)
  std::int64_t consumers = 0;              ///< consumers subscribed (one per queue)
  std::int64_t subscriptions_ensured = 0;  ///< topics whose subscription publish made sure of
};

/// The `pulsar` transport. See the file comment for guarantees and thread-safety.
class BABELQUEUE_PULSAR_EXPORT pulsar_transport final : public transport {
 public:
  /// Checks the options and creates the client. Makes no network call: the first operation
  /// connects (a wrong host shows there, as unavailable).
  static result<std::unique_ptr<pulsar_transport>> open(options opts);

  ~pulsar_transport() override;

  result<void> publish(std::string_view queue, std::string_view body,
                       const headers& hdrs = {}) override;
  result<void> publish_batch(std::string_view queue,
                             std::span<const outgoing_message> messages) override;
  /// One result per message, in order (publish_batch's sends). With `delay` > 0, every
  /// message carries one deliverAt (now + `delay`, taken once) and `bq-delay`, with the
  /// checks of publish_delayed() (see "Delayed publish").
  std::vector<result<void>> publish_each(std::string_view queue,
                                         std::span<const outgoing_message> messages,
                                         std::chrono::milliseconds delay = {});
  /// publish_delayed() under the name this transport had first: deliverable after `delay`
  /// (native deliverAt; `bq-delay` = the delay in ms). 0 = publish(). Pulsar delays only on
  /// Shared and Key_Shared subscriptions: not_supported on the others.
  result<void> publish_after(std::string_view queue, std::string_view body,
                             std::chrono::milliseconds delay, const headers& hdrs = {});
  result<std::optional<received_message>> receive(std::string_view queue,
                                                  std::chrono::milliseconds timeout) override;
  result<void> ack(const received_message& message) override;
  result<void> release(const received_message& message,
                       std::chrono::milliseconds delay = {}) override;
  result<void> close(std::chrono::steady_clock::time_point deadline) override;
  /// Cannot browse: not_supported (closed after close()).
  result<std::vector<peeked_message>> peek(std::string_view queue, std::size_t offset,
                                           std::size_t limit) override;

  /// max(body attempts, redelivery count).
  std::int64_t reconcile_attempts(std::int64_t body_attempts,
                                  const received_message& message) const override;

  std::string_view scheme() const noexcept override { return opts_.tls ? "pulsar+ssl" : "pulsar"; }
  /// native_delay and delayed_publish only on shared and key_shared subscriptions (Pulsar
  /// delays only there); no max_delay, millisecond granularity.
  std::vector<std::string> security_warnings() const override;
  transport_capabilities capabilities() const noexcept override {
    const bool delays = opts_.subscription_type == subscription_kind::shared ||
                        opts_.subscription_type == subscription_kind::key_shared;
    // Shared and Key_Shared subscriptions spread messages over consumers without an order.
    return {.native_delay = delays,
            .headers = true,
            .delivery_count = true,
            .ordered = !delays,
            .max_batch_messages = static_cast<std::size_t>(opts_.batch_max_messages),
            .delayed_publish = delays};
  }

  /// The topic a queue name stands for (bindings::pulsar::topic_name with this tenant and
  /// namespace).
  std::string topic_of(std::string_view queue) const;

  const options& config() const noexcept { return opts_; }
  transport_stats stats() const noexcept;

 protected:
  /// deliverAt = now + `delay` and `bq-delay` (see "Delayed publish"); not_supported on an
  /// exclusive or failover subscription, closed after close().
  result<void> publish_later(std::string_view queue, std::string_view body, const headers& hdrs,
                             std::chrono::milliseconds delay) override;
  /// publish_each() with `delay`: one producer batch, every message with the same deliverAt.
  result<void> publish_batch_later(std::string_view queue,
                                   std::span<const outgoing_message> messages,
                                   std::chrono::milliseconds delay) override;

 private:
  struct impl;
  explicit pulsar_transport(options opts);
  options opts_;
  std::unique_ptr<impl> impl_;
};

/// Where the Pulsar client's own log lines go, process-wide (the client has one logger per
/// process): `sink` receives `pulsar <file>:<line> <text>` at or above `min_level`. A null
/// sink restores the default: warnings and errors to stderr. Thread-safe; the sink is called
/// from the client's threads and must be thread-safe and not throw.
BABELQUEUE_PULSAR_EXPORT void set_client_log_sink(log_sink sink,
                                                  log_level min_level = log_level::info);

/// Registers the `pulsar` and `pulsar+ssl` schemes with the URL factory (url.hpp). Idempotent.
BABELQUEUE_PULSAR_EXPORT void register_transport();

}  // namespace pulsar
}  // namespace v1
}  // namespace babelqueue
