#pragma once
/// @file observer.hpp
/// @brief The observer seam: the one interface through which the runtime reports what it
/// does — log records, metrics events and span start/end hooks.
///
/// An observer overrides only what it needs; every hook has an empty default. Attach any
/// number of them through app_options::observers (e.g. a logger, atomic_metrics and an
/// OpenTelemetry module at once); the runtime calls them in list order (span end hooks in
/// reverse order, so nested scopes unwind properly). Ready-made observers: stderr_logger
/// and observer_from_log_sink() (logging.hpp), atomic_metrics (metrics.hpp).
///
/// Hooks per delivery, in this order, all on the same thread (see "Threads" below):
///
///     on_consumed
///     on_process_start           (decoded envelope or the D3 rejection, reconciled attempts)
///       on_rejected              (poison only)
///       on_handled               (when a handler ran: latency, ok)
///       on_publish_start/_end    (message::publish from the handler; retry; dead-letter)
///       on_acked | on_retried | on_dead_lettered | on_released | on_dropped
///     on_process_end             (process_outcome, the handler's error_info, ...)
///
/// with on_log records anywhere in between. app::publish() calls on_publish_start,
/// on_publish_end, then on_published on success. One exception: a message drain() meets
/// again after releasing it itself (unknown-URN `release`) is put back at once with only
/// on_released (no on_consumed, no process span).
///
/// Errors are passed as `const error_info*` / `const error_info&` (code + message), so
/// observers do not depend on how the code is represented.
///
/// Logs: a record is formatted only when some observer's min_level() admits its level, and
/// is handed only to those observers. The default min_level() is log_level::off, so a
/// metrics- or tracing-only observer costs no formatting. min_level() is asked before every
/// record (it may change at run time; keep it cheap: an atomic load).
///
/// Cost: with no observer attached, the runtime does no observer work at all — no
/// allocation, no formatting, no header copy; each hook site is one empty() test. With
/// observers attached, a publish copies its headers once (so start hooks can add to them)
/// and span state is stored inline for up to four observers.
///
/// Exceptions: hooks must not throw. If one does, the exception is swallowed, that
/// observer's call is lost and the runtime goes on (other observers are still called).
///
/// Threads: @note Thread-safety — observers are called concurrently and must be
/// thread-safe:
///  - per-delivery hooks (on_consumed ... on_process_end, and the on_publish_* of
///    message::publish, retries and dead-letters) run on the worker thread that took the
///    delivery: one of consume()'s worker threads, or the thread calling drain(). Several
///    workers call the same observer at once. For ONE delivery every hook runs on the same
///    thread, and the handler runs on it between on_process_start and on_process_end, so a
///    thread-local "current span" set in on_process_start is the parent of the publishes
///    the handler makes.
///  - app::publish()'s on_publish_start/on_publish_end/on_published run on the thread
///    calling app::publish(), concurrently when several threads publish; outside the
///    publisher lock.
///  - on_log also runs on the thread calling consume() (start/stop records, receive errors
///    of its workers are logged on the worker threads).
///
/// @see docs/architecture.md "Observer seam"; wire-helpers §4 for the OpenTelemetry mapping
/// an observer can implement (parent from `traceparent` or from `trace_id`).

