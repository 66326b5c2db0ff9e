#pragma once
/// @file bindings/artemis.hpp
/// @brief The Apache ActiveMQ Artemis binding (AMQP 1.0) as pure functions: the projection of
/// a publish onto the AMQP sections a JMS peer reads, attempts reconciliation with the AMQP
/// `delivery-count`, the routing URN of a received message, and the out-of-band headers read
/// back. No I/O, no Qpid Proton: the projection is a neutral struct that the Proton layer
/// copies onto a `proton::message`.
///
/// What a publish carries (spec "Broker bindings → Apache ActiveMQ Artemis", CONF
/// `artemis.property_projection`, wire-brokers §4.1–§4.3):
///  - body: the envelope JSON, byte-identical, sent by the Proton layer as an `amqp-value`
///    **string** — what Artemis maps to a JMS TextMessage (a `data` section would become a
///    BytesMessage, which the Java consumer does not read);
///  - message annotation `x-opt-jms-type` (symbol key) = the URN, the contract's slot;
///  - `properties.subject` = the URN as well: current Artemis maps JMSType from `subject`, not
///    from `x-opt-jms-type` (wire-brokers §4.2, source-verified), so a JMS peer's getJMSType()
///    sees the URN only through `subject`. An additive native projection, like RabbitMQ `type`;
///  - `properties.correlation-id` = `trace_id` (a string), `properties.creation-time` =
///    `meta.created_at` (AMQP timestamp, Unix ms), `properties.content-type` `application/json`;
///  - `header.durable` = true: the JMS default is persistent, and an AMQP message without it
///    is non-persistent and lost on a broker restart (Go/Python/.NET/Node leave it unset; the
///    C++ decision of wire-brokers §4.3 / §6.6 is to send durable messages; the transport's
///    `durable=false` option clears it on the wire, like the peers);
///  - application properties, all **strings**, underscore names (a JMS property name must be
///    a Java identifier): `bq_schema_version` (`"1"`), `bq_source_lang` (left out when
///    `meta.lang` is empty, as Go/Node), `bq_attempts` (decimal, a 0-based mirror: the body
///    stays authoritative), `bq_app_id` (`"babelqueue"`);
///  - on a delayed publish: annotation `x-opt-delivery-time` = absolute Unix ms as an AMQP
///    **long** (Artemis casts the value to a Number, so an AMQP timestamp would not schedule:
///    wire-brokers §4.3) and `bq_delay` = the delay in ms as a decimal string (.NET/Node/Java).
///  - `properties.message-id` is not set: the contract calls it broker-set.
///
/// Out-of-band headers (`traceparent`, `tracestate`, `bq-replay-bypass`, ...) ride as string
/// application properties after the contract ones (as the Node adapter does). The names the
/// binding owns (is_contract_property()) are never taken from out-of-band headers — not even
/// when the projection leaves one out — so a header can never pose as a contract field, and
/// headers_from_properties() drops the same names on the way back (symmetric).
///
/// When the body does not decode (a poison body dead-lettered unchanged) only the fixed parts
/// are set — `content-type`, `durable`, `bq_app_id`, a requested delay — plus the out-of-band
/// headers, as rabbitmq.hpp does.
///
/// Consume: `attempts = max(body, delivery-count)`; the AMQP header `delivery-count` is
/// 0-based, so no −1 (CONF `artemis.attempts_reconciliation`). Route on `x-opt-jms-type`, else
/// `subject` (what a JMS peer writes), else the body's `job` (routing_urn()).
///
/// The conformance block `artemis` is driven through project() and reconcile_attempts().
///
/// @note Thread-safety: every function is pure, reentrant and thread-safe (project() reads
/// the system clock only through its default `now` argument). Header-only so the conformance
/// runner can use it without Proton (it needs only babelqueue::core).

