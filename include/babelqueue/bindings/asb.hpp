#pragma once
/// @file bindings/asb.hpp
/// @brief The Azure Service Bus binding (AMQP 1.0) as pure functions: the projection of a
/// publish onto native Service Bus message fields, attempts reconciliation with
/// `DeliveryCount`, tolerant reading of integer application properties, and the out-of-band
/// headers read back. No I/O, no Qpid Proton: the projection is a neutral struct that the
/// Proton layer copies onto a `proton::message`.
///
/// What a publish carries (spec "Broker bindings → Azure Service Bus", CONF
/// `asb.property_projection`, wire-brokers §2.1–§2.3, §2.5):
///  - body: the envelope JSON, byte-identical, sent by the Proton layer as ONE `data` section
///    (binary) — what the .NET/Java SDKs read (Java refuses an `amqp-value` body);
///  - `properties.subject` (the SDKs' Subject/Label) = the URN: route on it without the body;
///  - `properties.correlation-id` = `trace_id` and `properties.message-id` = `meta.id`, both
///    AMQP strings; a `meta.id` longer than 128 characters (the Service Bus MessageId limit,
///    which the SDKs refuse to send) is left out rather than cut, as rabbitmq.hpp does;
///  - `properties.content-type` = `application/json`;
///  - application properties, NATIVE AMQP-typed (numbers stay numbers, spec): the ones the
///    spec and CONF list — `bq-schema-version`, `bq-source-lang`, `bq-created-at` — and, on a
///    delayed publish only, `bq-delay` (.NET/Java/Node). There is no `bq-attempts`:
///    `DeliveryCount` is the native attempts source and the body stays authoritative.
///  - on a delayed publish: message annotation `x-opt-scheduled-enqueue-time` = now + delay as
///    an AMQP **timestamp** (what the .NET SDK writes for ScheduledEnqueueTime; one send, no
///    `$management` link).
///
/// Integer widths (wire-brokers §2.2 — they differ per peer): `bq-schema-version` is an AMQP
/// `int` (32-bit) and `bq-created-at` / `bq-delay` are AMQP `long` (64-bit), as .NET
/// (`int SchemaVersion`, `long CreatedAt`, `(long)` delay) and Java write them; Go writes
/// `long` for all, Python/Node are undetermined. So a consumer must not insist on a width:
/// integer_of() accepts any AMQP integer width or signedness (and, tolerantly, an integral
/// double or a decimal string) and compares by value.
///
/// Out-of-band headers (`traceparent`, `tracestate`, `bq-replay-bypass`, ...) ride as string
/// application properties after the contract ones (as the Node adapter does). The names the
/// binding owns (is_contract_property()) are never taken from out-of-band headers — not even
/// when the projection leaves one out — and headers_from_properties() drops them on the way
/// back. When the body does not decode (a poison body dead-lettered unchanged) only the fixed
/// parts are set (`content-type`, a requested delay) plus the out-of-band headers.
///
/// Consume: `attempts = max(body, DeliveryCount − 1)` with the 1-based `DeliveryCount`;
/// DeliveryCount ≤ 1 keeps the body (CONF `asb.attempts_reconciliation`). A raw AMQP client
/// reads the 0-based `header.delivery-count`; the SDKs' DeliveryCount is that + 1
/// (delivery_count_from_header(), wire-brokers §2.4).
///
/// The conformance block `asb` is driven through project() and reconcile_attempts().
///
/// @note Thread-safety: every function is pure, reentrant and thread-safe (project() reads
/// the system clock only through its default `now` argument). Header-only so the conformance
/// runner can use it without Proton (it needs only babelqueue::core).

