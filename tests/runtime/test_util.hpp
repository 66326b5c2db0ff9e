#pragma once
// Shared helpers of the runtime tests: unique memory:// brokers, a capturing logger, a
// raw transport for peeking at queues byte for byte.
#include <babelqueue/codec.hpp>
#include <babelqueue/memory/memory_transport.hpp>
#include <babelqueue/runtime/app.hpp>
#include <babelqueue/runtime/url.hpp>

#include <atomic>
#include <mutex>
#include <string>
#include <vector>

namespace bqtest {

/// A fresh broker name per call, so tests never see each other's queues.
inline std::string unique_broker(const std::string& prefix = "rt") {
  static std::atomic<int> n{0};
  return prefix + "-" + std::to_string(n.fetch_add(1));
}

struct log_capture {
  std::mutex mutex;
  std::vector<std::string> lines;
  /// A logging observer (every level) appending `<level>: <formatted record>` lines.
  std::shared_ptr<babelqueue::observer> observer() {
    return babelqueue::observer_from_log_sink(
        [this](babelqueue::log_level level, std::string_view text) {
          std::lock_guard lock(mutex);
          lines.push_back(std::string(babelqueue::to_string(level)) + ": " + std::string(text));
        },
        babelqueue::log_level::debug);
  }
  bool contains(std::string_view needle) {
    std::lock_guard lock(mutex);
    for (const auto& l : lines) {
      if (l.find(needle) != std::string::npos) return true;
    }
    return false;
  }
};

/// Takes every message from `queue` of broker `name` (acked), bodies in order.
inline std::vector<babelqueue::received_message> take_all(const std::string& name,
                                                          const std::string& queue) {
  babelqueue::memory::memory_transport t(name);
  std::vector<babelqueue::received_message> out;
  for (;;) {
    auto got = t.receive(queue, std::chrono::milliseconds(0));
    if (!got || !*got) break;
    (void)t.ack(**got);
    out.push_back(std::move(**got));
  }
  return out;
}

inline void put_raw(const std::string& name, const std::string& queue, std::string_view body,
                    const babelqueue::headers& hdrs = {}) {
  babelqueue::memory::memory_transport t(name);
  t.publish(queue, body, hdrs).value();
}

/// Options for fast tests: short polls, retries at once (the D5 arithmetic these tests check
/// does not depend on when a retry comes; app_time_test.cpp tests the backoff), the
/// capturing logger.
inline babelqueue::app_options fast_options(log_capture* logs = nullptr) {
  babelqueue::app_options o;
  o.poll_timeout = std::chrono::milliseconds(20);
  o.retry = babelqueue::retry_policy::immediate();
  if (logs != nullptr) o.observers.push_back(logs->observer());
  return o;
}

}  // namespace bqtest
