#pragma once
/// @file outbox/store.hpp
/// @brief The transactional outbox's store contract (spec "Transactional Outbox";
/// wire-helpers §2.1), shared by every backend (memory, SQLite, PostgreSQL).
///
/// A producer writes the encoded envelope into the outbox table in the SAME database
/// transaction as its business change (save() never begins or commits); a relay later reads
/// pending rows oldest first, publishes each body verbatim and marks it published only after
/// the transport confirmed it. At-least-once: a crash between publish and mark re-publishes
/// the row, so consumers dedupe on `meta.id` (babelqueue::idempotency).
///
/// Head-of-line blocking (the peers' flaw, wire-helpers §2.5): a row whose publish failed
/// `park_after` times (store option) is PARKED — it keeps its last error, no longer comes
/// back from fetch_unpublished(), and so no longer blocks newer rows. Parked rows are listed
/// with list() and put back with retry().
///
/// Delivery times (issue #37; no peer SDK has them, so the column is this SDK's own): a row
/// saved with save_at() carries `deliver_at`, an ABSOLUTE wall-clock time (Unix epoch
/// milliseconds, UTC), never a relative delay, so a relay that runs late does not delay the
/// message a second time. A row is DUE once `deliver_at` is absent or <= now;
/// fetch_unpublished() returns due rows only (a row not yet due is never handed to a caller
/// that would publish it at once), fetch_due() the rows due by a later instant (the relay
/// asks for rows its transport can hold until their time, relay.hpp). The SQL stores keep
/// it in a nullable `deliver_at` column (BIGINT / INTEGER epoch ms) that open() and migrate()
/// add to a table made by an older version of this SDK; the rows already in it relay as
/// before (NULL = at once).
/// @note Thread-safety: implementations document theirs; the relay calls a store from one
/// thread. PostgreSQL claims rows with `FOR UPDATE SKIP LOCKED`, so two relays on one table
/// never publish the same pending row at once.

#include <babelqueue/export/outbox.hpp>
#include <babelqueue/result.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace babelqueue {
inline namespace v1 {
namespace outbox {

/// A delivery time as the stores keep it: wall clock, millisecond precision (Unix epoch ms).
using due_time = std::chrono::sys_time<std::chrono::milliseconds>;

/// Where a row is in its life.
enum class row_status { pending, published, parked };

/// One outbox row as the relay sees it.
struct BABELQUEUE_OUTBOX_EXPORT record {
  std::string id;             ///< the store's own row id (not `meta.id`), as text
  std::string queue;          ///< target queue
  std::string body;           ///< the exact encoded envelope, published verbatim
  std::int64_t attempts = 0;  ///< publish failures so far (before this fetch)
  std::string last_error;     ///< reason of the last failure ("" when none)
  row_status status = row_status::pending;
  std::string created_at;  ///< when saved, RFC 3339 UTC ("" when the store keeps none)
  /// Not to reach consumers before this instant; nullopt = at once (save()).
  std::optional<due_time> deliver_at;
};

/// What list() returns.
struct BABELQUEUE_OUTBOX_EXPORT list_options {
  /// Rows of this status only; nullopt = every status.
  std::optional<row_status> status;
  /// At most this many rows, oldest first.
  std::size_t limit = 100;
};

class BABELQUEUE_OUTBOX_EXPORT store {
 public:
  virtual ~store() = default;
  /// Stores `body` (verbatim) for `queue` as a pending row; returns its row id. Runs inside
  /// whatever transaction the caller's connection has open; never begins or commits.
  virtual result<std::string> save(std::string_view body, std::string_view queue) = 0;
  /// Stores a pending row that must not reach consumers before `deliver_at` (the writer
  /// checks the time; the store keeps what it is given). The default, for a store written
  /// before delivery times existed, answers errc::not_supported and saves nothing: a store
  /// that dropped the time would have the row published early.
  virtual result<std::string> save_at(std::string_view body, std::string_view queue,
                                      due_time deliver_at);
  /// Up to `limit` pending rows that are due now, oldest first (parked and published rows
  /// never, nor rows whose deliver_at is still ahead). 0 = none.
  virtual result<std::vector<record>> fetch_unpublished(std::size_t limit) = 0;
  /// Up to `limit` pending rows due by `until` (deliver_at absent or <= until), oldest
  /// first; what the relay fetches. The default is fetch_unpublished(limit): a store
  /// without save_at() has no row with a time.
  virtual result<std::vector<record>> fetch_due(std::size_t limit, due_time until);
  /// Marks rows published (called only after the transport accepted them). Unknown ids are
  /// ignored.
  virtual result<void> mark_published(std::span<const std::string> ids) = 0;
  /// Records one failed publish: attempts + 1, last_error = `reason`; the row stays pending
  /// unless that makes it reach the store's park threshold, then it is parked.
  virtual result<void> mark_failed(std::string_view id, std::string_view reason) = 0;
  /// Rows for operators (`babelqueue outbox list`), oldest first.
  virtual result<std::vector<record>> list(const list_options& options) = 0;
  /// Puts parked rows back to pending with attempts 0 (their last_error kept); returns how
  /// many changed. Ids that are not parked are ignored.
  virtual result<std::size_t> retry(std::span<const std::string> ids) = 0;
};

/// The store's clock: now, rounded down to the millisecond (a row due at this instant is due).
BABELQUEUE_OUTBOX_EXPORT due_time due_now() noexcept;

/// Reads `pending` / `published` / `parked`.
BABELQUEUE_OUTBOX_EXPORT std::optional<row_status> parse_status(std::string_view text) noexcept;
/// `pending` / `published` / `parked`.
BABELQUEUE_OUTBOX_EXPORT std::string_view to_string(row_status status) noexcept;

}  // namespace outbox
}  // namespace v1
}  // namespace babelqueue
