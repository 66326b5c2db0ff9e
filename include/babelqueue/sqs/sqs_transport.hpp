#pragma once
/// @file sqs/sqs_transport.hpp
/// @brief `sqs://<region>` — Amazon SQS over HTTPS (spec "Broker bindings → Amazon SQS",
/// wire-brokers §1): the AWS JSON 1.0 protocol on libcurl, every request signed with SigV4
/// by this project's own signer.
///
/// ## Projection
/// `MessageBody` is the envelope, byte-identical. `MessageAttributes`: `bq-job`,
/// `bq-trace-id`, `bq-message-id`, `bq-source-lang` (String), `bq-schema-version`,
/// `bq-created-at` (Number), then out-of-band headers (`traceparent`, `--header k=v`, ...)
/// as String attributes, up to SQS's 10 (bindings/sqs.hpp). FIFO queues (a `.fifo` name, or
/// `fifo=true`) get `MessageGroupId` = `group_id` or the queue name and
/// `MessageDeduplicationId` = `meta.id` (left out with `content_based_dedup=true`).
///
/// ## Publish
/// publish() returns once SQS answered SendMessage (its MD5OfMessageBody is checked).
/// publish_batch() sends SendMessageBatch calls of up to 10 entries and `max_message_bytes`
/// in total; entries SQS failed through no fault of the sender are sent again (within
/// `operation_timeout`), and the first entry that still failed is the error, naming its
/// index. publish_each() returns one result per message instead. A body (plus attributes)
/// larger than `max_message_bytes`, or with characters SQS does not accept (invalid UTF-8,
/// control characters other than TAB/LF/CR), fails before any call: too_large /
/// invalid_argument.
///
/// ## Delayed publish (DelaySeconds)
/// publish_delayed() (transport.hpp) is one SendMessage with `DelaySeconds` = the delay in
/// whole seconds, rounded UP (1500 ms → 2 s: never early; capabilities().delay_granularity =
/// 1 s); publish_batch_delayed() and publish_each(queue, messages, delay) put the same
/// `DelaySeconds` on every SendMessageBatch entry. Nothing else changes on the wire: no message
/// attribute mirrors the delay (the Python peer 1.24 sends `DelaySeconds` alone, and a mirror would
/// take one of SQS's 10 attribute slots from the headers). SQS holds the message (it counts in
/// ApproximateNumberOfMessagesDelayed); nothing is kept here.
///  - Cap: SQS's own 900 s (capabilities().max_delay). A longer delay is refused by the seam
///    with transport_errc::invalid_argument and nothing is sent — a typed error rather than a
///    re-park (receive at 900 s and send again with the rest): a re-park needs a running
///    consumer of this SDK to carry the delay, turns one message into several (new
///    MessageId, ApproximateReceiveCount restarting) and shows a message that is not due yet
///    to every other SDK reading the queue. The Python peer refuses over 900 s too. Longer
///    waits belong in a scheduler, or in release() (ChangeMessageVisibility, up to 12 h).
///  - FIFO queues (`fifo=true`, or any `.fifo` name): SQS (and ElasticMQ) refuse a
///    per-message `DelaySeconds` there (InvalidParameterValue: only the queue's own delay
///    applies), and dropping it would deliver early, so a delay on a FIFO queue is
///    transport_errc::not_supported before anything is sent (as the Python peer raises);
///    with `fifo=true` capabilities().delayed_publish is false.
///  - A restart of SQS keeps delayed messages (AWS stores them); ElasticMQ without persistence
///    loses every message on restart, delayed or not.
///
/// ## Consume and settlement
/// receive() long-polls ReceiveMessage for up to `batch` messages (WaitTimeSeconds =
/// the receive timeout rounded up to whole seconds, at most `wait_time`) and hands them out
/// one per call, so ten messages cost one HTTP round trip. Messages waiting in that local
/// buffer are already invisible to other consumers: keep `batch` × handling time well below
/// the queue's visibility timeout (or set `visibility`). ack() = DeleteMessage; a failed
/// delete is its own error (the message is NOT released: SQS redelivers it after its
/// visibility timeout); ack_batch() deletes up to ten per call (DeleteMessageBatch), and the
/// option `ack_batch=true` defers every ack() into such batches (see options::ack_batch).
/// release(delay) = ChangeMessageVisibility(delay rounded up to whole
/// seconds, at most 43200): the same message, its ApproximateReceiveCount grows; never a
/// delete. delivery_count = ApproximateReceiveCount (1-based) and reconcile_attempts() =
/// max(body, count − 1) (conformance `sqs`). A message whose `bq-schema-version` attribute
/// is present, not blank and not "1" is handed out with refused_schema_version set and is
/// never decoded (the App dead-letters its bytes unchanged). close() makes buffered,
/// never-handed-out messages visible again at once.
///
/// ## Queue names and the dead-letter queue
/// Queue URLs are resolved once per name (GetQueueUrl, cached) or built from `prefix`
/// without a call. Requests always go to `endpoint`; the QueueUrl is only an identifier.
/// The App's dead-letter queue `<queue>.dlq` is not a legal SQS name, so a name ending in
/// `.dlq` is mapped to `<queue><dlq_suffix>` (default `-dlq`, `-dlq.fifo` for FIFO — what
/// the Python SDK 1.24 uses) or to the single queue `dlq`. A mixed fleet must point every
/// SDK at the same DLQ name (docs/transports/sqs.md). With `create_queues=true` a missing
/// queue is created on first use (FIFO by its name); otherwise it is transport_errc::not_found.
///
/// ## Credentials
/// As the AWS SDKs find them without a network call: AWS_ACCESS_KEY_ID /
/// AWS_SECRET_ACCESS_KEY (/ AWS_SESSION_TOKEN), else the shared credentials file
/// (AWS_SHARED_CREDENTIALS_FILE or ~/.aws/credentials), profile `profile` or AWS_PROFILE or
/// `default`. Read once by open(); never logged. None found: transport_errc::permission.
///
/// ## Failures
/// HTTP failures and SQS errors map onto transport_errc (docs/errors.md): connection
/// problems, throttling and 5xx are unavailable (retried `retries` times within the
/// call's timeout first), an exceeded deadline is timeout, a missing queue not_found,
/// refused credentials or signatures permission, oversized messages too_large, caller
/// mistakes invalid_argument. The native SQS code and text are in error_info::native.
///
/// ## URL
/// `sqs://<region>?key=value&…`; the region may be left empty (`sqs://?…`) to take
/// AWS_REGION / AWS_DEFAULT_REGION. Keys = the `options` fields. Unknown keys and bad values
/// fail with condition::invalid_argument (runtime_errc for an unknown key, transport_errc for
/// a bad value), naming the key.
///
/// @note Thread-safety: an instance is NOT thread-safe (transport.hpp contract); use one
/// instance per thread (the App does). Distinct instances share nothing.

