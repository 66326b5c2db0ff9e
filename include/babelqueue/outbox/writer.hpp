#pragma once
/// @file outbox/writer.hpp
/// @brief The producer side of the outbox (wire-helpers §2.2): encode with the frozen codec,
/// take the queue from `meta.queue` (a non-empty string) or `default`, save the bytes.
/// Never begins or commits: call it inside the transaction that holds the business change.
///
///     babelqueue::outbox::writer out(store);           // store on the caller's connection
///     auto env = babelqueue::make("urn:babel:orders:created", data, {.queue = "orders"});
///     out.write(*env).value();                          // then COMMIT with the order row
///     out.write(*env, {.delay = std::chrono::minutes(5)}).value();  // not before 5 min
///
/// A delivery time (issue #37) is turned into an ABSOLUTE wall-clock instant here, at
/// write() time (rounded up to the millisecond, so never early), and stored with the row
/// (store::save_at); the relay publishes the row with the time left at relay time
/// (relay.hpp). A relay that runs late therefore does not delay the message twice, and one
/// whose time has passed goes out at once. Times compare against the wall clock of the
/// relay's host: clocks apart between the writing and the relaying host shift delivery by
/// their difference.
/// @note Thread-safety: as the store.

#include <babelqueue/envelope.hpp>
#include <babelqueue/export/outbox.hpp>
#include <babelqueue/outbox/store.hpp>
#include <babelqueue/result.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace babelqueue {
inline namespace v1 {
namespace outbox {

/// The queue a relay publishes an envelope to: `meta.queue`, else "default".
BABELQUEUE_OUTBOX_EXPORT std::string_view queue_of(const envelope& env) noexcept;

/// When a written message may reach consumers; the default is at once. Set at most one of
/// the two. Refused with errc::invalid_argument, nothing saved: a negative delay, both set,
/// a deliver_at more than 1 s in the past (a clock or arithmetic mistake of the caller, not
/// "at once"; up to 1 s late is taken, and goes out at once), a time past year 9999.
struct BABELQUEUE_OUTBOX_EXPORT write_options {
  /// Not before write() time + delay; 0 = at once (a plain row, no delivery time stored).
  std::chrono::milliseconds delay{0};
  /// Not before this wall-clock instant.
  std::optional<std::chrono::system_clock::time_point> deliver_at{};
};

class BABELQUEUE_OUTBOX_EXPORT writer {
 public:
  /// @throws babelqueue::error with outbox::errc::invalid_argument (condition
  /// `invalid_argument`) when `rows` is null: a caller mistake, found before any call.
  explicit writer(std::shared_ptr<store> rows);
  /// Encodes `env` (errors as babelqueue::encode's) and saves it; returns the row id.
  result<std::string> write(const envelope& env);
  /// The same, not to be delivered before `when` (see write_options). A store that cannot
  /// keep a time answers errc::not_supported (store::save_at).
  result<std::string> write(const envelope& env, const write_options& when);
  /// Saves already-encoded envelope bytes verbatim for `queue` (non-empty).
  result<std::string> write_encoded(std::string_view body, std::string_view queue);
  /// The same, not to be delivered before `when`.
  result<std::string> write_encoded(std::string_view body, std::string_view queue,
                                    const write_options& when);

 private:
  std::shared_ptr<store> rows_;
};

}  // namespace outbox
}  // namespace v1
}  // namespace babelqueue
