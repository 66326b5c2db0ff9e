#pragma once
/// @file redrive/redrive.hpp
/// @brief DLQ redrive (spec "DLQ Redrive & Replay-Bypass"; wire-helpers §3): moves
/// dead-lettered messages back to work, reset losslessly, optionally marked as a replay.
///
/// The algorithm is the peers' (drain first, then process in order; a DLQ message is acked
/// only after its re-publish succeeded; undecodable, unselected and dry-run messages go back
/// to the DLQ unchanged) with what they get wrong fixed (wire-helpers §3.2):
///  - a publish failure (or a receive failure while draining) gives back EVERY message
///    already taken but not yet redriven — nothing is lost on any transport (the peers lose
///    the rest of the batch on pop-removes transports);
///  - a message with no target queue (no `to_queue`, no `dead_letter.original_queue`, no
///    `meta.queue`) is never published to `""`: it is put back and reported;
///  - the target a message names is data (anyone who can write to the DLQ writes it): without
///    `to_queue`, a message is redriven only to the work queue its DLQ belongs to (`orders`
///    for `orders.dlq`) or to a queue in `allowed_queues`; any other target is refused
///    (`refused_target`, put back, the reason in `detail`) — never published;
///  - the reset is lossless (D4): `dead_letter` removed, top-level `attempts` set to 0, every
///    other byte kept (unknown keys, key order, exact number text). Go re-encodes a typed
///    struct instead and loses them.
/// "Put back" is transport::release() of the very delivery, not a re-publish of a copy:
/// same bytes and headers, and on brokers with a delivery counter the counter may grow.
/// Where a broker re-queues released messages at the back (memory, sqlite, redis), the
/// messages put back keep their relative order behind the ones this run did not take.
/// Brokers with a visibility timeout or lock (SQS, Azure Service Bus, sqlite) hand a taken
/// message to another consumer once it expires: keep `max` to what one run processes within
/// it (the drain holds every taken message in flight until its turn), or run redrive where
/// nothing else consumes the DLQ.
/// @note Thread-safety: redrive() uses `broker` from the calling thread only (the transport
/// contract); callbacks run on that thread.

#include <babelqueue/envelope.hpp>
#include <babelqueue/error.hpp>
#include <babelqueue/export/redrive.hpp>
#include <babelqueue/runtime/transport.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace babelqueue {
inline namespace v1 {

/// The value redrive stamps in the replay marker header (replay_bypass_header, headers.hpp).
inline constexpr std::string_view replay_bypass_value = "1";

/// What happened to one message taken from the DLQ.
enum class redrive_outcome {
  redriven,        ///< re-published (reset) to `to` and acked on the DLQ
  dry_run,         ///< would have been redriven to `to`; put back (dry_run)
  unselected,      ///< `select` said no; put back
  undecodable,     ///< not an envelope this SDK accepts (poison); put back unchanged
  no_target,       ///< no target queue could be found; put back (the peers publish to "")
  refused_target,  ///< its target is not the DLQ's own queue nor allowed; put back
  not_processed,   ///< taken, then put back untouched because the run stopped on an error
  failed,          ///< its re-publish failed (the run stopped); put back
};
BABELQUEUE_REDRIVE_EXPORT std::string_view to_string(redrive_outcome outcome) noexcept;

/// One message of a run (the peers' RedriveItem, plus the outcome and the error text).
struct BABELQUEUE_REDRIVE_EXPORT redrive_item {
  std::string id;         ///< `meta.id` ("" when undecodable or absent)
  std::string trace_id;   ///< "" when undecodable
  std::string urn;        ///< `job` ("" when undecodable)
  std::string reason;     ///< `dead_letter.reason` ("" when absent)
  std::string error;      ///< `dead_letter.error` ("" when absent or null)
  std::string from;       ///< the DLQ it was taken from
  std::string to;         ///< the (planned) target; "" when unselected, undecodable or none
  bool redriven = false;  ///< true only when re-published and acked
  bool bypassed = false;  ///< true only when `bq-replay-bypass` was actually stamped
  redrive_outcome outcome = redrive_outcome::not_processed;
  /// For `failed`, `undecodable` and a message that could not be put back: why.
  std::string detail;
};

/// Progress of a long run, reported after each message is processed.
struct BABELQUEUE_REDRIVE_EXPORT redrive_progress {
  std::size_t taken = 0;      ///< messages taken from the DLQ in the drain phase
  std::size_t processed = 0;  ///< of those, processed so far
  std::size_t redriven = 0;
  std::size_t skipped = 0;
};

struct BABELQUEUE_REDRIVE_EXPORT redrive_options {
  /// Report the plan and put everything back; nothing is published.
  bool dry_run = false;
  /// Only messages for which it returns true are redriven (the others are put back).
  /// Receives the decoded DLQ envelope (with its `dead_letter` block). Empty = all.
  std::function<bool(const envelope&)> select;
  /// Publish here instead of the message's own queue (e.g. a sandbox). Empty = the
  /// `dead_letter.original_queue`, else `meta.queue` — when that is the queue the DLQ
  /// belongs to (the DLQ's name without its `.dlq` suffix) or one of `allowed_queues`.
  std::string to_queue;
  /// Queues besides the DLQ's own a message's `dead_letter.original_queue` / `meta.queue`
  /// may send it to (e.g. every queue of a DLQ shared by several, or of a DLQ not named
  /// `<queue>.dlq`). `allow_any_target` lifts the rule (the peers' behaviour).
  std::vector<std::string> allowed_queues;
  bool allow_any_target = false;
  /// Take at most this many messages from the DLQ; 0 = all (until a receive returns none).
  std::size_t max = 0;
  /// Stamp `bq-replay-bypass: "1"` on the re-published message when the transport carries
  /// headers (capabilities().headers); elsewhere it is not stamped and `bypassed` stays false.
  bool bypass = false;
  /// How long each receive of the drain phase waits; the drain ends at the first receive
  /// that returns nothing (the peers' pop timeout, 1 s).
  std::chrono::milliseconds receive_timeout{1000};
  /// Called on the calling thread after each processed message (e.g. a progress line).
  std::function<void(const redrive_progress&)> on_progress;
};

/// What a run did. `error` is set when the run stopped early (a receive, publish, ack or
/// put-back failed); the items still describe every message taken, so nothing is unaccounted.
struct BABELQUEUE_REDRIVE_EXPORT redrive_report {
  std::size_t redriven = 0;
  /// Put back on purpose: undecodable, unselected, dry-run and no-target messages.
  std::size_t skipped = 0;
  std::vector<redrive_item> items;
  std::optional<error_info> error;
  bool ok() const noexcept { return !error.has_value(); }
};

/// Redrives the messages of dead-letter queue `dlq` on `broker` (see the file comment).
/// Re-published messages keep the DLQ delivery's W3C `traceparent`/`tracestate` headers when
/// the transport carries headers (beyond the peers, which publish without headers), so the
/// trace continues; `trace_id` in the body is kept in any case.
BABELQUEUE_REDRIVE_EXPORT redrive_report redrive(transport& broker, std::string_view dlq,
                                                 const redrive_options& options = {});

/// The lossless reset of a dead-lettered body (D4): `dead_letter` removed, `attempts` 0,
/// everything else byte for byte. Fails with the codec's reason for an undecodable body.
BABELQUEUE_REDRIVE_EXPORT result<std::string> reset_for_redrive(
    std::string_view dead_lettered_body);

}  // namespace v1
}  // namespace babelqueue
