#pragma once
// The producer of a kafka transport: records with the bq- projection, and publish calls
// that return only once librdkafka's delivery report arrived (the broker acknowledged the
// record at the configured acks, or it failed).
//
// Thread-safety: one thread at a time (the transport's). Delivery reports are served by
// rd_kafka_poll() on that thread.
#include "kafka/client.hpp"

#include <babelqueue/bindings/kafka.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace babelqueue::inline v1::kafka::detail {

/// One record to produce.
struct record {
  std::string_view topic;
  std::string_view value;
  /// Empty = no key (the null-key partitioner).
  std::optional<std::string_view> key;
  /// The headers, in order, exactly as written (see headers_for()).
  std::vector<bindings::kafka::record_header> headers;
  /// CreateTime in ms; 0 = now (librdkafka's clock).
  std::int64_t timestamp_ms = 0;
};

/// The record headers and timestamp of a publish of `value` with out-of-band headers `oob`:
/// the projection of bindings/kafka.hpp, stamped `meta.created_at` — or now for a
/// retry-tier record (it carries `bq-delay`; the re-injector waits from its timestamp).
record record_for(std::string_view topic, std::string_view value, const headers& oob);

class producer {
 public:
  static result<std::unique_ptr<producer>> open(const options& o);
  ~producer();
  producer(const producer&) = delete;
  producer& operator=(const producer&) = delete;

  /// Produces the records in order and waits for every delivery report (or the deadline).
  /// Returns the first failure; on failure a prefix (or, for a timeout, an unknown subset)
  /// of the records may have been written.
  result<void> produce(std::span<const record> records, std::chrono::steady_clock::time_point deadline);

  /// Waits for everything queued to be delivered (close).
  result<void> flush(std::chrono::steady_clock::time_point deadline);

  /// The cluster's metadata, within `timeout` (open's reachability probe).
  result<void> probe(std::chrono::milliseconds timeout);

  std::int64_t published() const noexcept { return published_; }
  rd_kafka_t* handle() const noexcept { return rk_.get(); }

 private:
  producer() = default;
  static void on_delivery(rd_kafka_t* rk, const rd_kafka_message_t* m, void* opaque);
  result<void> enqueue(const record& r, std::uint64_t id, std::chrono::steady_clock::time_point deadline);

  struct context : client_context {
    producer* self = nullptr;
  } ctx_;
  handle_ptr rk_;
  // Delivery reports of the records a produce() call waits for, by id (the msg_opaque). A
  // report for an id no longer here (its call timed out) is dropped.
  std::unordered_map<std::uint64_t, rd_kafka_resp_err_t> reports_;
  std::uint64_t next_id_ = 1;
  std::int64_t published_ = 0;
  std::chrono::milliseconds timeout_{};
};

}  // namespace babelqueue::inline v1::kafka::detail
