#pragma once
// The producer of a kafka transport: records with the bq- projection, and publish calls
// that return only once librdkafka's delivery report arrived (the broker acknowledged the
// record at the configured acks, or it failed).
//
// Per record it does no more than it must: the projection is written straight into
// librdkafka's header list (bindings::kafka::project_each), the topic handle is cached, and
// delivery reports land in a flat array of the call's records (a report that arrives after
// its call gave up falls outside it and is dropped).
//
// Thread-safety: one thread at a time (the transport's). Delivery reports are served by
// rd_kafka_flush()/rd_kafka_poll() on that thread.
#include "kafka/client.hpp"

#include <babelqueue/bindings/kafka.hpp>
#include <babelqueue/runtime/transport.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace babelqueue::inline v1::kafka::detail {

/// One record with its headers given exactly (a release or a re-injection copies a
/// received record's headers).
struct record {
  std::string_view topic;
  std::string_view value;
  std::vector<bindings::kafka::record_header> headers;
  /// CreateTime in ms; 0 = now (librdkafka's clock).
  std::int64_t timestamp_ms = 0;
};

class producer {
 public:
  static result<std::unique_ptr<producer>> open(const options& o);
  ~producer();
  producer(const producer&) = delete;
  producer& operator=(const producer&) = delete;

  /// Publishes `messages` to `topic`, each with the bq- projection of its body plus its
  /// out-of-band headers, CreateTime = `meta.created_at` (now for a retry-tier record: it
  /// carries `bq-delay`, and the re-injector waits from its timestamp), and `key` when
  /// given; waits for every delivery report (or the deadline). Returns the first failure; on
  /// failure a prefix (or, for a timeout, an unknown subset) may have been written.
  result<void> publish(std::string_view topic, std::span<const outgoing_message> messages,
                       std::optional<std::string_view> key,
                       std::chrono::steady_clock::time_point deadline);
  /// The same for one body (no copy into an outgoing_message).
  result<void> publish(std::string_view topic, std::string_view body, const headers& oob,
                       std::optional<std::string_view> key,
                       std::chrono::steady_clock::time_point deadline);
  /// Produces records with their headers as given; waits for the reports.
  result<void> produce(std::span<const record> records,
                       std::chrono::steady_clock::time_point deadline);

  /// Waits for everything queued to be delivered (close).
  result<void> flush(std::chrono::steady_clock::time_point deadline);

  /// The cluster's metadata, within `timeout` (open's reachability probe).
  result<void> probe(std::chrono::milliseconds timeout);

  std::int64_t published() const noexcept { return published_; }
  rd_kafka_t* handle() const noexcept { return rk_.get(); }

 private:
  producer() = default;
  static void on_delivery(rd_kafka_t* rk, const rd_kafka_message_t* m, void* opaque);
  rd_kafka_topic_t* topic_handle(std::string_view topic);
  /// Enqueues one record (retrying a full queue until the deadline); slot = its report index.
  result<void> enqueue(rd_kafka_topic_t* rkt, std::string_view topic, std::string_view value,
                       std::optional<std::string_view> key, rd_kafka_headers_t* hdrs,
                       std::int64_t timestamp_ms, std::size_t slot,
                       std::chrono::steady_clock::time_point deadline);
  /// Enqueues `n` records built by `make(i, rkt) -> result<void>` and awaits their reports.
  template <class Make>
  result<void> send(std::string_view topic_for_errors, std::size_t n, Make&& make,
                    std::chrono::steady_clock::time_point deadline);

  struct context : client_context {
    producer* self = nullptr;
  } ctx_;
  handle_ptr rk_;
  std::map<std::string, rd_kafka_topic_t*, std::less<>> topics_;
  // The delivery reports of the current call: slot i has id base_ + i (the msg_opaque).
  std::vector<rd_kafka_resp_err_t> slots_;
  std::uint64_t base_ = 1;
  std::int64_t published_ = 0;
  std::chrono::milliseconds timeout_{};
};

}  // namespace babelqueue::inline v1::kafka::detail
