#pragma once
/// @file runtime/error.hpp
/// @brief The runtime's error codes: `runtime_errc` ("babelqueue.runtime": the app, the URL
/// registry, workers) and `transport_errc` ("babelqueue.transport": the one set every broker
/// binding maps its client library's failures to; docs/errors.md has the table per
/// transport).
///
/// They live with the runtime, beside the transport seam they describe; the core's
/// error.hpp keeps what every component shares (error_info, error, condition,
/// is_transient()). Each code maps onto a portable `babelqueue::condition` where one applies,
/// so `is_transient(code)` and `code == condition::timeout` work on them as on any
/// babelqueue category.
/// @note Thread-safety: the categories are stateless singletons, safe from any thread.

#include <babelqueue/error.hpp>
#include <babelqueue/export/runtime.hpp>

#include <system_error>

namespace babelqueue {
inline namespace v1 {

/// Runtime codes ("babelqueue.runtime"): the app, the URL registry, workers.
enum class runtime_errc : int {
  invalid_argument = 1,    ///< unusable options or arguments (bad URL, empty queue, ...)
  unknown_scheme = 2,      ///< no transport is registered for a URL scheme
  already_running = 3,     ///< consume() is already running on this app
  resource_exhausted = 4,  ///< the OS refused a resource (a thread could not start)
  handler_failed = 5,      ///< a message handler threw (message = what(), native = type name)
  io = 6,                  ///< a file or OS call failed (condition `io`: transient)
};

/// Transport codes ("babelqueue.transport"): the one documented set every broker binding
/// maps its client library's failures to (docs/errors.md lists the mapping per transport).
enum class transport_errc : int {
  unavailable = 1,       ///< broker unreachable, connection lost, broker busy: a retry may succeed
  timeout = 2,           ///< the operation did not finish within its deadline
  refused = 3,           ///< the broker rejected the operation (not a permission problem)
  permission = 4,        ///< authentication or authorisation failed (WRONGPASS, NOAUTH, 403)
  not_found = 5,         ///< the queue / topic / stream does not exist
  too_large = 6,         ///< the message exceeds what the broker accepts
  invalid_argument = 7,  ///< unusable options, names or handles (caller error)
  not_supported = 8,     ///< the binding cannot do this (e.g. a delayed release on Redis)
  closed = 9,            ///< the transport was closed by its owner
};

}  // namespace v1
}  // namespace babelqueue

template <>
struct std::is_error_code_enum<babelqueue::runtime_errc> : std::true_type {};
template <>
struct std::is_error_code_enum<babelqueue::transport_errc> : std::true_type {};

namespace babelqueue {
inline namespace v1 {

BABELQUEUE_RUNTIME_EXPORT const std::error_category& runtime_category() noexcept;
BABELQUEUE_RUNTIME_EXPORT const std::error_category& transport_category() noexcept;

inline std::error_code make_error_code(runtime_errc e) noexcept {
  return {static_cast<int>(e), runtime_category()};
}
inline std::error_code make_error_code(transport_errc e) noexcept {
  return {static_cast<int>(e), transport_category()};
}

}  // namespace v1
}  // namespace babelqueue
