#pragma once
// The operations of the Laravel-compatible mode (`redis://…?laravel=1`), sans-I/O like the
// owned layout's (operations.hpp) and driven by the same engine:
//
//   laravel_publish_op  deferred ZREMs + RPUSH ready + RPUSH notify      publish, publish_batch
//   laravel_reserve_op  ZREMs + [BLPOP notify wait] + reserve script     receive
//   laravel_settle_op   deferred ZREMs                                   ack (sync), flush, close
//   laravel_release_op  gated release script                             release
//   laravel_recover_op  recover script                                   recover
//   laravel_schedule_op deferred ZREMs + schedule script (ZADD :delayed) publish_later
//
// A reservation's `raw` is the member the reserve script added to `:reserved` (the job with
// `attempts` + 1, re-encoded by cjson, or the job itself when it does not decode): the ack
// handle, as in Laravel. Its `job` is the job exactly as it was popped: what the handler
// gets and what release() re-queues. Deferred acks are `ZREM <reserved> <member>`: an ack of
// a reservation that expired and migrated back removes nothing (counted as stale).
//
// Thread-safety: like the transport, one thread at a time.

#include "redis/operations.hpp"

#include <babelqueue/bindings/redis.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace babelqueue::inline v1::redis::detail {

/// Indices of the Laravel-mode scripts (laravel_scripts.hpp) in the set every connection
/// loads in this mode.
enum laravel_script_index : std::size_t {
  k_laravel_reserve = 0,
  k_laravel_release = 1,
  k_laravel_recover = 2,
  k_laravel_schedule = 3,
};
script_set laravel_scripts();

/// What the Laravel operations share besides transport_state: the key prefix, the
/// migration batch argument and the four keys of the last queue asked.
class laravel_context {
 public:
  laravel_context(transport_state& st, const options& o);

  transport_state& st;
  const std::string batch_arg;  ///< options::migration_batch as a script argument

  /// The four keys of `queue` (cached for the last queue asked: valid until the next call
  /// with another queue).
  const bindings::redis::laravel_keys& keys(std::string_view queue);

 private:
  std::string prefix_;
  std::string queue_;
  bindings::redis::laravel_keys keys_;
  bool valid_ = false;
};

class laravel_publish_op final : public operation {
 public:
  laravel_publish_op(laravel_context& lc, std::string_view queue,
                     std::span<const std::string_view> values);
  std::chrono::milliseconds begin_attempt(std::chrono::milliseconds) override;
  void compose(request& req, script_shas shas) override;
  void on_reply(const command_meta& cmd, const redisReply& reply) override;
  void undo() override { lc_.st.give_back(); }
  next_step finish(std::optional<error_info>& error) override;

 private:
  laravel_context& lc_;
  std::string_view queue_;
  std::span<const std::string_view> values_;
};

class laravel_reserve_op final : public operation {
 public:
  laravel_reserve_op(laravel_context& lc, std::string_view queue, clock::time_point deadline);
  std::chrono::milliseconds begin_attempt(std::chrono::milliseconds remaining) override;
  void compose(request& req, script_shas shas) override;
  void on_reply(const command_meta& cmd, const redisReply& reply) override;
  void undo() override { lc_.st.give_back(); }
  next_step finish(std::optional<error_info>& error) override;
  /// The reservation of the finished round (transport_state::got: zero or one).
  std::vector<reservation_ptr>& reserved() { return lc_.st.got; }

 private:
  laravel_context& lc_;
  std::string_view queue_;
  clock::time_point deadline_;
  bool first_ = true;
  bool block_ = false;
  std::chrono::milliseconds remaining_{0};
  std::chrono::milliseconds wait_{0};  // how long the coming BLPOP waits
  std::int64_t next_due_ms_ = -1;      // the script's hint: the next delayed job is due in …
};

class laravel_settle_op final : public operation {
 public:
  explicit laravel_settle_op(laravel_context& lc);
  void compose(request& req, script_shas shas) override;
  void on_reply(const command_meta& cmd, const redisReply& reply) override;
  void undo() override { lc_.st.give_back(); }
  next_step finish(std::optional<error_info>& error) override;

 private:
  laravel_context& lc_;
};

class laravel_release_op final : public operation {
 public:
  laravel_release_op(laravel_context& lc, reservation& r, std::chrono::milliseconds delay);
  void compose(request& req, script_shas shas) override;
  void on_reply(const command_meta& cmd, const redisReply& reply) override;
  next_step finish(std::optional<error_info>& error) override;

 private:
  laravel_context& lc_;
  reservation& r_;
  std::string delay_;
  bool gone_ = false;
};

/// Laravel's later(): the job into `:delayed`, scored with its due time in whole epoch
/// seconds (laravel_schedule_script), this queue's deferred ZREMs in front.
class laravel_schedule_op final : public operation {
 public:
  laravel_schedule_op(laravel_context& lc, std::string_view queue, std::string_view job,
                      std::chrono::milliseconds delay);
  std::chrono::milliseconds begin_attempt(std::chrono::milliseconds) override;
  void compose(request& req, script_shas shas) override;
  void on_reply(const command_meta& cmd, const redisReply& reply) override;
  void undo() override { lc_.st.give_back(); }
  next_step finish(std::optional<error_info>& error) override;

 private:
  laravel_context& lc_;
  std::string_view queue_;
  std::string_view job_;
  std::string delay_;
  bool ok_ = false;
};

class laravel_recover_op final : public operation {
 public:
  laravel_recover_op(laravel_context& lc, std::string_view queue,
                     std::chrono::milliseconds older_than);
  void compose(request& req, script_shas shas) override;
  void on_reply(const command_meta& cmd, const redisReply& reply) override;
  next_step finish(std::optional<error_info>& error) override;
  recover_report report;

 private:
  laravel_context& lc_;
  std::string_view queue_;
  std::string older_;
  bool ok_ = false;
};

}  // namespace babelqueue::inline v1::redis::detail
