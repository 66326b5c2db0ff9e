// Test helper (not a test): one worker process of the crash-and-restart matrix
// (crash_matrix_test.cpp). An app consuming <queue> on <url> with one worker thread, as a
// production worker process runs; its handler records the effect of each message — the
// number `n` of its data, one line appended to <effects-file> with one write(2) — and
// returns, so the runtime acks it.
//
//   crash_matrix_worker <url> <queue> <effects-file> <die-after> <handler-ms>
//
// <die-after> >= 0: after that many effects, the next handler SIGKILLs the process before
// its effect: the message was taken and never settled, so unless the broker delivers it
// again it is lost — what the matrix checks. -1: never. <handler-ms>: how long each handler
// works (sleeps) before its effect, so that the matrix's events land mid-consume.
//
// SIGTERM / SIGINT are blocked before any broker client starts a thread and taken by one
// watcher thread that stops the app: in-flight handlers finish, their messages are settled,
// the transports are closed, and the process exits 0 — the graceful stop the matrix checks.
// Exit 3: the app could not start (e.g. the broker is down); the matrix restarts the worker.
#include "support/all_transports.hpp"

#include <babelqueue/babelqueue.hpp>
#include <babelqueue/runtime/app.hpp>

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

namespace {

// One line per effect, `<n> <wall-clock ms>`, written whole by one write(2) on an O_APPEND
// descriptor, so a kill never leaves half a line and the matrix can read the file at any
// moment (the time places the effect before, during or after the broker's outage).
void record_effect(int fd, long n) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
  const std::string line = std::to_string(n) + " " + std::to_string(ms) + "\n";
  if (::write(fd, line.data(), line.size()) != static_cast<ssize_t>(line.size())) std::abort();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr,
                 "usage: crash_matrix_worker <url> <queue> <effects-file> <die-after> "
                 "<handler-ms>\n");
    return 2;
  }
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);  // before any thread exists

  const std::string url = argv[1];
  const long die_after = std::strtol(argv[4], nullptr, 10);
  const std::chrono::milliseconds handler_time(std::strtol(argv[5], nullptr, 10));
  const int fd = ::open(argv[3], O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return 2;

  bqtest::register_all_transports();
  babelqueue::app_options o;
  o.queue = argv[2];
  o.workers = 1;
  o.poll_timeout = std::chrono::milliseconds(500);
  o.close_timeout = std::chrono::milliseconds(10000);
  auto app = babelqueue::app::open(url, o);
  if (!app) {
    std::fprintf(stderr, "crash_matrix_worker: cannot start: %s\n", app.error().message.c_str());
    return 3;
  }
  std::atomic<long> effects{0};
  (*app)->handle("urn:babel:test:item", [&](babelqueue::message& m) {
    std::this_thread::sleep_for(handler_time);
    if (effects.fetch_add(1) == die_after) ::kill(::getpid(), SIGKILL);
    record_effect(fd, m.data().at("n").get<long>());
  });

  std::atomic<bool> stopping{false};
  std::thread watcher([&] {
    while (!stopping.load()) {
      timespec tick{0, 100'000'000L};
      const int sig = sigtimedwait(&stop_signals, nullptr, &tick);
      if (sig == SIGTERM || sig == SIGINT) (*app)->stop();
    }
  });
  auto consumed = (*app)->consume();
  stopping.store(true);
  watcher.join();
  if (!consumed) {
    std::fprintf(stderr, "crash_matrix_worker: %s\n", consumed.error().message.c_str());
    return 3;
  }
  return 0;
}
