#pragma once
/// @file app.hpp
/// @brief The consume/publish runtime: URN routing, retry, dead-lettering, workers, stop.
///
/// Semantics (decision D5, wire-core §5.6), for every message received from queue Q:
///  1. Accept gate (D3) before routing. A body that does not decode, or carries another
///     `schema_version`, is "poison": it is published to the DLQ as the ORIGINAL bytes,
///     unchanged (out-of-band headers `bq-dead-letter-reason: poison` and
///     `bq-dead-letter-error: <D3 reason>` are added where the transport carries headers),
///     or dropped with a warning when dead-lettering is off; then acked.
///  2. `attempts` = transport.reconcile_attempts(body attempts, delivery).
///  3. Routed by URN to its handler. Success → ack.
///  4. Failure (the handler threw) → n = attempts + 1; if n < max_attempts the envelope is
///     re-published to Q with attempts = n (lossless re-emit, D4: only `attempts` changes)
///     and the original acked; else it is dead-lettered with attempts = n at top level and
///     in `dead_letter.attempts`, reason `failed` (error = what(), exception = demangled
///     type name), or dropped with a warning when dead-lettering is off; then acked.
///     With max_attempts 3 a handler sees attempts 0, 1, 2 and the DLQ copy carries 3.
///  5. Unknown URN: `fail` → step 4 with reason `unknown_urn`; `delete` → ack; `release` →
///     the same bytes go back to Q unchanged, no bump (a message nobody handles loops —
///     use with care); `dead_letter` → DLQ at once with the current attempts and reason
///     `unknown_urn` (degrades to `delete` when dead-lettering is off).
///  DLQ name: dead_letter_queue if set, else Q + dead_letter_suffix (`.dlq`).
///  `dead_letter.original_queue`: `meta.queue` when non-empty, else Q.
///  Re-publishes (retry, DLQ) carry the delivery's out-of-band headers when the transport
///  carries headers.
///  If a re-publish fails, the original is released (put back unchanged) instead of acked,
///  so nothing is lost (at-least-once); if that fails too it stays unsettled and the
///  broker's own visibility/lock rules return it.
///
/// Observability: everything above is reported through the observer seam (observer.hpp):
/// log records, metrics events, a PROCESS span around each delivery and a PUBLISH span
/// around each publish (app::publish, message::publish, retries, dead-letters). Attach
/// observers in app_options::observers; none = no observer work at all.
///
/// Handlers signal failure by THROWING (any exception type; `throw 42` is reported with
/// error "unknown exception" and exception "unknown"). Returning normally means success.
///
/// @note Thread-safety: app is thread-safe. handle() may be called at any time (routes are
/// read under a shared lock). publish() may be called from any thread concurrently (it
/// serialises on one publisher transport). consume() runs `workers` threads per queue,
/// each with its own transport from the factory; handlers run on those worker threads,
/// concurrently when workers > 1 or several queues are consumed, so handlers must be
/// thread-safe themselves. drain() runs handlers on the calling thread. Which thread calls
/// which observer hook: observer.hpp. stop() may be
/// called from any thread (not from a signal handler: use a watcher thread).
/// The app must outlive every consume()/drain() call.

#include <babelqueue/dead_letter.hpp>
#include <babelqueue/export/runtime.hpp>
#include <babelqueue/json.hpp>
#include <babelqueue/result.hpp>
#include <babelqueue/runtime/error.hpp>
#include <babelqueue/runtime/logging.hpp>
#include <babelqueue/runtime/message.hpp>
#include <babelqueue/runtime/metrics.hpp>
#include <babelqueue/runtime/observer.hpp>
#include <babelqueue/runtime/retry.hpp>
#include <babelqueue/runtime/transport.hpp>
#include <babelqueue/runtime/typed.hpp>
#include <babelqueue/runtime/unknown_urn.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

