#pragma once
/// @file bindings/redis.hpp
/// @brief The Redis binding as pure functions: key names, the out-of-band header frame,
/// attempts reconciliation and the Redis Cluster hash slot. No I/O, no hiredis.
///
/// Decision D6 (wire-core §7.1–§7.2): the ready list is the bare queue name, the
/// processing list `<queue>:processing` (suffix configurable). A plain publish stores the
/// envelope bytes unchanged (conformance manifest `redis.payload_identity`). Only a publish
/// that carries non-empty headers (after hygiene) stores the ADR-0028 frame
/// `{"__bq_frame":1,"headers":{…},"body":"<envelope text>"}`; a reader always unframes.
///
/// The conformance runner uses: stored_value() (produce side), unframe() (reserve side),
/// reconcile_attempts(), ready_key(), processing_key().
///
/// @note Thread-safety: every function is pure, reentrant and thread-safe. Header-only so
/// the conformance runner can use it without hiredis (it needs only babelqueue::core).

#include <babelqueue/codec.hpp>
#include <babelqueue/export/core.hpp>
#include <babelqueue/headers.hpp>
#include <babelqueue/json.hpp>
#include <babelqueue/result.hpp>

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

namespace babelqueue {
inline namespace v1 {
namespace bindings::redis {

/// Header map as carried by the frame (babelqueue::headers).
using frame_headers = babelqueue::headers;

/// The frame's discriminator key and the only frame version this SDK writes and reads.
inline constexpr std::string_view frame_key = "__bq_frame";
inline constexpr std::int64_t frame_version = 1;
/// Default processing-list suffix (Go `WithProcessingSuffix`, Python `processing_suffix`).
inline constexpr std::string_view default_processing_suffix = ":processing";
/// Suffix of the reservation-deadline sorted set, appended to the processing key. The
/// layout of the Python SDK (≥ 1.24, `<queue>:processing:deadlines`, members
/// `<32 hex token>:<stored value>`, score = deadline in whole epoch seconds or `+inf`), so a
/// C++ and a Python consumer on one queue see each other's reservations.
inline constexpr std::string_view deadlines_suffix = ":deadlines";

/// Ready list key: the bare queue name (no prefix).
inline std::string ready_key(std::string_view queue) { return std::string(queue); }

/// Processing list key: `<queue><suffix>`.
inline std::string processing_key(std::string_view queue,
                                  std::string_view suffix = default_processing_suffix) {
  std::string k(queue);
  k.append(suffix);
  return k;
}

/// Reservation-deadline sorted set key: `<queue><suffix>:deadlines`.
inline std::string deadlines_key(std::string_view queue,
                                 std::string_view suffix = default_processing_suffix) {
  std::string k = processing_key(queue, suffix);
  k.append(deadlines_suffix);
  return k;
}

/// Laravel-compatible layout (`redis://…?laravel=1`, wire-core §7.3): the key prefix of the
/// Python SDK's mode. Laravel itself puts its Redis connection prefix in front of it (by
/// default `<app>_database_`), so a fleet shared with Laravel workers names the full prefix,
/// e.g. `laravel_database_queues:`.
inline constexpr std::string_view default_laravel_prefix = "queues:";

/// The four keys of one queue in Laravel's layout: the ready list `<prefix><queue>`, the
/// reserved and delayed sorted sets `…:reserved` / `…:delayed` (score = epoch seconds when
/// the reservation expires / the job is due) and the wake-up list `…:notify` (one `1` per
/// job pushed, popped by every reservation).
struct BABELQUEUE_CORE_EXPORT laravel_keys {
  std::string ready, reserved, delayed, notify;
};

inline laravel_keys laravel_keys_of(std::string_view queue,
                                    std::string_view prefix = default_laravel_prefix) {
  laravel_keys k;
  k.ready.reserve(prefix.size() + queue.size());
  k.ready.append(prefix).append(queue);
  k.reserved = k.ready + ":reserved";
  k.delayed = k.ready + ":delayed";
  k.notify = k.ready + ":notify";
  return k;
}

/// Encodes the frame around `body` with the given (already cleaned, non-empty) headers:
/// key order `__bq_frame`, `headers`, `body`; header keys sorted (as Go and Java); D2
/// escaping. errc::invalid_utf8 when the body or a header is not valid UTF-8.
inline result<std::string> encode_frame(std::string_view body, const frame_headers& hdrs) {
  json frame = json::object();
  frame[std::string(frame_key)] = frame_version;
  json h = json::object();
  for (const auto& [k, v] : hdrs) h[k] = v;
  frame["headers"] = std::move(h);
  frame["body"] = std::string(body);
  return to_canonical_json(frame);
}

/// The exact value to RPUSH for a publish (produce side). With no usable headers it is
/// `body` byte-for-byte (payload identity); otherwise the frame.
inline result<std::string> stored_value(std::string_view body, const frame_headers& hdrs = {}) {
  frame_headers clean = sanitize_headers(hdrs);
  if (clean.empty()) return std::string(body);
  return encode_frame(body, clean);
}

/// A stored list value read back (reserve side).
struct BABELQUEUE_CORE_EXPORT unframed_value {
  std::string body;     ///< the envelope text (the stored value itself when not a frame)
  frame_headers hdrs;   ///< carried headers, cleaned; empty when not a frame
  bool framed = false;  ///< true when the value was a valid frame
};

/// Cheap pre-check of is-a-frame candidates: non-empty, starts with `{`, contains the quoted
/// sentinel. Everything that fails it is certainly bare.
inline bool may_be_frame(std::string_view stored) noexcept {
  return !stored.empty() && stored.front() == '{' &&
         stored.find("\"__bq_frame\"") != std::string_view::npos;
}

/// Interprets a stored list value. It is a frame only when ALL hold: may_be_frame(); it
/// parses as strict JSON (parse_json) into an object; `__bq_frame` is the integer 1;
/// `body` is a string; `headers` is absent or an object. Header entries whose value is not
/// a string are skipped (as Python and Java do), blank ones dropped. Anything else — a bare
/// envelope, non-JSON, a broken or look-alike frame — is returned verbatim as the body with
/// no headers, so the runtime sees (and dead-letters) exactly the bytes that were stored.
/// Never fails, never throws.
inline unframed_value unframe(std::string_view stored) {
  unframed_value bare{std::string(stored), {}, false};
  if (!may_be_frame(stored)) return bare;
  auto parsed = parse_json(stored);
  if (!parsed || !parsed->is_object()) return bare;
  const json& obj = *parsed;
  auto sentinel = obj.find(frame_key);
  if (sentinel == obj.end() || !sentinel->is_number_integer()) return bare;
  if (sentinel->is_number_unsigned() ? sentinel->get<std::uint64_t>() != 1u
                                     : sentinel->get<std::int64_t>() != frame_version) {
    return bare;
  }
  auto body = obj.find("body");
  if (body == obj.end() || !body->is_string()) return bare;
  frame_headers hdrs;
  if (auto h = obj.find("headers"); h != obj.end()) {
    if (!h->is_object()) return bare;
    for (auto it = h->begin(); it != h->end(); ++it) {
      if (it.value().is_string()) hdrs.insert_or_assign(it.key(), it.value().get<std::string>());
    }
  }
  return unframed_value{body->get<std::string>(), sanitize_headers(hdrs), true};
}

/// Redis lists carry no delivery counter: the runtime uses the body's `attempts` as is.
constexpr std::int64_t reconcile_attempts(std::int64_t body_attempts) noexcept {
  return body_attempts;
}

/// The hash-tag part of a key as Redis Cluster hashes it: the bytes between the first `{`
/// and the next `}` when that is non-empty, else the whole key.
constexpr std::string_view hash_tag(std::string_view key) noexcept {
  auto open = key.find('{');
  if (open == std::string_view::npos) return key;
  auto close = key.find('}', open + 1);
  if (close == std::string_view::npos || close == open + 1) return key;
  return key.substr(open + 1, close - open - 1);
}

/// Number of hash slots of a Redis Cluster.
inline constexpr std::uint16_t cluster_slots = 16384;

namespace crc16_detail {
constexpr std::array<std::uint16_t, 256> make_table() {
  std::array<std::uint16_t, 256> t{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t crc = i << 8;
    for (int bit = 0; bit < 8; ++bit) crc = (crc & 0x8000u) != 0u ? (crc << 1) ^ 0x1021u : crc << 1;
    t[i] = static_cast<std::uint16_t>(crc & 0xFFFFu);
  }
  return t;
}
inline constexpr std::array<std::uint16_t, 256> table = make_table();
}  // namespace crc16_detail

/// CRC16/XMODEM (polynomial 0x1021, initial value 0, no reflection) of `bytes`, table-driven:
/// the cluster transport hashes every queue name it routes.
constexpr std::uint16_t crc16_xmodem(std::string_view bytes) noexcept {
  std::uint16_t crc = 0;
  for (char c : bytes) {
    const auto b = static_cast<std::uint8_t>(c);
    crc = static_cast<std::uint16_t>((crc << 8) ^ crc16_detail::table[((crc >> 8) ^ b) & 0xFFu]);
  }
  return crc;
}

/// The Redis Cluster hash slot of a key (`CLUSTER KEYSLOT`: CRC16/XMODEM of hash_tag(key),
/// mod 16384). The move commands touch the ready list, the processing list and the deadline
/// set at once, so on a cluster all three must share a slot: name queues `{orders}`.
constexpr std::uint16_t key_slot(std::string_view key) noexcept {
  return static_cast<std::uint16_t>(crc16_xmodem(hash_tag(key)) % cluster_slots);
}

/// True when the ready list, processing list and deadline set of `queue` share one Redis
/// Cluster slot (always true for hash-tagged names such as `{orders}`).
inline bool cluster_safe(std::string_view queue,
                         std::string_view suffix = default_processing_suffix) {
  auto slot = key_slot(queue);
  return key_slot(processing_key(queue, suffix)) == slot &&
         key_slot(deadlines_key(queue, suffix)) == slot;
}

/// True when the four Laravel keys of `queue` share one Redis Cluster slot (a hash-tagged
/// name such as `{orders}`: `queues:{orders}`, `queues:{orders}:reserved`, …).
inline bool laravel_cluster_safe(std::string_view queue,
                                 std::string_view prefix = default_laravel_prefix) {
  auto k = laravel_keys_of(queue, prefix);
  auto slot = key_slot(k.ready);
  return key_slot(k.reserved) == slot && key_slot(k.delayed) == slot && key_slot(k.notify) == slot;
}

}  // namespace bindings::redis
}  // namespace v1
}  // namespace babelqueue
