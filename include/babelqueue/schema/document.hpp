#pragma once
/// @file schema/document.hpp
/// @brief A parsed per-URN `data` schema (the draft-07 subset) and its validator.
///
/// Keyword semantics are those of the Go SDK / `bqschema` (wire-helpers §5.1), so a schema
/// validated in CI by `babelqueue schema validate` gives the same verdict at runtime:
///  - `type` is read only as a string (an array of types is ignored, unknown names check
///    nothing); `required`, `properties` and `additionalProperties` act only under
///    `"type":"object"`, `items` only under `"array"`, `minLength` only under `"string"`,
///    `minimum` only under `"integer"`/`"number"`. A type mismatch stops checks at that node.
///  - `1.0` is an integer; `minimum` is inclusive.
///  - `const`/`enum` compare JSON values: numbers by value (`1` equals `1.0`), object key
///    order ignored, booleans never equal numbers.
///  - `additionalProperties` is read only as a boolean, `items` only as one schema object.
///  - Unknown keywords (`format`, `pattern`, `maximum`, `x-gdpr-sensitive`, ...) are ignored.
///  - Exception (decision D8): `minLength` counts Unicode code points, as JSON Schema, Python
///    and PHP do (bqschema ≤ 0.4.0 counted UTF-8 bytes).
/// All violations are collected (never just the first), each with its bqschema message,
/// path and the Python/PHP reason code; report::violations() is sorted like bqschema prints.
///
/// @note Thread-safety: a document is immutable after construction; validate() may be called
/// concurrently from any number of threads.

#include <babelqueue/export/schema.hpp>
#include <babelqueue/json.hpp>
#include <babelqueue/result.hpp>
#include <babelqueue/schema/error.hpp>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace babelqueue {
inline namespace v1 {
namespace schema {

/// One reason a value does not match its schema.
struct BABELQUEUE_SCHEMA_EXPORT violation {
  /// Where bqschema reports it: dotted properties and `[i]` indices (`items[0].sku`), empty at
  /// the root. `missing required` / `additional property` are reported at the PARENT (as Go).
  std::string path;
  /// bqschema's English text, e.g. `missing required property "order_id"`.
  std::string message;
  /// The Python/PHP reason code: `wrong_const`, `not_in_enum`, `not_an_object`,
  /// `missing_required`, `additional_not_allowed`, `not_an_array`, `not_a_string`,
  /// `below_min_length`, `not_an_integer`, `not_a_number`, `below_minimum`, `not_a_boolean`,
  /// `not_null`.
  std::string reason;
  /// The Python/PHP path of the violation: like `path`, but the CHILD for
  /// `missing_required`/`additional_not_allowed`, and `<root>` at the root.
  std::string reason_path;
  /// RFC 6901 JSON Pointer of the offending (or missing / extra) value: `/items/0/sku`.
  std::string pointer;

  /// The line bqschema prints: `<path>: <message>`, or just `<message>` at the root.
  std::string text() const;
  /// The Python/PHP form: `<reason_path>: <reason>`.
  std::string reason_text() const;

  friend bool operator==(const violation&, const violation&) = default;
};

/// The outcome of validating one value.
class BABELQUEUE_SCHEMA_EXPORT report {
 public:
  report() = default;
  /// Builds a report from violations in evaluation order (the order Python/PHP would meet
  /// them); sorts a copy for violations().
  explicit report(std::vector<violation> in_evaluation_order);

  bool ok() const noexcept { return sorted_.empty(); }
  explicit operator bool() const noexcept { return ok(); }
  /// Every violation, sorted byte-wise by text() — the order `bqschema validate` prints.
  const std::vector<violation>& violations() const noexcept { return sorted_; }
  /// The violation Python's `validate_schema` / PHP's validator would return first (same
  /// traversal: const, enum, type; `required` in schema order, then members in value order),
  /// or nullptr when valid. Where the keyword semantics differ (D8 above) the verdict is ours.
  const violation* first() const noexcept;
  /// violations() rendered with text(), joined by "; " (Go's error message layout).
  std::string summary() const;

 private:
  std::vector<violation> sorted_;
  std::vector<violation> evaluation_order_;
};

namespace detail {
struct node;
}

/// Limits applied when a schema is parsed.
struct BABELQUEUE_SCHEMA_EXPORT parse_options {
  /// Maximum nesting of the schema document (objects/arrays). Deeper → errc::invalid_argument.
  std::size_t max_depth = 256;
};

/// A parsed schema. Cheap to copy (shared immutable state).
class BABELQUEUE_SCHEMA_EXPORT document {
 public:
  /// Parses schema text strictly (RFC 8259). Errors: errc::malformed_json (not JSON),
  /// errc::invalid_argument (not a JSON object, or nested deeper than options.max_depth),
  /// errc::number_out_of_range. Never throws on bad input.
  static result<document> parse(std::string_view text, const parse_options& options = {});
  /// Builds from an already parsed value (must be a JSON object).
  static result<document> from_json(const json& schema, const parse_options& options = {});

  /// Validates `value` (normally a message's `data`) and reports every violation.
  report validate(const json& value) const;

  /// The schema exactly as given (including keywords the validator ignores).
  const json& raw() const noexcept;
  /// The internal keyword tree (for compat and tooling in this library).
  const detail::node& root() const noexcept;

 private:
  struct state;
  explicit document(std::shared_ptr<const state> s) : state_(std::move(s)) {}
  std::shared_ptr<const state> state_;
};

}  // namespace schema
}  // namespace v1
}  // namespace babelqueue
