// babelqueue publish [--broker URL] --queue Q <urn> [--data JSON] [--trace-id T] [--header k=v]...
//                    [--delay 30s | --at 2026-12-24T09:00:00Z]
// Builds a fresh envelope, publishes it, waits until the broker accepted it, prints meta.id.
// --delay / --at make it deliverable later (publish_options::delay / deliver_at): the
// broker's own delay, or this SDK's extension where the broker has none (docs/delays.md).
// With the OTEL_* environment set (telemetry.hpp) the publish is a `publish <urn>` span, and
// without --trace-id the message's trace_id is that span's trace.
#include "command.hpp"
#include "commands/runtime/broker.hpp"
#include "commands/runtime/time_args.hpp"
#include "telemetry.hpp"

#include <babelqueue/codec.hpp>
#include <babelqueue/runtime/app.hpp>
#include <babelqueue/runtime/logging.hpp>
#include <babelqueue/runtime/url.hpp>

#include <iostream>
#include <memory>

namespace {

babelqueue::cli::command_registrar publish_command{
    "publish", [](CLI::App& root) {
      auto* cmd = root.add_subcommand(
          "publish", "Publish one fresh envelope to a queue and print its meta.id");
      struct args_t {
        std::string broker, queue, urn, data = "{}", trace_id, delay, at;
        std::vector<std::string> headers;
      };
      auto args = std::make_shared<args_t>();
      babelqueue::cli::add_broker_option(cmd, args->broker);
      cmd->add_option("--queue", args->queue, "Target queue (also written to meta.queue)")
          ->required();
      cmd->add_option("urn", args->urn, "Message URN, e.g. urn:babel:orders:created")->required();
      cmd->add_option("--data", args->data,
                      "JSON object for `data` (default {}); kept exactly, numbers included");
      cmd->add_option("--trace-id", args->trace_id, "Trace to continue (default: a fresh UUIDv4)");
      cmd->add_option("--header", args->headers,
                      "Out-of-band header name=value (repeatable), e.g. traceparent=00-...");
      auto* delay_opt = cmd->add_option(
          "--delay", args->delay, "Deliver no earlier than this from now: 1500ms, 30s, 5m, 2h, 1d");
      cmd->add_option("--at", args->at,
                      "Deliver no earlier than this RFC 3339 time, e.g. 2026-12-24T09:00:00Z")
          ->excludes(delay_opt);
      cmd->callback([args] {
        auto& status = babelqueue::cli::exit_status();
        // Built once before the broker is opened, only so a bad URN or --data fails fast;
        // app::publish() builds the envelope it sends itself, so that a tracing observer can
        // give it the trace of its span. `data` goes in as text, not json: every number keeps
        // its exact text.
        const babelqueue::json_text data(args->data);
        if (auto env = babelqueue::make(args->urn, data, {args->queue, args->trace_id}); !env) {
          std::cerr << env.error().reason() << ": " << env.error().message << "\n";
          status = 2;
          return;
        }
        babelqueue::publish_options options;
        options.queue = args->queue;
        options.trace_id = args->trace_id;
        std::string why;
        if (!args->delay.empty()) {
          auto d = babelqueue::cli::parse_delay(args->delay, why);
          if (!d) {
            std::cerr << "--delay '" << args->delay << "': " << why << "\n";
            status = 2;
            return;
          }
          options.delay = *d;
        }
        if (!args->at.empty()) {
          auto at = babelqueue::cli::parse_instant(args->at, why);
          if (!at) {
            std::cerr << "--at '" << args->at << "': " << why << "\n";
            status = 2;
            return;
          }
          options.deliver_at = *at;
        }
        for (const auto& h : args->headers) {
          const auto eq = h.find('=');
          if (eq == std::string::npos || eq == 0) {
            std::cerr << "--header must be name=value, got '" << h << "'\n";
            status = 2;
            return;
          }
          options.hdrs[h.substr(0, eq)] = h.substr(eq + 1);
        }
        babelqueue::cli::register_builtin_transports();
        const std::string url = babelqueue::cli::resolve_broker(args->broker);
        // Outlives the app: its destructor exports the span on every return below.
        auto telemetry = babelqueue::cli::telemetry::from_environment();
        babelqueue::app_options app_opts;
        app_opts.queue = args->queue;
        if (auto tracing = telemetry.observer()) app_opts.observers.push_back(std::move(tracing));
        // The app's warnings (security_warnings() of the broker) on stderr.
        app_opts.observers.push_back(
            std::make_shared<babelqueue::stderr_logger>(babelqueue::log_level::warn));
        auto app = babelqueue::app::open(url, app_opts);
        if (!app) {
          std::cerr << "cannot open broker " << babelqueue::redact_url(url) << ": "
                    << app.error().reason() << ": " << app.error().message << "\n";
          status = 2;
          return;
        }
        auto id = (*app)->publish(args->urn, data, options);
        if (!id) {
          std::cerr << "publish failed: " << id.error().reason() << ": " << id.error().message
                    << "\n";
          status = 2;
          return;
        }
        std::cout << *id << "\n";
      });
    }};

}  // namespace
