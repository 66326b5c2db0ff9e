#pragma once
// Shared by `babelqueue dlq …` and `babelqueue redrive`: opening the broker, time and
// duration text, and a plain left-aligned table.
#include <babelqueue/runtime/transport.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace babelqueue::cli {

/// Opens `url` (or the default broker when empty); on failure prints why and sets exit 2.
std::unique_ptr<transport> open_broker_or_report(const std::string& url);

/// Unix milliseconds as RFC 3339 UTC with milliseconds ("" for 0).
std::string format_unix_millis(std::int64_t ms);

/// "90", "90s", "15m", "2h", "7d" → a duration; nullopt when not one.
std::optional<std::chrono::milliseconds> parse_duration(std::string_view text);

/// Prints rows under a header, each column as wide as its widest cell (cells are cut to
/// `max_width` characters with "…" so one long error does not wrap the table).
void print_table(std::ostream& out, const std::vector<std::string>& header,
                 const std::vector<std::vector<std::string>>& rows, std::size_t max_width = 60);

}  // namespace babelqueue::cli
