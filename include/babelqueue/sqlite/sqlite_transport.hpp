#pragma once
/// @file sqlite/sqlite_transport.hpp
/// @brief `sqlite://PATH` — a durable embedded queue in one SQLite file that several
/// threads and processes on one machine can share. The CLI's and the README demo's default.
///
/// ## Storage
/// One database file in WAL mode holding the table `bq_messages` (one row per message: the
/// queue name, the body as a BLOB of the exact published bytes, the headers as canonical
/// JSON text or NULL, `enqueued_at`, `available_at`, `reserved_until` in milliseconds since
/// the Unix epoch, and `delivery_count`). The full schema is in docs/transports/sqlite.md.
/// Ids come from AUTOINCREMENT and are never reused, which the reservation check relies on.
///
/// ## Delivery guarantee: at-least-once
/// - publish() returns after the INSERT's transaction committed; publish_batch() commits
///   the whole batch in one transaction (all or nothing — stronger than the seam requires).
/// - receive() reserves the oldest available message in one `BEGIN IMMEDIATE` transaction:
///   it sets `reserved_until = now + visibility_timeout` and increments `delivery_count`.
///   Two consumers can never hold the same reservation.
/// - ack() deletes the row; release(delay) clears the reservation and makes the row
///   available again at `now + delay` (native delay).
/// - **Duplicate window**: a message is delivered again when its consumer does not ack it
///   before `visibility_timeout` elapses — because the consumer crashed or was killed (the
///   intended recovery), or because its handler simply ran longer than the timeout (then two
///   consumers may process it concurrently). Choose visibility_timeout above your slowest
///   handler. The late consumer's ack()/release() is then refused with
///   errc::invalid_argument (its reservation is gone) and does not disturb the new one.
///   A crash between a handler's side effects and ack() likewise leads to redelivery.
/// - Nothing is lost once publish() returned, unless the file itself is lost (see below).
///
/// ## Durability
/// `synchronous=NORMAL` by default (option `synchronous`): in WAL mode a committed message
/// survives a crash or SIGKILL of any process, but the last transactions before an OS crash
/// or power loss may be rolled back (the WAL is fsynced at checkpoints, not at each
/// commit). `synchronous=full` fsyncs every commit: power-loss safe, slower per publish.
///
/// ## Delivery count and attempts
/// received_message::delivery_count is the native count: how many times this row has been
/// reserved, 1 on the first delivery (an expired reservation or a release() counts one more
/// on the next reservation). reconcile_attempts() returns the body's `attempts` unchanged:
/// the runtime retries by publishing a new row with `attempts + 1` (whose count restarts),
/// so adding the native count would count each failure twice, and a D5 `release` (unknown
/// URN, "no bump") must not raise `attempts`. The native count is still exposed so that a
/// caller can spot a message that keeps killing its consumer (a high count).
///
/// ## Clock
/// Times are wall-clock (system_clock) milliseconds, because the file outlives processes and
/// reboots and is shared between processes. A wall-clock jump shifts pending delays and
/// visibility deadlines by the same amount.
///
/// ## URL
/// `sqlite:///abs/path.db`, `sqlite://relative/path.db` (relative to the working
/// directory), query keys = the `options` fields below, e.g.
/// `sqlite:///var/lib/app/q.db?visibility_timeout=30s&poll_interval=50ms&busy_timeout=5s`.
/// Durations take `ms`/`s`/`m` suffixes; a bare number is milliseconds. Unknown keys are
/// errc::invalid_argument. `sqlite://:memory:` is refused: an in-memory database is private
/// to one connection, so two instances (or the App's workers) would not see one queue — use
/// `memory://` for that.
///
/// @note Thread-safety: an instance is NOT thread-safe (transport.hpp contract): it owns one
/// sqlite3 connection and must be used by one thread at a time. Any number of instances, in
/// any number of threads and processes, may share one file: SQLite's file locks serialise
/// their writes (each waiting at most busy_timeout). It runs no callbacks. Do not put the
/// file on a network file system (SQLite's WAL needs shared memory on one machine).

