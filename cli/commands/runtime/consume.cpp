// babelqueue consume [--broker URL] --queue Q [--max N] [--timeout S] [--handle URN]...
//                    [--on-unknown STRATEGY] [--max-attempts N] [--no-dead-letter]
//                    [--retry-delay D] [--workers N]
// Runs the real app: each handled envelope is printed as its exact bytes on one line and
// acked. Without --handle every URN is handled; with it, only those, and every other URN
// follows --on-unknown (default fail: retried, then dead-lettered).
// Terminal failures and poison go to <queue>.dlq unless --no-dead-letter (then they are
// dropped, and a warning says so): a command-line consumer must not lose what it cannot
// handle by default, whatever the library's spec default (off) is.
// Ends after --max messages, after --timeout seconds in which nothing was settled for good
// (handled, dead-lettered or dropped — a message released or retried again and again does
// not keep it running), or on SIGINT/SIGTERM (in-flight messages finish and are settled
// first).
// With the OTEL_* environment set (telemetry.hpp) each delivery is a `process <urn>` span
// (retries and dead-letters its `publish` children), exported before the command exits.
#include "command.hpp"
#include "commands/runtime/broker.hpp"
#include "commands/runtime/time_args.hpp"
#include "telemetry.hpp"

#include <babelqueue/runtime/app.hpp>
#include <babelqueue/runtime/url.hpp>
#include <babelqueue/text.hpp>

#include <atomic>
#include <condition_variable>
#include <iostream>
#include <mutex>
#include <thread>

namespace {

// Counts messages settled for good (acked after handling, dead-lettered, dropped).
class settled_counter final : public babelqueue::observer {
 public:
  void on_acked(std::string_view) override { bump(); }
  void on_dead_lettered(std::string_view, babelqueue::dead_letter_reason) override { bump(); }
  void on_dropped(std::string_view) override { bump(); }
  std::uint64_t count() const noexcept { return n_.load(std::memory_order_acquire); }

