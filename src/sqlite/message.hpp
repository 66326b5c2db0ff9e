#pragma once
// The headers column: canonical JSON object text, one string value per name (NULL when a
// message has none).
//
// Thread-safety: pure functions over caller-owned data.
#include <babelqueue/headers.hpp>
#include <babelqueue/result.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace babelqueue::inline v1::sqlite::detail {

/// Sanitised headers as canonical JSON object text (sorted keys), or nullopt when there
/// are none (stored as NULL). errc::invalid_utf8 when a name or value is not UTF-8.
result<std::optional<std::string>> headers_to_json(const headers& hdrs);

/// The inverse. Text that is not a JSON object of strings (only possible if the row was
/// edited by hand) yields the entries that are strings, never an error: the body is what
/// the runtime needs, and refusing the row would redeliver it forever.
headers headers_from_json(std::string_view text);

}  // namespace babelqueue::inline v1::sqlite::detail