#include <babelqueue/export/sqlite.hpp>
#include <babelqueue/result.hpp>
#include <babelqueue/runtime/transport.hpp>
#include <babelqueue/runtime/url.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace babelqueue {
inline namespace v1 {
namespace sqlite {

/// How often commits are fsynced (PRAGMA synchronous); see the file comment.
enum class synchronous_mode { normal, full };

/// Options of a sqlite transport. Each field (but `path`) is the URL query key of the same
/// name. Every timeout is finite.
struct BABELQUEUE_SQLITE_EXPORT options {
  /// The database file (the URL's host + path). Created, with its schema, when missing.
  std::string path;
  /// How long a received message stays reserved before it is delivered again (> 0).
  std::chrono::milliseconds visibility_timeout{std::chrono::seconds(30)};
  /// The longest sleep between two polls while receive() waits (> 0). Polls start at 1 ms
  /// and back off by doubling to this value, and wake early when a delayed message is due.
  std::chrono::milliseconds poll_interval{std::chrono::milliseconds(50)};
  /// How long one statement waits for another connection's write lock before failing with
  /// transport_errc::timeout. Bounds every publish/ack/release.
  std::chrono::milliseconds busy_timeout{std::chrono::seconds(5)};
  /// `normal` (default) or `full`.
  synchronous_mode synchronous = synchronous_mode::normal;
  /// Create the file when it does not exist (`create=false` to require an existing queue).
  bool create = true;
};

/// Reads options from a `sqlite://` URL. errc::invalid_argument for an empty path,
/// `:memory:`, unknown keys or malformed/out-of-range values.
BABELQUEUE_SQLITE_EXPORT result<options> options_from_url(const broker_url& url);

/// Counts for one queue, read in one snapshot (for operators and tests).
struct BABELQUEUE_SQLITE_EXPORT queue_stats {
  std::int64_t ready = 0;      ///< deliverable now
  std::int64_t delayed = 0;    ///< released/never reserved, deliverable later
  std::int64_t in_flight = 0;  ///< reserved and the reservation has not expired
};

/// The `sqlite` transport. See the file comment for guarantees and thread-safety.
class BABELQUEUE_SQLITE_EXPORT sqlite_transport final : public transport {
 public:
  /// Opens (and, when allowed, creates) the database and prepares the statements.
  /// transport_errc::not_found when the file cannot be created/opened, refused when it is not
  /// a SQLite database, is corrupt, or holds a babelqueue schema newer than this library;
  /// timeout when another connection holds the lock longer than busy_timeout;
  /// invalid_argument for bad options (docs/errors.md, table "sqlite").
  static result<std::unique_ptr<sqlite_transport>> open(options opts);

  ~sqlite_transport() override;

  result<void> publish(std::string_view queue, std::string_view body,
                       const headers& hdrs = {}) override;
  /// All messages in one transaction: either all are stored or none is.
  result<void> publish_batch(std::string_view queue,
                             std::span<const outgoing_message> messages) override;
  /// Polls (1 ms, doubling up to poll_interval) until a message is available or `timeout`
  /// passes. Never spins.
  result<std::optional<received_message>> receive(std::string_view queue,
                                                  std::chrono::milliseconds timeout) override;
  /// Deletes the message. errc::invalid_argument when it was not received by this instance,
  /// was already settled, or its reservation expired and another consumer reserved it since.
  result<void> ack(const received_message& message) override;
  /// Clears the reservation; the message is available again after `delay` (native delay).
  /// Same errors as ack().
  result<void> release(const received_message& message,
                       std::chrono::milliseconds delay = {}) override;
  /// Closes the connection (SQLite checkpoints the WAL when the last connection closes).
  /// Unsettled messages are not touched: they come back after their visibility timeout.
  result<void> close(std::chrono::steady_clock::time_point deadline) override;

  /// The available rows in receive() order (one read-only SELECT: nothing is reserved and no
  /// delivery_count changes); reserved and delayed rows are not listed.
  result<std::vector<peeked_message>> peek(std::string_view queue, std::size_t offset,
                                           std::size_t limit) override;

  std::string_view scheme() const noexcept override { return "sqlite"; }
  transport_capabilities capabilities() const noexcept override {
    return {.native_delay = true,
            .headers = true,
            .delivery_count = true,
            .peek = true,
            .ordered = true,
            .delayed_publish = true,
            .max_delay = std::chrono::hours(24 * 365 * 10)};
  }
  // reconcile_attempts(): the seam's default (body attempts); see the file comment.

  /// Counts for `queue`. Not part of the seam.
  result<queue_stats> stats(std::string_view queue);

  const options& config() const noexcept { return opts_; }

  struct impl;

 protected:
  /// An INSERT whose `available_at` is now + delay (the row's wall-clock due time, so a
  /// delayed message survives a restart; a wall-clock jump shifts it, as for release()).
  result<void> publish_later(std::string_view queue, std::string_view body, const headers& hdrs,
                             std::chrono::milliseconds delay) override;

 private:
  sqlite_transport(options opts, std::unique_ptr<impl> p);
  options opts_;
  std::unique_ptr<impl> impl_;
};

/// Registers the `sqlite` scheme with the URL factory (url.hpp). Idempotent.
BABELQUEUE_SQLITE_EXPORT void register_transport();

}  // namespace sqlite
}  // namespace v1
}  // namespace babelqueue
