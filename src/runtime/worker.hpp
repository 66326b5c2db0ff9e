#pragma once
// One consumer: a transport instance plus the per-message algorithm of D5 (app.hpp).
// Used by exactly one thread (a consume() worker thread or the thread calling drain()).
#include <babelqueue/runtime/app.hpp>
#include <babelqueue/codec.hpp>

#include <optional>
#include <unordered_set>

namespace babelqueue {
inline namespace v1 {

class app::worker final : public detail::message_publisher {
 public:
  worker(app& owner, std::unique_ptr<transport> t) : app_(owner), transport_(std::move(t)) {}

  /// One receive (waiting up to poll_timeout) and, when a message came, its dispatch.
  /// true = a message was dispatched, false = nothing arrived; an error = the receive failed.
  result<bool> poll_once(std::string_view queue);

  /// The D5 algorithm for one delivery; always settles it (or leaves it to the broker when
  /// settling itself fails). Never throws.
  void dispatch(const received_message& delivery) noexcept;

  result<std::string> publish_continuing(const message& inbound, std::string_view urn,
                                         const json& data,
                                         const continue_publish_options& options) override;

  /// drain() mode: a message this worker released unchanged (unknown-URN `release`) that
  /// comes back during the same drain is put back again and ends the drain, instead of
  /// looping over it forever.
  void enable_drain_guard() { drain_guard_ = true; }

  /// Replaces a transport that reported errc::closed (the broker went away for good).
  result<void> reopen();
  void close() noexcept;

 private:
  struct cause {
    dead_letter_reason reason;
    std::optional<std::string> error, exception;
  };

  void dispatch_impl(const received_message& delivery);
  void poison(const received_message& delivery, const error_info& why);
  void unknown_urn(const received_message& delivery, envelope& env);
  void failed(const received_message& delivery, envelope& env, const cause& c);
  void dead_letter_or_drop(const received_message& delivery, envelope& env, const cause& c,
                           std::int64_t attempts);

  /// Publishes `body` (with the delivery's headers where carried) to `queue`, then acks
  /// the delivery; on a publish failure releases the delivery instead. True when acked.
  bool forward_then_ack(const received_message& delivery, std::string_view queue,
                        std::string_view body, const headers& hdrs, std::string_view what);
  void ack(const received_message& delivery);
  void release(const received_message& delivery, std::chrono::milliseconds delay);
  headers forwarded_headers(const received_message& delivery) const;
  std::string describe(const received_message& delivery, const envelope* env) const;

  template <class F>
  void notify(F&& f) const noexcept {
    if (auto* m = app_.options_.metrics_sink.get()) {
      try {
        f(*m);
      } catch (...) {
      }
    }
  }

  app& app_;
  std::unique_ptr<transport> transport_;
  bool drain_guard_ = false;
  std::unordered_set<std::size_t> released_;  // body hashes released during this drain
};

}  // namespace v1
}  // namespace babelqueue
