#pragma once
/// @file memory/memory_transport.hpp
/// @brief `memory://NAME` — an in-process broker for tests, examples and demos.
///
/// All transports opened with the same NAME (also the empty name of `memory://`) share one
/// broker that lives until the process ends (or reset() is called), so a publisher and a
/// consumer opened separately see the same queues. Each queue is FIFO; release() and
/// delayed messages re-enter at the tail once due. A message received but not settled
/// when its transport is closed or destroyed goes back to the head of its queue (like a
/// broker connection dropping), so nothing is lost.
///
/// Capabilities: native_delay (release with a delay), headers. No native delivery count.
/// No query options are accepted (`memory://x?a=b` is errc::invalid_argument).
///
/// @note Thread-safety: one memory_transport instance is used by one thread at a time (the
/// transport.hpp contract); the shared broker behind it is internally locked, so any number
/// of instances on any threads may use one NAME concurrently. The free functions below are
/// thread-safe. No callbacks.

#include <babelqueue/export/memory.hpp>
#include <babelqueue/runtime/settlement_handle.hpp>
#include <babelqueue/runtime/transport.hpp>
#include <babelqueue/runtime/url.hpp>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace babelqueue {
inline namespace v1 {
namespace memory {

class broker;  // the shared in-process state (src/memory)

class BABELQUEUE_MEMORY_EXPORT memory_transport final : public transport {
 public:
  /// Opens the broker called `name` (created on first use).
  explicit memory_transport(std::string_view name = {});
  ~memory_transport() override;

  result<void> publish(std::string_view queue, std::string_view body,
                       const headers& hdrs = {}) override;
  result<void> publish_batch(std::string_view queue,
                             std::span<const outgoing_message> messages) override;
  result<std::optional<received_message>> receive(std::string_view queue,
                                                  std::chrono::milliseconds timeout) override;
  result<void> ack(const received_message& message) override;
  result<void> release(const received_message& message,
                       std::chrono::milliseconds delay = {}) override;
  result<void> close(std::chrono::steady_clock::time_point deadline) override;
  /// Copies of the ready messages in queue order (a delayed message is listed once due).
  result<std::vector<peeked_message>> peek(std::string_view queue, std::size_t offset,
                                           std::size_t limit) override;
  std::string_view scheme() const noexcept override { return "memory"; }
  transport_capabilities capabilities() const noexcept override {
    return {.native_delay = true,
            .headers = true,
            .delivery_count = false,
            .peek = true,
            .ordered = true,
            .delayed_publish = true};
  }

 protected:
  /// Held in the broker's delayed set (steady clock: a process-local broker, so a wall-clock
  /// jump never moves a due time) until due.
  result<void> publish_later(std::string_view queue, std::string_view body, const headers& hdrs,
                             std::chrono::milliseconds delay) override;

 private:
  struct inflight;
  result<void> settle(const received_message& message, bool requeue,
                      std::chrono::milliseconds delay);
  std::shared_ptr<broker> broker_;
  std::vector<std::shared_ptr<inflight>> inflight_;  // received, not yet settled
  settlement_owner owner_{"memory"};                 // marks the handles it hands out
  bool closed_ = false;
};

/// Registers the `memory` scheme with the URL factory (url.hpp). Idempotent.
BABELQUEUE_MEMORY_EXPORT void register_transport();

/// Messages in `queue` of broker `name` that are ready or delayed (not in flight).
BABELQUEUE_MEMORY_EXPORT std::size_t depth(std::string_view name, std::string_view queue);
/// Messages received from `queue` of broker `name` and not yet settled.
BABELQUEUE_MEMORY_EXPORT std::size_t in_flight(std::string_view name, std::string_view queue);
/// Forgets broker `name` (its queues empty for transports opened afterwards; transports
/// already open keep the old broker).
BABELQUEUE_MEMORY_EXPORT void reset(std::string_view name);

}  // namespace memory
}  // namespace v1
}  // namespace babelqueue
