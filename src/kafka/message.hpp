#pragma once
// A record's headers both ways. The write side: the `bq-` projection of an envelope (and its
// out-of-band headers) as librdkafka's header list (message.cpp). The read side of a
// consumed record's headers (what another SDK's producer wrote:
// confluent-kafka, kafkajs, Sarama/kafka-go, the Java client...), as a pure function: the
// out-of-band headers a handler sees (the six contract headers left out: they are derived
// from the body), the `bq-attempts` count and the schema-version gate. The consumer feeds it
// librdkafka's header list; the fuzz target `kafka_headers` feeds it anything.
//
// Thread-safety: pure.
#include <babelqueue/bindings/kafka.hpp>
#include <babelqueue/headers.hpp>

#include <librdkafka/rdkafka.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace babelqueue::inline v1::kafka::detail {

/// The bq- projection of `body` (+ `oob`) written into a new librdkafka header list; sets
/// `timestamp_ms` to the record's timestamp (the envelope's creation, 0 on the retry tier).
rd_kafka_headers_t* projected_headers(std::string_view body, const headers& oob,
                                      std::int64_t& timestamp_ms);

struct received_headers {
  headers out_of_band;                                // first value wins for a repeated name
  std::optional<std::int64_t> attempts;               // the first `bq-attempts`, if parseable
  std::optional<std::string> attempts_text;           // ... as it was written
  std::optional<std::string> refused_schema_version;  // the gate on the first `bq-schema-version`
};

/// `for_each(fn)` calls fn(name, value) (std::string_view) for each header in wire order; a
/// null header value reads as empty.
template <class ForEach>
received_headers read_headers_from(ForEach&& for_each) {
  namespace bk = bindings::kafka;
  received_headers out;
  std::optional<std::string> version;
  for_each([&](std::string_view name, std::string_view value) {
    if (name == bk::header_attempts) {
      if (!out.attempts_text) out.attempts_text = std::string(value);
    } else if (name == bk::header_schema_version) {
      if (!version) version = std::string(value);
    }
    if (!bk::is_contract_header(name))
      out.out_of_band.emplace(std::string(name), std::string(value));
  });
  if (out.attempts_text) out.attempts = bk::parse_attempts(*out.attempts_text);
  out.refused_schema_version = bk::refused_schema_version(
      version ? std::optional<std::string_view>(*version) : std::nullopt);
  return out;
}

/// The same over a list of (name, value) pairs.
inline received_headers read_headers(const std::vector<std::pair<std::string, std::string>>& raw) {
  return read_headers_from([&raw](auto&& fn) {
    for (const auto& [name, value] : raw) fn(name, value);
  });
}

}  // namespace babelqueue::inline v1::kafka::detail
