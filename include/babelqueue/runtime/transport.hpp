#pragma once
/// @file transport.hpp
/// @brief The transport seam: the one small interface every broker binding implements.
///
/// A transport moves opaque message bodies (the exact envelope bytes) between the runtime
/// and a broker. It never parses, re-encodes or validates a body: framing that a binding
/// adds on the wire (e.g. the Redis `__bq_frame`, D6) is removed before a body reaches the
/// caller, so `received_message::body` is always the envelope exactly as it was published.
///
/// The seam is shaped for all seven bindings (wire-core §6, wire-brokers §5):
///  - publish returns only once the broker accepted the message (no fire-and-forget);
///  - receive is a pull with a finite timeout (SQS ReceiveMessage, Redis BLMOVE, AMQP credit
///    1, Pulsar WS receive, Kafka poll);
///  - ack settles a success (Redis LREM, SQS DeleteMessage, AMQP accepted, Kafka commit);
///  - release hands the same bytes back to the broker, optionally after a delay (SQS
///    ChangeMessageVisibility, AMQP modified{delivery-failed}, Pulsar nack, sqlite/memory
///    re-enqueue); a binding that cannot delay answers transport_errc::not_supported;
///  - the broker's native delivery counter (SQS ApproximateReceiveCount, ASB DeliveryCount,
///    Pulsar redeliveryCount, Artemis delivery-count, Kafka `bq-attempts`) is surfaced raw in
///    received_message::delivery_count, and reconcile_attempts() — a pure function per
///    binding — combines it with the body's `attempts` as the spec's binding table says.
///
/// @note Thread-safety: a transport INSTANCE is not thread-safe. It is used by one thread at
/// a time: every member function of one instance, including close(), must be called
/// sequentially (the caller serialises; the App creates one instance per worker thread via
/// the URL factory, see url.hpp). Distinct instances — even opened on the same URL and
/// sharing one broker — may be used concurrently from distinct threads. A received_message
/// must be settled (ack or release) through the instance that received it. capabilities(),
/// scheme() and reconcile_attempts() are const and pure, so they may be called from any
/// thread while no other thread mutates the instance. Transports run no callbacks.
///
/// Every blocking call is bounded: receive() by its timeout, close() by its deadline, and
/// publish/ack/release by the per-operation timeouts of the transport's options (finite
/// defaults, set from the URL query string).

