#pragma once
/// @file metrics.hpp
/// @brief The metrics seam: an interface the user implements (Prometheus, OpenTelemetry,
/// statsd...) and a built-in implementation with atomic counters.
///
/// @note Thread-safety: the runtime calls a metrics object from its worker threads and from
/// any thread that publishes, concurrently, so implementations must be thread-safe.
/// Callbacks must be cheap and must not throw (exceptions are swallowed). atomic_metrics is
/// thread-safe and lock-free.

#include <babelqueue/dead_letter.hpp>
#include <babelqueue/error.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace babelqueue {
inline namespace v1 {

/// Receives runtime events. Every method has an empty default so an implementation
/// overrides only what it records. `queue` is the broker queue the event concerns.
class metrics {
 public:
  virtual ~metrics() = default;
  /// A message was accepted by the broker (app::publish, message::publish, retries and
  /// dead-letters are counted by their own events, not here).
  virtual void on_published(std::string_view queue) { (void)queue; }
  /// A message was received from the broker (before the accept gate).
  virtual void on_consumed(std::string_view queue) { (void)queue; }
  /// A message was acked after its handler succeeded.
  virtual void on_acked(std::string_view queue) { (void)queue; }
  /// A failed message was re-published with attempts + 1.
  virtual void on_retried(std::string_view queue) { (void)queue; }
  /// A message was published to a dead-letter queue.
  virtual void on_dead_lettered(std::string_view queue, dead_letter_reason reason) {
    (void)queue;
    (void)reason;
  }
  /// A message failed the accept gate (D3). `reason` is a D3 errc (malformed_json, ...).
  virtual void on_rejected(std::string_view queue, errc reason) {
    (void)queue;
    (void)reason;
  }
  /// A message was put back unchanged (unknown-URN `release`, or a settle failure).
  virtual void on_released(std::string_view queue) { (void)queue; }
  /// A message was acked and dropped without success: terminal failure or poison with
  /// dead-lettering off, the unknown-URN `delete` strategy (and `dead_letter` degraded to it).
  virtual void on_dropped(std::string_view queue) { (void)queue; }
  /// One handler call finished after `latency`; `ok` is false when it threw.
  virtual void on_handled(std::string_view urn, std::chrono::nanoseconds latency, bool ok) {
    (void)urn;
    (void)latency;
    (void)ok;
  }
};

/// A point-in-time copy of atomic_metrics.
struct metrics_snapshot {
  std::uint64_t published = 0, consumed = 0, acked = 0, retried = 0, dead_lettered = 0,
                released = 0, dropped = 0, rejected = 0;
  /// rejected, by D3 reason name (`malformed_json`, ...); only non-zero entries.
  std::map<std::string, std::uint64_t, std::less<>> rejected_by_reason;
  /// dead_lettered, by reason (`failed`, `unknown_urn`, `poison`); only non-zero entries.
  std::map<std::string, std::uint64_t, std::less<>> dead_lettered_by_reason;
  std::uint64_t handled = 0, handler_failures = 0;
  std::chrono::nanoseconds handler_latency_sum{0};
  std::chrono::nanoseconds handler_latency_max{0};
};

/// Built-in counters (relaxed atomics; totals, not per queue).
class atomic_metrics final : public metrics {
 public:
  void on_published(std::string_view) override { add(published_); }
  void on_consumed(std::string_view) override { add(consumed_); }
  void on_acked(std::string_view) override { add(acked_); }
  void on_retried(std::string_view) override { add(retried_); }
  void on_dead_lettered(std::string_view, dead_letter_reason reason) override;
  void on_rejected(std::string_view, errc reason) override;
  void on_released(std::string_view) override { add(released_); }
  void on_dropped(std::string_view) override { add(dropped_); }
  void on_handled(std::string_view, std::chrono::nanoseconds latency, bool ok) override;

  metrics_snapshot snapshot() const;

 private:
  using counter = std::atomic<std::uint64_t>;
  static void add(counter& c) noexcept { c.fetch_add(1, std::memory_order_relaxed); }
  counter published_{0}, consumed_{0}, acked_{0}, retried_{0}, released_{0}, dropped_{0};
  counter handled_{0}, handler_failures_{0};
  std::atomic<std::int64_t> latency_sum_ns_{0}, latency_max_ns_{0};
  std::array<counter, 3> dead_lettered_{};  // indexed by dead_letter_reason
  std::array<counter, 8> rejected_{};       // indexed by errc 0..7 (D3 reasons); 0 = other
};

}  // namespace v1
}  // namespace babelqueue
