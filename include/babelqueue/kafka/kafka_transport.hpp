#pragma once
/// @file kafka/kafka_transport.hpp
/// @brief `kafka://` — the Apache Kafka binding (spec "Broker bindings → Apache Kafka",
/// wire-core §9) on librdkafka, with awaited delivery reports, process-then-commit and
/// SDK-owned retry tiers.
///
/// ## Records (interoperable with the Go, Python, PHP, Java, Node and .NET SDKs)
/// Topic = queue name. Value = the envelope bytes, unchanged. Timestamp (CreateTime) =
/// `meta.created_at`. Headers = the `bq-` projection of bindings/kafka.hpp plus out-of-band
/// headers (`traceparent`, `bq-replay-bypass`, ...). **No key**: records are spread over the
/// topic's partitions by librdkafka's null-key partitioner, as every peer does, so there is
/// no per-entity ordering. A caller that needs it gives a key through publish_keyed() (same
/// key → same partition → in order).
///
/// ## Publish
/// publish() returns once the broker acknowledged the record at the configured `acks`
/// (librdkafka's delivery report is awaited, bounded by `operation_timeout`, which is also
/// the producer's `message.timeout.ms`). With `acks=all` the producer is idempotent
/// (librdkafka's own retries never duplicate a record). publish_batch() enqueues the whole
/// batch, then awaits every report (linger/batch settings apply).
///
/// ## Consume: process-then-commit
/// receive(topic) starts, on first use, one consumer of the group `group` subscribed to that
/// topic (a new group starts at the earliest offset). `enable.auto.commit` is off: an
/// offset is committed only after its record was settled — acked, or released/retried/
/// dead-lettered with the copy's delivery report received. Commits are batched (every
/// `commit_interval`, or `commit_batch` settled records, whichever first; `commit_interval=0`
/// commits synchronously on every settle) and never pass an unsettled record: per
/// partition, the committed offset is the lowest record still in flight (records may be
/// settled out of order when a caller holds several).
/// A rebalance that takes partitions away commits what is settled on them, then abandons
/// their in-flight records: ack()/release() of such a record fails with
/// transport_errc::unavailable, and the partition's new owner receives it again
/// (at-least-once). `received_message::delivery_count` is the `bq-attempts` header, and
/// reconcile_attempts() returns it when present (authoritative, not a max), else the body's.
/// `received_message::hdrs` holds the record headers except the six contract ones.
///
/// ## Schema-version gate
/// A record whose `bq-schema-version` header is present, not ASCII-blank and not exactly
/// `"1"` is never decoded: receive() sets received_message::refused_schema_version, and the
/// runtime dead-letters its original bytes (D5; routed on
/// `babelqueue:unsupported-schema-version:<value>`).
///
/// ## Retry tiers (`retry_topics=5s,1m,10m`)
/// route_retry() sends the retry copy of a failed record to `<topic>.retry.<n>` (n =
/// min(attempts, tiers − 1) + 1) with `bq-attempts` + 1, `bq-delay` (the tier's delay in
/// ms) and `bq-original-topic`, timestamped now; the runtime commits the original once the
/// copy is acknowledged. Past the runtime's max attempts the copy goes to `<topic>.dlq`
/// with its `dead_letter` block. A kafka::reinjector (reinjector.hpp; `babelqueue kafka
/// reinject`) consumes the tiers and republishes each record to its work topic when due.
/// Without tiers a retry republishes to the work topic itself (the Go/Python App).
/// release(delay 0) republishes the same bytes to the tail of the topic, then settles the
/// original; release(delay > 0) goes to the smallest tier whose delay is >= the delay
/// (`bq-delay` = the requested delay); with no tier that large, or no tiers,
/// transport_errc::not_supported — never a silent drop.
///
/// ## Delayed publish (`publish_delayed`; needs retry tiers and a re-injector)
/// Kafka has no delay of its own (spec §6.4). With tiers, publish_delayed(topic, body, hdrs,
/// d) writes the record — the same value and `bq-` projection publish() writes, plus the
/// caller's headers — to the smallest tier `<topic>.retry.<n>` whose delay is >= d, with
/// `bq-delay` = d in ms (decimal; the delay asked for, not the tier's) and
/// `bq-original-topic` = `<topic>`, stamped now (publish() stamps `meta.created_at`; the
/// re-injector counts the delay from the timestamp, so an envelope made earlier must not come
/// due early; the Python SDK 1.24.0 stamps its delayed record with `meta.created_at`). The
/// tier choice and both headers are Python's (`KafkaTransport.publish_delayed`) and, per
/// wire-core §9.3, Java/Node/.NET's. The record reaches `<topic>` only through a
/// re-injector (reinjector.hpp, `babelqueue kafka reinject`, or another SDK's, e.g. Python's
/// RetryReinjector) running for that topic: due at its timestamp + `bq-delay` (ours; Python's
/// waits the tier's delay), never before, and late by up to the time a record ahead of it in
/// the same tier partition still waits (at most the tier's delay − d), plus the re-injector's
/// poll. max_delay = the longest tier: a longer delay is invalid_argument, nothing sent.
/// Without tiers delayed_publish is false and a delay is not_supported (the spec: "raises").
/// A parked record is an ordinary record of the tier topic, committed past only once
/// re-injected: a broker restart keeps it as it keeps any record, and a re-injector that was
/// down re-injects what came due meanwhile as soon as it is back. It can come early only by
/// as much as the producer's clock is behind the re-injector's (CreateTime;
/// `message.timestamp.type=LogAppendTime` on the tier topics removes that).
///
/// ## URL
/// `kafka://host:port[,host:port...]?key=value&…` — the hosts are `bootstrap.servers`. Keys
/// = the `options` fields (durations `250ms`/`5s`/`1m`, bare = ms). Any other librdkafka
/// property passes through as `rdkafka.<property>` (`rdkafka.fetch.wait.max.ms=50`), set on
/// both the producer and the consumers; librdkafka validates it at open, so a typo fails
/// with librdkafka's own message. Unknown keys are transport_errc::invalid_argument.
///
/// ## Logs
/// librdkafka's log lines go to options::log (a log_sink), else its warnings and errors to
/// stderr as `babelqueue <level>: kafka <client> <facility>: <message>` — never to stdout.
///
/// @note Thread-safety: an instance is NOT thread-safe (transport.hpp contract). It owns one
/// producer and one consumer per received topic; librdkafka's own threads call no user
/// code except options::log. Run several instances (the App's workers do) for parallelism:
/// each is a member of the consumer group.