#include <babelqueue/codec.hpp>
#include <babelqueue/export/core.hpp>
#include <babelqueue/headers.hpp>
#include <babelqueue/text.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace babelqueue {
inline namespace v1 {
namespace bindings::asb {

inline constexpr std::string_view content_type = "application/json";
/// `meta.schema_version`, an AMQP int.
inline constexpr std::string_view property_schema_version = "bq-schema-version";
/// `meta.lang`, an AMQP string.
inline constexpr std::string_view property_source_lang = "bq-source-lang";
/// `meta.created_at` (Unix ms), an AMQP long.
inline constexpr std::string_view property_created_at = "bq-created-at";
/// On a delayed publish: the delay in ms, an AMQP long.
inline constexpr std::string_view property_delay = "bq-delay";
/// Message annotation (symbol key) of ScheduledEnqueueTime: an AMQP timestamp.
inline constexpr std::string_view annotation_scheduled_enqueue_time =
    "x-opt-scheduled-enqueue-time";
/// Longest Service Bus MessageId (characters).
inline constexpr std::size_t max_message_id = 128;

/// A projected application-property value: AMQP `int`, AMQP `long` or AMQP `string`.
using property_value = std::variant<std::int32_t, std::int64_t, std::string>;

/// The AMQP 1.0 sections of one publish, besides the body (sent as one `data` section).
struct BABELQUEUE_CORE_EXPORT message_projection {
  /// `properties.subject` (Subject / Label): the URN.
  std::optional<std::string> subject;
  /// `properties.correlation-id`, as an AMQP string: the trace_id.
  std::optional<std::string> correlation_id;
  /// `properties.message-id`, as an AMQP string: meta.id (drives duplicate detection).
  std::optional<std::string> message_id;
  /// `properties.content-type` (an AMQP symbol).
  std::string content_type{asb::content_type};
  /// `application-properties`: the contract ones first (schema version, source lang, created
  /// at, delay), then the out-of-band headers by name as strings.
  std::vector<std::pair<std::string, property_value>> application_properties;
  /// ScheduledEnqueueTime in Unix ms, written as the message annotation
  /// `x-opt-scheduled-enqueue-time` of AMQP type timestamp; nullopt when not delayed.
  std::optional<std::int64_t> scheduled_enqueue_time_ms;

  /// The application property `name`, or nullptr.
  const property_value* property(std::string_view name) const {
    for (const auto& [k, v] : application_properties) {
      if (k == name) return &v;
    }
    return nullptr;
  }
};

/// True for the application properties the binding owns (the three contract ones and
/// `bq-delay`): never taken from out-of-band headers, never returned as one.
inline bool is_contract_property(std::string_view name) {
  return name == property_schema_version || name == property_source_lang ||
         name == property_created_at || name == property_delay;
}

namespace detail {
inline std::int64_t unix_ms(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}
inline std::int64_t saturating_add(std::int64_t a, std::int64_t b) {
  return a > std::numeric_limits<std::int64_t>::max() - b ? std::numeric_limits<std::int64_t>::max()
                                                          : a + b;
}
inline std::optional<std::string> bounded(std::string_view v, std::size_t max) {
  if (v.empty() || v.size() > max) return std::nullopt;
  return std::string(v);
}
inline std::optional<std::string> non_empty(std::string_view v) {
  if (v.empty()) return std::nullopt;
  return std::string(v);
}
template <class T>
struct is_variant : std::false_type {};
template <class T>
inline constexpr bool is_character =
    std::is_same_v<T, char> || std::is_same_v<T, wchar_t> || std::is_same_v<T, char8_t> ||
    std::is_same_v<T, char16_t> || std::is_same_v<T, char32_t>;
template <class... Ts>
struct is_variant<std::variant<Ts...>> : std::true_type {};
}  // namespace detail

/// The projection of a publish of `body` with out-of-band headers `oob` (sanitised here:
/// blank names or values are dropped, wire-core §6) and an optional `delay`. A delay > 0 sets
/// ScheduledEnqueueTime to `now + delay` and mirrors the delay on `bq-delay`; a delay of 0 or
/// less is no delay. Never fails: a body that does not decode gets the fixed parts only.
inline message_projection project(
    std::string_view body, const headers& oob = {},
    std::optional<std::chrono::milliseconds> delay = std::nullopt,
    std::chrono::system_clock::time_point now = std::chrono::system_clock::now()) {
  message_projection p;
  if (auto env = decode(body)) {
    p.subject = detail::non_empty(env->urn());
    p.correlation_id = detail::non_empty(env->trace_id());
    p.message_id = detail::bounded(env->id(), max_message_id);
    // schema_version() is always 1 (decode refuses any other), so the int32 cast is exact.
    p.application_properties.emplace_back(std::string(property_schema_version),
                                          static_cast<std::int32_t>(env->schema_version()));
    if (!env->lang().empty()) {
      p.application_properties.emplace_back(std::string(property_source_lang),
                                            std::string(env->lang()));
    }
    if (const auto created = env->created_at()) {
      p.application_properties.emplace_back(std::string(property_created_at), *created);
    }
  }
  if (delay && delay->count() > 0) {
    p.scheduled_enqueue_time_ms = detail::saturating_add(detail::unix_ms(now), delay->count());
    p.application_properties.emplace_back(std::string(property_delay),
                                          static_cast<std::int64_t>(delay->count()));
  }
  for (const auto& [k, v] : oob) {
    if (is_blank(k) || is_blank(v) || is_contract_property(k)) continue;
    p.application_properties.emplace_back(k, v);
  }
  return p;
}

/// The SDKs' 1-based `DeliveryCount` of a received message from the 0-based AMQP
/// `header.delivery-count` a raw client (Proton) reads: header + 1 (Azure .NET
/// `AmqpMessageConverter`, wire-brokers §2.4).
constexpr std::int64_t delivery_count_from_header(std::uint32_t header_delivery_count) noexcept {
  return static_cast<std::int64_t>(header_delivery_count) + 1;
}

/// `attempts = max(body, DeliveryCount − 1)` with the 1-based `DeliveryCount`: a first
/// delivery (1) reads 0, a runtime-incremented body count is never lowered, and an absent
/// count or one ≤ 1 keeps the body's count.
inline std::int64_t reconcile_attempts(std::int64_t body_attempts,
                                       std::optional<std::int64_t> delivery_count) {
  if (!delivery_count || *delivery_count <= 1) return body_attempts;
  return std::max(body_attempts, *delivery_count - 1);
}

/// A decimal integer: optional sign, digits, surrounding ASCII white space allowed; nullopt
/// for anything else or a value outside int64.
inline std::optional<std::int64_t> integer_of(std::string_view text) {
  text = trim_ascii(text);
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  std::int64_t n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return n;
}

/// Tolerant reading of an integer application property (wire-brokers §2.2): any AMQP integer
/// width or signedness (`byte` … `ulong`), a floating-point value that is exactly an integer,
/// a decimal string (std::string / std::string_view / const char*), or a std::variant of
/// those (visited); the value as int64, or nullopt when it is none of them, is not an integer,
/// or does not fit int64. `bool` and the character types (AMQP `char`) are not integers.
template <class T>
std::optional<std::int64_t> integer_of(const T& value) {
  using V = std::remove_cvref_t<T>;
  if constexpr (std::is_integral_v<V> && !std::is_same_v<V, bool> && !detail::is_character<V>) {
    if (!std::in_range<std::int64_t>(value)) return std::nullopt;
    return static_cast<std::int64_t>(value);
  } else if constexpr (std::is_floating_point_v<V>) {
    // [-2^63, 2^63): both bounds are exact in every floating-point type.
    constexpr V lo = -9223372036854775808.0;
    if (!std::isfinite(value) || value != std::trunc(value) || value < lo || value >= -lo) {
      return std::nullopt;
    }
    return static_cast<std::int64_t>(value);
  } else if constexpr (std::is_convertible_v<const V&, std::string_view>) {
    return integer_of(std::string_view(value));
  } else if constexpr (detail::is_variant<V>::value) {
    return std::visit([](const auto& alt) { return integer_of(alt); }, value);
  } else {
    return std::nullopt;  // bool, a character, anything else
  }
}

/// The out-of-band headers of a received message: its string application properties minus
/// the names the binding owns (is_contract_property()), verbatim. `properties` is any range
/// of (name, value) pairs: a value that converts to std::string_view is kept; a std::variant
/// value is kept when it holds a std::string; any other value (a number) is not a header.
template <class Properties>
headers headers_from_properties(const Properties& properties) {
  headers out;
  for (const auto& [name, value] : properties) {
    const std::string_view n(name);
    if (is_contract_property(n)) continue;
    using V = std::remove_cvref_t<decltype(value)>;
    if constexpr (std::is_convertible_v<const V&, std::string_view>) {
      out.emplace(std::string(n), std::string(std::string_view(value)));
    } else if constexpr (detail::is_variant<V>::value) {
      if (const auto* text = std::get_if<std::string>(&value)) out.emplace(std::string(n), *text);
    }
  }
  return out;
}

}  // namespace bindings::asb
}  // namespace v1
}  // namespace babelqueue
