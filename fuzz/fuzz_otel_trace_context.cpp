// Fuzz target: what the OpenTelemetry module reads from another SDK's message — the
// `traceparent` and `tracestate` headers and the envelope's `trace_id` — through the tracing
// observer's parent selection (tracing.hpp) and the trace_id ↔ TraceID bijection
// (trace_id.hpp). The input is `<traceparent>\n<tracestate>\n<trace_id>` (missing parts are
// empty). A recording tracer (no SDK) captures the parent each process span is given.
//
// Invariants:
//  - nothing crashes or throws, whatever the bytes;
//  - trace_id_of() is never all-zero, uuid_of() is a lowercase canonical UUID, and it is a
//    bijection on its image: trace_id_of(uuid_of(id)) == id;
//  - the parent is the header's context exactly when the header matches W3C's traceparent
//    grammar (an oracle of its own below: lowercase hex, version not ff, ids not all zero);
//    otherwise it is the synthetic parent of trace_id (trace_id_of + synthetic_span_id_of).
#include "fuzz_check.hpp"

#include <babelqueue/envelope.hpp>
#include <babelqueue/otel/trace_id.hpp>
#include <babelqueue/otel/tracing.hpp>
#include <babelqueue/runtime/observer.hpp>

#include <opentelemetry/nostd/variant.h>
#include <opentelemetry/trace/context.h>
#include <opentelemetry/trace/default_span.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace {

namespace trace_api = opentelemetry::trace;
namespace nostd = opentelemetry::nostd;

// Keeps the parent of the last span started.
class recording_tracer final : public trace_api::Tracer {
 public:
  nostd::shared_ptr<trace_api::Span> StartSpan(
      nostd::string_view, const opentelemetry::common::KeyValueIterable&,
      const trace_api::SpanContextKeyValueIterable&,
      const trace_api::StartSpanOptions& options) noexcept override {
    parent = trace_api::SpanContext::GetInvalid();
    if (const auto* sc = nostd::get_if<trace_api::SpanContext>(&options.parent)) {
      parent = *sc;
    } else if (const auto* ctx = nostd::get_if<opentelemetry::context::Context>(&options.parent)) {
      parent = trace_api::GetSpan(*ctx)->GetContext();
    }
    return nostd::shared_ptr<trace_api::Span>(
        new trace_api::DefaultSpan(trace_api::SpanContext::GetInvalid()));
  }
  void ForceFlushWithMicroseconds(uint64_t) noexcept override {}
  void CloseWithMicroseconds(uint64_t) noexcept override {}

  trace_api::SpanContext parent = trace_api::SpanContext::GetInvalid();
};

bool lower_hex(std::string_view s) {
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

bool all_zero_hex(std::string_view s) { return s.find_first_not_of('0') == std::string_view::npos; }

// W3C Trace Context §3.2, 55 characters for every version (as opentelemetry-cpp reads it).
bool oracle_valid(std::string_view v) {
  if (v.size() != 55) return false;
  const auto version = v.substr(0, 2), trace = v.substr(3, 32), span = v.substr(36, 16),
             flags = v.substr(53, 2);
  if (v[2] != '-' || v[35] != '-' || v[52] != '-') return false;
  if (!lower_hex(version) || !lower_hex(trace) || !lower_hex(span) || !lower_hex(flags))
    return false;
  return version != "ff" && !all_zero_hex(trace) && !all_zero_hex(span);
}

std::string hex_of(const trace_api::TraceId& id) {
  char b[32];
  id.ToLowerBase16(b);
  return {b, 32};
}
std::string hex_of(const trace_api::SpanId& id) {
  char b[16];
  id.ToLowerBase16(b);
  return {b, 16};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  namespace otel = babelqueue::otel;
  const std::string_view input(reinterpret_cast<const char*>(bytes), size);
  const auto nl1 = input.find('\n');
  const std::string_view traceparent = input.substr(0, nl1);
  std::string_view rest =
      nl1 == std::string_view::npos ? std::string_view{} : input.substr(nl1 + 1);
  const auto nl2 = rest.find('\n');
  const std::string_view tracestate = rest.substr(0, nl2);
  const std::string_view trace_id =
      nl2 == std::string_view::npos ? std::string_view{} : rest.substr(nl2 + 1);

  // The bijection.
  const otel::trace_id_bytes id = otel::trace_id_of(trace_id);
  bool nonzero = false;
  for (auto b : id) nonzero = nonzero || b != 0;
  FUZZ_CHECK(nonzero, "trace_id_of gave the invalid all-zero id");
  const std::string uuid = otel::uuid_of(id);
  FUZZ_CHECK(
      uuid.size() == 36 && uuid[8] == '-' && uuid[13] == '-' && uuid[18] == '-' && uuid[23] == '-',
      "uuid_of is not 8-4-4-4-12");
  FUZZ_CHECK(otel::trace_id_of(uuid) == id, "trace_id_of(uuid_of(id)) != id");

  // Parent selection on a decodable envelope carrying this trace_id (when it makes one).
  babelqueue::make_options mo;
  mo.trace_id = std::string(trace_id);
  auto env = babelqueue::make("urn:babel:fuzz:otel", babelqueue::json::object(), mo);
  if (!env) return 0;                   // a blank trace_id is minted instead; nothing more to check
  auto* tracer = new recording_tracer;  // owned by the options' shared_ptr, then the observer
  otel::tracing_options o;
  o.tracer = nostd::shared_ptr<trace_api::Tracer>(tracer);
  otel::tracing observer(o);
  babelqueue::received_message delivery;
  delivery.queue = "q";
  delivery.hdrs.emplace("traceparent", std::string(traceparent));
  delivery.hdrs.emplace("tracestate", std::string(tracestate));
  const babelqueue::process_info info{"q", delivery, &*env, nullptr, 0};
  auto state = observer.on_process_start(info);
  babelqueue::process_result result;
  observer.on_process_end(info, result, state.get());

  const auto& parent = tracer->parent;
  FUZZ_CHECK(parent.IsValid(), "a decoded envelope always gets a parent");
  const std::string_view kept_trace_id = env->trace_id();
  const bool header_parent = oracle_valid(traceparent);
  if (header_parent) {
    FUZZ_CHECK(hex_of(parent.trace_id()) == traceparent.substr(3, 32), "header trace id lost");
    FUZZ_CHECK(hex_of(parent.span_id()) == traceparent.substr(36, 16), "header span id lost");
    FUZZ_CHECK(parent.IsRemote(), "an extracted parent is remote");
  } else {
    FUZZ_CHECK(hex_of(parent.trace_id()) == otel::to_hex(otel::trace_id_of(kept_trace_id)),
               "fallback trace id is not trace_id_of(trace_id)");
    FUZZ_CHECK(hex_of(parent.span_id()) == otel::to_hex(otel::synthetic_span_id_of(kept_trace_id)),
               "fallback span id is not the synthetic one");
  }
  return 0;
}
