#pragma once
/// @file outbox/writer.hpp
/// @brief The producer side of the outbox (wire-helpers §2.2): encode with the frozen codec,
/// take the queue from `meta.queue` (a non-empty string) or `default`, save the bytes.
/// Never begins or commits: call it inside the transaction that holds the business change.
///
///     babelqueue::outbox::writer out(store);           // store on the caller's connection
///     auto env = babelqueue::make("urn:babel:orders:created", data, {.queue = "orders"});
///     out.write(*env).value();                          // then COMMIT with the order row
/// @note Thread-safety: as the store.

#include <babelqueue/envelope.hpp>
#include <babelqueue/export/outbox.hpp>
#include <babelqueue/outbox/store.hpp>
#include <babelqueue/result.hpp>

#include <memory>
#include <string>
#include <string_view>

namespace babelqueue {
inline namespace v1 {
namespace outbox {

/// The queue a relay publishes an envelope to: `meta.queue`, else "default".
BABELQUEUE_OUTBOX_EXPORT std::string_view queue_of(const envelope& env) noexcept;

class BABELQUEUE_OUTBOX_EXPORT writer {
 public:
  /// @throws babelqueue::error with outbox::errc::invalid_argument (condition
  /// `invalid_argument`) when `rows` is null: a caller mistake, found before any call.
  explicit writer(std::shared_ptr<store> rows);
  /// Encodes `env` (errors as babelqueue::encode's) and saves it; returns the row id.
  result<std::string> write(const envelope& env);
  /// Saves already-encoded envelope bytes verbatim for `queue` (non-empty).
  result<std::string> write_encoded(std::string_view body, std::string_view queue);

 private:
  std::shared_ptr<store> rows_;
};

}  // namespace outbox
}  // namespace v1
}  // namespace babelqueue
