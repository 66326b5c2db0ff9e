#pragma once
// The reconnect schedule every networked binding shares: the first reconnect after losing a
// working connection is immediate (the broker may already be back, or only this socket was
// cut); each failed connect doubles the pause from `min` up to `max`, with jitter in
// [0.5, 1.5) of the step so that a fleet does not reconnect in lockstep. Header-only and
// private (`#include "core/reconnect_backoff.hpp"`).
//
// Thread-safety: a value type, used by one thread.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <random>

namespace babelqueue::inline v1::detail {

class reconnect_backoff {
 public:
  using clock = std::chrono::steady_clock;

  reconnect_backoff(std::chrono::milliseconds min, std::chrono::milliseconds max)
      : min_(min), max_(max), rng_(std::random_device{}()) {}

  /// When the next connect may start.
  clock::time_point next_attempt() const noexcept { return next_attempt_; }
  /// A connect succeeded: the next loss reconnects at once.
  void succeeded() noexcept {
    step_ = std::chrono::milliseconds(0);
    next_attempt_ = clock::now();
  }
  /// A connect failed: wait one (longer) step before the next.
  void failed() {
    step_ = step_.count() == 0 ? min_ : std::min(step_ * 2, max_);
    std::uniform_real_distribution<double> jitter(0.5, 1.5);
    next_attempt_ = clock::now() + std::chrono::milliseconds(static_cast<std::int64_t>(
                                       static_cast<double>(step_.count()) * jitter(rng_)));
  }

 private:
  std::chrono::milliseconds min_, max_;
  std::chrono::milliseconds step_{0};
  clock::time_point next_attempt_{};
  std::mt19937_64 rng_;
};

}  // namespace babelqueue::inline v1::detail
