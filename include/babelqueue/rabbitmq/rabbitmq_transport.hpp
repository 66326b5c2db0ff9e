#pragma once
/// @file rabbitmq/rabbitmq_transport.hpp
/// @brief `amqp://` and `amqps://` — the RabbitMQ binding (decision D7, AMQP 0-9-1) on
/// rabbitmq-c, with publisher confirms on every publish.
///
/// ## Topology (interoperable with the Go, Python, PHP, Node and Laravel SDKs)
/// Publish goes to the default exchange `""` with routing key = queue. Before its first
/// publish to or consume from a queue, an instance declares it durable, non-exclusive,
/// non-auto-delete, with no arguments — exactly as the peers, so a queue a peer declared
/// first never fails with PRECONDITION_FAILED. The DLQ is the plain durable queue
/// `<queue>.dlq` (the runtime's default dead-letter name), published the same way.
/// Every publish carries the property projection of bindings/rabbitmq.hpp.
///
/// ## Publisher confirms (no peer does this)
/// The publish channel is in confirm mode and every publish is `mandatory`. publish()
/// returns only once the broker confirmed the message: a `basic.nack`, a `basic.return`
/// (no queue took it, e.g. it was deleted), a channel error (e.g. a message above the
/// broker's `max_message_size`), a lost connection or `operation_timeout` without a confirm
/// is an error the caller sees. publish_batch() pipelines up to `confirm_window` unconfirmed
/// publishes and returns once all are confirmed (or with the first failure).
/// Reconnecting happens only BEFORE a message is sent: a message sent on a connection that
/// then dies is reported (transport_errc::unavailable, "unconfirmed"), never silently
/// resent, because the broker may already hold it.
///
/// ## Consume
/// receive() starts one `basic.consume` (manual ack) per queue on its own channel with
/// `basic.qos` prefetch = `prefetch`; deliveries wait in this instance until receive()
/// hands them out. ack() is `basic.ack` of that delivery. The body is the envelope bytes;
/// `received_message::hdrs` holds the headers table stringified, without the three contract
/// headers (they are derived from the body); `received_message::delivery_count` holds
/// `x-attempts` when present (any AMQP integer width, or a decimal string), and
/// reconcile_attempts() returns `max(body attempts, x-attempts)` (D7: Laravel's release
/// bumps only the header).
/// release() republishes the same bytes with the same headers (and an `x-attempts` never
/// lower than the one received) to the TAIL of the queue, confirmed, then acks the original
/// — the peers' way (no `basic.reject`/requeue anywhere); a delay is
/// transport_errc::not_supported (no delay without a plugin).
/// `received_message::hdrs` never holds the annotations the broker adds when it
/// dead-letters a message (`x-death`, `x-first-death-*`, `x-last-death-*`): they are not
/// headers any publisher sent, and keeping them would break the byte-exact header round
/// trip of a delayed publish (and be republished as strings by release()).
///
/// ## Delayed publish: wait queues (this SDK's own extension; no plugin)
/// RabbitMQ has no delay of its own, and this binding depends on no plugin. publish_delayed()
/// with a delay D to queue Q publishes — the same bytes, the same property projection and
/// headers as publish(), persistent, `mandatory`, confirmed exactly as publish() — to a
/// WAIT QUEUE, `wait_queue_name(Q, D, now)` = `bq.delay.<D in ms>ms.<W>.<Q>`, a durable
/// quorum queue declared (idempotently, once per connection) with the arguments
///
///     x-queue-type = "quorum"                 x-dead-letter-exchange = ""  (default exchange)
///     x-message-ttl = D (long)                x-dead-letter-routing-key = Q
///     x-expires = P + D + 30 min (long)       x-dead-letter-strategy = "at-least-once"
///     x-overflow = "reject-publish"           (what at-least-once requires)
///
/// where P = max(D, 1 h) and W is the start, in Unix seconds, of the P-long wall-clock window
/// the publish falls in. After D the broker dead-letters the message onto Q, where any peer
/// reads it exactly as publish() would have put it (body and properties unchanged; the
/// broker adds only its dead-letter annotations `x-death` / `x-first-death-*`, which this
/// binding drops on receive, and which Go and Python peers show among their stringified
/// headers). With declare_queues, Q itself is declared first (as publish() does) so the
/// dead-letter target exists. The wait queue is always declared: it needs the `configure`
/// permission on `bq.delay.*` names. Needs RabbitMQ >= 3.10 (quorum queues with message TTL
/// and at-least-once dead-lettering; the latter also needs the `stream_queue` feature flag,
/// without which the broker falls back to at-most-once).
/// - One queue per delay, not a per-message `expiration` in one shared queue: RabbitMQ
///   expires only the message at the head of a queue, so a long delay published first would
///   hold back every shorter one behind it. One TTL per queue keeps the head the first due;
///   two delays are two queues, so the shorter comes due first.
/// - Granularity 1 s: D is rounded UP to whole seconds (never early), which bounds the
///   number of wait queues a jittered backoff creates to one per distinct second.
/// - Cap max_publish_delay = 24 days: x-message-ttl and x-expires are unsigned 32-bit
///   millisecond counts (2^32-1 ms ≈ 49.7 days), and x-expires = max(D, 1 h) + D + 30 min
///   must fit.
/// - Quorum with at-least-once dead-lettering, not classic: measured on 3.10.8, a kill -9
///   of the node while messages were being dead-lettered lost 112 to 1896 of 3000 with
///   classic wait queues (a classic queue dead-letters without confirms, so what it had
///   moved onto the work queue in the seconds before the crash was not yet on disk there),
///   none with quorum at-least-once (which waits for the work queue's confirm; it may
///   deliver one twice: 1 duplicate in 2 runs). A broker restart during a delay loses
///   nothing: persistent messages in a durable queue, and a message whose delay ended while
///   the broker was down arrives right after it is back.
/// - The window W in the name: a quorum queue's x-expires lease is not renewed by a
///   redeclare (measured; consumers and basic.get would renew it but take the messages),
///   and it expires with messages inside. So a wait queue takes publishes for one window
///   only and lives P + D + 30 min from its first declare: its last message is due at
///   least 30 min (more than any clock skew between publishers) before it may expire, and
///   an unused wait queue vanishes on its own. About three exist per (queue, delay) under
///   a steady load.
/// - Name: deterministic for every instance and process (wall clock), under the prefix
///   `bq.delay.` (one operator policy pattern `^bq\.delay\.` covers all of them; no peer
///   names a work queue so). A name over 255 bytes keeps a prefix of Q cut on a UTF-8
///   boundary and ends in `~` + the first 16 hex digits of SHA-256(Q).
/// - A wait queue declared before with other arguments (by hand, or a future layout), or a
///   broker without these queue features, is PRECONDITION_FAILED: transport_errc::refused,
///   nothing sent, and the transport stays usable (the channel is reopened).
/// - If Q is deleted while a message waits, at-least-once dead-lettering keeps the message
///   in the wait queue and retries until Q exists again or the wait queue expires.
///
/// ## Connection loss
/// A socket error, a missed heartbeat or a `connection.close` drops the connection: the
/// broker then redelivers every unacked delivery of it (body unchanged, so attempts are not
/// double-counted), and this instance forgets the deliveries it had prefetched. ack() or
/// release() of a message received on a dropped connection fails with
/// transport_errc::unavailable (the broker already requeued it). The next call reconnects
/// with exponential backoff (`reconnect_backoff_min`…`_max`, ±50 % jitter), bounded by
/// `operation_timeout` (publish/ack/release) or the receive timeout.
///
/// ## Heartbeats
/// rabbitmq-c sends and checks heartbeats only inside its own calls. So that a connection
/// survives a handler that runs longer than the heartbeat, each instance runs one small
/// keeper thread that, while no call of the instance is in progress, sends a heartbeat
/// frame every `heartbeat / 2`. It never reads from the socket and calls no user code.
/// `heartbeat=0` turns heartbeats (and the thread) off.
///
/// ## TLS
/// `amqps://` uses rabbitmq-c's OpenSSL socket: the server's chain is verified against
/// `tls_ca_file` (else the system trust store) and its name against `tls_server_name`
/// (else the URL host); a client certificate (`tls_cert_file` + `tls_key_file`) serves
/// servers that require one. The same `tls_*` keys as `rediss://`; refused on `amqp://`.
///
/// ## URL
/// `amqp[s]://[user[:password]@]host[:port][/vhost]?key=value&…`; the vhost is the
/// percent-decoded path without its first `/` (`/%2F` is the vhost `/`; no path or `/` alone
/// also mean `/`); user and password default to `guest`. Keys = the `options` fields
/// (durations `250ms`/`5s`/`1m`, bare = ms); unknown keys are transport_errc::invalid_argument.
///
/// @note Thread-safety: an instance is NOT thread-safe (transport.hpp contract). It owns one
/// AMQP connection (one publish channel, one channel per consumed queue) used by one thread
/// at a time, plus its heartbeat keeper thread, which it synchronises with internally.