#include <babelqueue/codec.hpp>
#include <babelqueue/export/core.hpp>
#include <babelqueue/headers.hpp>
#include <babelqueue/text.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace babelqueue {
inline namespace v1 {
namespace bindings::artemis {

/// Message annotation (symbol key) carrying the URN: the contract's JMSType slot.
inline constexpr std::string_view annotation_jms_type = "x-opt-jms-type";
/// Message annotation Artemis schedules on: absolute Unix ms, an AMQP long.
inline constexpr std::string_view annotation_delivery_time = "x-opt-delivery-time";
inline constexpr std::string_view property_schema_version = "bq_schema_version";
inline constexpr std::string_view property_source_lang = "bq_source_lang";
inline constexpr std::string_view property_attempts = "bq_attempts";
inline constexpr std::string_view property_app_id = "bq_app_id";
/// On a delayed publish: the delay in ms, decimal.
inline constexpr std::string_view property_delay = "bq_delay";
inline constexpr std::string_view content_type = "application/json";
/// The value of `bq_app_id`.
inline constexpr std::string_view app_id = "babelqueue";

/// A message-annotation value: an AMQP string (`x-opt-jms-type`) or an AMQP long
/// (`x-opt-delivery-time`). Keys are AMQP symbols.
using annotation_value = std::variant<std::string, std::int64_t>;

/// The AMQP 1.0 sections of one publish, besides the body (sent as an `amqp-value` string).
struct BABELQUEUE_CORE_EXPORT message_projection {
  /// `properties.subject`: the URN (what Artemis maps to JMSType).
  std::optional<std::string> subject;
  /// `properties.correlation-id`, as an AMQP string: the trace_id.
  std::optional<std::string> correlation_id;
  /// `properties.creation-time` (AMQP timestamp, Unix ms): meta.created_at.
  std::optional<std::int64_t> creation_time_ms;
  /// `properties.content-type` (an AMQP symbol).
  std::string content_type{artemis::content_type};
  /// `header.durable`.
  bool durable = true;
  /// `message-annotations`: `x-opt-jms-type`, then `x-opt-delivery-time` when delayed.
  std::vector<std::pair<std::string, annotation_value>> annotations;
  /// `application-properties`, every value an AMQP string: the contract ones first (in the
  /// order of the constants above), then the out-of-band headers by name.
  std::vector<std::pair<std::string, std::string>> application_properties;

  /// The annotation `key`, or nullptr.
  const annotation_value* annotation(std::string_view key) const {
    for (const auto& [k, v] : annotations) {
      if (k == key) return &v;
    }
    return nullptr;
  }
  /// The application property `name`, or nullptr.
  const std::string* property(std::string_view name) const {
    for (const auto& [k, v] : application_properties) {
      if (k == name) return &v;
    }
    return nullptr;
  }
};

/// True for the application properties the binding owns (the four contract ones and
/// `bq_delay`): never taken from out-of-band headers, never returned as one.
inline bool is_contract_property(std::string_view name) {
  return name == property_schema_version || name == property_source_lang ||
         name == property_attempts || name == property_app_id || name == property_delay;
}

namespace detail {
inline std::int64_t unix_ms(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}
/// a + b for b > 0, saturating at the largest int64 instead of overflowing.
inline std::int64_t saturating_add(std::int64_t a, std::int64_t b) {
  return a > std::numeric_limits<std::int64_t>::max() - b ? std::numeric_limits<std::int64_t>::max()
                                                          : a + b;
}
}  // namespace detail

/// The projection of a publish of `body` with out-of-band headers `oob` (sanitised here:
/// blank names or values are dropped, wire-core §6) and an optional `delay`. A delay > 0
/// schedules the message at `now + delay` (`x-opt-delivery-time`) and mirrors it on
/// `bq_delay`; a delay of 0 or less is no delay. Never fails: a body that does not decode
/// gets the fixed parts only (see the file comment).
inline message_projection project(
    std::string_view body, const headers& oob = {},
    std::optional<std::chrono::milliseconds> delay = std::nullopt,
    std::chrono::system_clock::time_point now = std::chrono::system_clock::now()) {
  message_projection p;
  if (auto env = decode(body)) {
    const std::string_view urn = env->urn();
    if (!urn.empty()) {
      p.subject = std::string(urn);
      p.annotations.emplace_back(std::string(annotation_jms_type), std::string(urn));
    }
    if (!env->trace_id().empty()) p.correlation_id = std::string(env->trace_id());
    p.creation_time_ms = env->created_at();
    p.application_properties.emplace_back(std::string(property_schema_version),
                                          std::to_string(env->schema_version()));
    if (!env->lang().empty()) {
      p.application_properties.emplace_back(std::string(property_source_lang),
                                            std::string(env->lang()));
    }
    p.application_properties.emplace_back(std::string(property_attempts),
                                          std::to_string(env->attempts()));
  }
  p.application_properties.emplace_back(std::string(property_app_id), std::string(app_id));
  if (delay && delay->count() > 0) {
    p.annotations.emplace_back(std::string(annotation_delivery_time),
                               detail::saturating_add(detail::unix_ms(now), delay->count()));
    p.application_properties.emplace_back(std::string(property_delay),
                                          std::to_string(delay->count()));
  }
  for (const auto& [k, v] : oob) {
    if (is_blank(k) || is_blank(v) || is_contract_property(k)) continue;
    p.application_properties.emplace_back(k, v);
  }
  return p;
}

/// `attempts = max(body, delivery-count)`: the AMQP header `delivery-count` (prior failed
/// deliveries) is 0-based, so it maps with no −1; absent, 0 or negative keeps the body's
/// count, and a runtime-incremented body count is never lowered.
inline std::int64_t reconcile_attempts(std::int64_t body_attempts,
                                       std::optional<std::int64_t> delivery_count) {
  if (!delivery_count || *delivery_count <= 0) return body_attempts;
  return std::max(body_attempts, *delivery_count);
}

/// The URN a received message routes on without reading the body: the `x-opt-jms-type`
/// annotation (what every AMQP peer writes), else `properties.subject` (what a JMS peer
/// writes: Artemis maps JMSType to `subject`), else nullopt — route on the body's `job`. A
/// blank value (empty or ASCII white space) counts as absent; a non-blank one is returned
/// exactly as received, untrimmed (D3a). The result views the argument it came from.
inline std::optional<std::string_view> routing_urn(std::optional<std::string_view> jms_type,
                                                   std::optional<std::string_view> subject) {
  if (jms_type && !is_blank(*jms_type)) return jms_type;
  if (subject && !is_blank(*subject)) return subject;
  return std::nullopt;
}

/// The out-of-band headers of a received message: its string application properties minus
/// the names the binding owns (is_contract_property()), verbatim. `properties` is any range
/// of (name, value) pairs whose parts convert to std::string_view — the Proton layer passes
/// the string-valued application properties (a non-string property is not a header).
template <class Properties>
headers headers_from_properties(const Properties& properties) {
  headers out;
  for (const auto& [name, value] : properties) {
    const std::string_view n(name);
    if (is_contract_property(n)) continue;
    out.emplace(std::string(n), std::string(std::string_view(value)));
  }
  return out;
}

}  // namespace bindings::artemis
}  // namespace v1
}  // namespace babelqueue
