#pragma once
// The Redis Cluster hash slot of a key: CRC16 (XMODEM: polynomial 0x1021, initial value 0,
// no reflection) of the key modulo 16384, where a key that contains a non-empty `{tag}`
// hashes by the tag alone — the first `{` and the first `}` after it, as the cluster spec
// says (`{}` or a `{` without a `}` after it: the whole key). That rule is what lets
// `{orders}`, `{orders}:processing` and `{orders}:processing:deadlines` share one slot.
//
// The Laravel-compatible layout's keys (`queues:{name}`, `:reserved`, `:delayed`,
// `:notify`) use the same function.
//
// Thread-safety: pure functions.

#include <babelqueue/bindings/redis.hpp>

#include <cstdint>
#include <string_view>

namespace babelqueue::inline v1::redis::detail {

// One implementation, the public binding's (include/babelqueue/bindings/redis.hpp).
inline constexpr std::uint16_t k_cluster_slots = bindings::redis::cluster_slots;
using bindings::redis::crc16_xmodem;
using bindings::redis::key_slot;
constexpr std::string_view hash_tag_of(std::string_view key) noexcept {
  return bindings::redis::hash_tag(key);
}

}  // namespace babelqueue::inline v1::redis::detail