#include <babelqueue/dead_letter.hpp>
#include <babelqueue/envelope.hpp>
#include <babelqueue/error.hpp>
#include <babelqueue/export/runtime.hpp>
#include <babelqueue/headers.hpp>
#include <babelqueue/runtime/error.hpp>
#include <babelqueue/runtime/transport.hpp>
#include <babelqueue/runtime/unknown_urn.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace babelqueue {
inline namespace v1 {

/// Severity of a log record. `off` is only a threshold: no record carries it.
enum class log_level { debug = 0, info = 1, warn = 2, error = 3, off = 4 };

/// `debug`, `info`, `warn`, `error`, `off`.
BABELQUEUE_RUNTIME_EXPORT std::string_view to_string(log_level level) noexcept;

/// One log record: a one-line message (no trailing newline) plus structured context.
/// Views are valid only during the on_log call. Context fields are empty / nullopt / null
/// when they do not apply (e.g. a receive error has a queue and nothing else).
struct BABELQUEUE_RUNTIME_EXPORT log_record {
  log_level level = log_level::info;
  /// What happened, without the context below (`retrying (attempt 2 of 3): boom`).
  std::string_view message;
  /// The queue the record concerns (the consumed queue for a delivery).
  std::string_view queue;
  std::string_view urn;
  /// `meta.id` of the message.
  std::string_view id;
  std::string_view trace_id;
  /// The delivery's reconciled attempts.
  std::optional<std::int64_t> attempts;
  /// The error behind the record (a handler failure, a D3 rejection, a transport error).
  const error_info* error = nullptr;
};

/// One line: the message, then ` [queue=… urn=… id=… trace_id=… attempts=…]` with the
/// non-empty context fields (nothing when there are none).
BABELQUEUE_RUNTIME_EXPORT std::string format(const log_record& record);

/// Which runtime operation publishes (the `kind` of a publish span).
enum class publish_kind {
  app,          ///< app::publish()
  message,      ///< message::publish() from inside a handler (continues the trace)
  retry,        ///< a failed delivery re-published with attempts + 1
  dead_letter,  ///< a copy (or, for poison, the original bytes) sent to the dead-letter queue
};

/// `app`, `message`, `retry`, `dead_letter`.
BABELQUEUE_RUNTIME_EXPORT std::string_view to_string(publish_kind kind) noexcept;

/// One publish, as on_publish_start and on_publish_end see it.
struct BABELQUEUE_RUNTIME_EXPORT publish_info {
  publish_kind kind;
  /// The target queue.
  std::string_view queue;
  /// The URN of the message sent (empty for a poison dead-letter).
  std::string_view urn;
  /// The envelope sent (its id(), trace_id(), attempts(), dead_letter()...); null for a
  /// poison dead-letter, whose original bytes never decoded.
  const envelope* env;
  /// The exact bytes sent.
  std::string_view body;
  /// The out-of-band headers that will be sent. on_publish_start MAY add or change entries
  /// (e.g. inject `traceparent`/`tracestate`); later observers see earlier ones' changes.
  /// Only when carries_headers is true do additions reach the broker: on a transport
  /// without headers, what observers added is dropped again (the publish itself never
  /// fails because of an observer), while headers the CALLER gave still fail with
  /// transport_errc::not_supported as documented in transport.hpp.
  headers& hdrs;
  /// The transport carries out-of-band headers (transport_capabilities::headers).
  bool carries_headers;
  /// The delivery this publish stems from (message, retry, dead_letter); null for app.
  const received_message* inbound;
  /// Non-null only for app::publish(urn, data) when the caller gave no trace_id, so the
  /// runtime minted a fresh UUIDv4 itself: an on_publish_start hook MAY write the trace the
  /// message should carry instead (a tracing observer writes uuid_of(its publish span's
  /// TraceID), so a header-blind consumer recovers the producer's trace — spec
  /// "Observability"). After the start hooks the runtime rebuilds the envelope with it
  /// (same URN, data and queue; a new meta.id) and sends that: on_publish_end sees the
  /// envelope and body actually sent. A blank value leaves the minted trace_id.
  std::string* adoptable_trace_id = nullptr;
};

/// One delivery, as on_process_start and on_process_end see it.
struct BABELQUEUE_RUNTIME_EXPORT process_info {
  /// The queue it was received from.
  std::string_view queue;
  /// The delivery: body as received, headers as received (`traceparent`...), the broker's
  /// native delivery_count.
  const received_message& delivery;
  /// The decoded envelope with `attempts` reconciled (transport::reconcile_attempts); null
  /// when the body failed the accept gate (then `rejection` is set).
  const envelope* env;
  /// The D3 reason a poison body was rejected with (code = a D3 errc); null otherwise.
  const error_info* rejection;
  /// The reconciled attempts (0 when the body did not decode).
  std::int64_t attempts;
};

/// What became of a delivery (the end of its process span).
enum class process_outcome {
  acked,          ///< the handler succeeded; acked
  retried,        ///< the handler failed; re-published with attempts + 1, original acked
  dead_lettered,  ///< sent to the dead-letter queue (failure or unknown URN), original acked
  dropped,        ///< acked without success: dead-lettering off, or unknown-URN `delete`
  released,       ///< put back unchanged (unknown-URN `release`, or a retry/DLQ publish failed)
  rejected,       ///< poison (failed the accept gate): dead-lettered unchanged, or dropped
  unsettled,      ///< settling failed (ack/release error) or an internal error: the broker
                  ///< redelivers it by its own rules
};

/// `acked`, `retried`, `dead_lettered`, `dropped`, `released`, `rejected`, `unsettled`.
BABELQUEUE_RUNTIME_EXPORT std::string_view to_string(process_outcome outcome) noexcept;

/// The end of a delivery. Views and pointers are valid only during on_process_end.
struct BABELQUEUE_RUNTIME_EXPORT process_result {
  process_outcome outcome = process_outcome::acked;
  /// Why the delivery did not succeed; null when nothing failed (acked, and the unknown-URN
  /// delete/release/dead_letter strategies). A handler that threw: code handler_failed,
  /// message = what() ("unknown exception" for a non-std exception); the unknown-URN `fail`
  /// strategy reports like a handler failure whose exception_type is
  /// `babelqueue::unknown_urn`; poison: the D3 rejection (same as process_info::rejection).
  const error_info* error = nullptr;
  /// The demangled type of what the handler threw (`std::runtime_error`,
  /// `shop::payment_timeout`), as the dead_letter block's `exception`; empty otherwise.
  std::string_view exception_type;
  /// dead_lettered / dropped after a failure / rejected: the dead-letter reason.
  std::optional<dead_letter_reason> reason;
  /// The dead-letter queue it went to (dead_lettered, or rejected and dead-lettered).
  std::string_view dead_letter_queue;
  /// No handler was mapped for the URN: the strategy that applied.
  std::optional<unknown_urn_strategy> unknown_urn;
  /// The attempts written on the retry or dead-letter copy (attempts + 1 after a failure).
  std::optional<std::int64_t> next_attempts;
  /// How long the handler ran; nullopt when no handler ran.
  std::optional<std::chrono::nanoseconds> handler_latency;
  /// The broker error that left the delivery released or unsettled (a failed retry/DLQ
  /// publish, ack or release); null otherwise.
  const error_info* settle_error = nullptr;
};

/// What one observer keeps for one span between its start and end hook (an OpenTelemetry
/// span and its scope, a timer...). Returned by on_publish_start / on_process_start, handed
/// back to the matching end hook, then destroyed by the runtime on the same thread.
class BABELQUEUE_RUNTIME_EXPORT span_state {
 public:
  virtual ~span_state() = default;
};

/// The observer interface. See the file comment for order, threads, cost and exceptions.
class BABELQUEUE_RUNTIME_EXPORT observer {
 public:
  virtual ~observer() = default;

  // --- logs -----------------------------------------------------------------------------

  /// The lowest level this observer wants; records below it are neither formatted for it
  /// nor delivered. Default off: no logs.
  virtual log_level min_level() const noexcept { return log_level::off; }
  /// One record at or above min_level().
  virtual void on_log(const log_record& record) { (void)record; }

  // --- metrics events ---------------------------------------------------------------------
  // `queue` is the broker queue the event concerns.

  /// app::publish() or message::publish() was accepted by the broker (retries and
  /// dead-letters have their own events).
  virtual void on_published(std::string_view queue) { (void)queue; }
  /// A message was received (before the accept gate).
  virtual void on_consumed(std::string_view queue) { (void)queue; }
  /// A message was acked after its handler succeeded.
  virtual void on_acked(std::string_view queue) { (void)queue; }
  /// A failed message was re-published with attempts + 1.
  virtual void on_retried(std::string_view queue) { (void)queue; }
  /// A message was published to the dead-letter queue `queue`.
  virtual void on_dead_lettered(std::string_view queue, dead_letter_reason reason) {
    (void)queue;
    (void)reason;
  }
  /// A message failed the accept gate; `reason.code` is the D3 reason (malformed_json ...
  /// invalid_attempts), `reason.message` the detail.
  virtual void on_rejected(std::string_view queue, const error_info& reason) {
    (void)queue;
    (void)reason;
  }
  /// A message was put back unchanged (unknown-URN `release`, a failed retry/DLQ publish,
  /// or the drain guard).
  virtual void on_released(std::string_view queue) { (void)queue; }
  /// A message was acked and dropped without success: terminal failure or poison with
  /// dead-lettering off, the unknown-URN `delete` strategy (and `dead_letter` degraded to it).
  virtual void on_dropped(std::string_view queue) { (void)queue; }
  /// One handler call finished after `latency`; `ok` is false when it threw.
  virtual void on_handled(std::string_view urn, std::chrono::nanoseconds latency, bool ok) {
    (void)urn;
    (void)latency;
    (void)ok;
  }

  // --- spans ------------------------------------------------------------------------------

  /// Before a publish reaches the transport. May change `info.hdrs` (see publish_info).
  /// Return state to get it back in on_publish_end (or null).
  virtual std::unique_ptr<span_state> on_publish_start(publish_info& info) {
    (void)info;
    return nullptr;
  }
  /// After the transport answered: `error` is null when the broker accepted the message.
  virtual void on_publish_end(const publish_info& info, const error_info* error,
                              span_state* state) {
    (void)info;
    (void)error;
    (void)state;
  }
  /// A delivery is about to be processed (after the accept gate and attempts
  /// reconciliation, before routing).
  virtual std::unique_ptr<span_state> on_process_start(const process_info& info) {
    (void)info;
    return nullptr;
  }
  /// The delivery was settled (or left unsettled); see process_result.
  virtual void on_process_end(const process_info& info, const process_result& result,
                              span_state* state) {
    (void)info;
    (void)result;
    (void)state;
  }
};

}  // namespace v1
}  // namespace babelqueue
