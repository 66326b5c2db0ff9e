#pragma once
/// @file schema/conformance.hpp
/// @brief Runs the conformance manifest's `payload_schema` block (ADR-0024).
///
/// The block is `{"schema": {...}, "cases": [{"name", "valid", "data"}, ...]}`: every SDK's
/// payload validator must agree on `valid` for each case. This is a pure function so the
/// project's conformance runner and this library's own tests share one implementation.
/// @note Thread-safety: pure function.

#include <babelqueue/export/schema.hpp>
#include <babelqueue/json.hpp>
#include <babelqueue/result.hpp>
#include <babelqueue/schema/document.hpp>

#include <string>
#include <vector>

namespace babelqueue {
inline namespace v1 {
namespace schema {

struct BABELQUEUE_SCHEMA_EXPORT payload_case_result {
  std::string name;
  bool expected_valid = false;
  bool valid = false;
  /// What the validator reported (sorted violations, first()).
  report details;
  bool passed() const noexcept { return expected_valid == valid; }
};

/// Validates each case's `data` against the block's `schema`. errc::invalid_argument when
/// the block is malformed (no object `schema`, no `cases` array, a case without a string
/// `name` or a boolean `valid`); a case without `data` validates `null`.
BABELQUEUE_SCHEMA_EXPORT result<std::vector<payload_case_result>> run_payload_schema(
    const json& block);

}  // namespace schema
}  // namespace v1
}  // namespace babelqueue
