// memory:// — the transport over the shared in-process broker.
#include "core/propagate.hpp"
#include "memory/broker.hpp"

#include <babelqueue/memory/memory_transport.hpp>

#include <algorithm>
#include <mutex>

namespace babelqueue {
inline namespace v1 {
namespace memory {
namespace {

struct broker_registry {
  std::mutex mutex;
  std::map<std::string, std::shared_ptr<broker>, std::less<>> brokers;
};

broker_registry& registry() {
  static broker_registry r;
  return r;
}

std::shared_ptr<broker> find_broker(std::string_view name, bool create) {
  auto& r = registry();
  std::lock_guard lock(r.mutex);
  auto it = r.brokers.find(name);
  if (it != r.brokers.end()) return it->second;
  if (!create) return nullptr;
  auto b = std::make_shared<broker>();
  r.brokers.emplace(std::string(name), b);
  return b;
}

}  // namespace

// A message received and not yet settled; its handle (settlement_owner) holds a reference.
struct memory_transport::inflight {
  std::string queue;
  stored_message message;
};

memory_transport::memory_transport(std::string_view name) : broker_(find_broker(name, true)) {}

memory_transport::~memory_transport() { (void)close(std::chrono::steady_clock::now()); }

result<void> memory_transport::publish(std::string_view queue, std::string_view body,
                                       const headers& hdrs) {
  if (closed_) return fail(transport_errc::closed, "memory transport is closed");
  if (queue.empty()) return fail(transport_errc::invalid_argument, "empty queue name");
  broker_->push(queue, stored_message{std::string(body), sanitize_headers(hdrs)});
  return {};
}

result<void> memory_transport::publish_later(std::string_view queue, std::string_view body,
                                             const headers& hdrs, std::chrono::milliseconds delay) {
  if (closed_) return fail(transport_errc::closed, "memory transport is closed");
  if (queue.empty()) return fail(transport_errc::invalid_argument, "empty queue name");
  broker_->push_at(queue, stored_message{std::string(body), sanitize_headers(hdrs)},
                   std::chrono::steady_clock::now() + delay);
  return {};
}

result<void> memory_transport::publish_batch(std::string_view queue,
                                             std::span<const outgoing_message> messages) {
  for (const auto& m : messages) {
    if (auto r = publish(queue, m.body, m.hdrs); !r) return r;
  }
  return {};
}

result<std::optional<received_message>> memory_transport::receive(
    std::string_view queue, std::chrono::milliseconds timeout) {
  if (closed_) return fail(transport_errc::closed, "memory transport is closed");
  if (queue.empty()) return fail(transport_errc::invalid_argument, "empty queue name");
  if (timeout.count() < 0) timeout = {};
  auto got = broker_->pop(queue, std::chrono::steady_clock::now() + timeout);
  if (!got) return std::optional<received_message>{};
  auto record = std::make_shared<inflight>(inflight{std::string(queue), std::move(*got)});
  received_message out;
  out.body = record->message.body;
  out.hdrs = record->message.hdrs;
  out.queue = std::string(queue);
  out.handle = owner_.issue(record);
  inflight_.push_back(std::move(record));
  return std::optional<received_message>(std::move(out));
}

result<std::vector<peeked_message>> memory_transport::peek(std::string_view queue,
                                                           std::size_t offset, std::size_t limit) {
  if (closed_) return fail(transport_errc::closed, "memory transport is closed");
  if (queue.empty()) return fail(transport_errc::invalid_argument, "empty queue name");
  std::vector<peeked_message> out;
  for (auto& m : broker_->peek(queue, offset, limit)) {
    out.push_back(peeked_message{std::move(m.body), std::move(m.hdrs)});
  }
  return out;
}

result<void> memory_transport::settle(const received_message& message, bool requeue,
                                      std::chrono::milliseconds delay) {
  if (closed_) return fail(transport_errc::closed, "memory transport is closed");
  BABELQUEUE_TRY_LET(owned, owner_.claim<std::shared_ptr<inflight>>(message));
  std::shared_ptr<inflight> record = **owned;
  owned->settle();
  auto it = std::find(inflight_.begin(), inflight_.end(), record);
  if (delay.count() < 0) delay = {};
  broker_->settle(record->queue, requeue ? &record->message : nullptr,
                  requeue ? broker::requeue::tail : broker::requeue::none,
                  std::chrono::steady_clock::now() + delay);
  if (it != inflight_.end()) inflight_.erase(it);  // always there: claimed means unsettled
  return {};
}

result<void> memory_transport::ack(const received_message& message) {
  return settle(message, false, {});
}

result<void> memory_transport::release(const received_message& message,
                                       std::chrono::milliseconds delay) {
  return settle(message, true, delay);
}

result<void> memory_transport::close(std::chrono::steady_clock::time_point /*deadline*/) {
  if (closed_) return {};
  closed_ = true;
  // Unsettled messages go back to the head of their queue, newest first, so the original
  // order is restored (like a broker connection dropping).
  std::for_each(inflight_.rbegin(), inflight_.rend(), [this](const auto& entry) {
    broker_->settle(entry->queue, &entry->message, broker::requeue::head, {});
  });
  inflight_.clear();
  return {};
}

void register_transport() {
  babelqueue::register_transport(
      "memory", [](const broker_url& url) -> result<std::unique_ptr<transport>> {
        query_options options(url);
        BABELQUEUE_TRY(options.finish("memory"));
        if (!url.user.empty() || url.has_password || url.port) {
          return fail(transport_errc::invalid_argument,
                      "memory:// takes only a name: memory://NAME");
        }
        return std::unique_ptr<transport>(std::make_unique<memory_transport>(url.location()));
      });
}

std::size_t depth(std::string_view name, std::string_view queue) {
  auto b = find_broker(name, false);
  return b ? b->depth(queue) : 0;
}

std::size_t in_flight(std::string_view name, std::string_view queue) {
  auto b = find_broker(name, false);
  return b ? b->in_flight(queue) : 0;
}

void reset(std::string_view name) {
  auto& r = registry();
  std::lock_guard lock(r.mutex);
  if (auto it = r.brokers.find(name); it != r.brokers.end()) r.brokers.erase(it);
}

}  // namespace memory
}  // namespace v1
}  // namespace babelqueue
