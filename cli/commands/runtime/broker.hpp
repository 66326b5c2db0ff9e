#pragma once
// Shared by the runtime commands: which transports this binary has, the default broker
// URL, and a SIGINT/SIGTERM watcher that turns a signal into a graceful stop.
#include <babelqueue/runtime/transport.hpp>

#include <CLI/CLI.hpp>

#include <atomic>
#include <functional>
#include <string>

namespace babelqueue::cli {

/// Registers every transport compiled into this binary (memory; sqlite, redis, amqp and kafka
/// when BABELQUEUE_HAVE_SQLITE / _REDIS / _RABBITMQ / _KAFKA). Idempotent.
void register_builtin_transports();

/// The default broker: $BABELQUEUE_BROKER when set and not empty; else, with sqlite built,
/// `sqlite://<state>/babelqueue/queue.db` where <state> is $XDG_STATE_HOME or
/// ~/.local/state (the directory is created); else `memory://`.
std::string default_broker_url();

/// Adds `--broker URL` (documented with the default) to `cmd`, storing into `url`.
CLI::Option* add_broker_option(CLI::App* cmd, std::string& url);

/// `url`, or default_broker_url() when it is empty.
std::string resolve_broker(const std::string& url);

/// Prints `babelqueue warn: <w>` on stderr for each of t.security_warnings() (commands that
/// open a transport without an app; the app logs them itself).
void print_security_warnings(const transport& t);

/// While alive, SIGINT and SIGTERM call `on_signal` (once per signal) instead of ending the
/// process: main()'s signal_router (cli/signals.hpp) blocked both before any thread started
/// and its watcher thread calls the newest registered handler — never inside a signal
/// handler, so on_signal may lock and allocate. The destructor unregisters it (a signal then
/// has its default action again).
class signal_watch {
 public:
  explicit signal_watch(std::function<void()> on_signal);
  ~signal_watch();
  signal_watch(const signal_watch&) = delete;
  signal_watch& operator=(const signal_watch&) = delete;
  /// True once a signal arrived.
  bool signalled() const noexcept { return signalled_.load(); }

 private:
  std::function<void()> on_signal_;
  std::atomic<bool> signalled_{false};
  int id_ = 0;
};

}  // namespace babelqueue::cli
