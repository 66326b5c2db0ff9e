#pragma once
/// @file schema/error.hpp
/// @brief The schema component's error codes ("babelqueue.schema" category).
///
/// Failures travel in the SDK's one error model (babelqueue/error.hpp). A schema text that
/// is not JSON keeps the core code of the JSON parser (errc::malformed_json,
/// errc::number_out_of_range).
/// @note Thread-safety: value types; the category is a stateless singleton.

#include <babelqueue/error.hpp>
#include <babelqueue/export/schema.hpp>

#include <system_error>

namespace babelqueue {
inline namespace v1 {
namespace schema {

enum class errc : int {
  invalid_payload = 1,   ///< `data` does not match its URN's schema (invalid_payload_error)
  invalid_schema = 2,    ///< a schema document is not a usable JSON object schema
  invalid_registry = 3,  ///< a registry index (or a conformance block) is malformed
  io = 4,                ///< a schema or registry file cannot be read
};

}  // namespace schema
}  // namespace v1
}  // namespace babelqueue

template <>
struct std::is_error_code_enum<babelqueue::schema::errc> : std::true_type {};

namespace babelqueue {
inline namespace v1 {
namespace schema {

/// The category of schema::errc values ("babelqueue.schema").
BABELQUEUE_SCHEMA_EXPORT const std::error_category& category() noexcept;

inline std::error_code make_error_code(errc e) noexcept {
  return {static_cast<int>(e), category()};
}

}  // namespace schema
}  // namespace v1
}  // namespace babelqueue
