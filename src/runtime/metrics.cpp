// The built-in atomic counters (metrics.hpp).
#include <babelqueue/runtime/metrics.hpp>

#include <iterator>
#include <tuple>

namespace babelqueue {
inline namespace v1 {
namespace {

// Explicit slot per dead-letter reason (a switch, so a new enumerator is a -Wswitch error
// here instead of a silent out-of-range index).
constexpr std::size_t dead_letter_slot(dead_letter_reason reason) noexcept {
  switch (reason) {
    case dead_letter_reason::failed:
      return 0;
    case dead_letter_reason::unknown_urn:
      return 1;
    case dead_letter_reason::poison:
      return 2;
  }
  return 0;
}
constexpr dead_letter_reason dead_letter_slots[] = {
    dead_letter_reason::failed, dead_letter_reason::unknown_urn, dead_letter_reason::poison};
static_assert(dead_letter_slot(dead_letter_reason::failed) == 0 &&
              dead_letter_slot(dead_letter_reason::unknown_urn) == 1 &&
              dead_letter_slot(dead_letter_reason::poison) == 2);

constexpr bool distinct_d3_reasons() {
  const auto& r = atomic_metrics::d3_reasons;
  for (std::size_t i = 0; i < r.size(); ++i) {
    if (r[i] == errc::ok) return false;
    for (std::size_t j = i + 1; j < r.size(); ++j) {
      if (r[i] == r[j]) return false;
    }
  }
  return true;
}
static_assert(distinct_d3_reasons(), "each D3 reason has its own counter");

// The slot of a rejection reason: its position in d3_reasons, else the trailing `other`.
// Compares codes, never indexes by their numeric value.
std::size_t rejected_slot(const error_info& reason) noexcept {
  const auto& r = atomic_metrics::d3_reasons;
  for (std::size_t i = 0; i < r.size(); ++i) {
    if (reason.code == r[i]) return i;
  }
  return r.size();
}

}  // namespace

void atomic_metrics::on_dead_lettered(std::string_view, dead_letter_reason reason) {
  static_assert(std::size(dead_letter_slots) == std::tuple_size_v<decltype(dead_lettered_)>);
  add(dead_lettered_[dead_letter_slot(reason)]);
}

void atomic_metrics::on_rejected(std::string_view, const error_info& reason) {
  add(rejected_[rejected_slot(reason)]);
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
  for (auto dl : dead_letter_slots) {
    if (auto n = get(dead_lettered_[dead_letter_slot(dl)])) {
      s.dead_lettered += n;
      s.dead_lettered_by_reason[std::string(to_string(dl))] = n;
    }
  }
  for (std::size_t i = 0; i < rejected_.size(); ++i) {
    if (auto n = get(rejected_[i])) {
      s.rejected += n;
      s.rejected_by_reason[i < d3_reasons.size() ? std::string(reason(d3_reasons[i]))
                                                 : std::string("other")] = n;
    }
  }
  return s;
}

}  // namespace v1
}  // namespace babelqueue