#include <babelqueue/export/sqs.hpp>
#include <babelqueue/result.hpp>
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
namespace sqs {

/// Options of an sqs transport; each field is the URL query key of the same name, except
/// `region` (the URL's host).
struct BABELQUEUE_SQS_EXPORT options {
  std::string region;
  /// Where every request goes; empty = `https://sqs.<region>.amazonaws.com`.
  std::string endpoint;
  /// Queue URL prefix (`https://sqs.<region>.amazonaws.com/<account>`): the URL of queue Q is
  /// `<prefix>/Q`, with no GetQueueUrl call. Empty = GetQueueUrl once per queue.
  std::string prefix;
  /// Treat every queue as FIFO (a `.fifo` name always is).
  bool fifo = false;
  /// FIFO MessageGroupId; empty = the queue name.
  std::string group_id;
  /// FIFO queues with content-based deduplication: no MessageDeduplicationId is sent.
  bool content_based_dedup = false;
  /// Longest long poll of one ReceiveMessage, in seconds (0..20).
  std::int64_t wait_time = 20;
  /// VisibilityTimeout asked for on receive, in seconds; -1 = the queue's own (0..43200).
  std::int64_t visibility = -1;
  /// Messages asked for per ReceiveMessage (1..10), handed out one per receive().
  std::int64_t batch = 10;
  /// What the contract's `<queue>.dlq` becomes: `<queue><dlq_suffix>` (empty = no mapping).
  std::string dlq_suffix = "-dlq";
  /// A single dead-letter queue for every `<queue>.dlq` (overrides dlq_suffix).
  std::string dlq;
  /// Create a queue that does not exist on first use (CreateQueue; FIFO by name).
  bool create_queues = false;
  /// Deferred, batched deletes: ack() only queues the delete, which goes out in one
  /// DeleteMessageBatch per ten acks, before the next ReceiveMessage, on flush_acks() and on
  /// close(). Cuts a consumer's round trips from ~1.1 to ~0.2 per message; the price is that
  /// ack() (except the tenth) cannot report a failed delete — it is counted in
  /// stats().delete_failures, returned by flush_acks()/close(), and the message comes back
  /// after its visibility timeout (at-least-once, as with a failed ack()).
  bool ack_batch = false;
  /// Largest message accepted (body + attribute names, types and values), in bytes. SQS's
  /// classic limit, which ElasticMQ enforces; AWS raised it to 1 MiB in 2025 (1..1048576).
  std::int64_t max_message_bytes = 262144;
  /// Bound of one TCP (+TLS) connect.
  std::chrono::milliseconds connect_timeout{std::chrono::seconds(5)};
  /// Bound of publish, publish_batch, ack, release and queue-URL lookups (retries included);
  /// receive() waits its own timeout plus this for the HTTP answer.
  std::chrono::milliseconds operation_timeout{std::chrono::seconds(10)};
  /// Retries of a transient failure (connection, throttling, 5xx) within one call (0..10).
  std::int64_t retries = 2;
  /// AWS profile of the shared credentials file; empty = AWS_PROFILE, else `default`.
  std::string profile;
  /// PEM CA bundle for an https endpoint; empty = the system trust store.
  std::string tls_ca_file;
  /// Verify the endpoint's certificate (off only for tests).
  bool tls_verify = true;
};

/// Reads options from an `sqs://` URL (the region from the host or, when empty, from
/// AWS_REGION / AWS_DEFAULT_REGION). condition::invalid_argument on unknown keys,
/// malformed values or no region.
BABELQUEUE_SQS_EXPORT result<options> options_from_url(const broker_url& url);

/// Counters of one instance.
struct BABELQUEUE_SQS_EXPORT transport_stats {
  std::int64_t requests = 0;         ///< HTTP requests sent (retries included)
  std::int64_t connects = 0;         ///< TCP connections opened (keep-alive reuses one)
  std::int64_t published = 0;        ///< messages SQS accepted
  std::int64_t delivered = 0;        ///< messages received from SQS
  std::int64_t delete_failures = 0;  ///< deferred deletes (ack_batch=true) that failed
};

/// The `sqs` transport. See the file comment for guarantees and thread-safety.
class BABELQUEUE_SQS_EXPORT sqs_transport final : public transport {
 public:
  /// Checks the options and resolves credentials (transport_errc::permission when none is
  /// found). Makes no network call: the first operation connects.
  static result<std::unique_ptr<sqs_transport>> open(options opts);

