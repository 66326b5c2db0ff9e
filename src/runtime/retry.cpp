// retry_policy (retry.hpp): the backoff arithmetic, computed in double so that a large
// retry number saturates at `max` instead of overflowing.
#include <babelqueue/runtime/error.hpp>
#include <babelqueue/runtime/retry.hpp>

#include <algorithm>
#include <cmath>
#include <random>

namespace babelqueue::inline v1 {

std::chrono::milliseconds retry_policy::delay_for(std::int64_t retry, double unit) const noexcept {
  if (initial.count() <= 0) return std::chrono::milliseconds(0);
  const double n = static_cast<double>(std::max<std::int64_t>(retry, 1) - 1);
  const auto cap = static_cast<double>(std::max(max, initial).count());
  const double nominal =
      std::min(static_cast<double>(initial.count()) * std::pow(std::max(multiplier, 1.0), n), cap);
  const double share = std::clamp(jitter, 0.0, 1.0) * std::clamp(unit, 0.0, 1.0);
  return std::chrono::milliseconds(
      static_cast<std::int64_t>(std::llround(nominal * (1.0 - share))));
}

std::chrono::milliseconds retry_policy::delay_for(std::int64_t retry) const {
  thread_local std::mt19937_64 gen{std::random_device{}()};
  return delay_for(retry, std::uniform_real_distribution<double>(0.0, 1.0)(gen));
}

result<void> retry_policy::validate() const {
  const auto bad = [](const char* what) {
    return fail(runtime_errc::invalid_argument, std::string("app_options.retry: ") + what);
  };
  if (initial.count() < 0 || max.count() < 0) return bad("durations must not be negative");
  if (!std::isfinite(multiplier) || multiplier < 1.0) return bad("multiplier must be >= 1");
  if (max < initial) return bad("max must be >= initial");
  if (!std::isfinite(jitter) || jitter < 0.0 || jitter > 1.0)
    return bad("jitter must be in [0, 1]");
  return {};
}

}  // namespace babelqueue::inline v1
