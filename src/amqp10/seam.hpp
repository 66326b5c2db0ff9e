#pragma once
// The transport seam (transport.hpp) over the AMQP 1.0 client, shared by the Artemis and
// Azure Service Bus bindings: each binding brings only its message codec (how a publish
// becomes a proton::message, how a received one becomes a received_message) and its
// settlement of a failure; publish/receive/ack/release/close and the settlement handles are
// written once here.
//
// Thread-safety: as the transport contract — one caller thread at a time per instance.

#include "amqp10/client.hpp"

#include <babelqueue/headers.hpp>
#include <babelqueue/runtime/settlement_handle.hpp>
#include <babelqueue/runtime/transport.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace babelqueue::inline v1::amqp10 {

struct message_codec {
  /// The message of a publish of `body` with `hdrs`, scheduled after `delay` when given.
  std::function<proton::message(std::string_view body, const headers& hdrs,
                                std::optional<std::chrono::milliseconds> delay)>
      to_message;
  /// Fills body, hdrs, delivery_count (and refused_schema_version) of `out` from `in`.
  std::function<void(const proton::message& in, received_message& out)> read;
};

class seam {
 public:
  using clock = std::chrono::steady_clock;

  seam(std::unique_ptr<client> c, message_codec codec, std::string name,
       std::chrono::milliseconds operation_timeout);

  /// A confirmed send of one message; with `delay` (> 0, checked by transport::publish_delayed)
  /// the codec schedules it (Artemis `x-opt-delivery-time`, Service Bus
  /// `x-opt-scheduled-enqueue-time`): the broker holds it, this client keeps nothing.
  result<void> publish(std::string_view queue, std::string_view body, const headers& hdrs,
                       std::optional<std::chrono::milliseconds> delay = std::nullopt);
  result<void> publish_batch(std::string_view queue, std::span<const outgoing_message> messages);
  result<std::optional<received_message>> receive(std::string_view queue,
                                                  std::chrono::milliseconds timeout);
  result<void> ack(const received_message& message);
  /// delay 0: settles with `failure` (modified{delivery-failed} for both bindings); delay > 0:
  /// the same bytes and headers republished scheduled after `delay`, then `accepted`.
  result<void> release(const received_message& message, std::chrono::milliseconds delay,
                       outcome failure = outcome::modified_failed);
  /// Settles with any outcome (e.g. ASB's native dead-lettering).
  result<void> settle(const received_message& message, const settlement& how);
  result<void> close(clock::time_point deadline);
  bool closed() const noexcept { return closed_; }
  client_stats stats() const { return client_->stats(); }

 private:
  /// The delivery of a message this seam received and has not settled, else the refusal
  /// (closed first, then invalid_argument).
  result<claimed_handle<delivery_ref>> own(const received_message& message) const;
  result<void> check_queue(std::string_view queue) const;
  error_info closed_error() const;

  std::unique_ptr<client> client_;
  message_codec codec_;
  std::string name_;
  std::chrono::milliseconds operation_timeout_;
  settlement_owner owner_;  // marks the handles it hands out (named like the binding)
  bool closed_ = false;
};

}  // namespace babelqueue::inline v1::amqp10
