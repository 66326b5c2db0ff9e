#pragma once
/// @file uuid.hpp
/// @brief Random (version 4) UUIDs for `meta.id` and fresh `trace_id`s.
///
/// Bytes come from OpenSSL's CSPRNG (`RAND_bytes`) through a per-thread buffer, so a UUID
/// costs no system call; the buffer is discarded in a forked child so parent and child never
/// hand out the same bytes.
/// @note Thread-safety: thread-safe (per-thread state).

#include <babelqueue/export/core.hpp>

#include <array>
#include <string>
#include <string_view>

namespace babelqueue {
inline namespace v1 {

/// A fresh lowercase 8-4-4-4-12 UUIDv4 (version nibble 4, variant 10xx).
BABELQUEUE_CORE_EXPORT std::string uuid_v4();
/// Writes a fresh UUIDv4 into exactly 36 chars at `out`.
BABELQUEUE_CORE_EXPORT void uuid_v4_into(char* out);
/// True when `text` is a lowercase or uppercase 8-4-4-4-12 hexadecimal UUID (any version).
BABELQUEUE_CORE_EXPORT bool is_uuid(std::string_view text) noexcept;

}  // namespace v1
}  // namespace babelqueue
