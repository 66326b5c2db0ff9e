#pragma once
/// @file outbox/error.hpp
/// @brief The transactional outbox's error codes ("babelqueue.outbox" category).
///
/// Stores and the relay return `babelqueue::result<T>`; the backend's own code and text
/// (SQLite, libpq SQLSTATE) stay in `error_info::native`. A publish failure seen by the relay
/// is not an outbox error: it is recorded on the row (mark_failed) and counted.
/// `e.code() == babelqueue::condition::unavailable` holds for `unavailable`, and
/// `condition::invalid_argument` for `invalid_argument`, `condition::not_supported` for
/// `not_supported`.
/// @note Thread-safety: value types; no shared state.

#include <babelqueue/error.hpp>
#include <babelqueue/export/outbox.hpp>
#include <babelqueue/result.hpp>

#include <optional>
#include <string>
#include <system_error>

namespace babelqueue {
inline namespace v1 {
namespace outbox {

enum class errc : int {
  ok = 0,
  invalid_argument =
      1,            ///< unusable options or input: unsafe table name, null connection, empty queue
  unavailable = 2,  ///< the database could not be reached, or the connection was lost (transient)
  backend = 3,      ///< the database answered with an error
  not_found = 4,    ///< a row id the call names does not exist
  not_supported = 5,  ///< the store cannot keep a delivery time (store::save_at's default, or
                      ///< a SQL table without the deliver_at column on an adopted connection)
};

}  // namespace outbox
}  // namespace v1
}  // namespace babelqueue

template <>
struct std::is_error_code_enum<babelqueue::outbox::errc> : std::true_type {};

namespace babelqueue {
inline namespace v1 {
namespace outbox {

/// The category of outbox::errc values ("babelqueue.outbox").
BABELQUEUE_OUTBOX_EXPORT const std::error_category& category() noexcept;

inline std::error_code make_error_code(errc e) noexcept {
  return {static_cast<int>(e), category()};
}

/// Builds a failed result: `return outbox::fail(errc::backend, "why", native)`.
inline babelqueue::failure fail(errc code, std::string message) {
  return babelqueue::failure{error_info{code, std::move(message)}};
}
/// The same with the backend's own code and text (hiredis, SQLite, libpq).
inline babelqueue::failure fail(errc code, std::string message, native_error native) {
  return babelqueue::failure{error_info{code, std::move(message), {}, std::move(native)}};
}
/// The caller-mistake exception of the factories and constructors that cannot return a
/// result (their headers say which): babelqueue::error with `errc::invalid_argument`, whose
/// condition is `babelqueue::condition::invalid_argument`.
[[noreturn]] inline void throw_invalid_argument(std::string message) {
  throw babelqueue::error(error_info{errc::invalid_argument, std::move(message)});
}
}  // namespace outbox
}  // namespace v1
}  // namespace babelqueue
