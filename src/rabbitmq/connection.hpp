#pragma once
// One AMQP 0-9-1 connection on rabbitmq-c: channel 1 publishes in confirm mode (and carries
// every queue.declare), each consumed queue gets its own channel (2, 3, ...) with its
// basic.consume, and one frame pump routes whatever the broker sends — confirms, returns,
// deliveries, channel and connection closes — to where it belongs.
//
// Why one channel per consumer: rabbitmq-c's RPCs queue frames of other channels for later
// (amqp_simple_wait_frame_noblock hands them out), so an RPC on a fresh channel never races
// deliveries; and declares never race confirms because they run only while no publish is
// unconfirmed (the transport always waits for its confirms before returning).
//
// Heartbeats: rabbitmq-c services them only inside its own calls, so a keeper thread sends
// a heartbeat frame every heartbeat/2 while no call holds the connection (try_lock) — a
// handler may run far longer than the heartbeat without the broker dropping us.
//
// Thread-safety: every member except the keeper is called with lock() held, by the one
// thread using the transport; the keeper only ever takes the lock with try_lock.

#include "core/keeper_thread.hpp"
#include "rabbitmq/errors.hpp"
#include "rabbitmq/wait_queue.hpp"

#include <babelqueue/bindings/rabbitmq.hpp>
#include <babelqueue/headers.hpp>
#include <babelqueue/rabbitmq/rabbitmq_transport.hpp>

#include <amqp.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace babelqueue::inline v1::rabbitmq::detail {

using clock = std::chrono::steady_clock;

/// One basic.deliver, copied out of rabbitmq-c's buffers.
struct delivery {
  std::uint64_t tag = 0;
  std::string body;
  headers hdrs;
  std::optional<std::int64_t> x_attempts;
};

/// A started basic.consume.
struct consumer {
  amqp_channel_t channel = 0;
  std::deque<delivery> ready;  ///< delivered by the broker, not yet handed out
};

class connection {
 public:
  explicit connection(const options& opts);
  ~connection();
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;

  /// Starts the heartbeat keeper thread (when `heartbeat` > 0; once). Not done by the
  /// constructor so that an OS refusing the thread is an error of open(), not an exception:
  /// runtime_errc::resource_exhausted.
  result<void> start_keeper();

  std::unique_lock<std::mutex> lock() { return std::unique_lock<std::mutex>(mutex_); }

  bool is_open() const noexcept { return state_ != nullptr; }
  /// Grows on every successful connect: a delivery tag is valid only in its generation.
  std::uint64_t generation() const noexcept { return generation_; }

  /// One connect attempt bounded by min(connect_timeout, deadline): socket (and TLS),
  /// login, the publish channel in confirm mode.
  result<void> connect(clock::time_point deadline);
  /// Forgets the connection at once (socket closed, no handshake): the broker requeues
  /// its unacked deliveries, and this side forgets prefetched ones.
  void drop();
  /// connection.close bounded by `deadline`, then drop().
  void close(clock::time_point deadline);

  /// queue.declare (durable, no arguments) once per queue per connection.
  result<void> declare(std::string_view queue);
  /// queue.declare of a wait queue (wait_queue.hpp) with its arguments, once per connection
  /// (while its window lasts). PRECONDITION_FAILED (declared with other arguments, or a
  /// broker without these queue features) is transport_errc::refused; the publish channel is
  /// reopened by the next call.
  result<void> declare_wait(const wait_queue& w);
  /// basic.publish (mandatory) on the confirm channel; the message counts as unconfirmed.
  result<void> send(std::string_view queue, std::string_view body,
                    const bindings::rabbitmq::properties& props);
  std::size_t unconfirmed() const noexcept { return unconfirmed_.size(); }
  /// Reads frames until at most `limit` publishes are unconfirmed, then reports the first
  /// nack/return/channel error since the last call. timeout / unavailable otherwise.
  result<void> await_confirms(std::size_t limit, clock::time_point deadline);

  /// The consumer of `queue` (declare, channel, qos, consume on first use).
  result<consumer*> consumer_of(std::string_view queue);
  /// Reads frames until `queue`'s consumer holds a delivery or `deadline` passes (both ok).
  result<void> await_delivery(std::string_view queue, clock::time_point deadline);
  /// Whether `channel` still carries a consumer of this generation.
  bool consumes_on(amqp_channel_t channel) const noexcept;
  result<void> ack(amqp_channel_t channel, std::uint64_t tag);
  /// Routes the frames that already arrived, without waiting: a connection.close or
  /// channel.close the broker sent while we were busy is seen before the next ack (an ack
  /// has no reply, so on a dead connection it would otherwise "succeed").
  result<void> catch_up();

  transport_stats stats() const noexcept { return stats_; }

 private:
  result<void> open_publish_channel();
  /// The error of the last RPC on `channel`; answers a channel/connection close.
  error_info rpc_failure(amqp_channel_t channel, std::string context);
  /// One frame (or nothing by `deadline`), routed; true when a frame was read. An error
  /// means the connection is gone.
  result<bool> pump(clock::time_point deadline);
  void on_confirm(std::uint64_t tag, bool multiple, bool ack);
  void on_channel_closed(amqp_channel_t channel, const error_info& why);
  /// Reads the content (header + body frames) following a method on `channel` into
  /// `into` (nullptr: read and discard, e.g. a returned message).
  result<void> read_content(amqp_channel_t channel, delivery* into);
  /// The keeper's tick: one heartbeat frame when no call is in progress.
  void keep_alive();

  const options& opts_;
  std::mutex mutex_;
  amqp_connection_state_t state_ = nullptr;
  std::uint64_t generation_ = 0;
  transport_stats stats_;

  static constexpr amqp_channel_t publish_channel = 1;
  bool publish_open_ = false;
  std::uint64_t next_seq_ = 1;
  std::set<std::uint64_t> unconfirmed_;
  std::optional<error_info> publish_failure_;
  std::set<std::string, std::less<>> declared_;
  /// Wait queues declared on this connection -> the end of their window (no publish goes to
  /// them afterwards: their name changes).
  std::map<std::string, clock::time_point, std::less<>> waits_;

  std::map<std::string, consumer, std::less<>> consumers_;
  amqp_channel_t next_channel_ = 2;

  babelqueue::detail::keeper_thread keeper_;  // last: stopped before the rest is destroyed
};

}  // namespace babelqueue::inline v1::rabbitmq::detail