#include <babelqueue/export/kafka.hpp>
#include <babelqueue/result.hpp>
#include <babelqueue/runtime/logging.hpp>
#include <babelqueue/runtime/transport.hpp>
#include <babelqueue/runtime/url.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace babelqueue {
inline namespace v1 {
namespace kafka {

/// Options of a kafka transport; each field but `brokers`, `rdkafka` and `log` is the URL
/// query key of the same name. Every timeout is finite.
struct BABELQUEUE_KAFKA_EXPORT options {
  /// `bootstrap.servers`: `host:port` entries (the URL's host list).
  std::vector<std::string> brokers{"127.0.0.1:9092"};
  /// The consumer group (`group.id`). A new group starts at the earliest offset.
  std::string group = "babelqueue";
  /// `client.id` of the producer and consumers.
  std::string client_id = "babelqueue-cpp";
  /// Producer `acks`: `all` (= `-1`), `1` or `0`. `all` also makes the producer idempotent.
  std::string acks = "all";
  /// Producer `linger.ms`: how long records wait to be batched.
  std::chrono::milliseconds linger{5};
  /// Producer `batch.num.messages`: most records in one batch.
  std::int64_t batch = 10000;
  /// Producer `compression.codec`: none, gzip, snappy, lz4, zstd.
  std::string compression = "none";
  /// `security.protocol`: plaintext, ssl, sasl_plaintext, sasl_ssl.
  std::string security_protocol = "plaintext";
  std::string sasl_mechanism;            ///< `sasl.mechanism` (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512)
  std::string sasl_username;             ///< `sasl.username`
  std::string sasl_password;             ///< `sasl.password` (redacted in logs)
  std::string ssl_ca_location;           ///< `ssl.ca.location` (PEM file)
  std::string ssl_certificate_location;  ///< `ssl.certificate.location` (client cert, PEM)
  std::string ssl_key_location;          ///< `ssl.key.location` (client key, PEM)
  std::string ssl_key_password;          ///< `ssl.key.password`
  /// Retry tiers (URL `retry_topics=5s,1m,10m`), sorted ascending; empty = none.
  std::vector<std::chrono::milliseconds> retry_topics;
  /// Bound of publish (until the delivery report; also `message.timeout.ms`), of a
  /// synchronous commit and of the first metadata probe at open.
  std::chrono::milliseconds operation_timeout{std::chrono::seconds(30)};
  /// Settled offsets are committed at most this long after the first uncommitted settle;
  /// 0 commits synchronously on every settle.
  std::chrono::milliseconds commit_interval{200};
  /// ... or as soon as this many records were settled since the last commit.
  std::int64_t commit_batch = 1000;
  /// Any other librdkafka property (URL keys `rdkafka.<property>`), set on the producer and
  /// the consumers after the fields above (so it can override them).
  std::map<std::string, std::string> rdkafka;
  /// Where librdkafka's log lines go (from librdkafka's threads: must be thread-safe);
  /// empty = its warnings and errors to stderr.
  log_sink log;
};

/// Parses the `retry_topics` value (`5s,1m,10m`; durations as URL options) into delays
/// sorted ascending; each > 0 and distinct. transport_errc::invalid_argument otherwise.
BABELQUEUE_KAFKA_EXPORT result<std::vector<std::chrono::milliseconds>> parse_retry_topics(
    std::string_view text);

/// Reads options from a `kafka://` URL. transport_errc::invalid_argument on unknown keys or
/// malformed values (librdkafka properties are checked at open).
BABELQUEUE_KAFKA_EXPORT result<options> options_from_url(const broker_url& url);

/// Counters of one instance (for tests, benchmarks and operators).
struct BABELQUEUE_KAFKA_EXPORT transport_stats {
  std::int64_t published = 0;   ///< records acknowledged by the broker
  std::int64_t received = 0;    ///< records handed out by receive()
  std::int64_t commits = 0;     ///< offset commits sent
  std::int64_t rebalances = 0;  ///< assignments + revocations seen
  std::int64_t abandoned = 0;   ///< in-flight records given up at a revocation
};

/// The `kafka` transport. See the file comment for guarantees and thread-safety.
class BABELQUEUE_KAFKA_EXPORT kafka_transport final : public transport {
 public:
  /// Checks the options, creates the producer (librdkafka validates every property) and
  /// waits, within operation_timeout, for the cluster's metadata
  /// (transport_errc::unavailable when no broker answers).
  static result<std::unique_ptr<kafka_transport>> open(options opts);

  ~kafka_transport() override;

  result<void> publish(std::string_view topic, std::string_view body,
                       const headers& hdrs = {}) override;
  /// publish() with a record key: records with the same key go to the same partition.
  result<void> publish_keyed(std::string_view topic, std::string_view key, std::string_view body,
                             const headers& hdrs = {});
  result<void> publish_batch(std::string_view topic,
                             std::span<const outgoing_message> messages) override;
  result<std::optional<received_message>> receive(std::string_view topic,
                                                  std::chrono::milliseconds timeout) override;
  result<void> ack(const received_message& message) override;
  result<void> release(const received_message& message,
                       std::chrono::milliseconds delay = {}) override;
  /// Commits what is settled, leaves the groups, flushes the producer; bounded by deadline.
  result<void> close(std::chrono::steady_clock::time_point deadline) override;
  /// Cannot browse: not_supported (closed after close()).
  result<std::vector<peeked_message>> peek(std::string_view queue, std::size_t offset,
                                           std::size_t limit) override;

  /// The `bq-attempts` header when parseable, else the body's count.
  std::int64_t reconcile_attempts(std::int64_t body_attempts,
                                  const received_message& message) const override;
  /// `<topic>.retry.<n>` with `bq-delay`/`bq-original-topic` when tiers are configured.
  retry_route route_retry(const received_message& original,
                          std::int64_t delivered_attempts) const override;

  std::string_view scheme() const noexcept override { return "kafka"; }
  /// native_delay and delayed_publish only with retry tiers; max_delay = the longest tier.
  std::vector<std::string> security_warnings() const override;
  transport_capabilities capabilities() const noexcept override {
    // No .ordered: a null-key record goes to any partition of the topic. No max_body_bytes:
    // the limits are librdkafka's and the broker's `message.max.bytes` (configuration).
    const bool tiers = !opts_.retry_topics.empty();
    return {.native_delay = tiers,
            .headers = true,
            .delivery_count = true,
            .delayed_publish = tiers,
            .max_delay = tiers ? opts_.retry_topics.back() : std::chrono::milliseconds(0)};
  }

  const options& config() const noexcept { return opts_; }
  transport_stats stats() const noexcept;

 protected:
  /// The record parked on the smallest tier >= `delay` (see "Delayed publish");
  /// not_supported without tiers, closed after close().
  result<void> publish_later(std::string_view topic, std::string_view body, const headers& hdrs,
                             std::chrono::milliseconds delay) override;

 private:
  struct impl;
  explicit kafka_transport(options opts);
  options opts_;
  std::unique_ptr<impl> impl_;
};

/// Registers the `kafka` scheme with the URL factory (url.hpp). Idempotent.
BABELQUEUE_KAFKA_EXPORT void register_transport();

}  // namespace kafka
}  // namespace v1
}  // namespace babelqueue
