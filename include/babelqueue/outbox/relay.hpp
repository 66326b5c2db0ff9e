#pragma once
/// @file outbox/relay.hpp
/// @brief The outbox relay (wire-helpers §2.4–§2.5): moves pending rows to the broker.
///
/// flush() is one pass: fetch up to `batch` pending rows oldest first; publish each body
/// VERBATIM (never decoded) to its queue; a failed publish is recorded with mark_failed()
/// and followed by a back-off sleep of min(step × max(1, attempts + 1), cap), where attempts
/// is the row's count as fetched; after the pass one mark_published() for every row the
/// transport confirmed. A TRANSIENT publish failure (is_transient(): unavailable, timeout —
/// the broker down or slow, not the row) is not a failure of the row: it is not recorded, so
/// an outage never counts toward the store's park_after; that row and the rest of the pass
/// stay pending untouched, the pass ends there (its published rows marked), and the relay
/// sleeps backoff(n) for the n-th pass in a row that met the outage (flush_result::outage,
/// ::deferred say so; drain() stops at such a pass). A fetch or mark_failed error aborts the pass
/// (rows published in it are then not marked and go out again next pass: at-least-once, consumers
/// dedupe on `meta.id`). drain() repeats flush() until a pass publishes nothing (at most
/// max_passes). Rows that reach the store's park threshold stop coming back, so a poison row no
/// longer blocks newer rows (the peers' head-of-line blocking, §2.5).
///
/// Delivery times (issue #37, writer.hpp): a pass fetches the rows that are due, plus the
/// not-yet-due rows its transport can hold until their time — every such row when the
/// transport declares capabilities().delayed_publish with no max_delay, those due within
/// max_delay when it has one, none when it cannot delay. A row is published with
/// `transport::publish_delayed(queue, body, {}, deliver_at - now)` (now read just before the
/// publish, rounded up to the millisecond; the binding rounds up to its delay_granularity),
/// so the broker holds it for the time LEFT: a relay that ran late does not delay it twice,
/// and a row whose time has passed is a plain publish, at once. Rows the transport cannot
/// hold stay pending in the outbox, untouched (no attempt counted), and go out with a plain
/// publish from the first pass after they are due — or, on a transport with a max_delay,
/// from the first pass once they are within it. So a message is never published early, on
/// any transport; a row held in the outbox is late by at most the relay's poll interval.
/// A transport that declared delayed_publish but refuses the delayed publish (e.g.
/// transport_errc::not_supported) is a failed publish like any other: mark_failed with
/// that reason, back-off, parked after park_after failures — never a plain publish before
/// the row is due. Once marked published, a delayed message is the broker's to keep (its
/// durability across a broker restart is the binding's, docs of each transport).
/// @note Thread-safety: one relay is used by one thread; run several relays (each with its
/// own transport) only on a store that claims rows (PostgreSQL: FOR UPDATE SKIP LOCKED).

#include <babelqueue/export/outbox.hpp>
#include <babelqueue/outbox/store.hpp>
#include <babelqueue/result.hpp>
#include <babelqueue/runtime/transport.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

namespace babelqueue {
inline namespace v1 {
namespace outbox {

struct BABELQUEUE_OUTBOX_EXPORT relay_options {
  /// Rows per pass; 0 = 100 (Go substitutes defaults for non-positive options too).
  std::size_t batch = 100;
  /// Back-off step and cap after a failed publish; non-positive = 50 ms / 5 s.
  std::chrono::milliseconds backoff_step{50};
  std::chrono::milliseconds backoff_cap{5000};
  /// Sleeps the back-off; default std::this_thread::sleep_for. Injectable for tests and for
  /// a relay that must stay responsive to shutdown.
  std::function<void(std::chrono::milliseconds)> sleeper;
  /// The wall clock rows' delivery times are compared with; default
  /// std::chrono::system_clock::now. Injectable for tests.
  std::function<std::chrono::system_clock::time_point()> clock;
};

/// What one pass (or a drain) did.
struct BABELQUEUE_OUTBOX_EXPORT flush_result {
  std::size_t published = 0;  ///< rows confirmed by the transport and marked published
  std::size_t failed = 0;     ///< publish failures recorded with mark_failed
  /// Rows of the pass left pending untouched because a publish failed transiently (the
  /// broker unreachable or slow): from the row that met the outage to the pass's end.
  std::size_t deferred = 0;
  /// That transient failure (none when the broker took or refused every row).
  std::optional<error_info> outage;
  std::size_t attempted() const noexcept { return published + failed; }
};

class BABELQUEUE_OUTBOX_EXPORT relay {
 public:
  /// @throws babelqueue::error with outbox::errc::invalid_argument (condition
  /// `invalid_argument`) when `rows` is null: a caller mistake, found before any call.
  relay(std::shared_ptr<store> rows, transport& broker, relay_options options = {});
  /// One pass (see the file comment).
  result<flush_result> flush();
  /// Passes until one publishes nothing, at most `max_passes` (0 = 10000). Failed counts add
  /// up across passes.
  result<flush_result> drain(std::size_t max_passes = 0);
  /// The back-off after a failure of a row fetched with `attempts` prior failures.
  std::chrono::milliseconds backoff(std::int64_t attempts) const noexcept;

 private:
  // Publishes one row: plain when due, else with the delay left.
  result<void> send(const record& row);

  std::shared_ptr<store> rows_;
  transport& broker_;
  relay_options options_;
  std::int64_t outages_ = 0;  // passes in a row that met a transient publish failure
};

}  // namespace outbox
}  // namespace v1
}  // namespace babelqueue