#include <babelqueue/export/runtime.hpp>
#include <babelqueue/headers.hpp>
#include <babelqueue/result.hpp>
#include <babelqueue/runtime/error.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace babelqueue {
inline namespace v1 {

/// One message taken from a broker and not yet settled.
struct BABELQUEUE_RUNTIME_EXPORT received_message {
  /// The envelope bytes exactly as published (any binding frame already removed).
  std::string body;
  /// The queue it was received from (as the caller named it in receive()).
  std::string queue;
  /// Out-of-band headers carried with it; empty when the binding carries none.
  headers hdrs;
  /// The broker's native delivery counter, raw, in the broker's own base (see
  /// reconcile_attempts()); nullopt when the broker has none or did not report it.
  std::optional<std::int64_t> delivery_count;
  /// Set by a binding whose header gate refused the message before any decode (Kafka's
  /// `bq-schema-version`, wire-core §9.6): the refused header value. The runtime then never
  /// decodes the body: it takes the poison path (D5) — the original bytes to the
  /// dead-letter queue, unchanged — as for a body whose `schema_version` is not 1.
  std::optional<std::string> refused_schema_version;
  /// Transport-private settlement handle (receipt handle, delivery tag, stored value, row
  /// id...). Opaque to callers; copying a received_message shares it (and whether it is
  /// settled). Transports make and check it only through settlement_owner
  /// (runtime/settlement_handle.hpp): a handle of another instance or type is refused with
  /// transport_errc::invalid_argument before anything behind it is read.
  std::shared_ptr<void> handle;
};

/// One message of a batch publish.
struct BABELQUEUE_RUNTIME_EXPORT outgoing_message {
  std::string body;
  headers hdrs;
};

/// Where the runtime sends the retry copy of a failed message (see transport::route_retry()).
struct BABELQUEUE_RUNTIME_EXPORT retry_route {
  /// The queue (topic) to publish the copy to.
  std::string queue;
  /// Headers added to the copy's out-of-band headers (e.g. Kafka's `bq-delay`).
  headers hdrs;
};

/// One message seen by transport::peek(): a copy, the queue still holds it.
struct BABELQUEUE_RUNTIME_EXPORT peeked_message {
  /// The envelope bytes exactly as stored (any binding frame removed).
  std::string body;
  /// Its out-of-band headers; empty when the binding carries none.
  headers hdrs;
};

/// What a binding can do natively. The runtime consults it; callers may too.
struct BABELQUEUE_RUNTIME_EXPORT transport_capabilities {
  /// release() honours a non-zero delay.
  bool native_delay = false;
  /// publish() carries out-of-band headers and receive() returns them. When false, a
  /// publish with non-empty (sanitised) headers fails with transport_errc::not_supported instead of
  /// silently dropping them.
  bool headers = false;
  /// receive() fills received_message::delivery_count.
  bool delivery_count = false;
  /// peek() lists a queue without taking, settling or reordering anything (memory, sqlite,
  /// redis). Where it is false, operators who list a queue must receive and release, which
  /// on most brokers moves the messages to the back and may bump their delivery counter.
  bool peek = false;
  /// One consumer that releases nothing receives a queue's messages in the order one
  /// publisher published them. False where the broker promises no order: Kafka spreads a
  /// topic over partitions (null key), SQS standard queues, Service Bus queues without
  /// sessions, Pulsar Shared / Key_Shared subscriptions.
  bool ordered = false;
  /// The largest body publish() carries, checked by the binding itself before anything is
  /// sent: one byte more fails with transport_errc::too_large and nothing reaches the broker.
  /// 0 = the binding has no limit of its own (a broker-configured limit, e.g. Kafka's
  /// `message.max.bytes` or Pulsar's `maxMessageSize`, still answers too_large, after the
  /// round trip).
  std::size_t max_body_bytes = 0;
  /// The most messages publish_batch() sends in one broker request (SQS SendMessageBatch: 10,
  /// Pulsar: the producer's batch); longer batches are split. 0 = no such unit (a batch is
  /// sent message by message or as one pipelined stream).
  std::size_t max_batch_messages = 0;
  /// The longest header name the binding carries (an AMQP 0-9-1 field-table key is a short
  /// string: 255; an SQS attribute name: 256). 0 = no limit of the binding's own.
  std::size_t max_header_name_bytes = 0;
  /// publish_delayed() honours a non-zero delay: the message is not delivered before it.
  bool delayed_publish = false;
  /// The longest delay publish_delayed() takes (SQS DelaySeconds: 900 s; Kafka: its longest
  /// retry tier); a longer one is transport_errc::invalid_argument and nothing is sent.
  /// 0 = no limit of the binding's own.
  std::chrono::milliseconds max_delay{0};
  /// The granularity the broker schedules on (SQS, Laravel's `:delayed` set: whole seconds,
  /// rounded up, so never early); 0 = milliseconds.
  std::chrono::milliseconds delay_granularity{0};
};

/// The abstract transport. See the file comment for the thread-safety contract.
class BABELQUEUE_RUNTIME_EXPORT transport {
 public:
  virtual ~transport() = default;
  transport() = default;
  transport(const transport&) = delete;
  transport& operator=(const transport&) = delete;

  /// Publishes one body to `queue`, with optional headers (sanitised; empty headers mean
  /// "publish exactly as without headers"). Returns once the broker accepted the message.
  /// Errors are transport_errc codes (docs/errors.md has each binding's mapping):
  /// unavailable (connection failed), timeout, refused, permission, not_found, too_large,
  /// closed, not_supported (headers given but capabilities().headers is false),
  /// invalid_argument (e.g. an empty queue name).
  virtual result<void> publish(std::string_view queue, std::string_view body,
                               const headers& hdrs = {}) = 0;

  /// Publishes several bodies to `queue`, in order. Bindings override it to pipeline or
  /// batch; the default loops over publish(). Not atomic: on error, a prefix of the batch
  /// may have been accepted (the caller may resend — at-least-once).
  virtual result<void> publish_batch(std::string_view queue,
                                     std::span<const outgoing_message> messages) {
    for (const auto& m : messages) {
      if (auto r = publish(queue, m.body, m.hdrs); !r) return r;
    }
    return {};
  }

  /// Publishes as publish() does, deliverable no earlier than `delay` from now (0 = publish()).
  /// The broker's own delay where it has one (SQS DelaySeconds, Service Bus
  /// ScheduledEnqueueTime, Pulsar deliverAt, Artemis x-opt-delivery-time, Kafka's matching
  /// retry tier); this SDK's documented extension where it has none (Redis owned layout,
  /// RabbitMQ wait queues, sqlite, memory: docs/delays.md). Once due, the message is on the
  /// queue exactly as publish() would have put it. Checked here, the same on every binding,
  /// before anything is sent: a negative delay or one over capabilities().max_delay is
  /// transport_errc::invalid_argument; a delay on a binding without
  /// capabilities().delayed_publish is transport_errc::not_supported; after close(),
  /// transport_errc::closed (as publish()).
  result<void> publish_delayed(std::string_view queue, std::string_view body, const headers& hdrs,
                               std::chrono::milliseconds delay);

  /// publish_batch() with a delay: every message of the batch deliverable no earlier than
  /// `delay` from now (0 = publish_batch()). The same checks as publish_delayed(), once for the
  /// batch and before anything is sent. Bindings whose broker takes a delay per batch entry
  /// send one request per chunk (SQS SendMessageBatch with DelaySeconds, Pulsar's producer
  /// batch with deliverAt); the others publish the messages one by one as publish_delayed()
  /// does. Not atomic, as publish_batch(): on error, a prefix may have been accepted.
  result<void> publish_batch_delayed(std::string_view queue,
                                     std::span<const outgoing_message> messages,
                                     std::chrono::milliseconds delay);

  /// Takes the next message from `queue`, waiting at most `timeout` (0 = do not wait;
  /// bindings may round up to their broker's granularity, e.g. whole seconds, but never
  /// wait unboundedly). nullopt when nothing arrived in time. The message stays owned by
  /// this consumer until ack()/release() (or until the broker's own visibility/lock timeout,
  /// where it has one, returns it to the queue — at-least-once).
  virtual result<std::optional<received_message>> receive(std::string_view queue,
                                                          std::chrono::milliseconds timeout) = 0;

  /// Settles a message as done: the broker forgets it. transport_errc::invalid_argument when the
  /// message was not received by this instance or was already settled.
  virtual result<void> ack(const received_message& message) = 0;

  /// Returns a message to its queue unchanged (same bytes, same headers), visible again
  /// after `delay` (0 = now). Whether the broker's delivery counter grows is binding-specific.
  /// transport_errc::not_supported when `delay` > 0 and capabilities().native_delay is false.
  virtual result<void> release(const received_message& message,
                               std::chrono::milliseconds delay = {}) = 0;

  /// Stops the transport: flushes what the binding buffers, gives back unsettled messages
  /// where the broker allows it, closes connections. Does not wait past `deadline`. After
  /// close, every other call fails with transport_errc::closed; close() again is a no-op. The
  /// destructor closes without waiting.
  virtual result<void> close(std::chrono::steady_clock::time_point deadline) = 0;

  /// The `attempts` the runtime should use for a received message (spec "Broker bindings",
  /// wire-brokers §5). Pure: depends only on its arguments and the binding. The default
  /// (memory, sqlite, redis, RabbitMQ: no native counter) returns `body_attempts`.
  /// Examples: SQS max(body, n-1) when n > 1; ASB max(body, DC-1); Pulsar/Artemis
  /// max(body, n); Kafka the `bq-attempts` header when parseable, else the body.
  virtual std::int64_t reconcile_attempts(std::int64_t body_attempts,
                                          const received_message& message) const {
    (void)message;
    return body_attempts;
  }

  /// Where the retry copy of `original` (a failed message delivered with
  /// `delivered_attempts`; the copy carries attempts + 1) is published. The default is the
  /// queue it came from, with no extra headers (the Go/Python App). Kafka with retry tiers
  /// answers `<topic>.retry.<n>` with `bq-delay` and `bq-original-topic` (spec §6.4). Pure.
  virtual retry_route route_retry(const received_message& original,
                                  std::int64_t delivered_attempts) const {
    (void)delivered_attempts;
    return {original.queue, {}};
  }

  /// Copies of up to `limit` messages that are ready in `queue`, oldest (next to be
  /// received) first, skipping the first `offset` of them; the queue is left exactly as it
  /// was (nothing is reserved, moved or counted as a delivery). Messages reserved by a
  /// consumer or delayed are not listed. The default answers transport_errc::not_supported
  /// (capabilities().peek is false): a broker that cannot browse. Bindings that cannot browse
  /// override it with cannot_peek(), so that after close() it is transport_errc::closed too.
  virtual result<std::vector<peeked_message>> peek(std::string_view queue, std::size_t offset,
                                                   std::size_t limit) {
    (void)queue;
    (void)offset;
    (void)limit;
    return cannot_peek(false);
  }
  /// The URL scheme this instance was opened with (`memory`, `sqlite`, `redis`, ...).
  virtual std::string_view scheme() const noexcept = 0;

  /// What this binding supports natively.
  virtual transport_capabilities capabilities() const noexcept = 0;

  /// Settings of this instance that weaken its security, one sentence each, never a
  /// secret: certificate checks turned off (`tls_verify=false`), a credential (password,
  /// token, SAS key) sent without TLS to another machine. The app logs each at `warn` once,
  /// when it opens its first transport; the CLI prints them on stderr. Default: none.
  virtual std::vector<std::string> security_warnings() const { return {}; }

 protected:
  /// publish_delayed() once the seam has checked `delay` (> 0, within max_delay, and the
  /// binding declared delayed_publish). The default answers transport_errc::not_supported.
  virtual result<void> publish_later(std::string_view queue, std::string_view body,
                                     const headers& hdrs, std::chrono::milliseconds delay);

  /// publish_batch_delayed() once the seam has checked `delay` as publish_later()'s. The
  /// default calls publish_later() for each message in order and stops at the first error.
  virtual result<void> publish_batch_later(std::string_view queue,
                                           std::span<const outgoing_message> messages,
                                           std::chrono::milliseconds delay);

  /// The first failure of a publish_each()-style result list, its message prefixed with the
  /// message's position ("message 3 of 10: ..."); success when every message was accepted.
  static result<void> first_failure(std::span<const result<void>> results);

  /// peek() of a binding that cannot browse: transport_errc::closed once `closed` (as every
  /// call after close()), else transport_errc::not_supported.
  result<std::vector<peeked_message>> cannot_peek(bool closed) const {
    if (closed) return fail(transport_errc::closed, std::string(scheme()) + " transport is closed");
    return fail(
        transport_errc::not_supported,
        std::string(scheme()) + ": this transport cannot list a queue without taking messages");
  }
};

}  // namespace v1
}  // namespace babelqueue
