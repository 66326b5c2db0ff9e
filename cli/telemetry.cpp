// OpenTelemetry tracing of the runtime commands from the OTEL_* environment (telemetry.hpp).
#include "telemetry.hpp"

#include <cctype>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>
#include <string_view>

#if BABELQUEUE_HAVE_OTEL_EXPORT
#include <babelqueue/otel/tracing.hpp>
#include <babelqueue/version.hpp>

#include <opentelemetry/exporters/ostream/span_exporter_factory.h>
#include <opentelemetry/exporters/otlp/otlp_http_exporter_factory.h>
#include <opentelemetry/exporters/otlp/otlp_http_exporter_options.h>
#include <opentelemetry/sdk/resource/resource.h>
#include <opentelemetry/sdk/resource/resource_detector.h>
#include <opentelemetry/sdk/trace/batch_span_processor_factory.h>
#include <opentelemetry/sdk/trace/batch_span_processor_options.h>
#include <opentelemetry/sdk/trace/processor.h>
#include <opentelemetry/sdk/trace/simple_processor_factory.h>
#include <opentelemetry/sdk/trace/tracer_provider.h>
#include <opentelemetry/sdk/trace/tracer_provider_factory.h>
#include <pthread.h>
#include <signal.h>

#include <utility>
#include <vector>
#endif

