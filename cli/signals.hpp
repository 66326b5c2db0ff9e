#pragma once
// SIGINT and SIGTERM for the whole `babelqueue` process, routed by one watcher thread.
//
// Broker clients start threads of their own when a transport opens (RabbitMQ's and Artemis's
// connection keepers, librdkafka, the Pulsar client). A thread that does not block a signal
// may be the one the kernel picks for it; with the default action, the process then dies
// without closing or flushing anything, even when a command installed its graceful stop a
// moment later. So main() blocks both signals before anything starts a thread (every thread
// inherits the mask), and one watcher thread takes them with sigtimedwait():
//  - while a command has a handler registered (signal_watch, commands/runtime/broker.hpp),
//    the newest handler is called, on the watcher thread — never inside a signal handler;
//  - otherwise the signal does what it always did: its default action ends the process.
#include <functional>

namespace babelqueue::cli {

/// Blocks SIGINT and SIGTERM in the calling thread and starts the watcher. Call first thing
/// in main(), before anything may start a thread; the destructor stops the watcher.
class signal_router {
 public:
  signal_router();
  ~signal_router();
  signal_router(const signal_router&) = delete;
  signal_router& operator=(const signal_router&) = delete;
};

/// Registers `handler` for SIGINT/SIGTERM until unregister_signal_handler() with the id
/// returned; the newest registration is called. Without a signal_router alive, nothing is
/// routed (the signals keep whatever disposition and mask the process has).
int register_signal_handler(std::function<void()> handler);
void unregister_signal_handler(int id);

}  // namespace babelqueue::cli