  ~sqs_transport() override;

  result<void> publish(std::string_view queue, std::string_view body,
                       const headers& hdrs = {}) override;
  result<void> publish_batch(std::string_view queue,
                             std::span<const outgoing_message> messages) override;
  /// One result per message (SendMessageBatch, failed entries retried as publish_batch does).
  /// With `delay` > 0, every entry carries its DelaySeconds (see "Delayed publish"); a delay
  /// publish_delayed() would refuse fails every message the same way, nothing sent.
  std::vector<result<void>> publish_each(std::string_view queue,
                                         std::span<const outgoing_message> messages,
                                         std::chrono::milliseconds delay = {});
  result<std::optional<received_message>> receive(std::string_view queue,
                                                  std::chrono::milliseconds timeout) override;
  /// DeleteMessage.
  result<void> ack(const received_message& message) override;
  /// DeleteMessageBatch: acks up to ten messages per call (any number, grouped by queue, in
  /// chunks of ten); one result per message, in order, with ack()'s errors and rules (a
  /// foreign or settled message is invalid_argument; a failed delete is not released).
  std::vector<result<void>> ack_batch(std::span<const received_message> messages);
  /// With ack_batch=true: sends the deferred deletes now. The first failure (counted in
  /// stats().delete_failures) is the error. A no-op otherwise.
  result<void> flush_acks();
  /// ChangeMessageVisibility(delay).
  result<void> release(const received_message& message,
                       std::chrono::milliseconds delay = {}) override;
  result<void> close(std::chrono::steady_clock::time_point deadline) override;
  /// Cannot browse: not_supported (closed after close()).
  result<std::vector<peeked_message>> peek(std::string_view queue, std::size_t offset,
                                           std::size_t limit) override;

