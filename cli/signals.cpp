#include "signals.hpp"

#include <pthread.h>

#include <atomic>
#include <csignal>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace babelqueue::cli {
namespace {

struct routing {
  std::mutex mutex;
  std::vector<std::pair<int, std::function<void()>>> handlers;  // newest last
  int next_id = 1;
  std::atomic<bool> done{false};
  std::thread watcher;
};

routing& state() {
  static routing r;
  return r;
}

sigset_t routed_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

// No handler: the signal's default action, as if it had never been blocked.
[[noreturn]] void die_of(int sig) {
  std::signal(sig, SIG_DFL);
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, sig);
  pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
  std::raise(sig);
  std::_Exit(128 + sig);  // not reached: the default action of SIGINT/SIGTERM ends the process
}

}  // namespace

signal_router::signal_router() {
  const sigset_t set = routed_signals();
  if (pthread_sigmask(SIG_BLOCK, &set, nullptr) != 0) return;
  auto& s = state();
  s.watcher = std::thread([set] {
    auto& r = state();
    while (!r.done.load()) {
      timespec tick{0, 100'000'000L};  // re-check done every 100 ms
      const int sig = sigtimedwait(&set, nullptr, &tick);
      if (sig != SIGINT && sig != SIGTERM) continue;
      std::function<void()> handler;
      {
        std::lock_guard lock(r.mutex);
        if (!r.handlers.empty()) handler = r.handlers.back().second;
      }
      if (!handler) die_of(sig);
      handler();
    }
  });
}

signal_router::~signal_router() {
  auto& s = state();
  s.done.store(true);
  if (s.watcher.joinable()) s.watcher.join();
}

int register_signal_handler(std::function<void()> handler) {
  auto& s = state();
  std::lock_guard lock(s.mutex);
  const int id = s.next_id++;
  s.handlers.emplace_back(id, std::move(handler));
  return id;
}

void unregister_signal_handler(int id) {
  auto& s = state();
  std::lock_guard lock(s.mutex);
  std::erase_if(s.handlers, [id](const auto& h) { return h.first == id; });
}

}  // namespace babelqueue::cli
