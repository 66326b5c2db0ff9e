#pragma once
/// @file redrive/dead_letters.hpp
/// @brief Listing a dead-letter queue for operators (`babelqueue dlq list|show`).
///
/// Where the transport can peek (capabilities().peek: memory, sqlite, redis), listing reads
/// copies and leaves the DLQ exactly as it was: same order, nothing reserved, no delivery
/// counted. Elsewhere listing is refused (transport_errc::not_supported) unless the caller
/// opts into `receive_and_release`: every listed message is received and then released, in
/// order — on most brokers that moves them to the back of the queue, bumps their delivery
/// counter (SQS, Azure Service Bus, Pulsar, Artemis), and on Kafka it is a consumer-group
/// read whose release re-publishes. Use it on a queue nobody consumes.
/// @note Thread-safety: uses `broker` from the calling thread only.

#include <babelqueue/export/redrive.hpp>
#include <babelqueue/runtime/transport.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace babelqueue {
inline namespace v1 {

/// One dead-lettered message as an operator sees it.
struct BABELQUEUE_REDRIVE_EXPORT dead_letter_entry {
  std::string body;  ///< the exact bytes
  headers hdrs;
  bool decodable = false;
  std::string decode_error;  ///< reason and message when not decodable
  std::string id, urn, trace_id;
  std::int64_t attempts = 0;  ///< top-level `attempts`
  /// The `dead_letter` block's fields; `has_dead_letter` false when there is none.
  bool has_dead_letter = false;
  std::string reason, error, exception, original_queue, lang;
  std::int64_t failed_at = 0;  ///< Unix ms
};

struct BABELQUEUE_REDRIVE_EXPORT dead_letter_list_options {
  std::size_t offset = 0;
  std::size_t limit = 100;
  /// Allow the receive-then-release fallback on transports that cannot peek (see above).
  bool receive_and_release = false;
  /// The fallback's receive wait; the listing ends at the first receive that returns none.
  std::chrono::milliseconds receive_timeout{1000};
};

/// Up to `limit` messages of `queue` from `offset`, oldest first. transport_errc::
/// invalid_argument for an empty `queue`; transport_errc::not_supported as above.
BABELQUEUE_REDRIVE_EXPORT result<std::vector<dead_letter_entry>> list_dead_letters(
    transport& broker, std::string_view queue, const dead_letter_list_options& options = {});

/// Describes one body (decoding it with the frozen codec).
BABELQUEUE_REDRIVE_EXPORT dead_letter_entry describe_dead_letter(std::string body,
                                                                 headers hdrs = {});

}  // namespace v1
}  // namespace babelqueue
