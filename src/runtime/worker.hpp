#pragma once
// One consumer: a transport instance plus the per-message algorithm of D5 (app.hpp).
// Used by exactly one thread (a consume() worker thread or the thread calling drain()).
#include "runtime/observe.hpp"

#include <babelqueue/codec.hpp>
#include <babelqueue/runtime/app.hpp>

#include <optional>
#include <unordered_set>

namespace babelqueue {
inline namespace v1 {

// Internal: hidden, or it would inherit the exported app's visibility and be exported from
// the shared runtime library.
class [[gnu::visibility("hidden")]] app::worker final : public detail::message_publisher {
 public:
  worker(app & owner, std::unique_ptr<transport> t) : app_(owner), transport_(std::move(t)) {}

  /// One receive (waiting up to poll_timeout) and, when a message came, its dispatch.
  /// true = a message was dispatched, false = nothing arrived; an error = the receive failed.
  result<bool> poll_once(std::string_view queue);

  /// The D5 algorithm for one delivery inside its process span; always settles it (or
  /// leaves it to the broker when settling itself fails). Never throws.
  void dispatch(const received_message& delivery) noexcept;

  result<std::string> publish_continuing(const message& inbound, std::string_view urn,
                                         const json& data, const continue_publish_options& options)
      override;

  /// drain() mode: a message this worker released unchanged (unknown-URN `release`) that
  /// comes back during the same drain is put back again and ends the drain, instead of
  /// looping over it forever.
  void enable_drain_guard() { drain_guard_ = true; }

  /// drain() mode: a retry copy this worker published onto its own queue with a backoff delay
  /// is not due yet (plus a second of broker slack and the binding's granularity), so an
  /// empty receive does not mean the drain is done.
  bool retry_pending() const noexcept {
    return retry_due_ && std::chrono::steady_clock::now() < *retry_due_;
  }

  /// Replaces a transport that reported transport_errc::closed (the broker went away for good).
  result<void> reopen();
  void close() noexcept;

 private:
  struct cause {
    dead_letter_reason reason;
    std::optional<std::string> error, exception;
  };

  /// One delivery in flight: what the observers' process span reports at its end, and the
  /// storage its views point into.
  struct job {
    job(const received_message& d, bool observed_) : delivery(d), observed(observed_) {}
    const received_message& delivery;
    /// Some observer will see the result: only then are the strings below filled in (no
    /// copies for nobody).
    bool observed;
    envelope* env = nullptr;        // decoded and reconciled; null for poison
    std::int64_t attempts = 0;      // reconciled attempts of the delivery
    process_result result;          // outcome etc.; `unsettled` wins at the end
    bool unsettled = false;         // an ack/release failed, or an internal error
    error_info error;               // behind result.error
    std::string exception;          // behind result.exception_type
    error_info settle_error;        // behind result.settle_error
    std::string dead_letter_queue;  // behind result.dead_letter_queue
    detail::log_context context() const noexcept;
    void set_error(error_info e, std::string exception_type = {});
    void set_settle_error(const error_info& e);
    void set_dead_letter_queue(std::string_view q);
    process_result final_result() const noexcept;
  };

  void run(job & j, envelope & env);
  void poison(job & j, const error_info& why);
  void unknown_urn(job & j, envelope & env);
  void failed(job & j, envelope & env, const cause& c);
  void dead_letter_or_drop(job & j, envelope & env, const cause& c, std::int64_t attempts);

  /// Publishes `body` (with the delivery's headers where carried) to `queue` inside a
  /// publish span, then acks the delivery; on a publish failure releases the delivery
  /// instead (outcome released, settle_error). True when the publish succeeded.
  /// A `delay` > 0 publishes through transport::publish_delayed() (clamped to the binding's
  /// max_delay; at once, with one warning per worker, where the binding cannot delay).
  bool forward_then_ack(job & j, publish_kind kind, const envelope* env, std::string_view queue,
                        std::string_view body, const headers& hdrs, std::string_view what,
                        std::chrono::milliseconds delay = {});
  /// What a binding can do with `delay` on a publish: the delay itself, clamped to its
  /// max_delay, or 0 (with one warning per worker) where it has no delayed publish.
  std::chrono::milliseconds deliverable_delay(std::chrono::milliseconds delay, const job& j);
  /// A retry after `backoff` is a release with the broker's own delay rather than a copy: the
  /// binding has no delayed publish but a delayed release and a delivery counter (SQS FIFO).
  bool retries_by_release(std::chrono::milliseconds backoff) const;
  /// Remembers, for drain(), that a retry of this queue is due `delay` from now.
  void note_retry_due(std::chrono::milliseconds delay);
  /// Settle calls; on failure they log, mark the job unsettled and return false.
  bool ack(job & j);
  bool release(job & j, std::chrono::milliseconds delay);
  /// release() for a delivery that has no job (the drain guard).
  void release_unseen(const received_message& delivery);
  /// A handler threw defer_delivery (message.hpp): the same bytes back after `delay`, no
  /// attempt counted — a delayed re-publish then ack where the transport holds messages,
  /// else a (delayed) release.
  void defer(job & j, std::chrono::milliseconds delay);
  headers forwarded_headers(const received_message& delivery) const;

  template <class F>
  void notify(F && f) const noexcept {
    if (!app_.observers_.empty()) app_.observers_.each(std::forward<F>(f));
  }

  app& app_;
  std::unique_ptr<transport> transport_;
  bool drain_guard_ = false;
  bool warned_no_delay_ = false;  // "this binding cannot delay" logged once
  std::optional<std::chrono::steady_clock::time_point> retry_due_;  // see retry_pending()
  std::unordered_set<std::size_t> released_;  // body hashes released during this drain
};

}  // namespace v1
}  // namespace babelqueue
