#pragma once
// Optional durability of a publish (options::wait_replicas): the publish's round trip also
// carries `WAIT <n> <wait_timeout>`, and the publish fails when fewer than n replicas
// acknowledged. Redis replication is asynchronous: a primary that dies right after a publish
// was acknowledged can take the message with it when a replica is promoted (Sentinel
// failover). WAIT narrows that window to "fewer than n replicas got it", at the cost of one
// replication round per publish (docs/transports/redis.md, "Sentinel").
//
// A decorator of the publish operation (operations.hpp), so publish_op stays as it is: the
// commands, replies, undo and finish are the wrapped operation's, plus the WAIT.
//
// Thread-safety: like the transport, one thread at a time.

#include "redis/operation.hpp"

#include <babelqueue/redis/redis_transport.hpp>

#include <cstdint>
#include <string>

namespace babelqueue::inline v1::redis::detail {

class replicated_publish_op final : public operation {
 public:
  replicated_publish_op(operation& publish, const options& opts);
  std::chrono::milliseconds begin_attempt(std::chrono::milliseconds remaining) override;
  void compose(request& req, script_shas shas) override;
  void on_reply(const command_meta& cmd, const redisReply& reply) override;
  error_info on_error_reply(const command_meta& cmd, std::string_view text) const override;
  void undo() override;
  /// The wrapped publish's outcome; then transport_errc::timeout when WAIT counted fewer
  /// replicas than asked (the message is on the primary, but not yet on enough replicas).
  next_step finish(std::optional<error_info>& error) override;

 private:
  operation& publish_;
  std::int64_t wanted_;
  std::string wanted_arg_;
  std::string timeout_arg_;
  std::int64_t acknowledged_ = -1;  // WAIT's reply of this attempt; -1 = none yet
};

}  // namespace babelqueue::inline v1::redis::detail
