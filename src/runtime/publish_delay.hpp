#pragma once
// The one conversion of a publish's `delay` / `deliver_at` (message.hpp) into the delay the
// transport seam takes, so app::publish and message::publish refuse the same mistakes the
// same way before anything is encoded or sent.
#include <babelqueue/result.hpp>
#include <babelqueue/runtime/error.hpp>

#include <chrono>
#include <optional>
#include <string>

namespace babelqueue::inline v1::detail {

/// How far in the past a deliver_at may be and still mean "now": the time between the caller
/// computing it and the publish (a GC pause, a slow hop), not a clock mistake.
inline constexpr std::chrono::milliseconds deliver_at_past_tolerance{1000};

inline result<std::chrono::milliseconds> publish_delay(
    std::chrono::milliseconds delay,
    const std::optional<std::chrono::system_clock::time_point>& deliver_at,
    std::chrono::system_clock::time_point now = std::chrono::system_clock::now()) {
  using std::chrono::milliseconds;
  if (delay.count() < 0) {
    return fail(runtime_errc::invalid_argument,
                "publish delay must be >= 0 (got " + std::to_string(delay.count()) + " ms)");
  }
  if (!deliver_at) return delay;
  if (delay.count() != 0) {
    return fail(runtime_errc::invalid_argument, "publish: give delay or deliver_at, not both");
  }
  const auto ahead = std::chrono::ceil<milliseconds>(*deliver_at - now);
  if (ahead.count() >= 0) return ahead;
  if (-ahead <= deliver_at_past_tolerance) return milliseconds(0);
  return fail(runtime_errc::invalid_argument,
              "publish: deliver_at is " + std::to_string(-ahead.count()) +
                  " ms in the past (more than the " +
                  std::to_string(deliver_at_past_tolerance.count()) +
                  " ms tolerance): check its time zone and unit");
}

}  // namespace babelqueue::inline v1::detail