 private:
  void bump() noexcept { n_.fetch_add(1, std::memory_order_acq_rel); }
  std::atomic<std::uint64_t> n_{0};
};

// Stops `app` once `progress` has not moved for `idle` (0 = never). Joins on destruction.
class idle_watchdog {
 public:
  idle_watchdog(babelqueue::app& app, const settled_counter& progress,
                std::chrono::milliseconds idle) {
    if (idle.count() <= 0) return;
    thread_ = std::thread([this, &app, &progress, idle] {
      using clock = std::chrono::steady_clock;
      auto last = progress.count();
      auto since = clock::now();
      std::unique_lock lock(mutex_);
      while (!done_) {
        cv_.wait_for(lock, std::chrono::milliseconds(50));
        const auto now_count = progress.count();
        if (now_count != last) {
          last = now_count;
          since = clock::now();
        } else if (clock::now() - since >= idle) {
          app.stop();
          return;
        }
      }
    });
  }
  ~idle_watchdog() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  idle_watchdog(const idle_watchdog&) = delete;
  idle_watchdog& operator=(const idle_watchdog&) = delete;

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

babelqueue::cli::command_registrar consume_command{
    "consume", [](CLI::App& root) {
      auto* cmd = root.add_subcommand(
          "consume",
          "Consume a queue with the runtime; print each handled envelope's bytes and ack it");
      struct args_t {
        std::string broker, queue, on_unknown = "fail", retry_delay;
        std::size_t max = 0;
        double timeout = 0;
        std::vector<std::string> handle;
        std::int64_t max_attempts = 3;
        bool dead_letter = true, quiet = false;
        unsigned workers = 1;
      };
      auto args = std::make_shared<args_t>();
      babelqueue::cli::add_broker_option(cmd, args->broker);
      cmd->add_option("--queue", args->queue, "Queue to consume")->required();
      cmd->add_option("--max", args->max, "Stop after N messages were dispatched (0 = no limit)");
      cmd->add_option("--timeout", args->timeout,
                      "Stop after S seconds in which no message was handled, dead-lettered or "
                      "dropped (0 = wait for a signal)")
          ->check(CLI::NonNegativeNumber);
      cmd->add_option("--handle", args->handle,
                      "Handle only this URN (repeatable); other URNs follow --on-unknown");
      cmd->add_option("--on-unknown", args->on_unknown,
                      "Unknown-URN strategy: fail | delete | release | dead_letter (default fail)");
      cmd->add_option("--max-attempts", args->max_attempts,
                      "Handler runs before dead-lettering (default 3)");
      cmd->add_flag("--dead-letter,!--no-dead-letter", args->dead_letter,
                    "Dead-letter terminal failures and poison to <queue>.dlq (the default); "
                    "--no-dead-letter drops them");
      cmd->add_option("--retry-delay", args->retry_delay,
                      "Wait before the first retry, doubling per retry (default 1s; 0s = retry "
                      "at once, as consumers without backoff do)");
      cmd->add_option("--workers", args->workers,
                      "Worker threads when neither --max nor --timeout is given (default 1)")
          ->check(CLI::Range(1u, 256u));
      cmd->add_flag("--quiet,-q", args->quiet, "Log only warnings and errors to stderr");
      cmd->callback([args] {
        auto& status = babelqueue::cli::exit_status();
        auto strategy = babelqueue::parse_unknown_urn_strategy(args->on_unknown);
        if (!strategy) {
          std::cerr << "--on-unknown: expected fail, delete, release or dead_letter, got '"
                    << args->on_unknown << "'\n";
          status = 2;
          return;
        }
        for (const auto& urn : args->handle) {
          if (babelqueue::is_blank(urn)) {
            std::cerr << "--handle: empty_urn: a handled URN must not be blank\n";
            status = 2;
            return;
          }
        }
        using namespace std::chrono;
        const bool bounded = args->max > 0 || args->timeout > 0;
        babelqueue::app_options o;
        o.queue = args->queue;
        o.on_unknown_urn = *strategy;
        o.max_attempts = args->max_attempts;
        o.dead_letter = args->dead_letter;
        o.workers = args->workers;
        if (!args->retry_delay.empty()) {
          std::string why;
          auto d = babelqueue::cli::parse_delay(args->retry_delay, why);
          if (!d) {
            std::cerr << "--retry-delay '" << args->retry_delay << "': " << why << "\n";
            status = 2;
            return;
          }
          o.retry.initial = *d;
          o.retry.max = std::max(o.retry.max, *d);
        }
        if (!args->dead_letter) {
          std::cerr << "warning: --no-dead-letter: messages that fail for good (attempts used "
                       "up, poison, unknown URNs) are dropped, not kept in "
                    << args->queue << ".dlq\n";
        }
        o.observers.push_back(std::make_shared<babelqueue::stderr_logger>(
            args->quiet ? babelqueue::log_level::warn : babelqueue::log_level::info));
        // Settled for good: what --timeout's idle clock counts (releases and retries do not).
        auto progress = std::make_shared<settled_counter>();
        o.observers.push_back(progress);
        const auto idle = duration_cast<milliseconds>(duration<double>(args->timeout));
        // Short polls keep SIGINT and the idle limit responsive.
        o.poll_timeout = args->timeout > 0 ? std::min<milliseconds>(idle, 250ms) : 1000ms;

        // Created before the app and the signal watcher: it outlives the app, so its
        // destructor exports the spans on every return below, a SIGINT stop included.
        auto telemetry = babelqueue::cli::telemetry::from_environment();
        if (auto tracing = telemetry.observer()) o.observers.push_back(std::move(tracing));

        babelqueue::cli::register_builtin_transports();
        const std::string url = babelqueue::cli::resolve_broker(args->broker);
        auto opened = babelqueue::app::open(url, o);
        if (!opened) {
          std::cerr << "cannot open broker " << babelqueue::redact_url(url) << ": "
                    << opened.error().reason() << ": " << opened.error().message << "\n";
          status = 2;
          return;
        }
        auto& app = **opened;
        auto out_mutex = std::make_shared<std::mutex>();
        auto print = [out_mutex](babelqueue::message& m) {
          std::lock_guard lock(*out_mutex);
          std::cout << m.raw() << '\n' << std::flush;
        };
        if (args->handle.empty()) {
          app.handle_unmatched(print);
        } else {
          for (const auto& urn : args->handle) app.handle(urn, print);
        }

        babelqueue::cli::signal_watch signals([&app] { app.stop(); });
        if (!bounded) {
          if (auto r = app.consume(); !r) {
            std::cerr << "consume failed: " << r.error().reason() << ": " << r.error().message
                      << "\n";
            status = 2;
          }
          return;
        }
        // Bounded: drain on this thread (exactly --max messages, one worker). A watchdog stops
        // the app once nothing was settled for --timeout, so a message that keeps coming
        // back (released, retried) cannot keep the command running.
        idle_watchdog watchdog(app, *progress, args->timeout > 0 ? idle : milliseconds(0));
        std::size_t total = 0;
        while (!app.stop_requested()) {
          const std::size_t want = args->max > 0 ? args->max - total : 0;
          auto n = app.drain(args->queue, want);
          if (!n) {
            std::cerr << "consume failed: " << n.error().reason() << ": " << n.error().message
                      << "\n";
            status = 2;
            return;
          }
          total += *n;
          if (args->max > 0 && total >= args->max) break;
        }
      });
    }};

}  // namespace
