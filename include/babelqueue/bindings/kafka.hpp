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

#include <babelqueue/bindings/bq_properties.hpp>
#include <babelqueue/codec.hpp>
#include <babelqueue/dead_letter.hpp>
#include <babelqueue/export/core.hpp>
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

// The six contract headers, the attempts parse and the schema-version gate are shared with
// the Pulsar binding (bindings/bq_properties.hpp).
using bq::header_attempts;
using bq::header_job;
using bq::header_message_id;
using bq::header_schema_version;
using bq::header_source_lang;
using bq::header_trace_id;
using bq::is_contract_header;
using bq::parse_attempts;
using bq::project_each;
using bq::refused_schema_version;
using bq::unsupported_schema_urn;
using bq::unsupported_schema_urn_prefix;
/// On a retry-tier record: the delay it waits, in ms (decimal).
inline constexpr std::string_view header_delay = "bq-delay";
/// On a retry-tier record: the work topic it returns to.
inline constexpr std::string_view header_original_topic = "bq-original-topic";
/// `<work>.retry.<n>`
inline constexpr std::string_view retry_infix = ".retry.";

/// A record header. Kafka headers are bytes; every `bq-` value is UTF-8 text.
using record_header = std::pair<std::string, std::string>;

/// What a publish of one envelope puts on the wire besides the value.
struct BABELQUEUE_CORE_EXPORT record_projection {
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

/// `attempts` = the `bq-attempts` header when present and parseable — authoritative, NOT a
/// max (CONF `kafka.attempts_reconciliation`) — else the body's.
inline std::int64_t reconcile_attempts(std::int64_t body_attempts,
                                       std::optional<std::int64_t> header_count) {
  return header_count.value_or(body_attempts);
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
  if (digits.empty() ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
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
