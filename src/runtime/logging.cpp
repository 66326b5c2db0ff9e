// The logging seam's helpers (logging.hpp).
#include <babelqueue/runtime/logging.hpp>

#include <cstdio>
#include <mutex>
#include <string>

namespace babelqueue {
inline namespace v1 {

std::string_view to_string(log_level level) noexcept {
  switch (level) {
    case log_level::debug:
      return "debug";
    case log_level::info:
      return "info";
    case log_level::warn:
      return "warn";
    case log_level::error:
      return "error";
  }
  return "unknown";
}

log_sink stderr_sink(log_level min_level) {
  // One mutex for all stderr sinks: lines from concurrent workers never interleave.
  static std::mutex mutex;
  return [min_level](log_level level, std::string_view text) {
    if (level < min_level) return;
    std::string line = "babelqueue ";
    line += to_string(level);
    line += ": ";
    line += text;
    line += '\n';
    std::lock_guard lock(mutex);
    std::fwrite(line.data(), 1, line.size(), stderr);
  };
}

}  // namespace v1
}  // namespace babelqueue
