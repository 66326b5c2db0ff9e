#pragma once
/// @file message.hpp
/// @brief The view of one received message that a handler gets; publish_options and
/// continue_publish_options.
///
/// A `message` is built by the runtime for one handler call and is valid only during that
/// call (it refers to the delivery held by the worker). It exposes the envelope fields,
/// the out-of-band headers, the replay flag and the raw bytes, and lets the handler
/// publish downstream messages that continue its trace.
///
/// @note Thread-safety: a message belongs to the worker thread running the handler. Use it
/// only on that thread and only until the handler returns. data() and meta() cache their
/// parse (a non-const first call is not safe against a concurrent const call).

#include <babelqueue/envelope.hpp>
#include <babelqueue/export/runtime.hpp>
#include <babelqueue/json.hpp>
#include <babelqueue/result.hpp>
#include <babelqueue/runtime/error.hpp>
#include <babelqueue/runtime/transport.hpp>
#include <babelqueue/typed/convert.hpp>

#include <chrono>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace babelqueue {
inline namespace v1 {

/// Options of app::publish() (a fresh message).
struct BABELQUEUE_RUNTIME_EXPORT publish_options {
  /// Target queue; empty means the app's queue (app_options::queue). Also written to
  /// `meta.queue`.
  std::string queue;
  /// Trace to continue, trimmed of ASCII white space; blank mints a fresh UUIDv4.
  std::string trace_id;
  /// Out-of-band headers (`traceparent`, ...). Blank keys/values are dropped. A transport
  /// that cannot carry headers refuses a non-empty set (transport_errc::not_supported).
  headers hdrs;
  /// Deliverable no earlier than this long from now (0 = at once), through
  /// transport::publish_delayed(): the broker's own delay where it has one, this SDK's
  /// documented extension where it has none (docs/delays.md). A binding that cannot delay
  /// (Kafka without retry tiers) refuses it (transport_errc::not_supported), nothing sent.
  std::chrono::milliseconds delay{0};
  /// Deliverable no earlier than this wall-clock instant; not together with `delay`. Up to
  /// 1 s in the past (the time it took to get here) publishes at once; further back is
  /// runtime_errc::invalid_argument — almost always a time-zone or unit mistake.
  std::optional<std::chrono::system_clock::time_point> deliver_at{};
};

/// Options of message::publish() (a downstream message continuing the handled one). There
/// is no trace_id: the new message always carries the inbound message's trace.
struct BABELQUEUE_RUNTIME_EXPORT continue_publish_options {
  /// Target queue; empty means the app's queue (app_options::queue). Also written to
  /// `meta.queue`.
  std::string queue;
  /// Out-of-band headers, as publish_options::hdrs.
  headers hdrs;
  /// As publish_options::delay.
  std::chrono::milliseconds delay{0};
  /// As publish_options::deliver_at.
  std::optional<std::chrono::system_clock::time_point> deliver_at{};
};

/// Options of app::publish(const envelope&): the envelope already carries its trace_id and
/// `meta.queue`, so there is no trace_id here either.
struct BABELQUEUE_RUNTIME_EXPORT envelope_publish_options {
  /// Target queue; empty means the envelope's `meta.queue`, else the app's queue.
  std::string queue;
  /// Out-of-band headers, as publish_options::hdrs.
  headers hdrs;
  /// As publish_options::delay.
  std::chrono::milliseconds delay{0};
  /// As publish_options::deliver_at.
  std::optional<std::chrono::system_clock::time_point> deliver_at{};
};

class message;

/// Thrown by a handler — or a wrapper such as idempotency::wrap_claiming() — to put the
/// delivery back for later WITHOUT counting an attempt: "not now", not "failed". The same
/// bytes and headers come back after `delay`: re-published with that delay and the original
/// acked where the transport holds messages (capabilities().delayed_publish: a fresh message,
/// so a broker's delivery counter does not grow either), else released with the delay (or at
/// once where a delayed release is not supported). Never retried with attempts + 1, never
/// dead-lettered; the process outcome is `released`. For a resource another worker holds for
/// a while (a claim); a failure that can recur must throw an ordinary exception instead, or
/// the message comes back forever.
class BABELQUEUE_RUNTIME_EXPORT defer_delivery : public std::exception {
 public:
  explicit defer_delivery(std::chrono::milliseconds delay, std::string why = {})
      : delay_(delay), why_(std::move(why)) {}
  const char* what() const noexcept override { return why_.c_str(); }
  std::chrono::milliseconds delay() const noexcept { return delay_; }

 private:
  std::chrono::milliseconds delay_;
  std::string why_;
};

namespace detail {
/// The runtime's side of message::publish() (implemented by the worker; not for users).
class message_publisher {
 public:
  virtual result<std::string> publish_continuing(const message& inbound, std::string_view urn,
                                                 const json& data,
                                                 const continue_publish_options& options) = 0;

 protected:
  ~message_publisher() = default;
};
}  // namespace detail

class BABELQUEUE_RUNTIME_EXPORT message {
 public:
  /// Built by the runtime. `env` is the decoded envelope with `attempts` already reconciled.
  message(const received_message& delivery, const envelope& env,
          detail::message_publisher* publisher) noexcept
      : delivery_(delivery), env_(env), publisher_(publisher) {}
  message(const message&) = delete;
  message& operator=(const message&) = delete;

  /// The routed URN (`job`, or its `urn` alias).
  std::string_view urn() const noexcept { return env_.urn(); }
  std::string_view trace_id() const noexcept { return env_.trace_id(); }
  /// `meta.id` (may be empty when the producer left it out).
  std::string_view id() const noexcept { return env_.id(); }
  /// The retry counter this delivery carries, reconciled with the broker's native count:
  /// 0 on the first delivery, 1 on the first retry, ... (max_attempts - 1 at most).
  std::int64_t attempts() const noexcept { return env_.attempts(); }
  /// The queue this message was received from.
  std::string_view queue() const noexcept { return delivery_.queue; }

  /// `data` as json, parsed on first use and cached.
  /// @throws babelqueue::error (errc::number_out_of_range) when a number fits no C++ type;
  /// inside a handler that counts as a handler failure. data_text() is always exact.
  const json& data() const;
  /// The canonical text of `data`, numbers exactly as received.
  std::string_view data_text() const noexcept { return env_.data_text(); }
  /// `meta` as json, parsed on first use and cached. @throws as data().
  const json& meta() const;

  /// The out-of-band headers of this delivery (empty when the transport carries none).
  const headers& hdrs() const noexcept { return delivery_.hdrs; }
  /// One header, or nullopt.
  std::optional<std::string_view> header(std::string_view name) const;
  /// True when the `bq-replay-bypass` header is non-empty: this delivery is a deliberate
  /// replay (redrive), and handlers should skip external side effects.
  bool is_replay() const noexcept;
  /// Runs `effect()` unless this delivery is a replay (is_replay()): wrap the external side
  /// effects a redrive must not fire again (e-mails, charges, webhooks) — the Go
  /// `BypassExternalEffects(ctx, fn)` / Python `bypass_external_effects(fn)` guard. The
  /// marker survives this SDK's retries (the peers drop it on a retry), so a replayed message
  /// that fails once is still a replay on its retry. Returns true when `effect` ran.
  template <class Effect>
  bool bypass_external_effects(Effect&& effect) const {
    if (is_replay()) return false;
    std::forward<Effect>(effect)();
    return true;
  }

  /// The envelope bytes exactly as received (unframed).
  std::string_view raw() const noexcept { return delivery_.body; }
  /// The decoded envelope (attempts reconciled).
  const envelope& env() const noexcept { return env_; }
  /// The broker delivery (headers, native delivery count).
  const received_message& delivery() const noexcept { return delivery_; }

  /// Publishes a downstream message that continues this message's trace: same `trace_id`,
  /// fresh `meta.id`. Goes to `options.queue`, else the app's queue, through this worker's
  /// transport; returns the new `meta.id`. Observers see it as a publish span of kind
  /// `message` inside this delivery's process span (observer.hpp).
  result<std::string> publish(std::string_view urn, const json& data,
                              const continue_publish_options& options = {}) const;
  /// Typed form (typed/convert.hpp): publishes `value` under T::urn, continuing this trace.
  template <typed::message_type T>
  result<std::string> publish(const T& value, const continue_publish_options& options = {}) const {
    auto data = typed::to_data(value);
    if (!data) return fail(std::move(data).error());
    return publish(T::urn, *data, options);
  }

 private:
  const received_message& delivery_;
  const envelope& env_;
  detail::message_publisher* publisher_;
  mutable std::optional<json> data_, meta_;
};

}  // namespace v1
}  // namespace babelqueue
