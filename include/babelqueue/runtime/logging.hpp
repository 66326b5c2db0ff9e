#pragma once
/// @file logging.hpp
/// @brief The logging seam: a sink callback. No logging library is forced on the user.
///
/// The runtime reports what it does (retries, dead-letters, dropped messages, transport
/// errors) through a `log_sink` set in app_options. The default is no sink: nothing is
/// logged. Messages are single lines without a trailing newline.
///
/// @note Thread-safety: the runtime calls the sink from its worker threads and from any
/// thread calling app::publish()/drain(), possibly concurrently, so a sink must be
/// thread-safe. stderr_sink() is.

#include <functional>
#include <string_view>

namespace babelqueue {
inline namespace v1 {

enum class log_level { debug = 0, info = 1, warn = 2, error = 3 };

/// `debug`, `info`, `warn`, `error`.
std::string_view to_string(log_level level) noexcept;

/// Receives one log line. Must not throw (an exception escaping it is swallowed).
using log_sink = std::function<void(log_level level, std::string_view message)>;

/// A thread-safe sink writing `babelqueue <level>: <message>` lines to stderr for every
/// message at or above `min_level`.
log_sink stderr_sink(log_level min_level = log_level::info);

}  // namespace v1
}  // namespace babelqueue
