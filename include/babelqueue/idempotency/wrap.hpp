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

#include <babelqueue/idempotency/store.hpp>
#include <babelqueue/runtime/app.hpp>

#include <memory>

namespace babelqueue {
inline namespace v1 {
namespace idempotency {

/// How wrap() commits the mark.
struct wrap_options {
  /// true: wrap() calls `remember(id)` after the handler succeeded (step 4).
  /// false — the TRANSACTIONAL mode of the SQL stores: the handler itself commits the mark
  /// on its own database connection inside the transaction that holds its business change
  /// (`sqlite_store::remember_in(db, id)`, `postgres_store::remember_in(conn, id)`), so the
  /// effect and the mark commit or roll back together, closing the "handler succeeded, mark
  /// failed" window; wrap() then only checks `seen` before running it.
  bool remember = true;
};

/// Wraps `inner` with the decision order above, keyed on `meta.id` in `store`.
handler wrap(std::shared_ptr<store> seen_set, handler inner, wrap_options options = {});

}  // namespace idempotency
}  // namespace v1
}  // namespace babelqueue
