#pragma once
// The shared in-process broker behind memory://NAME. Internally locked: any thread.
#include <babelqueue/runtime/transport.hpp>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace babelqueue {
inline namespace v1 {
namespace memory {

struct stored_message {
  std::string body;
  headers hdrs;
};

class broker {
 public:
  using clock = std::chrono::steady_clock;

  enum class requeue { none, head, tail };

  void push(std::string_view queue, stored_message m);
  /// A message that becomes ready at `due` (after those already due at that time).
  void push_at(std::string_view queue, stored_message m, clock::time_point due);
  /// Waits until a message is ready in `queue` or `deadline` passes; the message counts as
  /// in flight until settle().
  std::optional<stored_message> pop(std::string_view queue, clock::time_point deadline);
  /// Ends an in-flight message, atomically with putting it back (head: returned by a
  /// closing consumer; tail: released, visible from `due`).
  void settle(std::string_view queue, stored_message* m, requeue where, clock::time_point due);
  std::size_t depth(std::string_view queue);
  /// Copies of ready messages `offset`..`offset + limit` (due delayed ones promoted first).
  std::vector<stored_message> peek(std::string_view queue, std::size_t offset, std::size_t limit);
  std::size_t in_flight(std::string_view queue);

 private:
  struct queue_state {
    std::deque<stored_message> ready;
    std::multimap<clock::time_point, stored_message> delayed;  // due time → message
    std::size_t in_flight = 0;
  };
  queue_state& state(std::string_view queue);  // needs mutex_ held
  static void promote_due(queue_state& q, clock::time_point now);

  std::mutex mutex_;
  std::condition_variable cv_;  // notified on every push
  std::map<std::string, queue_state, std::less<>> queues_;
};

}  // namespace memory
}  // namespace v1
}  // namespace babelqueue
