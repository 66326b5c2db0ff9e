#pragma once
/// @file bindings/kafka.hpp
/// @brief The Apache Kafka binding as pure functions (spec "Broker bindings → Apache Kafka",
/// wire-core §9): the `bq-` header projection of a record, `attempts` reconciliation, the
/// `bq-schema-version` gate, and the retry-tier names and choices. No I/O, no librdkafka.
///
/// A record's value is the envelope bytes, unchanged; its timestamp (CreateTime) is
/// `meta.created_at`; it has no key unless the caller gives one. Its headers, UTF-8 strings
/// written once each: `bq-job`, `bq-trace-id`, `bq-message-id`, `bq-schema-version` (`"1"`),
/// `bq-source-lang`, `bq-attempts` (decimal). Empty values are left out, except
/// `bq-attempts`, which is always written (as every peer). Out-of-band headers
/// (`traceparent`, `bq-replay-bypass`, `bq-delay`, `bq-original-topic`) follow; a contract
/// header wins a name collision.
///
/// Retry tiers (Java/Node/.NET naming, the docs' `<topic>.retry.<n>`; PHP names tiers by
/// their delay in ms instead, wire-core §9.3): delays sorted ascending, tier n (1-based) is
/// the topic `<work>.retry.<n>`. A retry of a record delivered with `attempts` = a goes to
/// tier min(a, last) + 1 — the first failure to `.retry.1`, the second to `.retry.2`, ...
///
/// The conformance block `kafka` is driven through project() and reconcile_attempts().
///
/// @note Thread-safety: every function is pure, reentrant and thread-safe. Header-only so the
/// conformance runner can use it without librdkafka (it needs only babelqueue::core).

