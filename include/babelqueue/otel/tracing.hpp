#pragma once
/// @file tracing.hpp
/// @brief The OpenTelemetry observer (spec "Observability (OpenTelemetry)", ADR-0025 and
/// ADR-0028): a `process <urn>` CONSUMER span around every delivery the runtime settles and
/// a `publish <urn>` PRODUCER span around every publish, W3C `traceparent`/`tracestate`
/// injected into and extracted from the out-of-band headers, and the envelope `trace_id`
/// kept equal to the TraceID (trace_id.hpp).
///
///     auto tracing = babelqueue::otel::make_tracing();   // the global TracerProvider's tracer
///     babelqueue::app_options o;
///     o.observers.push_back(tracing);
///
/// Uses the OpenTelemetry C++ **API** only: the application owns the SDK and its
/// TracerProvider (set it globally before make_tracing(), or pass a tracer). With the API's
/// default no-op provider every span is a no-op and nothing is injected.
///
/// Publish (app::publish, message::publish from a handler, retries, dead-letters):
///  - parent: the active span (e.g. the process span while a handler runs, so downstream
///    publishes, retries and dead-letters are its children); with none, a fresh envelope
///    whose trace_id the runtime minted starts a root span and its trace_id becomes
///    uuid_of(that span's TraceID) (publish_info::adoptable_trace_id); any other envelope
///    (an explicit trace_id, app::publish(envelope)) gets the synthetic parent of its
///    trace_id, so the span joins the message's trace.
///  - With an active span the trace_id of a fresh envelope becomes uuid_of(its TraceID) as
///    well, unless the caller gave publish_options::trace_id (kept: GR-4).
///  - attributes: messaging.system=babelqueue, messaging.operation=publish,
///    messaging.destination.name = the target queue (the choice and the messaging
///    conventions'; the Go and Python SDKs put the URN there — it is in messaging.babelqueue.urn
///    here), messaging.message.conversation_id = trace_id, messaging.babelqueue.publish_kind
///    (app|message|retry|dead_letter), messaging.babelqueue.attempts on retry and
///    dead-letter copies, messaging.message.id once the broker accepted it. A refused publish
///    records the error and sets status Error.
///  - `traceparent` (+ `tracestate`) of the publish span are written into the headers when
///    the transport carries headers (replacing a caller's own); elsewhere the publish
///    degrades to trace_id correlation, with no error.
///
/// Process (every delivery, poison and unknown URNs included):
///  - parent: the delivered `traceparent` (+ `tracestate`) when it holds a valid context; a
///    malformed one is ignored (reported to tracing_options::on_debug, never a failure); else
///    the synthetic remote parent of `trace_id` (wire-helpers §4.3: TraceID trace_id_of(),
///    SpanID synthetic_span_id_of(), sampled). A poison body without the header: a root span.
///  - name `process <urn>` (`process` for poison); attributes messaging.system,
///    messaging.operation=process, messaging.destination.name = meta.queue ("" if absent),
///    messaging.message.id = meta.id, messaging.message.conversation_id = trace_id,
///    messaging.babelqueue.attempts (int, the reconciled attempts); at the end
///    messaging.babelqueue.outcome (acked, retried, dead_lettered, dropped, released,
///    rejected, unsettled), and when they apply messaging.babelqueue.next_attempts,
///    .dead_letter.reason, .dead_letter.queue, .unknown_urn, .rejection.
///  - the span is the active span while the handler runs (on the worker thread).
///  - a failing handler (and an unknown URN under `fail`): an `exception` event
///    (exception.type, exception.message) and status Error with the message; poison: status
///    Error with the D3 reason; a settle failure: status Error.
///
/// @note Thread-safety: one tracing object may serve any number of apps and threads.

#include <babelqueue/export/otel.hpp>
#include <babelqueue/otel/trace_id.hpp>
#include <babelqueue/runtime/observer.hpp>

#include <opentelemetry/nostd/shared_ptr.h>
#include <opentelemetry/trace/span_context.h>
#include <opentelemetry/trace/trace_id.h>
#include <opentelemetry/trace/tracer.h>

#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace babelqueue {
inline namespace v1 {
namespace otel {

/// trace_id_of() as an OpenTelemetry TraceId.
BABELQUEUE_OTEL_EXPORT opentelemetry::trace::TraceId otel_trace_id_of(
    std::string_view trace_id) noexcept;
/// uuid_of() of an OpenTelemetry TraceId.
BABELQUEUE_OTEL_EXPORT std::string uuid_of(const opentelemetry::trace::TraceId& id);
/// The synthetic remote parent of `trace_id` (sampled, remote) — what a consumer uses
/// without a `traceparent`.
BABELQUEUE_OTEL_EXPORT opentelemetry::trace::SpanContext synthetic_parent_of(
    std::string_view trace_id) noexcept;

/// Instrumentation scope name of the default tracer.
inline constexpr std::string_view instrumentation_name = "babelqueue";

struct BABELQUEUE_OTEL_EXPORT tracing_options {
  /// The tracer spans are started on; null = the global TracerProvider's tracer named
  /// `babelqueue` (read once, when make_tracing() runs).
  opentelemetry::nostd::shared_ptr<opentelemetry::trace::Tracer> tracer;
  /// Write `traceparent`/`tracestate` into published headers.
  bool inject = true;
  /// Read `traceparent`/`tracestate` from delivered headers (off: always the trace_id parent).
  bool extract = true;
  /// Debug notes (a malformed `traceparent` that was ignored). Called on the worker thread;
  /// must be thread-safe. Empty = dropped.
  std::function<void(std::string_view)> on_debug;
};

/// The OpenTelemetry observer; attach it to app_options::observers.
class BABELQUEUE_OTEL_EXPORT tracing final : public observer {
 public:
  explicit tracing(tracing_options options = {});
  ~tracing() override;
  tracing(const tracing&) = delete;
  tracing& operator=(const tracing&) = delete;

  std::unique_ptr<span_state> on_publish_start(publish_info& info) override;
  void on_publish_end(const publish_info& info, const error_info* error,
                      span_state* state) override;
  std::unique_ptr<span_state> on_process_start(const process_info& info) override;
  void on_process_end(const process_info& info, const process_result& result,
                      span_state* state) override;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

/// A shared tracing observer (what app_options::observers holds).
BABELQUEUE_OTEL_EXPORT std::shared_ptr<tracing> make_tracing(tracing_options options = {});

}  // namespace otel
}  // namespace v1
}  // namespace babelqueue
