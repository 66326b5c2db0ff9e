// The in-process broker: FIFO queues, delayed re-entry, one condition variable.
#include "memory/broker.hpp"

namespace babelqueue {
inline namespace v1 {
namespace memory {

broker::queue_state& broker::state(std::string_view queue) {
  auto it = queues_.find(queue);
  if (it == queues_.end()) it = queues_.emplace(std::string(queue), queue_state{}).first;
  return it->second;
}

void broker::promote_due(queue_state& q, clock::time_point now) {
  while (!q.delayed.empty() && q.delayed.begin()->first <= now) {
    q.ready.push_back(std::move(q.delayed.begin()->second));
    q.delayed.erase(q.delayed.begin());
  }
}

void broker::push(std::string_view queue, stored_message m) {
  {
    std::lock_guard lock(mutex_);
    state(queue).ready.push_back(std::move(m));
  }
  cv_.notify_all();
}

void broker::push_at(std::string_view queue, stored_message m, clock::time_point due) {
  {
    std::lock_guard lock(mutex_);
    state(queue).delayed.emplace(due, std::move(m));
  }
  // A receive waiting past `due` must wake at it.
  cv_.notify_all();
}

std::optional<stored_message> broker::pop(std::string_view queue, clock::time_point deadline) {
  std::unique_lock lock(mutex_);
  for (;;) {
    auto& q = state(queue);
    const auto now = clock::now();
    promote_due(q, now);
    if (!q.ready.empty()) {
      stored_message m = std::move(q.ready.front());
      q.ready.pop_front();
      ++q.in_flight;
      return m;
    }
    if (now >= deadline) return std::nullopt;
    // Wake at the deadline, or earlier when a delayed message becomes due.
    auto wake = deadline;
    if (!q.delayed.empty() && q.delayed.begin()->first < wake) wake = q.delayed.begin()->first;
    cv_.wait_until(lock, wake);
  }
}

void broker::settle(std::string_view queue, stored_message* m, requeue where,
                    clock::time_point due) {
  {
    std::lock_guard lock(mutex_);
    auto& q = state(queue);
    if (q.in_flight > 0) --q.in_flight;
    if (m != nullptr && where == requeue::head) {
      q.ready.push_front(std::move(*m));
    } else if (m != nullptr && where == requeue::tail) {
      if (due <= clock::now()) {
        q.ready.push_back(std::move(*m));
      } else {
        q.delayed.emplace(due, std::move(*m));
      }
    }
  }
  cv_.notify_all();
}

std::size_t broker::depth(std::string_view queue) {
  std::lock_guard lock(mutex_);
  auto it = queues_.find(queue);
  return it == queues_.end() ? 0 : it->second.ready.size() + it->second.delayed.size();
}

std::vector<stored_message> broker::peek(std::string_view queue, std::size_t offset,
                                         std::size_t limit) {
  std::lock_guard lock(mutex_);
  std::vector<stored_message> out;
  auto it = queues_.find(queue);
  if (it == queues_.end()) return out;
  auto& q = it->second;
  promote_due(q, clock::now());
  for (std::size_t i = offset; i < q.ready.size() && out.size() < limit; ++i) {
    out.push_back(q.ready[i]);
  }
  return out;
}

std::size_t broker::in_flight(std::string_view queue) {
  std::lock_guard lock(mutex_);
  auto it = queues_.find(queue);
  return it == queues_.end() ? 0 : it->second.in_flight;
}

}  // namespace memory
}  // namespace v1
}  // namespace babelqueue
