#pragma once
/// @file gdpr/audit.hpp
/// @brief Registry-side governance of `x-gdpr-sensitive`: the PII-name audit and masking.
///
/// These are the functions behind `babelqueue schema gdpr --require` and `--mask`, with the
/// semantics of bqschema (babelqueue-registry `internal/gdpr`). Masking is one-way
/// redaction for logs and fixtures — not a crypto primitive and not a substitute for protect().
/// @note Thread-safety: pure functions.

#include <babelqueue/export/gdpr.hpp>
#include <babelqueue/gdpr/error.hpp>
#include <babelqueue/json.hpp>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace babelqueue {
inline namespace v1 {
namespace gdpr {

/// bqschema's default PII name pattern (case-insensitive, unanchored substring match).
inline constexpr std::string_view default_pii_pattern =
    "(?i)(email|e_mail|mail|ssn|phone|msisdn|tckn|national_id|passport|iban|credit_card|"
    "card_number|cvv|address|birth|dob)";

/// A compiled PII name matcher. Accepts ECMAScript regular expressions plus a leading
/// `(?i)` (the RE2 case-insensitive flag bqschema's patterns use); other RE2-only syntax is
/// rejected with errc::invalid_argument. Empty = default_pii_pattern.
class BABELQUEUE_GDPR_EXPORT name_pattern {
 public:
  static result<name_pattern> compile(std::string_view pattern);
  /// True when the pattern matches anywhere in `name`.
  bool matches(std::string_view name) const;

 private:
  struct impl;
  std::shared_ptr<const impl> impl_;
};

/// Property paths (`customer.email`, `contacts[].phone`) whose *name* matches `pattern`, that
/// are not marked and are not containers (type object/array, or with properties/items);
/// sorted. Walks `properties` and `items` like sensitive_paths(), marked nodes included.
BABELQUEUE_GDPR_EXPORT std::vector<std::string> unannotated_pii(const json& schema,
                                                                const name_pattern& pattern);

/// A deep copy of `value` with every marked node redacted: a non-empty string keeps its first
/// Unicode character followed by `***`; anything else (number, bool, null, "", object, array)
/// becomes `"***"`. Unmarked nodes are copied unchanged.
BABELQUEUE_GDPR_EXPORT json mask(const json& value, const json& schema);

}  // namespace gdpr
}  // namespace v1
}  // namespace babelqueue
