#pragma once
// Small helpers shared by the sqlite transport's source files. Private.

#include <babelqueue/sqlite/sqlite_transport.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace babelqueue::inline v1::sqlite::detail {

/// Range checks of options that open() applies whether or not they came from a URL.
result<void> validate(const sqlite::options& opts);

/// Wall-clock milliseconds since the Unix epoch: the file is shared between processes and
/// outlives reboots, so a per-boot steady clock cannot be stored in it.
inline std::int64_t wall_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

/// Sanitised headers as canonical JSON object text (sorted keys), or nullopt when there
/// are none (stored as NULL). errc::invalid_utf8 when a name or value is not UTF-8.
result<std::optional<std::string>> headers_to_json(const headers& hdrs);

/// The inverse. Text that is not a JSON object of strings (only possible if the row was
/// edited by hand) yields the entries that are strings, never an error: the body is what
/// the runtime needs, and refusing the row would redeliver it forever.
headers headers_from_json(std::string_view text);

}  // namespace babelqueue::inline v1::sqlite::detail
