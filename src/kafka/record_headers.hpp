#pragma once
// The read side of a consumed record's headers (what another SDK's producer wrote:
// confluent-kafka, kafkajs, Sarama/kafka-go, the Java client...), as a pure function: the
// out-of-band headers a handler sees (the six contract headers left out: they are derived
// from the body), the `bq-attempts` count and the schema-version gate. The consumer feeds it
// librdkafka's header list; the fuzz target `kafka_headers` feeds it anything.
//
// Thread-safety: pure.
#include <babelqueue/bindings/kafka.hpp>
#include <babelqueue/headers.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace babelqueue::inline v1::kafka::detail {

struct received_headers {
  headers out_of_band;                               // first value wins for a repeated name
  std::optional<std::int64_t> attempts;              // the first `bq-attempts`, if parseable
  std::optional<std::string> refused_schema_version; // the gate on the first `bq-schema-version`
};

/// `raw` in wire order; a null header value reads as empty.
inline received_headers read_headers(const std::vector<std::pair<std::string, std::string>>& raw) {
  namespace bk = bindings::kafka;
  received_headers out;
  const std::string* attempts = nullptr;
  const std::string* version = nullptr;
  for (const auto& [name, value] : raw) {
    if (name == bk::header_attempts && attempts == nullptr) attempts = &value;
    if (name == bk::header_schema_version && version == nullptr) version = &value;
    if (!bk::is_contract_header(name)) out.out_of_band.emplace(name, value);
  }
  if (attempts != nullptr) out.attempts = bk::parse_attempts(*attempts);
  out.refused_schema_version = bk::refused_schema_version(
      version != nullptr ? std::optional<std::string_view>(*version) : std::nullopt);
  return out;
}

}  // namespace babelqueue::inline v1::kafka::detail
