#pragma once
/// @file runtime/unknown_urn.hpp
/// @brief The runtime's policy for a message whose URN has no handler (spec consumer rule 3).
/// @note Thread-safety: pure functions.

#include <babelqueue/export/runtime.hpp>

#include <optional>
#include <string_view>

namespace babelqueue {
inline namespace v1 {

/// What the runtime does with a message whose URN has no handler (spec consumer rule 3).
enum class unknown_urn_strategy {
  fail,         ///< count as a handler failure (retry, then dead-letter as `unknown_urn`)
  del,          ///< ack and drop; spelled `delete`
  release,      ///< put the same bytes back, attempts unchanged
  dead_letter,  ///< dead-letter at once (degrades to `delete` when dead-lettering is off)
};

/// `fail`, `delete`, `release`, `dead_letter`.
BABELQUEUE_RUNTIME_EXPORT std::string_view to_string(unknown_urn_strategy strategy) noexcept;
/// Parses the spellings above (also `dead-letter`, as the spec writes it once).
BABELQUEUE_RUNTIME_EXPORT std::optional<unknown_urn_strategy> parse_unknown_urn_strategy(
    std::string_view text) noexcept;

}  // namespace v1
}  // namespace babelqueue
