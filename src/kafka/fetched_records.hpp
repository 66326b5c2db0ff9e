#pragma once
// Records a consumer took from librdkafka's queue in one call (rd_kafka_consume_batch_queue)
// and has not handed out yet. Taking them in runs instead of one rd_kafka_consumer_poll per
// record saves the per-call cost of librdkafka's poll — its queue lock, condition wait,
// timeout arithmetic and max.poll.interval bookkeeping (three clock reads per call) — which
// is most of what the bare poll loop spends per record (docs/benchmarks-kafka.md).
//
// A record held here was never handed out, so never tracked nor committed: dropping one
// (revoked partition, rewind, close) only means it is fetched again by whoever owns its
// partition next. Dropping one of a partition that stays assigned would NOT be safe (later
// records would commit past it), so drop_partition() is only for a revoked or rewound one.
//
// Thread-safety: none; the consumer's thread owns it.
#include "kafka/client.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace babelqueue::inline v1::kafka::detail {

class fetched_records {
 public:
  fetched_records() = default;
  fetched_records(const fetched_records&) = delete;
  fetched_records& operator=(const fetched_records&) = delete;
  ~fetched_records() { clear(); }

  bool empty() const noexcept { return next_ == records_.size(); }
  /// The next record (ownership passes to the caller); only when !empty().
  rd_kafka_message_t* take() noexcept { return records_[next_++]; }
  /// The next record without taking it; only when !empty().
  const rd_kafka_message_t* peek() const noexcept { return records_[next_]; }

  /// Takes up to `max` records already queued in `queue`, without waiting (rebalance and
  /// commit callbacks due meanwhile run inside); only when empty(). Returns how many.
  std::size_t refill(rd_kafka_queue_t* queue, std::size_t max) {
    records_.resize(max);
    next_ = 0;
    const ssize_t n = rd_kafka_consume_batch_queue(queue, 0, records_.data(), max);
    records_.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    return records_.size();
  }

  /// Adds a record polled while some are still held (it comes after them in queue order).
  void append(rd_kafka_message_t* m) { records_.push_back(m); }

  /// Destroys the records of one partition not handed out yet (it was revoked, or rewound).
  void drop_partition(const char* topic, std::int32_t partition) {
    const auto first = records_.begin() + static_cast<std::ptrdiff_t>(next_);
    const auto kept = std::remove_if(first, records_.end(), [&](rd_kafka_message_t* m) {
      if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR || m->rkt == nullptr || m->partition != partition ||
          std::strcmp(rd_kafka_topic_name(m->rkt), topic) != 0) {
        return false;
      }
      rd_kafka_message_destroy(m);
      return true;
    });
    records_.erase(kept, records_.end());
  }

  /// Destroys every record not handed out yet.
  void clear() noexcept {
    for (std::size_t i = next_; i < records_.size(); ++i) rd_kafka_message_destroy(records_[i]);
    records_.clear();
    next_ = 0;
  }

 private:
  std::vector<rd_kafka_message_t*> records_;
  std::size_t next_ = 0;
};

}  // namespace babelqueue::inline v1::kafka::detail
