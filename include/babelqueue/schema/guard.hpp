#pragma once
/// @file schema/guard.hpp
/// @brief The producer guard: check / validate a message's `data` against its URN's schema.
///
/// Producer-side checking is the preferred gate (spec "Producer-side Check is preferred"):
/// invalid `data` never enters the queue, and the caller that built it — the only party
/// who can fix it — gets the error at once. A consumer-side check (schema/wrap.hpp) is only a
/// safety net: invalid data does not become valid on retry, so a wrapped handler spends every
/// attempt on a message that can never succeed before it is dead-lettered.
///
/// Errors (the core `errc` set has no schema-specific code, so the mapping is):
///  - data does not match → `invalid_payload_error` (a babelqueue::error with
///    errc::invalid_data) carrying the URN and every violation;
///  - the registered schema cannot be loaded → babelqueue::error with the provider's code
///    (schema::errc::io, errc::malformed_json, schema::errc::invalid_schema).
///
/// @note Thread-safety: free functions; safe to call concurrently with a thread-safe provider.

#include <babelqueue/envelope.hpp>
#include <babelqueue/error.hpp>
#include <babelqueue/export/schema.hpp>
#include <babelqueue/json.hpp>
#include <babelqueue/result.hpp>
#include <babelqueue/schema/document.hpp>
#include <babelqueue/schema/error.hpp>
#include <babelqueue/schema/provider.hpp>

#include <string>
#include <string_view>

namespace babelqueue {
inline namespace v1 {
namespace schema {

/// Thrown when `data` does not match its URN's schema. what() is
/// `invalid_data: data for "<urn>" does not match its URN schema: <v1>; <v2>…`.
class BABELQUEUE_SCHEMA_EXPORT invalid_payload_error : public babelqueue::error {
 public:
  invalid_payload_error(std::string urn, report violations);

  const std::string& urn() const noexcept { return urn_; }
  /// Every violation, sorted (report::violations()); report().first() for the Python code.
  const schema::report& report() const noexcept { return report_; }

 private:
  std::string urn_;
  schema::report report_;
};

/// Validates `data` against `urn`'s schema. An empty (ok) report when the URN has no schema
/// (opt-in) or the data matches; the error only when the schema cannot be loaded.
BABELQUEUE_SCHEMA_EXPORT result<report> check(const provider& schemas, std::string_view urn,
                                              const json& data);

/// As check(), throwing. Named `validate` because `assert` is a macro in C++.
/// @throws invalid_payload_error when the data does not match;
/// @throws babelqueue::error when the schema cannot be loaded.
BABELQUEUE_SCHEMA_EXPORT void validate(const provider& schemas, std::string_view urn,
                                       const json& data);

/// The envelope form (Go's `schema.Validate`): the URN is env.urn(), the data env.data().
/// @throws as validate(); babelqueue::error (errc::number_out_of_range) when `data` holds a
/// number no C++ type can hold.
BABELQUEUE_SCHEMA_EXPORT void validate(const provider& schemas, const envelope& env);

}  // namespace schema
}  // namespace v1
}  // namespace babelqueue
