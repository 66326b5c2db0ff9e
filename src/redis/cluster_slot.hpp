#pragma once
// The Redis Cluster hash slot of a key: CRC16 (XMODEM: polynomial 0x1021, initial value 0,
// no reflection) of the key modulo 16384, where a key that contains a non-empty `{tag}`
// hashes by the tag alone — the first `{` and the first `}` after it, as the cluster spec
// says (`{}` or a `{` without a `}` after it: the whole key). That rule is what lets
// `{orders}`, `{orders}:processing` and `{orders}:processing:deadlines` share one slot.
//
// Header-only and dependency-free on purpose: the Laravel-compatible layout's keys
// (`queues:{name}`, `:reserved`, `:delayed`, `:notify`) use the same function.
//
// Thread-safety: pure functions.

#include <array>
#include <cstdint>
#include <string_view>

namespace babelqueue::inline v1::redis::detail {

/// Number of hash slots of a Redis Cluster.
inline constexpr std::uint16_t k_cluster_slots = 16384;

namespace crc16_detail {

constexpr std::array<std::uint16_t, 256> make_table() {
  std::array<std::uint16_t, 256> t{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t crc = i << 8;
    for (int bit = 0; bit < 8; ++bit) crc = (crc & 0x8000u) ? (crc << 1) ^ 0x1021u : crc << 1;
    t[i] = static_cast<std::uint16_t>(crc & 0xFFFFu);
  }
  return t;
}

inline constexpr std::array<std::uint16_t, 256> table = make_table();

}  // namespace crc16_detail

/// CRC16/XMODEM of `bytes`.
constexpr std::uint16_t crc16_xmodem(std::string_view bytes) noexcept {
  std::uint16_t crc = 0;
  for (char c : bytes) {
    const auto b = static_cast<std::uint8_t>(c);
    crc = static_cast<std::uint16_t>((crc << 8) ^ crc16_detail::table[((crc >> 8) ^ b) & 0xFFu]);
  }
  return crc;
}

/// The part of `key` that is hashed: the content of its first non-empty `{…}`, else the key.
constexpr std::string_view hash_tag_of(std::string_view key) noexcept {
  const auto open = key.find('{');
  if (open == std::string_view::npos) return key;
  const auto close = key.find('}', open + 1);
  if (close == std::string_view::npos || close == open + 1) return key;
  return key.substr(open + 1, close - open - 1);
}

/// The cluster hash slot (0..16383) of `key` (`CLUSTER KEYSLOT key`).
constexpr std::uint16_t key_slot(std::string_view key) noexcept {
  return static_cast<std::uint16_t>(crc16_xmodem(hash_tag_of(key)) % k_cluster_slots);
}

// The spec's own check value and examples.
static_assert(crc16_xmodem("123456789") == 0x31C3);
static_assert(key_slot("{user1000}.following") == key_slot("{user1000}.followers"));

}  // namespace babelqueue::inline v1::redis::detail
