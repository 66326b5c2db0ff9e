#pragma once
/// @file wrap.hpp
/// @brief A handler that runs its side effect once per `meta.id` (spec "Idempotency"; the
/// decision order every SDK shares, wire-helpers §1.2):
///  1. no usable `meta.id` (absent, not a string, or empty — white space IS an id): the
///     handler runs unchanged (fail-open: dedupe never drops a message it cannot key);
///  2. `seen(id)`: a store error fails the delivery (the runtime retries it); an id already
///     remembered returns at once — the runtime acks, the handler is not called;
///  3. the handler runs; if it throws, the exception propagates and the id stays unmarked,
///     so a redelivery runs it again (retry and dead-lettering apply as usual);
///  4. after success, `remember(id)`; if that fails the delivery fails too (retried, and the
///     handler will run again): as the Python and PHP SDKs. Go ignores that error and acks,
///     which can lose the mark; the handler's side effect must be idempotent either way in
///     that window (spec "Idempotency Stores & the Effect Guarantee").
///
///     auto seen = std::make_shared<babelqueue::idempotency::memory_store>();
///     app.handle("urn:babel:orders:created",
///                babelqueue::idempotency::wrap(seen, [](babelqueue::message& m) { ... }));
///
/// A store failure is thrown as babelqueue::error (its error_info: the store's code and
/// message), which the runtime records like any handler failure.
/// @note Thread-safety: the returned handler is as thread-safe as the store and `inner`.

#include <babelqueue/export/idempotency.hpp>
#include <babelqueue/idempotency/store.hpp>
#include <babelqueue/runtime/app.hpp>

#include <chrono>
#include <memory>

namespace babelqueue {
inline namespace v1 {
namespace idempotency {

/// How wrap() commits the mark.
struct BABELQUEUE_IDEMPOTENCY_EXPORT wrap_options {
  /// true: wrap() calls `remember(id)` after the handler succeeded (step 4).
  /// false — the TRANSACTIONAL mode of the SQL stores: the handler itself commits the mark
  /// on its own database connection inside the transaction that holds its business change
  /// (`sqlite_store::remember_in(db, id)`, `postgres_store::remember_in(conn, id)`), so the
  /// effect and the mark commit or roll back together, closing the "handler succeeded, mark
  /// failed" window; wrap() then only checks `seen` before running it.
  bool remember = true;
};

/// Wraps `inner` with the decision order above, keyed on `meta.id` in `store`.
/// @throws babelqueue::error with idempotency::errc::invalid_argument (condition
/// `invalid_argument`) when `seen_set` is null or `inner` is empty.
BABELQUEUE_IDEMPOTENCY_EXPORT handler wrap(std::shared_ptr<store> seen_set, handler inner,
                                           wrap_options options = {});

/// Options of wrap_claiming().
struct BABELQUEUE_IDEMPOTENCY_EXPORT claim_options {
  /// How long a claim holds before another worker may take it over (a crashed worker's
  /// claim expires after it). Must be > 0; PHP's default.
  std::chrono::milliseconds ttl = std::chrono::hours(1);
  /// How long a delivery whose id another worker holds waits before it comes back (step 3).
  /// Must be > 0.
  std::chrono::milliseconds park_delay = std::chrono::seconds(1);
};

/// The claiming wrap for fleets (PHP's ClaimingDispatch order, wire-helpers §1.3):
///  1. no usable `meta.id` → the handler runs (fail-open);
///  2. `seen(id)` → return (the runtime acks);
///  3. `claim(id, ttl)` lost → `seen(id)` again (the holder may have committed meanwhile):
///     true → return; else the delivery is PARKED: it throws defer_delivery(park_delay)
///     (runtime/message.hpp), so the same bytes come back after park_delay with NO attempt
///     counted, as often as it takes, until the holder commits (then `seen` acks it) or its
///     claim expires (then this delivery claims it and runs). PHP's ClaimParkedException
///     counts an attempt per park instead, so a holder that crashed — its claim alive for
///     the ttl — dead-letters the duplicate after max_attempts parks: the effect never runs.
///     Here it runs exactly once, after the ttl (tests/idempotency/claim_crash_test.cpp);
///  4. claim won → the handler runs; a throw → `release(id)`, then the exception propagates
///     (the id is free for the retry at once); success → `remember(id)` (which ends the claim).
/// A store error in any step fails the delivery (retried), never a silent skip.
/// @throws babelqueue::error with idempotency::errc::invalid_argument (condition
/// `invalid_argument`) when `claims` is null, `inner` is empty, or `options.ttl` or
/// `options.park_delay` is not > 0.
/// @note Thread-safety: as wrap().
BABELQUEUE_IDEMPOTENCY_EXPORT handler wrap_claiming(std::shared_ptr<claiming_store> claims,
                                                    handler inner, claim_options options = {});

}  // namespace idempotency
}  // namespace v1
}  // namespace babelqueue