#include <babelqueue/export/rabbitmq.hpp>
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
namespace rabbitmq {

/// The granularity of a delayed publish: a delay is rounded UP to whole seconds.
inline constexpr std::chrono::milliseconds publish_delay_granularity{1000};
/// The longest delayed publish (see "Delayed publish"): 24 days.
inline constexpr std::chrono::milliseconds max_publish_delay{std::chrono::hours(24 * 24)};
/// The shortest window a wait queue takes publishes for (its window is max(TTL, this)).
inline constexpr std::chrono::milliseconds wait_queue_min_window{std::chrono::hours(1)};
/// How long a wait queue outlives the due time of its last possible message
/// (x-expires = window + TTL + this).
inline constexpr std::chrono::milliseconds wait_queue_grace{std::chrono::minutes(30)};
/// The prefix of every wait queue's name.
inline constexpr std::string_view wait_queue_prefix = "bq.delay.";

/// The wait queue a delayed publish of `delay` (> 0; rounded up to whole seconds) to `queue`
/// at wall time `at` goes through: `bq.delay.<ms>ms.<window start, Unix s>.<queue>`, or,
/// over 255 bytes, a cut prefix of `queue` and `~<16 hex digits of SHA-256(queue)>`. For
/// operators (policies, monitoring) and tests.
BABELQUEUE_RABBITMQ_EXPORT std::string wait_queue_name(
    std::string_view queue, std::chrono::milliseconds delay,
    std::chrono::system_clock::time_point at = std::chrono::system_clock::now());

/// Options of a rabbitmq transport; each field but host/port/vhost/username/password/tls is
/// the URL query key of the same name. Every timeout is finite.
struct BABELQUEUE_RABBITMQ_EXPORT options {
  std::string host = "127.0.0.1";
  std::uint16_t port = 5672;  ///< 5671 is the default for amqps://
  std::string vhost = "/";
  std::string username = "guest";
  std::string password = "guest";

