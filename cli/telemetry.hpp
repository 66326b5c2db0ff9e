#pragma once
// OpenTelemetry tracing of the runtime commands (publish, consume), configured the way every
// OpenTelemetry SDK configures itself: from the standard OTEL_* environment variables.
//
// Tracing is on only when the environment asks for it (docs/otel.md "The CLI"):
//  - OTEL_SDK_DISABLED=true                      → off, whatever else is set;
//  - OTEL_TRACES_EXPORTER=none                   → off;
//  - OTEL_TRACES_EXPORTER=otlp and/or console    → those exporters (a comma list);
//  - OTEL_TRACES_EXPORTER unset or empty         → otlp when OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
//                                                  or OTEL_EXPORTER_OTLP_ENDPOINT is set;
//  - nothing set                                 → off.
// Off means no SDK object, no observer and so no tracing cost at all — not even an export
// attempt to the default endpoint. `otlp` is OTLP over HTTP (protobuf, or JSON with
// OTEL_EXPORTER_OTLP_PROTOCOL=http/json) through a BatchSpanProcessor; `console` writes each
// span as text to STDERR (stdout carries the command's data). service.name is
// OTEL_SERVICE_NAME, else OTEL_RESOURCE_ATTRIBUTES' service.name, else `babelqueue-cli`.
//
// A build without the otel component or the opentelemetry-cpp SDK exporters
// (BABELQUEUE_HAVE_OTEL_EXPORT unset) reads the same variables, and when they ask for tracing
// prints one warning that this build cannot export.
#include <babelqueue/runtime/observer.hpp>

#include <memory>

namespace babelqueue::cli {

/// Owns the tracer provider of one command run. Its destructor (or shutdown()) flushes every
/// pending span and shuts the provider down, so keep it alive until the command is finished:
/// declare it before the app, whose observer it feeds.
class telemetry {
 public:
  /// Reads the environment (see the file comment); warnings go to stderr.
  static telemetry from_environment();

  telemetry(telemetry&& other) noexcept;
  telemetry& operator=(telemetry&& other) noexcept;
  telemetry(const telemetry&) = delete;
  telemetry& operator=(const telemetry&) = delete;
  ~telemetry();

  /// The tracing observer to attach to app_options::observers; null when tracing is off.
  std::shared_ptr<babelqueue::observer> observer() const;

  /// Exports what is pending and shuts the provider down; later spans are dropped.
  /// Idempotent; the destructor calls it.
  void shutdown() noexcept;

 private:
  struct impl;
  telemetry();
  std::unique_ptr<impl> impl_;
};

}  // namespace babelqueue::cli
