#pragma once
/// @file codec.hpp
/// @brief Strict decoding (D3), canonical encoding (D2) and lossless re-emit (D4).
///
/// Nothing here throws on bad input: every parse returns a result whose error carries a
/// D3 reason (errc::malformed_json, errc::missing_urn, ...) and a message.
/// @note Thread-safety: all functions are reentrant and thread-safe.
/// @see reference decisions.md D2–D4, wire-core.md §1 and §3.

#include <babelqueue/envelope.hpp>
#include <babelqueue/export/core.hpp>

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace babelqueue {
inline namespace v1 {

/// Limits and hooks of decode(). Defaults are safe for untrusted input.
struct BABELQUEUE_CORE_EXPORT decode_options {
  /// Maximum nesting of arrays/objects (the root object is depth 1). Deeper input is
  /// errc::malformed_json, never a stack overflow.
  std::size_t max_depth = 512;
  /// Maximum body size in bytes; larger bodies are errc::malformed_json without parsing.
  std::size_t max_bytes = std::size_t{64} * 1024 * 1024;
  /// Receives one line per forbidden key dropped (D3); the runtime routes it to its logger.
  std::function<void(std::string_view warning)> on_warning;
};

/// Parses and gates one message body: strict RFC 8259 (no BOM, no trailing data, valid
/// UTF-8, no lone surrogates, no NaN/Infinity), duplicate keys last-wins, then the accept
/// rules in PHP's reason order. Forbidden keys are dropped (and reported); an empty `data`
/// array `[]` is read as `{}`.
BABELQUEUE_CORE_EXPORT result<envelope> decode(std::string_view body,
                                               const decode_options& options = {});
/// As above, reusing the buffer when the body is already canonical (no copy).
BABELQUEUE_CORE_EXPORT result<envelope> decode(std::string&& body,
                                               const decode_options& options = {});
/// Disambiguates string literals.
inline result<envelope> decode(const char* body, const decode_options& options = {}) {
  return decode(std::string_view(body), options);
}

/// errc::ok when decode() would accept the body, else its reason.
BABELQUEUE_CORE_EXPORT errc check(std::string_view body) noexcept;
/// True when check(body) == errc::ok.
BABELQUEUE_CORE_EXPORT bool accepts(std::string_view body) noexcept;

/// The canonical wire text (D2/D4): frame order as received (make() writes
/// `job,trace_id,data,meta,attempts`), `attempts` and `dead_letter` as currently set,
/// compact, no trailing newline. errc::forbidden_key when an extension set by the caller
/// is forbidden, or when an envelope built by make() was given a `urn` member.
BABELQUEUE_CORE_EXPORT result<std::string> encode(const envelope& env);
/// As above, appending to `out` (lets callers reuse one buffer).
BABELQUEUE_CORE_EXPORT result<void> encode_to(const envelope& env, std::string& out);

/// Writes any JSON value as canonical text (D2): insertion order, compact, D2 escaping,
/// ECMAScript double layout, exact integers. errc::invalid_utf8 / errc::non_finite_number.
BABELQUEUE_CORE_EXPORT result<std::string> to_canonical_json(const json& value);
/// As above, appending to `out`. On error `out` holds a partial write.
BABELQUEUE_CORE_EXPORT result<void> write_canonical_json(const json& value, std::string& out);

/// Re-writes arbitrary JSON text into canonical form without going through doubles: numbers
/// keep their exact text, strings are re-escaped per D2, white space is removed, key order
/// is kept. errc::malformed_json on invalid input.
BABELQUEUE_CORE_EXPORT result<std::string> canonicalize(std::string_view json_text,
                                                        std::size_t max_depth = 512);

/// Parses JSON text strictly (same rules as decode()) into `json`. Integers that fit int64
/// or uint64 stay integers; other numbers must fit a finite double (errc::number_out_of_range).
BABELQUEUE_CORE_EXPORT result<json> parse_json(std::string_view json_text,
                                               std::size_t max_depth = 512);

/// The ECMAScript Number-to-String layout of a finite double, shortest round-trip digits
/// (`1`, `99.9`, `1e+21`, `1e-7`), except that negative zero is `-0` (as Go; D2).
BABELQUEUE_CORE_EXPORT std::string format_double(double value);

}  // namespace v1
}  // namespace babelqueue
