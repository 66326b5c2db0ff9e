#pragma once
// One consumer-group member of a kafka transport, subscribed to a set of topics (one work
// topic for receive(); the retry tiers for the re-injector): process-then-commit with the
// offset_tracker, batched commits, and rebalance handling (kafka_transport.hpp).
//
// Thread-safety: one thread at a time (the transport's). The rebalance and commit callbacks
// run inside rd_kafka_consumer_poll()/close() on that thread.
#include "kafka/client.hpp"
#include "kafka/fetched_records.hpp"
#include "kafka/offset_tracker.hpp"

#include <babelqueue/runtime/settlement_handle.hpp>
#include <babelqueue/runtime/transport.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace babelqueue::inline v1::kafka::detail {

class consumer;

/// What a received record's handle holds besides its body: where it came from, for its
/// settle, and what a release or a re-injection needs to write it again. Issued through the
/// settlement_owner the consumer was opened with (settlement_handle.hpp), so `source` is
/// trusted only after that owner's claim() passed.
struct record_handle {
  consumer* source = nullptr;          // the consumer that received it
  const std::string* topic = nullptr;  // the consumer's tracker key (lives as long as it)
  offset_tracker* tracker = nullptr;
  offset_tracker::ticket ticket;
  std::int64_t timestamp_ms = -1;  // -1 = none
  /// The first `bq-attempts` header as it was (a release keeps it, even when it is not the
  /// body's count).
  std::optional<std::string> attempts_header;
  /// Every header exactly as it was, in order — kept only by consumers opened with
  /// keep_raw_headers (the re-injector copies records byte for byte).
  std::vector<std::pair<std::string, std::string>> raw_headers;
};

/// Counters a consumer adds to (the transport's stats).
struct consumer_counters {
  std::int64_t received = 0;
  std::int64_t commits = 0;
  std::int64_t rebalances = 0;
  std::int64_t abandoned = 0;
};

/// Records the transport's consumers take from librdkafka per call when several are queued
/// (fetched_records.hpp). Small: a run is handed out within microseconds, and records taken
/// but not handed out are refetched by the next owner after a rebalance.
inline constexpr std::size_t receive_prefetch = 64;

class consumer {
 public:
  /// `prefetch`: most records taken from librdkafka per call; 1 = one
  /// rd_kafka_consumer_poll() per record. A consumer that hold()s partitions (the
  /// re-injector) keeps 1: librdkafka 2.0's batch consume mishandles paused and rewound
  /// partitions (fixed in 2.1.0: "intermittently skipping offsets when pause or resume was
  /// being used").
  /// `handles` issues the handles of the records it receives; it must outlive the consumer.
  static result<std::unique_ptr<consumer>> open(const options& o, std::string group,
                                                std::vector<std::string> topics,
                                                consumer_counters* counters,
                                                const settlement_owner& handles,
                                                bool keep_raw_headers = false,
                                                std::size_t prefetch = 1);
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

  /// Commits what is settled and leaves the group, by `deadline`: past it the commit and
  /// the leave are abandoned (the settled records not committed come again to the
  /// partition's next owner; the group drops this member after its session timeout) and
  /// close() returns `timeout`. Without a deadline: default_close_budget from now.
  result<void> close(std::chrono::steady_clock::time_point deadline);
  result<void> close() { return close(std::chrono::steady_clock::now() + default_close_budget); }
  /// What close() without a deadline (and the destructor) allows: enough for a healthy
  /// broker's commit and LeaveGroup, bounded when it stopped answering.
  static constexpr std::chrono::seconds default_close_budget{10};
  /// Whether any partition is still assigned to this consumer (close() waits for none).
  bool has_assignment();
  /// Whether close() finished leaving the group. When it did not (its deadline passed),
  /// destroying the consumer waits for librdkafka's requests in flight to time out (seen:
  /// 3.4 s with the broker stopped and a 6 s session timeout): destroy it with
  /// destroy_in_background() instead.
  bool left_group() const noexcept { return left_group_; }
  /// Destroys `c` on a thread of its own, after cutting its ties to its transport (log sink,
  /// counters), which may be gone before it is; inline when no thread can be started.
  static void destroy_in_background(std::unique_ptr<consumer> c) noexcept;

 private:
  /// commit(true) that gives up at `deadline` (the commit's result then never awaited).
  result<void> commit_by(std::chrono::steady_clock::time_point deadline);
  consumer() = default;
  static void on_rebalance(rd_kafka_t* rk, rd_kafka_resp_err_t err,
                           rd_kafka_topic_partition_list_t* parts, void* opaque);
  static void on_commit(rd_kafka_t* rk, rd_kafka_resp_err_t err,
                        rd_kafka_topic_partition_list_t* offsets, void* opaque);
  void rebalance(rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t* parts);
  result<void> commit_partitions(const std::string& topic,
                                 const std::vector<std::pair<std::int32_t, std::int64_t>>& offs,
                                 bool sync);
  bool commit_due(std::chrono::steady_clock::time_point now) const;
  /// The next record or event: from the records taken earlier, else a run taken now without
  /// waiting, else one rd_kafka_consumer_poll() waiting up to `wait_ms`. Null when none.
  rd_kafka_message_t* next_message(int wait_ms);
  /// While records of a run are still held: one rd_kafka_consumer_poll(0), so that a
  /// rebalance is served and max.poll.interval.ms reset even when the handler is slow (a
  /// run of 64 records at 30 s each must not keep the member away from the group for 32
  /// min). Its record, if any, is appended to the run.
  void keepalive_poll(std::chrono::steady_clock::time_point now);
  /// Drops the run's records of partitions a rebalance revoked during a librdkafka call.
  void drop_revoked();
  /// A record turned into what receive() returns, tracked for its settle.
  received_message hand_out(message_ptr m);
  /// The tracker of `topic` and its stable name.
  std::pair<const std::string*, offset_tracker*> tracker(const std::string& topic) {
    auto it = trackers_.try_emplace(topic).first;
    return {&it->first, &it->second};
  }

  struct context : client_context {
    consumer* self = nullptr;
  } ctx_;
  handle_ptr rk_;
  rd_kafka_queue_t* queue_ = nullptr;  // the consumer queue (prefetch > 1); freed before rk_
  std::size_t prefetch_ = 1;
  fetched_records fetched_;
  // While fetched_.refill() runs: the partitions a rebalance revoked meanwhile (their records
  // in the run are dropped; see next_message()).
  bool refilling_ = false;
  std::vector<std::pair<std::string, std::int32_t>> revoked_in_refill_;
  std::chrono::steady_clock::time_point last_poll_{};  // of rd_kafka_consumer_poll()
  std::vector<std::string> topics_;
  std::map<std::string, offset_tracker> trackers_;  // by topic
  consumer_counters* counters_ = nullptr;
  const settlement_owner* handles_ = nullptr;
  std::chrono::milliseconds commit_interval_{};
  std::int64_t commit_batch_ = 1;
  std::optional<std::chrono::steady_clock::time_point> first_uncommitted_;
  std::int64_t settled_since_commit_ = 0;
  bool keep_raw_headers_ = false;
  // The topic of the last record (records of one topic come in runs): its handle, name
  // and tracker, so a record costs no name lookup.
  const rd_kafka_topic_t* last_rkt_ = nullptr;
  std::pair<const std::string*, offset_tracker*> last_tracker_{nullptr, nullptr};
  bool closed_ = false;
  bool left_group_ = false;
  bool cooperative_ = false;  // the group's rebalance protocol as last reported (rebalance())
};

}  // namespace babelqueue::inline v1::kafka::detail