#include <babelqueue/codec.hpp>
#include <babelqueue/dead_letter.hpp>
#include <babelqueue/headers.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace babelqueue {
inline namespace v1 {
namespace bindings::kafka {

inline constexpr std::string_view header_job = "bq-job";
inline constexpr std::string_view header_trace_id = "bq-trace-id";
inline constexpr std::string_view header_message_id = "bq-message-id";
inline constexpr std::string_view header_schema_version = "bq-schema-version";
inline constexpr std::string_view header_source_lang = "bq-source-lang";
inline constexpr std::string_view header_attempts = "bq-attempts";
/// On a retry-tier record: the delay it waits, in ms (decimal).
inline constexpr std::string_view header_delay = "bq-delay";
/// On a retry-tier record: the work topic it returns to.
inline constexpr std::string_view header_original_topic = "bq-original-topic";
/// The URN prefix a record refused by the schema-version gate is routed on (PHP's
/// `KafkaConsumer::UNSUPPORTED_SCHEMA_URN_PREFIX`).
inline constexpr std::string_view unsupported_schema_urn_prefix =
    "babelqueue:unsupported-schema-version:";
/// `<work>.retry.<n>`
inline constexpr std::string_view retry_infix = ".retry.";

/// A record header. Kafka headers are bytes; every `bq-` value is UTF-8 text.
using record_header = std::pair<std::string, std::string>;

/// What a publish of one envelope puts on the wire besides the value.
struct record_projection {
  /// Contract headers first (in the order above), then the out-of-band ones by name.
  std::vector<record_header> headers;
  /// CreateTime in Unix ms: `meta.created_at`; nullopt (the producer's clock) when the body
  /// has none or does not decode.
  std::optional<std::int64_t> timestamp_ms;

  /// The value of the header `name`, or nullptr.
  const std::string* header(std::string_view name) const {
    for (const auto& [k, v] : headers) {
      if (k == name) return &v;
    }
    return nullptr;
  }
};

/// True for the six headers the projection derives from the envelope.
inline bool is_contract_header(std::string_view name) {
  return name == header_job || name == header_trace_id || name == header_message_id ||
         name == header_schema_version || name == header_source_lang || name == header_attempts;
}

/// The projection streamed, without building strings: calls `add(name, value)` (both
/// std::string_view, valid during the call) for each header in wire order — the contract
/// headers, then the out-of-band ones (sanitised: blank names or values dropped; a name a
/// contract header already took is skipped) — and returns the timestamp (`meta.created_at`,
/// nullopt when the body has none or does not decode). project() collects it.
template <class Add>
std::optional<std::int64_t> project_each(std::string_view body, const headers& oob, Add&& add) {
  std::optional<std::int64_t> timestamp;
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
    emit(header_schema_version, std::string_view(version, static_cast<std::size_t>(v_end - version)));
    emit(header_source_lang, env->lang());
    char attempts[24];
    const auto a_end = std::to_chars(attempts, attempts + sizeof attempts, env->attempts()).ptr;
    emit(header_attempts, std::string_view(attempts, static_cast<std::size_t>(a_end - attempts)));
    timestamp = env->created_at();
  }
  for (const auto& [k, v] : oob) {
    if (is_blank(k) || is_blank(v)) continue;
    if (std::find(taken, taken + n_taken, std::string_view(k)) != taken + n_taken) continue;
    add(std::string_view(k), std::string_view(v));
  }
  return timestamp;
}

/// The projection of a record with value `body` and out-of-band headers `oob` (sanitised:
/// blank names or values dropped, wire-core §6). Never fails: a body that does not decode (a
/// poison record dead-lettered unchanged) carries the out-of-band headers only.
inline record_projection project(std::string_view body, const headers& oob = {}) {
  record_projection p;
  p.timestamp_ms = project_each(body, oob, [&p](std::string_view name, std::string_view value) {
    p.headers.emplace_back(std::string(name), std::string(value));
  });
  return p;
}

/// The `bq-attempts` header as a count: decimal digits with an optional sign, surrounding
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

/// `attempts` = the `bq-attempts` header when present and parseable — authoritative, NOT a
/// max (CONF `kafka.attempts_reconciliation`) — else the body's.
inline std::int64_t reconcile_attempts(std::int64_t body_attempts,
                                       std::optional<std::int64_t> header_count) {
  return header_count.value_or(body_attempts);
}

/// The schema-version gate on the `bq-schema-version` header, before any decode (the PHP
/// page; wire-core §9.6): absent, empty or ASCII-white-space-only → nullopt (decode
/// normally); `"1"` exactly → nullopt; anything else (`" 1"`, `"1.0"`, `"2"`) → the value,
/// which refuses the record: it is routed on unsupported_schema_urn(value) and dead-lettered
/// with its original bytes.
inline std::optional<std::string> refused_schema_version(std::optional<std::string_view> header) {
  if (!header) return std::nullopt;
  const bool blank = std::all_of(header->begin(), header->end(), [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
  });
  if (blank || *header == "1") return std::nullopt;
  return std::string(*header);
}

/// `babelqueue:unsupported-schema-version:<value>`
inline std::string unsupported_schema_urn(std::string_view value) {
  return std::string(unsupported_schema_urn_prefix) + std::string(value);
}

/// The dead-letter topic of a work topic: `<topic>.dlq`.
inline std::string dead_letter_topic(std::string_view topic) {
  return std::string(topic) + std::string(babelqueue::dead_letter_suffix);
}

/// `<work>.retry.<tier>` (tier is 1-based).
inline std::string retry_topic(std::string_view work_topic, std::size_t tier) {
  return std::string(work_topic) + std::string(retry_infix) + std::to_string(tier);
}

/// The work topic of a retry-tier topic name (`orders.retry.2` → `orders`), or nullopt.
inline std::optional<std::string> work_topic_of(std::string_view retry_topic_name) {
  const auto at = retry_topic_name.rfind(retry_infix);
  if (at == std::string_view::npos || at == 0) return std::nullopt;
  const auto digits = retry_topic_name.substr(at + retry_infix.size());
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(),
                                     [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  return std::string(retry_topic_name.substr(0, at));
}

/// The 1-based tier a retry of a record delivered with `delivered_attempts` goes to:
/// min(attempts, tiers) + 1 capped at the last tier (Java/Node/.NET). 0 when there are none.
inline std::size_t retry_tier(std::int64_t delivered_attempts, std::size_t tier_count) {
  if (tier_count == 0) return 0;
  const auto a = static_cast<std::uint64_t>(std::max<std::int64_t>(delivered_attempts, 0));
  return static_cast<std::size_t>(std::min<std::uint64_t>(a, tier_count - 1)) + 1;
}

/// The 1-based tier a delayed release goes to: the smallest whose delay is >= `delay`; 0
/// when the delay is larger than every tier (an error for the caller, never a drop).
inline std::size_t delay_tier(std::chrono::milliseconds delay,
                              const std::vector<std::chrono::milliseconds>& tiers) {
  const auto it = std::lower_bound(tiers.begin(), tiers.end(), delay);
  return it == tiers.end() ? 0 : static_cast<std::size_t>(it - tiers.begin()) + 1;
}

}  // namespace bindings::kafka
}  // namespace v1
}  // namespace babelqueue
