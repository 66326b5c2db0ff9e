#pragma once
/// @file retry.hpp
/// @brief retry_policy: how long the runtime waits before a failed message is tried again.
///
/// The runtime retries a failing handler (and a claim held by another worker, and the
/// unknown-URN `release` strategy) through a delayed publish of the retry copy
/// (transport::publish_delayed), so a downstream outage longer than a few milliseconds no
/// longer burns every attempt at once. The `attempts` arithmetic (D5) is unchanged: only
/// *when* the copy becomes deliverable moves.
///
/// Thread-safety: a value type; delay_for() is const and safe from any thread.

#include <babelqueue/export/runtime.hpp>
#include <babelqueue/result.hpp>

#include <chrono>
#include <cstdint>

namespace babelqueue {
inline namespace v1 {

/// Exponential backoff with jitter. Retry n (1 = the first retry) waits
/// `min(initial * multiplier^(n-1), max)`, less a random share of up to `jitter` of it.
///
/// The default — 1 s, doubling, capped at 5 min, up to 20 % jitter — spaces the two retries
/// of the default max_attempts (3) about 1 s and 2 s apart: a restart of a downstream
/// service or a lock held for a second or two no longer dead-letters a good message, and a
/// burst of failures is spread out instead of coming back in one wave. Jitter only ever
/// shortens a delay (by at most `jitter` of it), so the nominal delay is the most a message
/// waits. Mixed fleets whose other consumers retry at once use retry_policy::immediate().
struct BABELQUEUE_RUNTIME_EXPORT retry_policy {
  /// Wait before the first retry. 0 = every retry at once (immediate()).
  std::chrono::milliseconds initial{std::chrono::seconds(1)};
  /// Growth per retry (>= 1).
  double multiplier = 2.0;
  /// The longest wait (>= initial).
  std::chrono::milliseconds max{std::chrono::minutes(5)};
  /// The largest share of a delay taken off at random, in [0, 1].
  double jitter = 0.2;

  /// Today's behaviour before retry policies: every retry at once.
  static retry_policy immediate() noexcept {
    return {std::chrono::milliseconds(0), 1.0, std::chrono::milliseconds(0), 0.0};
  }

  /// The wait before retry `retry` (1-based; < 1 counts as 1), with `unit` in [0, 1] the
  /// random draw (0 = no jitter taken off). Pure.
  std::chrono::milliseconds delay_for(std::int64_t retry, double unit) const noexcept;
  /// As above with a fresh random draw (a thread-local generator).
  std::chrono::milliseconds delay_for(std::int64_t retry) const;

  /// runtime_errc::invalid_argument when a field is out of range (negative durations,
  /// multiplier < 1 or not finite, max < initial, jitter outside [0, 1]).
  result<void> validate() const;
};

}  // namespace v1
}  // namespace babelqueue
