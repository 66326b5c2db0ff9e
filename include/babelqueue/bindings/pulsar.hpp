#pragma once
/// @file bindings/pulsar.hpp
/// @brief The Apache Pulsar binding as pure functions (spec "Broker bindings → Apache
/// Pulsar", wire-brokers §3): the `bq-` property projection of a message, `attempts`
/// reconciliation with the redelivery count, the `bq-schema-version` gate, topic names and
/// the read side of received properties. No I/O, no Pulsar client.
///
/// A message's payload is the envelope bytes, unchanged; its event time is `meta.created_at`
/// (publishTime stays broker-set). Its properties (string → string): `bq-job`,
/// `bq-trace-id`, `bq-message-id`, `bq-schema-version` (`"1"`), `bq-source-lang`,
/// `bq-attempts` (decimal, always present), then out-of-band headers (`traceparent`, ...); a
/// contract property wins a name collision. A delayed message also carries `bq-delay` (ms).
///
/// attempts = max(body.attempts, RedeliveryCount): the count is 0-based, so NO −1, and a
/// runtime-incremented body count is never lowered (conformance `pulsar`). The `bq-attempts`
/// property is a mirror the body is authoritative over. (The Python SDK 1.24 instead takes a
/// valid `bq-attempts` over the body, then the max; both agree on what any SDK writes, since
/// every producer mirrors the body's count.)
///
/// Topics: a queue `orders` is `persistent://<tenant>/<namespace>/orders` (default
/// `public/default`, what the bare name means to every Pulsar client); a queue that is
/// already a full topic name (`persistent://…`, `non-persistent://…`) is used as it is. The
/// dead-letter topic of `orders` is `orders.dlq` — a name any peer can read.
///
/// @note Thread-safety: every function is pure, reentrant and thread-safe. Header-only so the
/// conformance runner and the fuzzers use it without the Pulsar client.

#include <babelqueue/bindings/bq_properties.hpp>
#include <babelqueue/dead_letter.hpp>
#include <babelqueue/export/core.hpp>
#include <babelqueue/headers.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace babelqueue {
inline namespace v1 {
namespace bindings::pulsar {

using bq::header_attempts;
using bq::header_job;
using bq::header_message_id;
using bq::header_schema_version;
using bq::header_source_lang;
using bq::header_trace_id;
using bq::is_contract_header;
using bq::refused_schema_version;
using bq::unsupported_schema_urn;

/// On a message published with a delay (`deliverAfter`): the delay in ms (Node/.NET mirror).
inline constexpr std::string_view property_delay = "bq-delay";
inline constexpr std::string_view default_tenant = "public";
inline constexpr std::string_view default_namespace = "default";
inline constexpr std::string_view default_subscription = "babelqueue";

/// What a publish of one envelope puts on the wire besides the payload.
struct BABELQUEUE_CORE_EXPORT message_projection {
  std::map<std::string, std::string, std::less<>> properties;
  /// Event time in Unix ms: `meta.created_at`; nullopt when the body has none or does not
  /// decode.
  std::optional<std::int64_t> event_time_ms;

  /// The value of the property `name`, or nullptr.
  const std::string* property(std::string_view name) const {
    auto it = properties.find(name);
    return it == properties.end() ? nullptr : &it->second;
  }
};

/// The projection streamed (see bq::project_each): `add(name, value)` per property.
template <class Add>
std::optional<std::int64_t> project_each(std::string_view body, const headers& oob, Add&& add) {
  return bq::project_each(body, oob, std::forward<Add>(add));
}

/// The projection of a message with payload `body` and out-of-band headers `oob`. Never
/// fails: a body that does not decode (a poison message dead-lettered unchanged) carries the
/// out-of-band headers only.
inline message_projection project(std::string_view body, const headers& oob = {}) {
  message_projection p;
  p.event_time_ms = project_each(body, oob, [&p](std::string_view name, std::string_view value) {
    p.properties.emplace(std::string(name), std::string(value));
  });
  return p;
}

/// max(body attempts, redelivery count); a missing or negative count leaves the body's.
inline std::int64_t reconcile_attempts(std::int64_t body_attempts,
                                       std::optional<std::int64_t> redelivery_count) {
  if (!redelivery_count || *redelivery_count < 0) return body_attempts;
  return std::max(body_attempts, *redelivery_count);
}

/// True when `queue` is already a full topic name (`<domain>://tenant/namespace/topic`).
inline bool is_full_topic(std::string_view queue) {
  return queue.rfind("persistent://", 0) == 0 || queue.rfind("non-persistent://", 0) == 0;
}

/// The topic a queue name stands for: `persistent://<tenant>/<namespace>/<queue>`, or the
/// queue itself when it is a full topic name.
inline std::string topic_name(std::string_view queue, std::string_view tenant = default_tenant,
                              std::string_view ns = default_namespace) {
  if (is_full_topic(queue)) return std::string(queue);
  std::string topic;
  topic.reserve(16 + tenant.size() + ns.size() + queue.size());
  topic.append("persistent://").append(tenant).append("/").append(ns).append("/").append(queue);
  return topic;
}

/// Why `queue` cannot name a topic, or nullopt: a bare name must be non-empty, at most 255
/// bytes, with no `/` and no ASCII control or white-space character (Pulsar refuses or
/// mangles them); a full topic name is left to the broker.
inline std::optional<std::string> invalid_queue_name(std::string_view queue) {
  if (is_full_topic(queue)) return std::nullopt;
  if (queue.empty()) return std::string("a pulsar queue name must not be empty");
  if (queue.size() > 255) return std::string("a pulsar queue name is at most 255 bytes");
  for (char c : queue) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '/' || u <= 0x20 || u == 0x7f) {
      return "pulsar queue name '" + std::string(queue.substr(0, 64)) +
             "' has a '/', a space or a control character (use a full topic name "
             "persistent://tenant/namespace/topic to choose the namespace)";
    }
  }
  return std::nullopt;
}

/// The dead-letter topic of a queue: `<queue>.dlq`.
inline std::string dead_letter_queue(std::string_view queue) {
  return std::string(queue) + std::string(babelqueue::dead_letter_suffix);
}

/// The read side of a received message's properties (whatever a peer's producer wrote).
struct received_properties {
  /// The out-of-band headers a handler sees: every property except the six contract ones
  /// (derived from the body) and `bq-delay` (this delivery's own native delay).
  headers out_of_band;
  /// The schema-version gate on `bq-schema-version` (nullopt = decode normally).
  std::optional<std::string> refused_schema_version;
};

/// `for_each(fn)` calls fn(name, value) (std::string_view) for each property.
template <class ForEach>
received_properties read_properties_from(ForEach&& for_each) {
  received_properties out;
  std::optional<std::string> version;
  for_each([&](std::string_view name, std::string_view value) {
    if (name == header_schema_version) {
      if (!version) version = std::string(value);
      return;
    }
    if (is_contract_header(name) || name == property_delay) return;
    out.out_of_band.emplace(std::string(name), std::string(value));
  });
  out.refused_schema_version =
      refused_schema_version(version ? std::optional<std::string_view>(*version) : std::nullopt);
  return out;
}

/// The same over a property map.
template <class Map>
received_properties read_properties(const Map& properties) {
  return read_properties_from([&properties](auto&& fn) {
    for (const auto& kv : properties) fn(std::string_view(kv.first), std::string_view(kv.second));
  });
}

}  // namespace bindings::pulsar
}  // namespace v1
}  // namespace babelqueue
