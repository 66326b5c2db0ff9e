#pragma once
/// @file bindings/rabbitmq.hpp
/// @brief The RabbitMQ (AMQP 0-9-1) binding as pure functions: the property projection of a
/// publish, attempts reconciliation and the topology names. No I/O, no rabbitmq-c.
///
/// Decision D7 (wire-core §8): publish to the default exchange `""` with routing key = the
/// queue; queues are durable, non-exclusive, non-auto-delete, declared with no arguments
/// (so a queue a peer declared never fails with PRECONDITION_FAILED); the DLQ is the plain
/// durable queue `<queue>.dlq`. Every publish carries the projection of its envelope:
/// `content_type application/json`, `content_encoding utf-8`, `delivery_mode 2`, `app_id
/// babelqueue`, `type` = URN, `correlation_id` = `trace_id`, `message_id` = `meta.id`, and
/// the typed headers `x-schema-version` (integer), `x-source-lang` (string), `x-attempts`
/// (integer). The body stays byte-identical.
///
/// When the body does not decode (a poison body dead-lettered unchanged), only the fixed
/// properties are set, as Go does. `type`, `correlation_id` and `message_id` are AMQP short
/// strings (≤ 255 bytes): a longer value is left out rather than cut. As Go, an empty
/// `meta.lang` writes no `x-source-lang`.
///
/// Out-of-band headers (`traceparent`, `bq-replay-bypass`, ...) ride in the same table as
/// long strings; the contract headers win a name collision.
///
/// The conformance block `rabbitmq.property_projection` is driven through project().
///
/// @note Thread-safety: every function is pure, reentrant and thread-safe. Header-only so
/// the conformance runner can use it without rabbitmq-c (it needs only babelqueue::core).

#include <babelqueue/codec.hpp>
#include <babelqueue/dead_letter.hpp>
#include <babelqueue/export/core.hpp>
#include <babelqueue/headers.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace babelqueue {
inline namespace v1 {
namespace bindings::rabbitmq {

inline constexpr std::string_view content_type = "application/json";
inline constexpr std::string_view content_encoding = "utf-8";
/// AMQP `delivery_mode` 2: persistent (survives a broker restart in a durable queue).
inline constexpr std::uint8_t delivery_mode_persistent = 2;
inline constexpr std::string_view app_id = "babelqueue";
inline constexpr std::string_view header_schema_version = "x-schema-version";
inline constexpr std::string_view header_source_lang = "x-source-lang";
inline constexpr std::string_view header_attempts = "x-attempts";
/// Longest AMQP short string (`type`, `correlation_id`, `message_id`, routing key, queue).
inline constexpr std::size_t max_short_string = 255;
/// The default exchange every publish goes through (routing key = queue name).
inline constexpr std::string_view default_exchange = "";

/// A typed header value: AMQP integers stay integers (written as signed 32-bit `I` when
/// they fit, else 64-bit `l`, as pika and Go do), strings are long strings `S`.
using header_value = std::variant<std::int64_t, std::string>;

/// The AMQP 0-9-1 basic properties of one publish.
struct BABELQUEUE_CORE_EXPORT properties {
  std::string content_type{rabbitmq::content_type};
  std::string content_encoding{rabbitmq::content_encoding};
  std::uint8_t delivery_mode = delivery_mode_persistent;
  std::string app_id{rabbitmq::app_id};
  std::optional<std::string> type;            ///< the URN
  std::optional<std::string> correlation_id;  ///< the trace_id
  std::optional<std::string> message_id;      ///< meta.id
  /// The headers table, contract headers first, then out-of-band headers by name.
  std::vector<std::pair<std::string, header_value>> headers;

  /// The header named `name`, or nullptr.
  const header_value* header(std::string_view name) const {
    for (const auto& [k, v] : headers) {
      if (k == name) return &v;
    }
    return nullptr;
  }
};

/// True for the three headers the projection derives from the envelope.
inline bool is_contract_header(std::string_view name) {
  return name == header_schema_version || name == header_source_lang || name == header_attempts;
}

namespace detail {
inline std::optional<std::string> short_string(std::string_view v) {
  if (v.empty() || v.size() > max_short_string) return std::nullopt;
  return std::string(v);
}
}  // namespace detail

/// The properties of a publish of `body` with out-of-band `oob` headers (sanitised here:
/// blank names or values are dropped, wire-core §6). Never fails: a body that does not
/// decode gets the fixed properties and the out-of-band headers only.
inline properties project(std::string_view body, const headers& oob = {}) {
  properties p;
  if (auto env = decode(body)) {
    p.type = detail::short_string(env->urn());
    p.correlation_id = detail::short_string(env->trace_id());
    p.message_id = detail::short_string(env->id());
    p.headers.emplace_back(std::string(header_schema_version), env->schema_version());
    if (!env->lang().empty()) {
      p.headers.emplace_back(std::string(header_source_lang), std::string(env->lang()));
    }
    p.headers.emplace_back(std::string(header_attempts), env->attempts());
  }
  for (const auto& [k, v] : sanitize_headers(oob)) {
    if (p.header(k) == nullptr) p.headers.emplace_back(k, v);
  }
  return p;
}

/// `attempts = max(body, x-attempts)` (D7): Laravel's release bumps only the header.
inline std::int64_t reconcile_attempts(std::int64_t body_attempts,
                                       std::optional<std::int64_t> x_attempts) {
  if (!x_attempts) return body_attempts;
  return std::max(body_attempts, *x_attempts);
}

/// The dead-letter queue of `queue`: the plain durable queue `<queue>.dlq`.
inline std::string dead_letter_queue(std::string_view queue) {
  std::string q(queue);
  q.append(babelqueue::dead_letter_suffix);
  return q;
}

}  // namespace bindings::rabbitmq
}  // namespace v1
}  // namespace babelqueue
