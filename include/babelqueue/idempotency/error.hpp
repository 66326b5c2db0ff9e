#pragma once
/// @file idempotency/error.hpp
/// @brief The idempotency helper's error codes ("babelqueue.idempotency" category).
///
/// Every store returns `babelqueue::result<T>`; wrap() throws `babelqueue::error` carrying
/// the store's error_info, which the runtime records as a handler failure (retried, then
/// dead-lettered with the store's message — never a silent skip). The backend's own code and
/// text (hiredis, SQLite, libpq SQLSTATE) stay in `error_info::native`.
/// `e.code() == babelqueue::condition::unavailable` holds for `unavailable`, and
/// `condition::invalid_argument` for `invalid_argument`.
/// @note Thread-safety: value types; no shared state.

#include <babelqueue/error.hpp>
#include <babelqueue/export/idempotency.hpp>
#include <babelqueue/result.hpp>

#include <optional>
#include <string>
#include <system_error>

namespace babelqueue {
inline namespace v1 {
namespace idempotency {

enum class errc : int {
  ok = 0,
  invalid_argument = 1,  ///< unusable options: a table or key prefix that is not a safe identifier,
                         ///< a null connection
  unavailable = 2,  ///< the backend could not be reached, or the connection was lost (transient)
  backend = 3,      ///< the backend answered with an error (SQL error, Redis error reply)
  /// another worker holds a live claim on this id. No longer thrown: wrap_claiming() parks
  /// such a delivery with defer_delivery (no attempt counted); kept for source compatibility.
  claim_held = 4,
};

}  // namespace idempotency
}  // namespace v1
}  // namespace babelqueue

template <>
struct std::is_error_code_enum<babelqueue::idempotency::errc> : std::true_type {};

namespace babelqueue {
inline namespace v1 {
namespace idempotency {

/// The category of idempotency::errc values ("babelqueue.idempotency").
BABELQUEUE_IDEMPOTENCY_EXPORT const std::error_category& category() noexcept;

inline std::error_code make_error_code(errc e) noexcept {
  return {static_cast<int>(e), category()};
}

/// Builds a failed result: `return idempotency::fail(errc::backend, "why", native)`.
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
}  // namespace idempotency
}  // namespace v1
}  // namespace babelqueue