namespace babelqueue {
inline namespace v1 {

namespace detail {
class observer_hub;
}  // namespace detail

/// Runtime options. Defaults as D5 / Go's App.
struct BABELQUEUE_RUNTIME_EXPORT app_options {
  /// Default queue of publish() and consume()/drain() without a queue name.
  std::string queue{default_queue};
  /// Handler runs before a message is dead-lettered (or dropped). <= 1 = no retry.
  std::int64_t max_attempts = 3;
  /// What to do with a URN that has no handler.
  unknown_urn_strategy on_unknown_urn = unknown_urn_strategy::fail;
  /// When a failed message is tried again (retry.hpp): handler failures, a claim held by
  /// another worker, and the unknown-URN `release` strategy. The retry copy is published
  /// with this delay (transport::publish_delayed); Kafka with retry tiers uses its tiers'
  /// own delays instead. Default: 1 s, doubling, capped at 5 min, up to 20 % jitter;
  /// retry_policy::immediate() retries at once (mixed fleets that expect it).
  retry_policy retry{};
  /// Fixed delay of the unknown-URN `release` strategy; 0 = the `retry` policy's delay.
  std::chrono::milliseconds unknown_urn_release_delay{0};
  /// Dead-letter terminal failures, poison and the `dead_letter` strategy; off = drop them.
  bool dead_letter = false;
  /// Explicit DLQ name; empty = consumed queue + dead_letter_suffix.
  std::string dead_letter_queue;
  std::string dead_letter_suffix{babelqueue::dead_letter_suffix};
  /// How long one receive() waits; also bounds how long stop() takes to be noticed.
  std::chrono::milliseconds poll_timeout{1000};
  /// Worker threads per consumed queue (>= 1).
  unsigned workers = 1;
  /// Deadline given to each transport's close() when consume() ends or the app dies.
  std::chrono::milliseconds close_timeout{5000};
  /// Largest body the accept gate parses; larger bodies are poison (malformed_json).
  std::size_t max_body_bytes = std::size_t{64} * 1024 * 1024;
  /// The observer seam (observer.hpp): logging, metrics and tracing, in this order (null
  /// entries are ignored). Empty = silent and free. Shared so the caller keeps access
  /// (e.g. atomic_metrics::snapshot()). Ready-made: stderr_logger, observer_from_log_sink()
  /// (logging.hpp), atomic_metrics (metrics.hpp).
  std::vector<std::shared_ptr<observer>> observers;
};

/// A handler: throw to fail (see the file comment), return to succeed.
using handler = std::function<void(message& msg)>;

/// Opens one transport; called once for the publisher and once per worker / drain().
using transport_source = std::function<result<std::unique_ptr<transport>>()>;

class BABELQUEUE_RUNTIME_EXPORT app {
 public:
  /// Opens transports from `url` through the registry (url.hpp): register the transport's
  /// scheme first. @throws babelqueue::error when the URL or the first transport (the
  /// publisher) cannot be opened, or the options are invalid (runtime_errc::invalid_argument).
  explicit app(std::string_view url, app_options options = {});
  /// As above with a custom source of transport instances.
  explicit app(transport_source source, app_options options = {});
  /// Non-throwing construction.
  static result<std::unique_ptr<app>> open(std::string_view url, app_options options = {});

  /// Stops and closes the publisher transport. Must not run while consume()/drain() run.
  ~app();
  app(const app&) = delete;
  app& operator=(const app&) = delete;

  /// Registers (or replaces) the handler of `urn`, trimmed of ASCII white space (D3a). A
  /// received URN is matched exactly as it arrived, untrimmed: `"  urn:a:b:c "` on the wire
  /// reaches no handler and takes the unknown-URN path.
  /// @throws babelqueue::error (errc::empty_urn) when `urn` is blank.
  void handle(const std::string& urn, handler fn);

  /// Typed form (runtime/typed.hpp, docs/typed.md): registers T::urn with a handler that
  /// runs `check` (e.g. schema::check_with(provider)), converts `data` to T and calls
  /// `fn(const T&, message&)` or `fn(const T&)`; data that does not convert fails the message
  /// with the field's pointer.
  template <typed::message_type T, class Fn>
  void handle(Fn fn, typed::data_check check = {}) {
    handle(std::string(T::urn), typed::make_handler<T>(std::move(fn), std::move(check)));
  }

  /// Registers (or replaces; an empty function removes) a catch-all handler for every URN
  /// without a handler of its own — e.g. a tool that prints whatever arrives. While one is
  /// set, the unknown-URN strategy never applies.
  void handle_unmatched(handler fn);

  /// Builds (make()), encodes and publishes a fresh envelope to options.queue or the app's
  /// queue; returns its `meta.id` once the broker accepted it. Without options.trace_id, an
  /// attached tracing observer may choose the trace (publish_info::adoptable_trace_id).
  result<std::string> publish(std::string_view urn, const json& data,
                              const publish_options& options = {});
  /// As above with `data` as JSON text, kept losslessly: every number keeps its exact text
  /// (make(urn, json_text, ...); errc::invalid_data / errc::malformed_json for bad text).
  result<std::string> publish(std::string_view urn, json_text data,
                              const publish_options& options = {});
  /// Typed form: publishes `value` (typed::to_data) under T::urn.
  template <typed::message_type T>
  result<std::string> publish(const T& value, const publish_options& options = {}) {
    auto data = typed::to_data(value);
    if (!data) return fail(std::move(data).error());
    return publish(T::urn, *data, options);
  }
  /// Publishes an already built envelope (encoded losslessly); returns its `meta.id`.
  result<std::string> publish(const envelope& env, const envelope_publish_options& options = {});

  /// Consumes `queues` (empty = the app's queue) until stop(): `workers` threads per queue,
  /// each with its own transport. Blocks. A bad message or a broker error never ends the
  /// loop (broker errors are logged and retried with backoff). After stop(), in-flight
  /// handlers finish and their messages are settled; then the transports are closed.
  /// Errors: a worker transport could not be opened at start (its error; nothing is
  /// consumed then), consume() is already running (runtime_errc::already_running, condition
  /// `invalid_argument`), an empty queue name (runtime_errc::invalid_argument), or the OS
  /// refused a worker thread (runtime_errc::resource_exhausted).
  result<void> consume(std::vector<std::string> queues = {});

  /// Processes messages from `queue` (empty = the app's queue) on the calling thread until
  /// `max` were dispatched (0 = no limit) or a receive waited poll_timeout and got nothing.
  /// Retries re-published onto the same queue are drained in the same call. A message put
  /// back by the unknown-URN `release` strategy that comes round again ends the drain (it
  /// is released once more, not counted twice), so drain() never spins on it. Returns the
  /// number of messages dispatched. Stops early (between messages) after stop().
  result<std::size_t> drain(std::string_view queue = {}, std::size_t max = 0);

  /// Asks consume() and drain() to return: no new message is taken; in-flight ones finish.
  /// Returns at once (does not wait). Sticky: a later consume() returns immediately.
  void stop() noexcept;
  bool stop_requested() const noexcept { return stop_.load(std::memory_order_acquire); }

  const app_options& options() const noexcept { return options_; }

 private:
  class worker;
  friend class worker;

  /// app::publish(urn, data): makes the envelope through `make_env`; when the caller gave
  /// no trace_id and observers are attached, lets them choose it (adoptable_trace_id).
  result<std::string> publish_fresh(
      const publish_options& options,
      const std::function<result<envelope>(const publish_options&)>& make_env);
  /// Encodes and sends `env` inside a publish span; `remake` (may be empty) makes it again
  /// with another trace_id.
  result<std::string> publish_encoded(
      const envelope& env, const envelope_publish_options& options,
      const std::function<result<envelope>(const std::string&)>& remake);
  std::shared_ptr<const handler> find_handler(std::string_view urn) const;
  std::string dead_letter_queue_for(std::string_view consumed_queue) const;
  /// Sleeps up to `d`, waking early on stop(); returns false when stopping.
  bool wait_unless_stopped(std::chrono::milliseconds d);

  app_options options_;
  /// The non-null entries of options_.observers, with the level gate (src/runtime).
  std::unique_ptr<const detail::observer_hub> observer_hub_;
  const detail::observer_hub& observers_;
  transport_source source_;
  /// The publisher transport carries headers (read once when it is first opened).
  bool publisher_headers_ = false;
  mutable std::shared_mutex routes_mutex_;
  std::map<std::string, std::shared_ptr<const handler>, std::less<>> routes_;
  std::shared_ptr<const handler> unmatched_;
  std::mutex publisher_mutex_;
  std::unique_ptr<transport> publisher_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> consuming_{false};
  std::mutex stop_mutex_;
  std::condition_variable stop_cv_;
};

}  // namespace v1
}  // namespace babelqueue
