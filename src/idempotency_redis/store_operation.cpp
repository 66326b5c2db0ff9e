#include "idempotency_redis/store_operation.hpp"

#include <babelqueue/idempotency/error.hpp>

#include <hiredis/hiredis.h>

namespace babelqueue::inline v1::idempotency::detail {

namespace {

constexpr const char* name_of(store_operation::kind k) noexcept {
  switch (k) {
    case store_operation::k_seen:
      return "seen";
    case store_operation::k_remember:
      return "remember";
    case store_operation::k_forget:
      return "forget";
    case store_operation::k_claim:
      return "claim";
    case store_operation::k_release:
      return "release";
  }
  return "?";
}

}  // namespace

void store_operation::compose(redis::detail::request& req, redis::detail::script_shas shas) {
  answered_ = false;
  // Only the command whose reply answers the call carries count 1.
  const redis::detail::command_meta answers{kind_, true, 1};
  const redis::detail::command_meta other{kind_, true, 0};
  // The scripts are loaded by every connect's handshake; EVAL with the body is a fallback
  // that only a connection without them would take.
  auto script = [&](std::size_t index, const char* body, auto&&... args) {
    if (shas.size() > index && !shas[index].empty()) {
      req.push({"EVALSHA", std::string_view(shas[index]), args...}, answers);
    } else {
      req.push({"EVAL", std::string_view(body), args...}, answers);
    }
  };
  switch (kind_) {
    case k_seen:
      req.push({"EXISTS", key_}, answers);
      break;
    case k_remember:
      if (ttl_ms_.empty()) {
        req.push({"SET", key_, "1"}, other);
      } else {
        req.push({"SET", key_, "1", "PX", ttl_ms_}, other);
      }
      req.push({"DEL", claim_key_}, other);  // committing ends the claim
      break;
    case k_forget:
      req.push({"DEL", key_}, other);
      break;
    case k_claim:
      script(k_claim_script, claim_script, std::string_view("2"), key_, claim_key_, token_,
             ttl_ms_);
      break;
    case k_release:
      script(k_release_script, release_script, std::string_view("1"), claim_key_, token_);
      break;
  }
}

void store_operation::on_reply(const redis::detail::command_meta& cmd, const redisReply& reply) {
  if (cmd.count != 1) return;
  if (reply.type == REDIS_REPLY_INTEGER) {
    answer_ = reply.integer;
    answered_ = true;
  }
}

error_info store_operation::on_error_reply(const redis::detail::command_meta&,
                                           std::string_view text) const {
  return error_info{make_error_code(errc::backend),
                    std::string("idempotency redis: ") + name_of(kind_) + ": " + std::string(text),
                    {},
                    native_error{"redis", 0, std::string(text)}};
}

redis::detail::next_step store_operation::finish(std::optional<error_info>& error) {
  const bool wants_answer = kind_ == k_seen || kind_ == k_claim || kind_ == k_release;
  if (!error && wants_answer && !answered_) {
    error = error_info{make_error_code(errc::backend),
                       std::string("idempotency redis: ") + name_of(kind_) +
                           ": the server's reply is not an integer"};
  }
  return redis::detail::next_step::done;
}

}  // namespace babelqueue::inline v1::idempotency::detail
