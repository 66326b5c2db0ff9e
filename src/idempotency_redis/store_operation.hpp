#pragma once
// The store's commands as operations of the redis transport's round-trip engine
// (src/redis/operation.hpp): each call of redis_store is ONE store_operation, composed into
// one pipelined request, so it costs one round trip (plus a reload and resend after
// NOSCRIPT, and resends across a reconnect — all five are safe to resend). Sans-I/O: no
// socket here; engine::run() does the I/O and the retry policy.
//
// Thread-safety: one operation per call, used by the calling thread only.

#include "redis/operation.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace babelqueue::inline v1::idempotency::detail {

// KEYS[1] committed key, KEYS[2] claim key; ARGV[1] owner token, ARGV[2] claim TTL ms.
// No claim while the id is committed; else the claim is set unless another one is live
// (an expired claim is gone, so SET NX takes it over). Returns 1 when claimed, else 0.
inline constexpr const char* claim_script = R"lua(
if redis.call('exists', KEYS[1]) == 1 then
  return 0
end
if redis.call('set', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return 1
end
return 0
)lua";

// KEYS[1] claim key; ARGV[1] owner token. Compare-and-delete: only the holder releases.
// Returns 1 when it deleted the claim, else 0.
inline constexpr const char* release_script = R"lua(
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('del', KEYS[1])
end
return 0
)lua";

/// Script indexes in the engine's script_set (loaded on every connect).
enum script_index : std::size_t { k_claim_script = 0, k_release_script = 1 };

class store_operation final : public redis::detail::operation {
 public:
  enum kind : std::uint8_t { k_seen, k_remember, k_forget, k_claim, k_release };

  /// `ttl_ms`: the PX of remember (empty = no expiry) or of claim.
  store_operation(kind k, std::string_view key, std::string_view claim_key, std::string_view token,
                  std::string_view ttl_ms)
      : kind_(k), key_(key), claim_key_(claim_key), token_(token), ttl_ms_(ttl_ms) {}

  void compose(redis::detail::request& req, redis::detail::script_shas shas) override;
  void on_reply(const redis::detail::command_meta& cmd, const redisReply& reply) override;
  error_info on_error_reply(const redis::detail::command_meta& cmd,
                            std::string_view text) const override;
  void undo() override { answered_ = false; }
  redis::detail::next_step finish(std::optional<error_info>& error) override;

  /// The integer reply of the command that answers (EXISTS, the scripts).
  std::int64_t answer() const noexcept { return answer_; }

 private:
  kind kind_;
  std::string_view key_, claim_key_, token_, ttl_ms_;
  std::int64_t answer_ = 0;
  bool answered_ = false;
};

}  // namespace babelqueue::inline v1::idempotency::detail
