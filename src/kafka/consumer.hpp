#pragma once
// One consumer-group member of a kafka transport, subscribed to a set of topics (one work
// topic for receive(); the retry tiers for the re-injector): process-then-commit with the
// offset_tracker, batched commits, and rebalance handling (kafka_transport.hpp).
//
// Thread-safety: one thread at a time (the transport's). The rebalance and commit callbacks
// run inside rd_kafka_consumer_poll()/close() on that thread.
#include "kafka/client.hpp"
#include "kafka/offset_tracker.hpp"

#include <babelqueue/runtime/transport.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace babelqueue::inline v1::kafka::detail {

/// What a received record carries besides its body: where it came from, for its settle,
/// and its headers exactly as they were (a release republishes them unchanged).
struct record_handle {
  const void* owner = nullptr;  // the consumer that received it
  std::string topic;
  offset_tracker::ticket ticket;
  std::int64_t timestamp_ms = -1;  // -1 = none
  std::vector<std::pair<std::string, std::string>> raw_headers;
};

/// Counters a consumer adds to (the transport's stats).
struct consumer_counters {
  std::int64_t received = 0;
  std::int64_t commits = 0;
  std::int64_t rebalances = 0;
  std::int64_t abandoned = 0;
};

class consumer {
 public:
  static result<std::unique_ptr<consumer>> open(const options& o, std::string group,
                                                std::vector<std::string> topics,
                                                consumer_counters* counters);
  ~consumer();
  consumer(const consumer&) = delete;
  consumer& operator=(const consumer&) = delete;

  /// The next record, waiting at most `timeout`; nullopt when none arrived. Commits what is
  /// due while it waits.
  result<std::optional<received_message>> receive(std::chrono::milliseconds timeout);

  /// The record was handled (acked, or its copy acknowledged): its offset may be committed.
  /// transport_errc::unavailable when its partition was revoked since it was received.
  result<void> settle(const record_handle& h);

  /// Gives a record back without settling it: its partition is paused and rewound to it,
  /// so it is received again after resume() (the re-injector's wait).
  result<void> hold(const record_handle& h);
  /// Resumes a partition paused by hold().
  void resume(const std::string& topic, std::int32_t partition);

  /// Commits every settled offset now (synchronously when `sync`).
  result<void> commit(bool sync);

  /// Commits what is settled and leaves the group (bounded by librdkafka's close).
  result<void> close();

  bool owns(const record_handle& h) const noexcept { return h.owner == this; }

 private:
  consumer() = default;
  static void on_rebalance(rd_kafka_t* rk, rd_kafka_resp_err_t err,
                           rd_kafka_topic_partition_list_t* parts, void* opaque);
  static void on_commit(rd_kafka_t* rk, rd_kafka_resp_err_t err,
                        rd_kafka_topic_partition_list_t* offsets, void* opaque);
  void rebalance(rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t* parts);
  result<void> commit_partitions(const std::string& topic,
                                 const std::vector<std::pair<std::int32_t, std::int64_t>>& offs,
                                 bool sync);
  bool commit_due() const;
  offset_tracker& tracker(const std::string& topic) { return trackers_[topic]; }

  struct context : client_context {
    consumer* self = nullptr;
  } ctx_;
  handle_ptr rk_;
  std::vector<std::string> topics_;
  std::map<std::string, offset_tracker> trackers_;  // by topic
  consumer_counters* counters_ = nullptr;
  std::chrono::milliseconds commit_interval_{};
  std::int64_t commit_batch_ = 1;
  std::optional<std::chrono::steady_clock::time_point> first_uncommitted_;
  bool closed_ = false;
};

}  // namespace babelqueue::inline v1::kafka::detail
