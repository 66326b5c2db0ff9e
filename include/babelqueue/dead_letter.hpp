#pragma once
/// @file dead_letter.hpp
/// @brief The additive `dead_letter` block and its reasons.
/// @note Thread-safety: pure functions over values.
/// @see spec "Dead-letter & tracing", reference wire-core.md §4.

#include <babelqueue/envelope.hpp>
#include <babelqueue/export/core.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace babelqueue {
inline namespace v1 {

/// Why a message was dead-lettered (the schema's enum).
enum class dead_letter_reason { failed, unknown_urn, poison };

BABELQUEUE_CORE_EXPORT std::string_view to_string(dead_letter_reason reason) noexcept;
BABELQUEUE_CORE_EXPORT std::optional<dead_letter_reason> parse_dead_letter_reason(
    std::string_view text) noexcept;

/// Default suffix of a dead-letter queue: `orders` → `orders.dlq`.
inline constexpr std::string_view dead_letter_suffix = ".dlq";

/// Returns a copy of `env` with the seven-key `dead_letter` block in spec order
/// (`reason, error, exception, failed_at, original_queue, attempts, lang`); `error` and
/// `exception` are null when not given, `failed_at` is now (Unix ms), `lang` is "cpp".
/// Top-level `attempts` is not touched: the runtime sets it (D5) before calling this.
BABELQUEUE_CORE_EXPORT envelope annotate(const envelope& env, dead_letter_reason reason,
                                         std::string_view original_queue, std::int64_t attempts,
                                         std::optional<std::string_view> error = std::nullopt,
                                         std::optional<std::string_view> exception = std::nullopt);

/// Current Unix time in milliseconds (truncated), as every peer but PHP writes it.
BABELQUEUE_CORE_EXPORT std::int64_t unix_millis() noexcept;

}  // namespace v1
}  // namespace babelqueue
