#pragma once
/// @file store.hpp
/// @brief The idempotency seen-set (spec "Idempotency", ADR-0022; wire-helpers §1.1): three
/// operations keyed on `meta.id` verbatim — never trimmed, `" "` is an id like any other.
///
/// A store answers whether an id's effect was already committed (`seen`), commits it
/// (`remember`, after the handler succeeded) and drops it (`forget`, e.g. to let an operator
/// re-run a message). Errors are results, never exceptions: wrap() turns a store error into a
/// handler failure, so the message is retried rather than silently skipped or run twice.
/// @note Thread-safety: implementations must be safe to call from every consume() worker at
/// once (memory_store is).

#include <babelqueue/export/idempotency.hpp>
#include <babelqueue/result.hpp>

#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <string_view>

namespace babelqueue {
inline namespace v1 {
namespace idempotency {

class BABELQUEUE_IDEMPOTENCY_EXPORT store {
 public:
  virtual ~store() = default;
  /// True when `id`'s effect was remembered (and not forgotten since).
  virtual result<bool> seen(std::string_view id) = 0;
  /// Marks `id` as done. Remembering an id twice is not an error.
  virtual result<void> remember(std::string_view id) = 0;
  /// Drops `id`; forgetting an id that is not there is not an error.
  virtual result<void> forget(std::string_view id) = 0;
};

/// The opt-in claim extension for fleets (PHP's ClaimingStore model, wire-helpers §1.3),
/// closing the in-flight race of the plain seen-set: two workers that receive the same id
/// at once both see "not seen" and both run. A claim is an in-flight mark with a TTL,
/// distinct from the committed mark of remember():
///  - seen() is true only for committed ids, never for a live claim;
///  - claim(id, ttl) is true iff this caller now holds the id's claim: false while another
///    caller's claim is live or the id is committed; an expired claim (its worker crashed)
///    can be claimed again;
///  - release(id) drops a live claim (a failing handler gives the id back at once) and never
///    touches a committed mark;
///  - remember(id) commits the id and ends its claim (the committed mark has the store's own
///    TTL policy, not the claim's).
/// A claiming wrap (wrap.hpp) uses it; the plain wrap never calls claim().
/// @note Thread-safety: as store.
class BABELQUEUE_IDEMPOTENCY_EXPORT claiming_store : public store {
 public:
  /// Takes the in-flight claim on `id` for `ttl` (> 0). True when this caller holds it.
  virtual result<bool> claim(std::string_view id, std::chrono::milliseconds ttl) = 0;
  /// Drops a live claim on `id`; a committed id or an absent claim is left alone (no error).
  virtual result<void> release(std::string_view id) = 0;
};

/// The in-process reference store: a mutex-protected set of committed ids plus the claim
/// extension (claims expire on std::chrono::steady_clock). Committed ids live as long as the
/// store (no TTL), so it suits tests and single-process workers; a fleet needs a shared store.
class BABELQUEUE_IDEMPOTENCY_EXPORT memory_store final : public claiming_store {
 public:
  result<bool> seen(std::string_view id) override;
  result<void> remember(std::string_view id) override;
  result<void> forget(std::string_view id) override;
  result<bool> claim(std::string_view id, std::chrono::milliseconds ttl) override;
  result<void> release(std::string_view id) override;
  /// How many ids are remembered (committed).
  std::size_t size() const;
  /// How many claims are live now.
  std::size_t claims() const;

 private:
  mutable std::mutex mutex_;
  std::set<std::string, std::less<>> ids_;
  std::map<std::string, std::chrono::steady_clock::time_point, std::less<>> claims_;
};

}  // namespace idempotency
}  // namespace v1
}  // namespace babelqueue
