// The built-in atomic counters (metrics.hpp).
#include <babelqueue/runtime/metrics.hpp>

namespace babelqueue {
inline namespace v1 {

void atomic_metrics::on_dead_lettered(std::string_view, dead_letter_reason reason) {
  auto i = static_cast<std::size_t>(reason);
  if (i < dead_lettered_.size()) add(dead_lettered_[i]);
}

void atomic_metrics::on_rejected(std::string_view, errc reason) {
  auto i = static_cast<std::size_t>(reason);
  add(i < rejected_.size() ? rejected_[i] : rejected_[0]);
}

void atomic_metrics::on_handled(std::string_view, std::chrono::nanoseconds latency, bool ok) {
  add(handled_);
  if (!ok) add(handler_failures_);
  const auto ns = static_cast<std::int64_t>(latency.count());
  latency_sum_ns_.fetch_add(ns, std::memory_order_relaxed);
  auto seen = latency_max_ns_.load(std::memory_order_relaxed);
  while (ns > seen && !latency_max_ns_.compare_exchange_weak(seen, ns, std::memory_order_relaxed)) {
  }
}

metrics_snapshot atomic_metrics::snapshot() const {
  auto get = [](const counter& c) { return c.load(std::memory_order_relaxed); };
  metrics_snapshot s;
  s.published = get(published_);
  s.consumed = get(consumed_);
  s.acked = get(acked_);
  s.retried = get(retried_);
  s.released = get(released_);
  s.dropped = get(dropped_);
  s.handled = get(handled_);
  s.handler_failures = get(handler_failures_);
  s.handler_latency_sum = std::chrono::nanoseconds(latency_sum_ns_.load(std::memory_order_relaxed));
  s.handler_latency_max = std::chrono::nanoseconds(latency_max_ns_.load(std::memory_order_relaxed));
  for (std::size_t i = 0; i < dead_lettered_.size(); ++i) {
    if (auto n = get(dead_lettered_[i])) {
      s.dead_lettered += n;
      s.dead_lettered_by_reason[std::string(to_string(static_cast<dead_letter_reason>(i)))] = n;
    }
  }
  for (std::size_t i = 0; i < rejected_.size(); ++i) {
    if (auto n = get(rejected_[i])) {
      s.rejected += n;
      s.rejected_by_reason[i == 0 ? std::string("other")
                                  : std::string(reason(static_cast<errc>(i)))] = n;
    }
  }
  return s;
}

}  // namespace v1
}  // namespace babelqueue
