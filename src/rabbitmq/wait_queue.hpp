#pragma once
// The wait queue of a delayed publish (this SDK's own extension: RabbitMQ has no delay
// without a plugin, and we depend on none). A delay D to work queue Q is a publish to the
// durable QUORUM queue wait_queue_name(Q, D, now) = `bq.delay.<D>ms.<window start>.<Q>`,
// declared with
//   x-queue-type = quorum, x-message-ttl = D, x-expires = period(D) + D + wait_queue_grace,
//   x-dead-letter-exchange = "", x-dead-letter-routing-key = Q,
//   x-dead-letter-strategy = at-least-once, x-overflow = reject-publish
// so each message expires after exactly D there and the broker dead-letters it, body and
// properties unchanged, onto Q through the default exchange.
//
// Why one queue per delay, not a per-message `expiration` in one shared queue: RabbitMQ
// expires only the message at the HEAD of a queue, so a 1 h message published first would
// hold back a 1 s message behind it for an hour. With one TTL per queue, the head is always
// the first due, and two delays are two queues that come due independently.
//
// Why quorum with at-least-once dead-lettering (measured on 3.10.8, a kill -9 of the node
// while a wave of messages was being dead-lettered, 3000 messages a run): classic wait
// queues lost 112 to 1896 messages per run — dead-lettering from a classic queue is not
// confirmed, so what it had moved onto the (classic) work queue in the seconds before the
// crash was not yet on disk there — quorum at-least-once lost none (1 duplicate in 2 runs):
// its dead-letter worker waits for the target's confirm before it forgets a message.
//
// Why the window in the name: a quorum queue's x-expires lease is NOT renewed by a redeclare
// (measured on 3.10.8; only consumers and basic.get renew it, and either would take the
// waiting messages) and it expires with messages still inside. So a wait queue takes
// publishes only during one window of period(D) = max(D, 1 h) of wall-clock time and lives
// x-expires = period + D + 30 min from its first declare: its last message is due at least
// 30 min (more than any clock skew between publishers, and time to dead-letter a backlog)
// before the queue may expire. Unused wait queues vanish on their own; at a steady
// rate about three exist per (queue, delay).
//
// Thread-safety: pure functions.

#include <babelqueue/rabbitmq/rabbitmq_transport.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace babelqueue::inline v1::rabbitmq::detail {

/// What a delayed publish to `target` declares and publishes to.
struct wait_queue {
  std::string name;
  std::string target;
  std::int64_t ttl_ms = 0;      ///< x-message-ttl: the delay, rounded up to whole seconds
  std::int64_t expires_ms = 0;  ///< x-expires: period + ttl + wait_queue_grace
  /// How much longer (from `now` of wait_queue_for) the window of `name` takes publishes.
  std::chrono::milliseconds window_left{0};
};

/// `delay` rounded UP to publish_delay_granularity (so never early).
std::chrono::milliseconds wait_ttl(std::chrono::milliseconds delay);

/// The window length of a wait queue with TTL `ttl`: max(ttl, wait_queue_min_window).
std::chrono::milliseconds wait_window(std::chrono::milliseconds ttl);

/// The wait queue of a delay (> 0, at most max_publish_delay) to `target` at wall time `now`.
wait_queue wait_queue_for(std::string_view target, std::chrono::milliseconds delay,
                          std::chrono::system_clock::time_point now);

}  // namespace babelqueue::inline v1::rabbitmq::detail
