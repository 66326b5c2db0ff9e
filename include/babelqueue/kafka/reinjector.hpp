#pragma once
/// @file kafka/reinjector.hpp
/// @brief The Kafka retry-tier re-injector: consumes `<topic>.retry.<n>` and republishes
/// each record to its work topic when it is due (spec §6.4; wire-core §9.4).
///
/// The tiers hold retry copies, delayed releases and delayed publishes
/// (kafka_transport::publish_delayed) alike: none of them reaches its work topic unless a
/// re-injector (this one, or another SDK's: the tiers are one protocol) runs for that topic.
///
/// A record is due at its timestamp (the retry copy is stamped when it entered the tier)
/// plus its `bq-delay` (Java's stated rule; PHP's re-injector waits from when it received
/// the record, which double-waits after a backlog). A record not yet due pauses only its own
/// partition, which is rewound to it and resumed when it is due; every other partition keeps
/// flowing. A due record is republished unchanged — the same bytes (D4: attempts were bumped
/// when it entered the tier), the same headers without `bq-delay`/`bq-original-topic`,
/// timestamped now — to its work topic, and its offset is committed only once the copy is
/// acknowledged.
///
/// Headers are data: anyone who can produce to a tier can write them. So the destination is
/// the work topic the tier was derived from (`orders.retry.2` → `orders`); a
/// `bq-original-topic` naming another topic is followed only when that topic is one of the
/// work topics the re-injector was opened for or one the operator allowed (`also_allowed`,
/// `--allow-topic`); otherwise the record goes to the derived work topic and
/// stats().refused_destinations counts it. `bq-delay` is bounded by the longest tier (a
/// record never waits longer than that, whatever the header says; no arithmetic overflow).
///
/// The re-injector is a consumer group of its own, `<options::group>.reinjector`, so
/// starting or stopping it never rebalances the workers. Run one or more per work topic
/// set (they share the tiers' partitions). `babelqueue kafka reinject --broker kafka://…
/// --topic orders` runs one as a process.
///
/// @note Thread-safety: not thread-safe; one thread runs it. stop() may be called from any
/// thread (run() returns within its poll interval).

#include <babelqueue/export/kafka.hpp>
#include <babelqueue/kafka/kafka_transport.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace babelqueue {
inline namespace v1 {
namespace kafka {

/// Counters of a re-injector.
struct BABELQUEUE_KAFKA_EXPORT reinjector_stats {
  std::int64_t reinjected = 0;  ///< records republished to their work topic
  std::int64_t held = 0;        ///< times a partition was paused for a record not yet due
  /// records whose bq-original-topic named a topic not allowed (sent to the derived one)
  std::int64_t refused_destinations = 0;
};

class BABELQUEUE_KAFKA_EXPORT reinjector {
 public:
  /// Opens the producer and the consumer of every tier of every work topic in `topics`
  /// (`opts.retry_topics` must list the tiers; transport_errc::invalid_argument otherwise).
  /// `also_allowed`: topics besides `topics` a record's bq-original-topic may name.
  static result<std::unique_ptr<reinjector>> open(
      options opts, const std::vector<std::string>& topics,
      const std::vector<std::string>& also_allowed = {});
  ~reinjector();
  reinjector(const reinjector&) = delete;
  reinjector& operator=(const reinjector&) = delete;

  /// Handles what arrives within `timeout`: republishes due records, holds the others.
  /// Returns how many records were republished.
  result<std::int64_t> run_for(std::chrono::milliseconds timeout);

  /// Runs until stop(); returns the first error that is not transient.
  result<void> run();
  void stop() noexcept { stop_.store(true, std::memory_order_release); }

  /// Commits and leaves the group.
  result<void> close();

  reinjector_stats stats() const noexcept { return stats_; }
  /// The tier topics it consumes.
  const std::vector<std::string>& tier_topics() const noexcept { return tier_topics_; }

 private:
  struct impl;
  reinjector() = default;
  std::unique_ptr<impl> impl_;
  std::vector<std::string> tier_topics_;
  reinjector_stats stats_;
  std::atomic<bool> stop_{false};
};

}  // namespace kafka
}  // namespace v1
}  // namespace babelqueue
