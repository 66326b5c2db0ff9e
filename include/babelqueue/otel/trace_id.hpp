#pragma once
/// @file trace_id.hpp
/// @brief The `trace_id` ↔ OpenTelemetry TraceID bijection (spec "Observability", ADR-0025;
/// wire-helpers §4.1 and §4.3, decision D8: as the Go SDK) — plain bytes, no OpenTelemetry
/// types, so it can be used (and tested) without opentelemetry-cpp.
///
///  - trace_id_of(): every `-` removed, a string of exactly 32 hex digits (either case) is a
///    UUID: its 16 raw bytes, unless they are all zero. Any other string: the first 16 bytes
///    of SHA-256 over its raw bytes, never the all-zero id (an all-zero prefix becomes
///    …0001, as the Python SDK; Go and PHP do not guard — only reachable in theory).
///  - uuid_of(): 16 bytes as a lowercase canonical UUID (8-4-4-4-12), so uuid_of(trace_id_of(u))
///    is u in lowercase for every non-nil UUID u.
///  - synthetic_span_id_of(): the span id of the synthetic remote parent a consumer uses when
///    no `traceparent` arrived: the first 8 bytes of SHA-256("babelqueue-span:" + trace_id),
///    all-zero → …01.
///
/// Known peer difference: Python parses hex with bytes.fromhex, which skips white space, so a
/// 32-character string with spaces inside is a (15-byte) id there and a hash here (and in Go).
/// @note Thread-safety: pure functions.

#include <babelqueue/export/otel.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace babelqueue {
inline namespace v1 {
namespace otel {

/// An OpenTelemetry TraceID (16 bytes, big-endian as W3C writes it).
using trace_id_bytes = std::array<std::uint8_t, 16>;
/// An OpenTelemetry SpanID (8 bytes).
using span_id_bytes = std::array<std::uint8_t, 8>;

/// The TraceID every SDK derives from an envelope `trace_id` (never all zero).
BABELQUEUE_OTEL_EXPORT trace_id_bytes trace_id_of(std::string_view trace_id) noexcept;

/// `id` as a lowercase canonical UUID string (`4bf92f35-77b3-4da6-a3ce-929d0e0e4736`).
BABELQUEUE_OTEL_EXPORT std::string uuid_of(const trace_id_bytes& id);

/// The span id of the synthetic remote parent derived from `trace_id` (never all zero).
BABELQUEUE_OTEL_EXPORT span_id_bytes synthetic_span_id_of(std::string_view trace_id) noexcept;

/// Lowercase hex of the bytes (32 digits for a TraceID, 16 for a SpanID), as W3C writes them.
BABELQUEUE_OTEL_EXPORT std::string to_hex(const trace_id_bytes& id);
BABELQUEUE_OTEL_EXPORT std::string to_hex(const span_id_bytes& id);

}  // namespace otel
}  // namespace v1
}  // namespace babelqueue
