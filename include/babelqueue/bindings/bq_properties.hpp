#pragma once
/// @file bindings/bq_properties.hpp
/// @brief The six `bq-` string properties that the Kafka (record headers) and Pulsar (message
/// properties) bindings project from an envelope, and their read side: the `bq-attempts`
/// count and the `bq-schema-version` gate (spec "Broker bindings", wire-core §9.6). Pure; the
/// bindings/kafka.hpp and bindings/pulsar.hpp headers build on it.
///
/// Values are UTF-8 text, written once each: `bq-job`, `bq-trace-id`, `bq-message-id`,
/// `bq-schema-version` (`"1"`), `bq-source-lang`, `bq-attempts` (decimal). Empty values are
/// left out, except `bq-attempts`, which is always written (as every peer). Out-of-band
/// headers follow; a contract name wins a collision.
///
/// @note Thread-safety: every function is pure, reentrant and thread-safe.

#include <babelqueue/codec.hpp>
#include <babelqueue/headers.hpp>
#include <babelqueue/text.hpp>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace babelqueue {
inline namespace v1 {
namespace bindings::bq {

inline constexpr std::string_view header_job = "bq-job";
inline constexpr std::string_view header_trace_id = "bq-trace-id";
inline constexpr std::string_view header_message_id = "bq-message-id";
inline constexpr std::string_view header_schema_version = "bq-schema-version";
inline constexpr std::string_view header_source_lang = "bq-source-lang";
inline constexpr std::string_view header_attempts = "bq-attempts";
/// The URN prefix a message refused by the schema-version gate is routed on (PHP's
/// `KafkaConsumer::UNSUPPORTED_SCHEMA_URN_PREFIX`, Python's Pulsar gate route).
inline constexpr std::string_view unsupported_schema_urn_prefix =
    "babelqueue:unsupported-schema-version:";

/// True for the six properties the projection derives from the envelope.
inline bool is_contract_header(std::string_view name) {
  return name == header_job || name == header_trace_id || name == header_message_id ||
         name == header_schema_version || name == header_source_lang || name == header_attempts;
}

/// The projection streamed, without building strings: calls `add(name, value)` (both
/// std::string_view, valid during the call) for each property in wire order — the contract
/// ones, then the out-of-band ones (sanitised: blank names or values dropped; a name a
/// contract property already took is skipped) — and returns `meta.created_at` (nullopt when
/// the body has none or does not decode: a poison body carries the out-of-band ones only).
template <class Add>
std::optional<std::int64_t> project_each(std::string_view body, const headers& oob, Add&& add) {
  std::optional<std::int64_t> created_at;
  std::string_view taken[6];
  std::size_t n_taken = 0;
  const auto emit = [&](std::string_view name, std::string_view value) {
    if (value.empty()) return;
    add(name, value);
    taken[n_taken++] = name;
  };
  if (auto env = decode(body)) {
    emit(header_job, env->urn());
    emit(header_trace_id, env->trace_id());
    emit(header_message_id, env->id());
    char version[24];
    const auto v_end = std::to_chars(version, version + sizeof version, env->schema_version()).ptr;
    emit(header_schema_version,
         std::string_view(version, static_cast<std::size_t>(v_end - version)));
    emit(header_source_lang, env->lang());
    char attempts[24];
    const auto a_end = std::to_chars(attempts, attempts + sizeof attempts, env->attempts()).ptr;
    emit(header_attempts, std::string_view(attempts, static_cast<std::size_t>(a_end - attempts)));
    created_at = env->created_at();
  }
  for (const auto& [k, v] : oob) {
    if (is_blank(k) || is_blank(v)) continue;
    if (std::find(taken, taken + n_taken, std::string_view(k)) != taken + n_taken) continue;
    add(std::string_view(k), std::string_view(v));
  }
  return created_at;
}

/// The `bq-attempts` value as a count: decimal digits with an optional sign, surrounding
/// ASCII white space allowed (Java/Node trim); nullopt for anything else (the body's count
/// is then used, as Go/Python fall back on a parse error).
inline std::optional<std::int64_t> parse_attempts(std::string_view text) {
  const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!text.empty() && blank(text.front())) text.remove_prefix(1);
  while (!text.empty() && blank(text.back())) text.remove_suffix(1);
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  std::int64_t n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || n < 0) {
    return std::nullopt;
  }
  return n;
}

/// The schema-version gate on the `bq-schema-version` property, before any decode (the PHP
/// page; wire-core §9.6; Python's Pulsar consumer): absent, empty or ASCII-white-space-only →
/// nullopt (decode normally); `"1"` exactly → nullopt; anything else (`" 1"`, `"1.0"`, `"2"`)
/// → the value, which refuses the message: it is routed on unsupported_schema_urn(value) and
/// dead-lettered with its original bytes.
inline std::optional<std::string> refused_schema_version(std::optional<std::string_view> value) {
  if (!value) return std::nullopt;
  if (is_blank(*value) || *value == "1") return std::nullopt;
  return std::string(*value);
}

/// `babelqueue:unsupported-schema-version:<value>`
inline std::string unsupported_schema_urn(std::string_view value) {
  return std::string(unsupported_schema_urn_prefix) + std::string(value);
}

}  // namespace bindings::bq
}  // namespace v1
}  // namespace babelqueue