  /// Bound of one TCP connect plus the AMQP handshake (and TLS handshake).
  std::chrono::milliseconds connect_timeout{std::chrono::seconds(5)};
  /// Bound of publish (until confirmed), publish_batch (per window), ack, release and each
  /// declare, including reconnect attempts.
  std::chrono::milliseconds operation_timeout{std::chrono::seconds(10)};
  /// Heartbeat interval asked of the broker (whole seconds; 0 = off).
  std::chrono::seconds heartbeat{std::chrono::seconds(30)};
  /// `basic.qos` prefetch of each consumer (1..65535).
  std::int64_t prefetch = 64;
  /// Unconfirmed publishes publish_batch() keeps in flight (1..65535).
  std::int64_t confirm_window = 256;
  /// Largest AMQP frame asked of the broker (4096..1048576 bytes; bodies are split).
  std::int64_t frame_max = 131072;
  /// Declare each queue (durable, no arguments) before its first use. Turn off when the
  /// broker's permissions forbid `queue.declare` and the queues are provisioned.
  bool declare_queues = true;
  /// Reconnect backoff: first pause, and the cap it doubles up to.
  std::chrono::milliseconds reconnect_backoff_min{100};
  std::chrono::milliseconds reconnect_backoff_max{std::chrono::seconds(5)};

