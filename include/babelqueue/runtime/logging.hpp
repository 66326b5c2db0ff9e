#pragma once
/// @file logging.hpp
/// @brief Ready-made logging observers: stderr_logger, and an adapter for a plain callback
/// (log_sink). No logging library is forced on the user; spdlog & co. plug in the same way.
///
/// Logging is part of the observer seam (observer.hpp): attach these through
/// app_options::observers. Nothing is logged when no observer wants logs.
///
/// @note Thread-safety: the runtime calls on_log from its worker threads, the thread
/// calling drain()/consume() and, concurrently, from several at once (see observer.hpp).
/// stderr_logger is thread-safe (one process-wide mutex: lines never interleave). The
/// callback given to observer_from_log_sink() must be thread-safe itself.

#include <babelqueue/export/runtime.hpp>
#include <babelqueue/runtime/observer.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <string_view>

namespace babelqueue {
inline namespace v1 {

/// Writes `babelqueue <level>: <format(record)>` lines to stderr for every record at or
/// above its level. The level may be changed while the app runs.
class BABELQUEUE_RUNTIME_EXPORT stderr_logger final : public observer {
 public:
  explicit stderr_logger(log_level min_level = log_level::info) noexcept : level_(min_level) {}
  log_level min_level() const noexcept override { return level_.load(std::memory_order_relaxed); }
  void set_min_level(log_level level) noexcept { level_.store(level, std::memory_order_relaxed); }
  void on_log(const log_record& record) override;

 private:
  std::atomic<log_level> level_;
};

/// Receives one formatted log line (format(record), no trailing newline). Must not throw
/// (an exception escaping it is swallowed).
using log_sink = std::function<void(log_level level, std::string_view line)>;

/// Adapts a log_sink into an observer that receives every record at or above `min_level`,
/// formatted with format(). A null sink gives an observer that logs nothing.
BABELQUEUE_RUNTIME_EXPORT std::shared_ptr<observer> observer_from_log_sink(
    log_sink sink, log_level min_level = log_level::info);

}  // namespace v1
}  // namespace babelqueue
