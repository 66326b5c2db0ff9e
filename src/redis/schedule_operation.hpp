#pragma once
// The owned layout's delayed publish (redis_transport.hpp, "Delayed publish"), sans-I/O like
// the other operations (operations.hpp):
//
//   schedule_op   deferred settles + schedule script (ZADD <queue>:scheduled)   publish_later
//
// Laravel's layout has its own (laravel_schedule_op, laravel_operations.hpp).
//
// Thread-safety: like the transport, one thread at a time.

#include "redis/operations.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace babelqueue::inline v1::redis::detail {

/// Adds `value` (the stored value publish() would push: the envelope, or its header frame) to
/// `<queue>:scheduled`, due `delay` from now on the server's clock (scripts.hpp,
/// schedule_script). Deferred acks ride in front, as with a publish.
class schedule_op final : public operation {
 public:
  schedule_op(transport_state& st, std::string_view queue, std::string_view value,
              std::chrono::milliseconds delay);
  std::chrono::milliseconds begin_attempt(std::chrono::milliseconds) override;
  void compose(request& req, script_shas shas) override;
  void on_reply(const command_meta& cmd, const redisReply& reply) override;
  void undo() override { st_.give_back(); }
  next_step finish(std::optional<error_info>& error) override;

 private:
  transport_state& st_;
  std::string_view queue_;
  std::string_view value_;
  std::string delay_;
  bool ok_ = false;
};

}  // namespace babelqueue::inline v1::redis::detail