  /// max(body attempts, ApproximateReceiveCount − 1).
  std::int64_t reconcile_attempts(std::int64_t body_attempts,
                                  const received_message& message) const override;

  std::string_view scheme() const noexcept override { return "sqs"; }
  std::vector<std::string> security_warnings() const override;
  transport_capabilities capabilities() const noexcept override {
    // Order only on FIFO queues (per message group; the group is the queue name unless
    // `group_id` is set). The size check counts the body and its attributes.
    // Delays: DelaySeconds, whole seconds up to 900, never on a FIFO queue.
    return {.native_delay = true,
            .headers = true,
            .delivery_count = true,
            .ordered = opts_.fifo,
            .max_body_bytes = static_cast<std::size_t>(opts_.max_message_bytes),
            .max_batch_messages = 10,
            .max_header_name_bytes = 256,
            .delayed_publish = !opts_.fifo,
            .max_delay = opts_.fifo ? std::chrono::milliseconds(0) : max_publish_delay,
            .delay_granularity = opts_.fifo ? std::chrono::milliseconds(0)
                                            : std::chrono::milliseconds(std::chrono::seconds(1))};
  }

  /// SQS's longest DelaySeconds.
  static constexpr std::chrono::milliseconds max_publish_delay{std::chrono::seconds(900)};

  /// The queue URL of a logical queue name (after the dead-letter mapping), resolving it
  /// (and creating it with create_queues) when not cached.
  result<std::string> queue_url(std::string_view queue);
  /// The SQS name a logical queue name maps to (`orders.dlq` → `orders-dlq`).
  std::string native_name(std::string_view queue) const;

  const options& config() const noexcept { return opts_; }
  transport_stats stats() const noexcept;

 protected:
  /// SendMessage with DelaySeconds (see "Delayed publish"); not_supported on a FIFO queue.
  result<void> publish_later(std::string_view queue, std::string_view body, const headers& hdrs,
                             std::chrono::milliseconds delay) override;
  /// publish_each() with `delay`: SendMessageBatch entries each carrying the DelaySeconds.
  result<void> publish_batch_later(std::string_view queue,
                                   std::span<const outgoing_message> messages,
                                   std::chrono::milliseconds delay) override;

 private:
  struct impl;
  explicit sqs_transport(options opts);
  /// SendMessage of one message, with `delay_seconds` (0 = none).
  result<void> send_one(std::string_view queue, std::string_view body, const headers& hdrs,
                        int delay_seconds);
  /// The DelaySeconds of `delay` on `queue` (0 for none), or why it cannot be sent.
  result<int> delay_seconds_of(std::string_view queue, std::chrono::milliseconds delay) const;
  options opts_;
  std::unique_ptr<impl> impl_;
};

/// Registers the `sqs` scheme with the URL factory (url.hpp). Idempotent.
BABELQUEUE_SQS_EXPORT void register_transport();

}  // namespace sqs
}  // namespace v1
}  // namespace babelqueue
