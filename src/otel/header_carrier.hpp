#pragma once
// babelqueue::headers as an OpenTelemetry TextMapCarrier, for the W3C TraceContext
// propagator's Inject (writes `traceparent`, `tracestate`) and Extract (reads them).
#include <babelqueue/headers.hpp>

#include <opentelemetry/context/propagation/text_map_propagator.h>
#include <opentelemetry/nostd/string_view.h>

#include <string>
#include <string_view>

namespace babelqueue {
inline namespace v1 {
namespace otel::detail {

/// Reads from a const map (Set is a no-op then) or writes into a mutable one.
class header_carrier final : public opentelemetry::context::propagation::TextMapCarrier {
 public:
  explicit header_carrier(const headers& read) noexcept : read_(read), write_(nullptr) {}
  explicit header_carrier(headers& write) noexcept : read_(write), write_(&write) {}

  opentelemetry::nostd::string_view Get(
      opentelemetry::nostd::string_view key) const noexcept override {
    const auto it = read_.find(std::string_view(key.data(), key.size()));
    if (it == read_.end()) return {};
    return {it->second.data(), it->second.size()};
  }

  void Set(opentelemetry::nostd::string_view key,
           opentelemetry::nostd::string_view value) noexcept override {
    if (write_ == nullptr) return;
    try {
      (*write_)[std::string(key.data(), key.size())] = std::string(value.data(), value.size());
    } catch (...) {
      // Out of memory: the header is not propagated; the publish goes on (trace_id remains).
    }
  }

 private:
  const headers& read_;
  headers* write_;
};

}  // namespace otel::detail
}  // namespace v1
}  // namespace babelqueue
