#pragma once
/// @file metrics.hpp
/// @brief atomic_metrics: a ready-made observer with lock-free counters and a snapshot.
///
/// Metrics are part of the observer seam (observer.hpp): to feed Prometheus, statsd or
/// OpenTelemetry metrics, derive from `observer` and override the on_* metrics events.
///
/// @note Thread-safety: atomic_metrics is thread-safe and lock-free (relaxed atomics); the
/// runtime calls it from every worker thread and publishing thread at once, and snapshot()
/// may be called from any thread meanwhile (each counter is read atomically; the snapshot
/// as a whole is not one instant).

#include <babelqueue/dead_letter.hpp>
#include <babelqueue/error.hpp>
#include <babelqueue/export/runtime.hpp>
#include <babelqueue/runtime/observer.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace babelqueue {
inline namespace v1 {

/// A point-in-time copy of atomic_metrics.
struct BABELQUEUE_RUNTIME_EXPORT metrics_snapshot {
  std::uint64_t published = 0, consumed = 0, acked = 0, retried = 0, dead_lettered = 0,
                released = 0, dropped = 0, rejected = 0;
  /// rejected, by D3 reason name (`malformed_json` ... `invalid_attempts`, else `other`);
  /// only non-zero entries.
  std::map<std::string, std::uint64_t, std::less<>> rejected_by_reason;
  /// dead_lettered, by reason (`failed`, `unknown_urn`, `poison`); only non-zero entries.
  std::map<std::string, std::uint64_t, std::less<>> dead_lettered_by_reason;
  std::uint64_t handled = 0, handler_failures = 0;
  std::chrono::nanoseconds handler_latency_sum{0};
  std::chrono::nanoseconds handler_latency_max{0};
};

/// Built-in counters (totals, not per queue). An observer of metrics events only: it wants
/// no logs and keeps no span state.
class BABELQUEUE_RUNTIME_EXPORT atomic_metrics final : public observer {
 public:
  void on_published(std::string_view) override { add(published_); }
  void on_consumed(std::string_view) override { add(consumed_); }
  void on_acked(std::string_view) override { add(acked_); }
  void on_retried(std::string_view) override { add(retried_); }
  void on_dead_lettered(std::string_view, dead_letter_reason reason) override;
  void on_rejected(std::string_view, const error_info& reason) override;
  void on_released(std::string_view) override { add(released_); }
  void on_dropped(std::string_view) override { add(dropped_); }
  void on_handled(std::string_view, std::chrono::nanoseconds latency, bool ok) override;

  metrics_snapshot snapshot() const;

  /// The D3 reasons counted one by one, in PHP's check order; any other code is `other`.
  /// An explicit list, so the counters never depend on the numeric values of errc.
  static constexpr std::array<errc, 7> d3_reasons{
      errc::malformed_json,  errc::missing_urn,
      errc::missing_meta,    errc::unsupported_schema_version,
      errc::invalid_data,    errc::missing_trace_id,
      errc::invalid_attempts};

 private:
  using counter = std::atomic<std::uint64_t>;
  static void add(counter& c) noexcept { c.fetch_add(1, std::memory_order_relaxed); }
  counter published_{0}, consumed_{0}, acked_{0}, retried_{0}, released_{0}, dropped_{0};
  counter handled_{0}, handler_failures_{0};
  std::atomic<std::int64_t> latency_sum_ns_{0}, latency_max_ns_{0};
  std::array<counter, 3> dead_lettered_{};  // failed, unknown_urn, poison (see metrics.cpp)
  std::array<counter, d3_reasons.size() + 1> rejected_{};  // d3_reasons order, then other
};

}  // namespace v1
}  // namespace babelqueue