  /// TLS (set by the `amqps://` scheme, not a query key). See "TLS" above.
  bool tls = false;
  std::string tls_ca_file;      ///< PEM CA bundle to trust; empty = the system trust store
  std::string tls_cert_file;    ///< client certificate chain (PEM); needs tls_key_file
  std::string tls_key_file;     ///< the client certificate's private key (PEM)
  std::string tls_server_name;  ///< the name checked in the certificate; empty = host
  /// Verify the server's certificate and name. Off accepts any certificate (a test-only
  /// setting: the connection is then encrypted but not authenticated).
  bool tls_verify = true;
};

/// Reads options from an `amqp://` or `amqps://` URL. transport_errc::invalid_argument on
/// unknown keys, malformed values, or `tls_*` keys on `amqp://`.
BABELQUEUE_RABBITMQ_EXPORT result<options> options_from_url(const broker_url& url);

/// Counters of one instance (for tests, benchmarks and operators).
struct BABELQUEUE_RABBITMQ_EXPORT transport_stats {
  std::int64_t connects = 0;         ///< successful connects, the first included
  std::int64_t published = 0;        ///< messages confirmed by the broker
  std::int64_t delivered = 0;        ///< deliveries received from the broker
  std::int64_t heartbeats_sent = 0;  ///< heartbeat frames sent by the keeper thread
};

/// The `amqp` transport. See the file comment for guarantees and thread-safety.
class BABELQUEUE_RABBITMQ_EXPORT rabbitmq_transport final : public transport {
 public:
  /// Checks the options (the same rules and messages as options_from_url()), then connects
  /// once (transport_errc::unavailable when the broker cannot be reached within
  /// connect_timeout, transport_errc::permission for refused credentials or vhost).
  static result<std::unique_ptr<rabbitmq_transport>> open(options opts);

  ~rabbitmq_transport() override;

  /// Publishes and waits for the broker's confirm (see "Publisher confirms").
  result<void> publish(std::string_view queue, std::string_view body,
                       const headers& hdrs = {}) override;
  /// Pipelines up to confirm_window publishes, then waits for their confirms.
  result<void> publish_batch(std::string_view queue,
                             std::span<const outgoing_message> messages) override;
  /// The next delivery of `queue` (starting its consumer on first use), waiting at most
  /// `timeout` (0 = only what already arrived).
  result<std::optional<received_message>> receive(std::string_view queue,
                                                  std::chrono::milliseconds timeout) override;
  /// `basic.ack` of the delivery. transport_errc::invalid_argument when it was not received
  /// by this instance or was already settled; transport_errc::unavailable when its
  /// connection was lost since (the broker redelivers it).
  result<void> ack(const received_message& message) override;
  /// delay 0: republish unchanged (confirmed) to the tail, then ack. delay > 0:
  /// transport_errc::not_supported.
  result<void> release(const received_message& message,
                       std::chrono::milliseconds delay = {}) override;
  /// Closes the channels and the connection (the broker requeues unacked deliveries).
  result<void> close(std::chrono::steady_clock::time_point deadline) override;
  /// Cannot browse: not_supported (closed after close()).
  result<std::vector<peeked_message>> peek(std::string_view queue, std::size_t offset,
                                           std::size_t limit) override;

  /// max(body attempts, x-attempts).
  std::int64_t reconcile_attempts(std::int64_t body_attempts,
                                  const received_message& message) const override;

  std::string_view scheme() const noexcept override { return opts_.tls ? "amqps" : "amqp"; }
  std::vector<std::string> security_warnings() const override;
  transport_capabilities capabilities() const noexcept override {
    return {.native_delay = false,
            .headers = true,
            .delivery_count = true,
            .ordered = true,
            .max_header_name_bytes = 255,
            .delayed_publish = true,
            .max_delay = max_publish_delay,
            .delay_granularity = publish_delay_granularity};
  }

  const options& config() const noexcept { return opts_; }
  transport_stats stats() const noexcept;

 protected:
  /// A confirmed publish to the wait queue of `delay` (see "Delayed publish").
  result<void> publish_later(std::string_view queue, std::string_view body, const headers& hdrs,
                             std::chrono::milliseconds delay) override;

 private:
  struct impl;
  explicit rabbitmq_transport(options opts);
  options opts_;
  std::unique_ptr<impl> impl_;
};

/// Registers the `amqp` and `amqps` schemes with the URL factory (url.hpp). Idempotent.
BABELQUEUE_RABBITMQ_EXPORT void register_transport();

}  // namespace rabbitmq
}  // namespace v1
}  // namespace babelqueue
