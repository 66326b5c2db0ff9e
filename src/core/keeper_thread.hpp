#pragma once
// A keeper: a thread that runs one callback every period until stopped. The networked
// clients whose library services the connection only inside its own calls (rabbitmq-c, the
// AMQP 1.0 connection driver) use one to keep a connection alive between the caller's calls:
// it sends heartbeats, reads what the broker sent, renews tokens. The callback decides
// whether there is anything to do (typically: try_lock the client, skip when a call is in
// progress). Header-only and private (`#include "core/keeper_thread.hpp"`).
//
// stop() wakes the thread at once (no waiting out the period), joins it and is idempotent;
// the destructor stops. An exception escaping the callback is dropped and the keeper keeps
// its schedule: a keeper must not terminate the process, and the next call of the client
// sees whatever broke.
//
// Thread-safety: start() and stop() are called by the owner, not concurrently with each
// other. The callback runs on the keeper's thread, never concurrently with itself.

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

namespace babelqueue::inline v1::detail {

class keeper_thread {
 public:
  keeper_thread() = default;
  keeper_thread(const keeper_thread&) = delete;
  keeper_thread& operator=(const keeper_thread&) = delete;
  ~keeper_thread() { stop(); }

  /// Starts the thread: `tick` runs every `period` (first after one period) until stop().
  /// Never throws: when the OS refuses a thread (std::thread throws std::system_error) it
  /// returns that refusal's text, which the owner reports as a resource_exhausted error of
  /// its open(); nullopt when the thread runs.
  [[nodiscard]] std::optional<std::string> start(std::chrono::milliseconds period,
                                                 std::function<void()> tick) noexcept {
    stop_ = false;
    try {
      thread_ = std::thread([this, period, tick = std::move(tick)] {
        std::unique_lock k(m_);
        while (!wake_.wait_for(k, period, [this] { return stop_; })) {
          try {
            tick();
          } catch (...) {  // see the file comment
          }
        }
      });
    } catch (const std::exception& e) {  // std::system_error, or bad_alloc copying `tick`
      return std::string(e.what());
    }
    return std::nullopt;
  }

  /// Whether the thread was started and not yet stopped.
  bool running() const noexcept { return thread_.joinable(); }

  /// Stops and joins the thread; a no-op when it is not running.
  void stop() noexcept {
    if (!thread_.joinable()) return;
    {
      std::lock_guard k(m_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }

 private:
  std::mutex m_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace babelqueue::inline v1::detail
