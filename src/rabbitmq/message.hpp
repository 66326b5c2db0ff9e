#pragma once
// AMQP 0-9-1 basic properties and field tables <-> the SDK's types: the write side turns a
// bindings::rabbitmq::properties (the projection) into rabbitmq-c's structs without
// copying; the read side turns a received headers table into babelqueue::headers plus the
// `x-attempts` value, accepting every AMQP integer width (wire-core §8: Go and pika write
// `I`, amqplib the smallest signed type, others `l`).
//
// Thread-safety: pure functions over caller-owned data.

#include <babelqueue/bindings/rabbitmq.hpp>
#include <babelqueue/headers.hpp>

#include <amqp.h>
#include <amqp_framing.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace babelqueue::inline v1::rabbitmq::detail {

inline amqp_bytes_t bytes_of(std::string_view s) {
  return amqp_bytes_t{s.size(), const_cast<char*>(s.data())};
}
inline std::string_view view_of(const amqp_bytes_t& b) {
  return b.len == 0 ? std::string_view()
                    : std::string_view(static_cast<const char*>(b.bytes), b.len);
}

/// rabbitmq-c's view of a projection. Points into `source`, which must outlive it.
struct wire_properties {
  explicit wire_properties(const bindings::rabbitmq::properties& source);
  wire_properties(const wire_properties&) = delete;
  wire_properties& operator=(const wire_properties&) = delete;

  amqp_basic_properties_t props{};
  std::vector<amqp_table_entry_t> entries;
};

/// What a delivery's headers table carries for the SDK.
struct received_headers {
  headers out_of_band;                   ///< every entry but the contract headers, stringified
  std::optional<std::int64_t> attempts;  ///< `x-attempts` as an integer (any width, or text)
};

/// Reads the headers table of `props` (an absent table gives empty results). Integers,
/// booleans, floats, decimals and timestamps are stringified; strings and byte arrays are
/// kept as they are; nested tables, arrays and void are left out (no peer writes them), and
/// so are the broker's dead-letter annotations (`x-death`, `x-first-death-*`,
/// `x-last-death-*`).
received_headers read_headers(const amqp_basic_properties_t& props);

}  // namespace babelqueue::inline v1::rabbitmq::detail
