#pragma once
// GoogleTest support for the OpenTelemetry tests: a real opentelemetry-cpp SDK
// TracerProvider with a simple processor and the in-memory exporter, so a test reads the
// spans exactly as the SDK recorded them (names, kinds, ids, parents, attributes, status).
#include <babelqueue/otel/trace_id.hpp>
#include <babelqueue/otel/tracing.hpp>

#include <opentelemetry/exporters/memory/in_memory_span_data.h>
#include <opentelemetry/exporters/memory/in_memory_span_exporter_factory.h>
#include <opentelemetry/sdk/trace/processor.h>
#include <opentelemetry/sdk/trace/simple_processor_factory.h>
#include <opentelemetry/sdk/trace/span_data.h>
#include <opentelemetry/sdk/trace/tracer_provider.h>
#include <opentelemetry/sdk/trace/tracer_provider_factory.h>
#include <opentelemetry/trace/span_id.h>
#include <opentelemetry/trace/trace_id.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bqtest {

namespace otel_sdk = opentelemetry::sdk::trace;

/// One finished span, copied out of the SDK's SpanData into plain values.
struct recorded_span {
  std::string name;
  opentelemetry::trace::SpanKind kind;
  std::string trace_id;        // 32 hex
  std::string span_id;         // 16 hex
  std::string parent_span_id;  // 16 hex; all zeros for a root span
  opentelemetry::trace::StatusCode status;
  std::string status_description;
  std::map<std::string, opentelemetry::sdk::common::OwnedAttributeValue> attributes;
  std::vector<std::string> events;                     // event names
  std::map<std::string, std::string> first_exception;  // exception.* of the first exception event

  std::optional<std::string> str(const std::string& key) const {
    auto it = attributes.find(key);
    if (it == attributes.end()) return std::nullopt;
    if (const auto* s = opentelemetry::nostd::get_if<std::string>(&it->second)) return *s;
    return std::nullopt;
  }
  std::optional<std::int64_t> int64(const std::string& key) const {
    auto it = attributes.find(key);
    if (it == attributes.end()) return std::nullopt;
    if (const auto* v = opentelemetry::nostd::get_if<std::int64_t>(&it->second)) return *v;
    return std::nullopt;
  }
};

inline std::string hex_of(const opentelemetry::trace::TraceId& id) {
  char buf[32];
  id.ToLowerBase16(buf);
  return {buf, sizeof buf};
}
inline std::string hex_of(const opentelemetry::trace::SpanId& id) {
  char buf[16];
  id.ToLowerBase16(buf);
  return {buf, sizeof buf};
}

/// A TracerProvider recording every span in memory.
class span_recorder {
 public:
  span_recorder() {
    auto exporter = opentelemetry::exporter::memory::InMemorySpanExporterFactory::Create(data_);
    auto processor = otel_sdk::SimpleSpanProcessorFactory::Create(std::move(exporter));
    provider_ = otel_sdk::TracerProviderFactory::Create(std::move(processor));
    tracer_ = provider_->GetTracer("babelqueue-test");
  }
  ~span_recorder() { provider_->Shutdown(); }

  opentelemetry::nostd::shared_ptr<opentelemetry::trace::Tracer> tracer() const { return tracer_; }

  /// A tracing observer on this recorder's tracer.
  std::shared_ptr<babelqueue::otel::tracing> observer(
      babelqueue::otel::tracing_options o = {}) const {
    o.tracer = tracer_;
    return babelqueue::otel::make_tracing(std::move(o));
  }

  /// Every span finished so far (in end order), accumulated across calls.
  const std::vector<recorded_span>& spans() {
    for (auto& d : data_->GetSpans()) {
      recorded_span s;
      s.name = std::string(d->GetName());
      s.kind = d->GetSpanKind();
      s.trace_id = hex_of(d->GetTraceId());
      s.span_id = hex_of(d->GetSpanId());
      s.parent_span_id = hex_of(d->GetParentSpanId());
      s.status = d->GetStatus();
      s.status_description = std::string(d->GetDescription());
      for (const auto& [k, v] : d->GetAttributes()) s.attributes.emplace(k, v);
      for (const auto& e : d->GetEvents()) {
        s.events.push_back(std::string(e.GetName()));
        if (e.GetName() == "exception" && s.first_exception.empty()) {
          for (const auto& [k, v] : e.GetAttributes()) {
            if (const auto* text = opentelemetry::nostd::get_if<std::string>(&v))
              s.first_exception[k] = *text;
          }
        }
      }
      all_.push_back(std::move(s));
    }
    return all_;
  }

  /// The spans named `name`, in end order.
  std::vector<recorded_span> named(std::string_view name) {
    std::vector<recorded_span> out;
    for (const auto& s : spans()) {
      if (s.name == name) out.push_back(s);
    }
    return out;
  }

 private:
  std::shared_ptr<opentelemetry::exporter::memory::InMemorySpanData> data_ =
      std::make_shared<opentelemetry::exporter::memory::InMemorySpanData>(10000);
  std::unique_ptr<otel_sdk::TracerProvider> provider_;
  opentelemetry::nostd::shared_ptr<opentelemetry::trace::Tracer> tracer_;
  std::vector<recorded_span> all_;
};

inline constexpr std::string_view root_parent = "0000000000000000";

}  // namespace bqtest
