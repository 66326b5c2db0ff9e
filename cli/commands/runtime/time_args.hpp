#pragma once
// The CLI's time arguments: `--delay 30s` (a duration with its unit) and
// `--at 2026-12-24T09:00:00Z` (an RFC 3339 instant with a Z or ±hh:mm offset).
#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace babelqueue::cli {

/// "1500ms", "30s", "5m", "2h", "1d" → a duration; nullopt (with `why` set) when not one. A
/// bare number is refused: "30" could be seconds or milliseconds.
std::optional<std::chrono::milliseconds> parse_delay(std::string_view text, std::string& why);

/// "2026-12-24T09:00:00Z", "2026-12-24T10:00:00.250+01:00" → that instant; nullopt (with `why`
/// set) for anything else, including a time without an offset (local time is ambiguous).
std::optional<std::chrono::system_clock::time_point> parse_instant(std::string_view text,
                                                                   std::string& why);

}  // namespace babelqueue::cli
