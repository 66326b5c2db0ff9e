#pragma once
/// @file headers.hpp
/// @brief Out-of-band message headers and their hygiene rule (wire-core §6), shared by the
/// runtime's transport seam and the pure `bindings/` layer.
/// @note Thread-safety: a value type and pure functions.

#include <babelqueue/text.hpp>

#include <functional>
#include <map>
#include <string>
#include <string_view>

namespace babelqueue {
inline namespace v1 {

/// Out-of-band headers (AMQP application properties, SQS message attributes, Kafka record
/// headers, Pulsar properties, the Redis frame's `headers`). Names are case-sensitive and
/// passed verbatim (`traceparent`, `tracestate`, `bq-replay-bypass`).
using headers = std::map<std::string, std::string, std::less<>>;

/// Header whose non-empty value marks a deliberate replay (redrive); wire-core §6.
inline constexpr std::string_view replay_bypass_header = "bq-replay-bypass";

/// Header redrive stamps on every message it re-publishes (where the transport carries
/// headers): a token of that redrive run (its start, Unix milliseconds). It travels on with
/// the message (retry and dead-letter copies forward the delivery's headers), so a binding
/// that deduplicates on the message's identity (SQS FIFO: MessageDeduplicationId) can tell a
/// redriven generation from the original one within its deduplication window. This SDK's
/// extension; other SDKs carry it as an ordinary header.
inline constexpr std::string_view redrive_header = "bq-redrive";

/// Header hygiene shared by every binding (wire-core §6): drops entries whose key or value
/// is blank (empty or only ASCII white space). Transports apply it on publish.
inline headers sanitize_headers(const headers& in) {
  headers out;
  for (const auto& [k, v] : in) {
    if (!is_blank(k) && !is_blank(v)) out.emplace(k, v);
  }
  return out;
}

}  // namespace v1
}  // namespace babelqueue
