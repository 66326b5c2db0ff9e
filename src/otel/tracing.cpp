// The OpenTelemetry observer (tracing.hpp): publish and process spans, W3C propagation.
#include "otel/header_carrier.hpp"

#include <babelqueue/otel/tracing.hpp>
#include <babelqueue/text.hpp>
#include <babelqueue/version.hpp>

#include <opentelemetry/context/runtime_context.h>
#include <opentelemetry/nostd/span.h>
#include <opentelemetry/trace/context.h>
#include <opentelemetry/trace/noop.h>
#include <opentelemetry/trace/propagation/http_trace_context.h>
#include <opentelemetry/trace/provider.h>
#include <opentelemetry/trace/scope.h>
#include <opentelemetry/trace/span.h>
#include <opentelemetry/trace/span_id.h>
#include <opentelemetry/trace/span_startoptions.h>
#include <opentelemetry/trace/trace_flags.h>

#include <optional>
#include <string>
#include <utility>

namespace babelqueue {
inline namespace v1 {
namespace otel {

namespace trace_api = opentelemetry::trace;
namespace context_api = opentelemetry::context;
namespace nostd = opentelemetry::nostd;

namespace {

nostd::string_view sv(std::string_view s) noexcept { return {s.data(), s.size()}; }

trace_id_bytes bytes_of(const trace_api::TraceId& id) noexcept {
  trace_id_bytes b{};
  id.CopyBytesTo(nostd::span<std::uint8_t, 16>(b.data(), b.size()));
  return b;
}

// The active span's context when it is valid (a span the application or the runtime's
// process span made current on this thread).
trace_api::SpanContext active_span_context() noexcept {
  return trace_api::GetSpan(context_api::RuntimeContext::GetCurrent())->GetContext();
}

void set_common(trace_api::Span& span, std::string_view operation) noexcept {
  span.SetAttribute("messaging.system", "babelqueue");
  span.SetAttribute("messaging.operation", sv(operation));
}

// The exception event (as the OpenTelemetry exception conventions name it) and status Error.
void record_error(trace_api::Span& span, std::string_view type, std::string_view message) noexcept {
  span.AddEvent("exception", {{"exception.type", sv(type)}, {"exception.message", sv(message)}});
  span.SetStatus(trace_api::StatusCode::kError, sv(message));
}

struct publish_span final : span_state {
  nostd::shared_ptr<trace_api::Span> span;
};

struct process_span final : span_state {
  nostd::shared_ptr<trace_api::Span> span;
  std::optional<trace_api::Scope> scope;  // the span is current while the handler runs
};

// W3C Trace Context's traceparent, strictly: `vv-<32>-<16>-<2>` in lowercase hex, version ff
// invalid. opentelemetry-cpp also takes upper-case hex; the Python and Go propagators do not,
// so neither do we: every SDK agrees on which headers are malformed. Exactly 55 characters
// for every version: W3C lets a later version append `-...`, which opentelemetry-cpp
// refuses — the one place we are as strict as the library rather than the letter.
bool is_w3c_traceparent(std::string_view v) noexcept {
  if (v.size() != 55 || v[2] != '-' || v[35] != '-' || v[52] != '-') return false;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i == 2 || i == 35 || i == 52) continue;
    const char c = v[i];
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return v.substr(0, 2) != "ff";
}

}  // namespace

trace_api::TraceId otel_trace_id_of(std::string_view trace_id) noexcept {
  const trace_id_bytes b = trace_id_of(trace_id);
  return trace_api::TraceId(nostd::span<const std::uint8_t, 16>(b.data(), b.size()));
}

std::string uuid_of(const trace_api::TraceId& id) { return uuid_of(bytes_of(id)); }

trace_api::SpanContext synthetic_parent_of(std::string_view trace_id) noexcept {
  const span_id_bytes s = synthetic_span_id_of(trace_id);
  return trace_api::SpanContext(
      otel_trace_id_of(trace_id),
      trace_api::SpanId(nostd::span<const std::uint8_t, 8>(s.data(), s.size())),
      trace_api::TraceFlags(trace_api::TraceFlags::kIsSampled),
      /*is_remote=*/true);
}

struct tracing::impl {
  tracing_options options;
  nostd::shared_ptr<trace_api::Tracer> tracer;
  // The API's no-op tracer (no SDK installed when the observer was made): every hook returns
  // at once — no span, no header, no trace_id change — instead of building no-op spans.
  bool noop = false;
  // Stateless, but its Extract/Inject are not const.
  mutable trace_api::propagation::HttpTraceContext propagator;

  void debug(std::string_view text) const noexcept {
    if (!options.on_debug) return;
    try {
      options.on_debug(text);
    } catch (...) {
    }
  }

  // The parent of a process span: a valid delivered traceparent, else the trace_id's
  // synthetic parent, else (poison without the header) none.
  trace_api::StartSpanOptions process_parent(const process_info& info) const {
    trace_api::StartSpanOptions so;
    so.kind = trace_api::SpanKind::kConsumer;
    const auto& hdrs = info.delivery.hdrs;
    if (options.extract) {
      if (auto it = hdrs.find("traceparent"); it != hdrs.end() && !is_blank(it->second)) {
        if (is_w3c_traceparent(it->second)) {
          const detail::header_carrier carrier(hdrs);
          context_api::Context empty;
          auto ctx = propagator.Extract(carrier, empty);
          if (trace_api::GetSpan(ctx)->GetContext().IsValid()) {
            so.parent = ctx;
            return so;
          }
        }
        debug("ignoring a malformed traceparent header: '" + it->second + "'");
      }
    }
    if (info.env != nullptr) {
      so.parent = synthetic_parent_of(info.env->trace_id());
    } else {
      context_api::Context root;
      so.parent = root.SetValue(trace_api::kIsRootSpanKey, true);
    }
    return so;
  }
};

tracing::tracing(tracing_options options) : impl_(std::make_unique<impl>()) {
  impl_->options = std::move(options);
  impl_->tracer = impl_->options.tracer;
  if (!impl_->tracer) {
    impl_->tracer = trace_api::Provider::GetTracerProvider()->GetTracer(sv(instrumentation_name),
                                                                        sv(version_string));
  }
  impl_->noop = dynamic_cast<trace_api::NoopTracer*>(impl_->tracer.get()) != nullptr;
}

tracing::~tracing() = default;

std::unique_ptr<span_state> tracing::on_publish_start(publish_info& info) {
  if (impl_->noop) return nullptr;
  const std::string name =
      info.urn.empty() ? std::string("publish") : "publish " + std::string(info.urn);
  trace_api::StartSpanOptions so;
  so.kind = trace_api::SpanKind::kProducer;
  const bool has_active = active_span_context().IsValid();
  if (!has_active) {
    if (info.adoptable_trace_id != nullptr || info.env == nullptr) {
      context_api::Context root;
      so.parent = root.SetValue(trace_api::kIsRootSpanKey, true);
    } else {
      so.parent = synthetic_parent_of(info.env->trace_id());
    }
  }
  auto state = std::make_unique<publish_span>();
  state->span = impl_->tracer->StartSpan(sv(name), so);
  auto& span = *state->span;
  set_common(span, "publish");
  span.SetAttribute("messaging.destination.name", sv(info.queue));
  span.SetAttribute("messaging.babelqueue.urn", sv(info.urn));
  span.SetAttribute("messaging.babelqueue.publish_kind", sv(to_string(info.kind)));
  const auto ctx = span.GetContext();
  if (info.adoptable_trace_id != nullptr && ctx.IsValid()) {
    *info.adoptable_trace_id = uuid_of(ctx.trace_id());
  }
  if (info.env != nullptr) {
    span.SetAttribute("messaging.message.conversation_id",
                      info.adoptable_trace_id != nullptr && !info.adoptable_trace_id->empty()
                          ? sv(*info.adoptable_trace_id)
                          : sv(info.env->trace_id()));
    if (info.kind == publish_kind::retry || info.kind == publish_kind::dead_letter) {
      span.SetAttribute("messaging.babelqueue.attempts", info.env->attempts());
    }
  }
  if (impl_->options.inject && info.carries_headers && ctx.IsValid()) {
    detail::header_carrier carrier(info.hdrs);
    context_api::Context empty;
    context_api::Context with_span = trace_api::SetSpan(empty, state->span);
    impl_->propagator.Inject(carrier, with_span);
  }
  return state;
}

void tracing::on_publish_end(const publish_info& info, const error_info* error, span_state* state) {
  auto* s = dynamic_cast<publish_span*>(state);
  if (s == nullptr || !s->span) return;
  if (error != nullptr) {
    record_error(*s->span, error->reason(), error->message);
  } else if (info.env != nullptr) {
    s->span->SetAttribute("messaging.message.id", sv(info.env->id()));
  }
  s->span->End();
}

std::unique_ptr<span_state> tracing::on_process_start(const process_info& info) {
  if (impl_->noop) return nullptr;
  const trace_api::StartSpanOptions so = impl_->process_parent(info);
  const std::string name =
      info.env != nullptr ? "process " + std::string(info.env->urn()) : std::string("process");
  auto state = std::make_unique<process_span>();
  state->span = impl_->tracer->StartSpan(sv(name), so);
  auto& span = *state->span;
  set_common(span, "process");
  span.SetAttribute("messaging.destination.name",
                    info.env != nullptr ? sv(info.env->queue()) : nostd::string_view{});
  span.SetAttribute("messaging.message.id",
                    info.env != nullptr ? sv(info.env->id()) : nostd::string_view{});
  span.SetAttribute("messaging.message.conversation_id",
                    info.env != nullptr ? sv(info.env->trace_id()) : nostd::string_view{});
  span.SetAttribute("messaging.babelqueue.attempts", info.attempts);
  state->scope.emplace(state->span);
  return state;
}

void tracing::on_process_end(const process_info& info, const process_result& result,
                             span_state* state) {
  (void)info;
  auto* s = dynamic_cast<process_span*>(state);
  if (s == nullptr || !s->span) return;
  auto& span = *s->span;
  span.SetAttribute("messaging.babelqueue.outcome", sv(to_string(result.outcome)));
  if (result.next_attempts)
    span.SetAttribute("messaging.babelqueue.next_attempts", *result.next_attempts);
  if (result.reason)
    span.SetAttribute("messaging.babelqueue.dead_letter.reason", sv(to_string(*result.reason)));
  if (!result.dead_letter_queue.empty()) {
    span.SetAttribute("messaging.babelqueue.dead_letter.queue", sv(result.dead_letter_queue));
  }
  if (result.unknown_urn)
    span.SetAttribute("messaging.babelqueue.unknown_urn", sv(to_string(*result.unknown_urn)));
  if (result.outcome == process_outcome::rejected && result.error != nullptr) {
    span.SetAttribute("messaging.babelqueue.rejection", sv(result.error->reason()));
    span.SetStatus(trace_api::StatusCode::kError, sv(result.error->message));
  } else if (result.error != nullptr) {
    const std::string_view type = result.exception_type.empty()
                                      ? std::string_view(result.error->reason())
                                      : result.exception_type;
    record_error(span, type, result.error->message);
  } else if (result.settle_error != nullptr) {
    span.SetStatus(trace_api::StatusCode::kError, sv(result.settle_error->message));
  }
  s->scope.reset();
  span.End();
}

std::shared_ptr<tracing> make_tracing(tracing_options options) {
  return std::make_shared<tracing>(std::move(options));
}

}  // namespace otel
}  // namespace v1
}  // namespace babelqueue