namespace babelqueue::cli {
namespace {

// The OTel specification reads an empty variable as an unset one; callers test empty().
std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

std::string lower_trimmed(std::string_view s) {
  const auto blank = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!s.empty() && blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && blank(s.back())) s.remove_suffix(1);
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

void warn(std::string_view what) { std::cerr << "babelqueue: warning: " << what << "\n"; }

// Which exporters the environment asks for (the rules of telemetry.hpp).
struct export_plan {
  bool otlp = false;
  bool console = false;
  bool any() const { return otlp || console; }
};

export_plan plan_from_environment() {
  if (lower_trimmed(env("OTEL_SDK_DISABLED")) == "true") return {};
  export_plan plan;
  const std::string exporters = env("OTEL_TRACES_EXPORTER");
  if (lower_trimmed(exporters).empty()) {
    // Unlike the SDKs' default of `otlp`, a CLI run only exports when an endpoint is
    // configured: nobody asked for spans, so none are sent to localhost:4318.
    plan.otlp = !env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").empty() ||
                !env("OTEL_EXPORTER_OTLP_ENDPOINT").empty();
    return plan;
  }
  bool none = false;
  std::string_view rest = exporters;
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    const std::string name = lower_trimmed(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    if (name == "otlp") {
      plan.otlp = true;
    } else if (name == "console") {
      plan.console = true;
    } else if (name == "none") {
      none = true;
    } else if (!name.empty()) {
      warn("OTEL_TRACES_EXPORTER: '" + name +
           "' is not supported by the babelqueue CLI (otlp, console, none); ignored");
    }
  }
  return none ? export_plan{} : plan;
}

}  // namespace

#if BABELQUEUE_HAVE_OTEL_EXPORT

namespace {

namespace otlp = opentelemetry::exporter::otlp;
namespace resource = opentelemetry::sdk::resource;
namespace sdktrace = opentelemetry::sdk::trace;

constexpr const char* default_service_name = "babelqueue-cli";

// Resource::Create() already merges OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME; only the
// fallback differs from the SDK's `unknown_service`, so pass ours when neither names one.
resource::Resource resource_from_environment() {
  const auto detected = resource::OTELResourceDetector().Detect();
  if (detected.GetAttributes().count("service.name") > 0) return resource::Resource::Create({});
  return resource::Resource::Create({{"service.name", default_service_name}});
}

// OtlpHttpExporterOptions() reads every OTEL_EXPORTER_OTLP_[TRACES_]* variable (endpoint,
// headers, timeout, compression, TLS, protocol). The endpoint rule is the specification's
// (the _TRACES_ one as given, else the generic one + "/v1/traces", else
// http://localhost:4318/v1/traces) except that 1.28 appends to a generic endpoint ending in
// '/' verbatim, which gives `//v1/traces`; the specification resolves it against the base.
otlp::OtlpHttpExporterOptions otlp_options() {
  otlp::OtlpHttpExporterOptions options;
  std::string base = env("OTEL_EXPORTER_OTLP_ENDPOINT");
  if (env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").empty() && !base.empty() && base.back() == '/') {
    while (!base.empty() && base.back() == '/') base.pop_back();
    options.url = base + "/v1/traces";
  }
  std::string protocol = env("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL");
  if (protocol.empty()) protocol = env("OTEL_EXPORTER_OTLP_PROTOCOL");
  if (!protocol.empty() && protocol != "http/protobuf" && protocol != "http/json") {
    // The exporter is HTTP only; it would send http/protobuf anyway (e.g. to a gRPC port).
    warn("OTLP protocol '" + protocol +
         "' is not supported by the babelqueue CLI (http/protobuf, http/json); using "
         "http/protobuf");
  }
  return options;
}

// Blocks SIGINT and SIGTERM in this thread while alive. The batch processor starts its export
// thread when it is created; started under this block, the thread inherits it, so those
// signals never kill the process through it: consume's signal_watch must receive them to stop
// gracefully, which is what lets the spans be flushed.
class signals_blocked {
 public:
  signals_blocked() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    restore_ = pthread_sigmask(SIG_BLOCK, &set, &old_) == 0;
  }
  ~signals_blocked() {
    if (restore_) pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  signals_blocked(const signals_blocked&) = delete;
  signals_blocked& operator=(const signals_blocked&) = delete;

 private:
  sigset_t old_{};
  bool restore_ = false;
};

}  // namespace

struct telemetry::impl {
  std::unique_ptr<sdktrace::TracerProvider> provider;
  std::shared_ptr<babelqueue::otel::tracing> tracing;
  bool shut_down = false;
};

telemetry telemetry::from_environment() {
  telemetry t;
  const export_plan plan = plan_from_environment();
  if (!plan.any()) return t;
  try {
    std::vector<std::unique_ptr<sdktrace::SpanProcessor>> processors;
    signals_blocked blocked;
    if (plan.otlp) {
      processors.push_back(sdktrace::BatchSpanProcessorFactory::Create(
          otlp::OtlpHttpExporterFactory::Create(otlp_options()),
          sdktrace::BatchSpanProcessorOptions{}));  // reads OTEL_BSP_*
    }
    if (plan.console) {
      // Printed as each span ends, in order with the command's log lines on stderr; stdout
      // carries the command's data (ids, message bodies).
      processors.push_back(sdktrace::SimpleSpanProcessorFactory::Create(
          opentelemetry::exporter::trace::OStreamSpanExporterFactory::Create(std::cerr)));
    }
    t.impl_->provider =
        sdktrace::TracerProviderFactory::Create(std::move(processors), resource_from_environment());
    babelqueue::otel::tracing_options options;
    constexpr auto name = babelqueue::otel::instrumentation_name;
    options.tracer =
        t.impl_->provider->GetTracer({name.data(), name.size()}, babelqueue::version_string);
    t.impl_->tracing = babelqueue::otel::make_tracing(std::move(options));
  } catch (const std::exception& e) {
    warn(std::string("cannot set up OpenTelemetry tracing, running without it: ") + e.what());
    t.impl_->provider.reset();
    t.impl_->tracing.reset();
  }
  return t;
}

std::shared_ptr<babelqueue::observer> telemetry::observer() const {
  return impl_ ? impl_->tracing : nullptr;
}

void telemetry::shutdown() noexcept {
  if (!impl_ || !impl_->provider || impl_->shut_down) return;
  impl_->shut_down = true;
  // ForceFlush waits until the pending spans are exported (or the export timed out);
  // Shutdown then stops the export thread and the exporters.
  impl_->provider->ForceFlush();
  impl_->provider->Shutdown();
}

#else  // !BABELQUEUE_HAVE_OTEL_EXPORT

struct telemetry::impl {};

telemetry telemetry::from_environment() {
  if (plan_from_environment().any()) {
    warn(
        "the OTEL_* environment asks for tracing, but this babelqueue build has no "
        "OpenTelemetry exporter (built without the otel component or the opentelemetry-cpp "
        "SDK exporters); no spans are exported");
  }
  return telemetry{};
}

std::shared_ptr<babelqueue::observer> telemetry::observer() const { return nullptr; }

void telemetry::shutdown() noexcept {}

#endif  // BABELQUEUE_HAVE_OTEL_EXPORT

telemetry::telemetry() : impl_(std::make_unique<impl>()) {}
telemetry::telemetry(telemetry&& other) noexcept = default;

telemetry& telemetry::operator=(telemetry&& other) noexcept {
  if (this != &other) {
    shutdown();
    impl_ = std::move(other.impl_);
  }
  return *this;
}

telemetry::~telemetry() { shutdown(); }

}  // namespace babelqueue::cli
