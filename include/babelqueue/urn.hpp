#pragma once
/// @file urn.hpp
/// @brief The advisory URN convention `urn:babel:<context>:<event>` (spec "URN Naming").
///
/// The runtime never enforces it (the spec: "recommended, not enforced"); use it in tests,
/// CI or a producer guard.
/// @note Thread-safety: pure functions.

#include <babelqueue/export/core.hpp>

#include <string>
#include <string_view>

namespace babelqueue {
inline namespace v1 {

/// Which rule a URN breaks; `ok` when it follows the convention.
enum class urn_rule {
  ok = 0,
  empty,                ///< rule 1: non-empty
  not_ascii_lowercase,  ///< rule 5: only [a-z0-9:._-] (no spaces, uppercase, unicode)
  bad_prefix,           ///< format: must start with the literal `urn:babel:`
  bad_context,          ///< format: `<bounded-context>` missing or not [a-z0-9-]+
  bad_event,            ///< format: `<event-or-command>` missing, or an empty dot part
  extra_segments,       ///< format: more than four `:`-separated segments
  class_name,           ///< rule 4: looks like a class name (`\` present)
};

/// Result of check_urn(): the rule broken and a sentence saying why.
struct BABELQUEUE_CORE_EXPORT urn_verdict {
  urn_rule rule = urn_rule::ok;
  std::string message;
  explicit operator bool() const noexcept { return rule == urn_rule::ok; }
};

/// Checks `urn` against the convention and reports the first rule it breaks.
BABELQUEUE_CORE_EXPORT urn_verdict check_urn(std::string_view urn);
/// Stable name of a rule: `ok`, `empty`, `not_ascii_lowercase`, ...
BABELQUEUE_CORE_EXPORT std::string_view to_string(urn_rule rule) noexcept;

}  // namespace v1
}  // namespace babelqueue
