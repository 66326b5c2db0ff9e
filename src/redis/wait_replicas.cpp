#include "redis/wait_replicas.hpp"

#include "redis/errors.hpp"

#include <hiredis/hiredis.h>

namespace babelqueue::inline v1::redis::detail {

namespace {

// A command kind of its own, far from operations.hpp's command_kind values.
constexpr std::uint8_t k_wait_replicas = 0xF0;

}  // namespace

replicated_publish_op::replicated_publish_op(operation& publish, const options& opts)
    : publish_(publish),
      wanted_(opts.wait_replicas),
      wanted_arg_(std::to_string(opts.wait_replicas)),
      timeout_arg_(std::to_string(opts.wait_timeout.count())) {
  resend_after_noscript = publish.resend_after_noscript;
  outage_is_unreachable = publish.outage_is_unreachable;
  what = publish.what;
  subject = publish.subject;
}

std::chrono::milliseconds replicated_publish_op::begin_attempt(
    std::chrono::milliseconds remaining) {
  // The publish's socket timeout (command_timeout) is above wait_timeout (validated).
  return publish_.begin_attempt(remaining);
}

void replicated_publish_op::compose(request& req, script_shas shas) {
  acknowledged_ = -1;
  publish_.compose(req, shas);
  req.push({"WAIT", wanted_arg_, timeout_arg_}, {k_wait_replicas});
}

void replicated_publish_op::on_reply(const command_meta& cmd, const redisReply& reply) {
  if (cmd.kind != k_wait_replicas) return publish_.on_reply(cmd, reply);
  if (reply.type == REDIS_REPLY_INTEGER) acknowledged_ = reply.integer;
}

error_info replicated_publish_op::on_error_reply(const command_meta& cmd,
                                                 std::string_view text) const {
  if (cmd.kind != k_wait_replicas) return publish_.on_error_reply(cmd, text);
  return redis_error(fault::server_error, "redis WAIT after RPUSH " + std::string(subject), text);
}

void replicated_publish_op::undo() { publish_.undo(); }

next_step replicated_publish_op::finish(std::optional<error_info>& error) {
  const next_step step = publish_.finish(error);
  if (step == next_step::done && !error && acknowledged_ < wanted_) {
    error = redis_error(
        fault::timed_out,
        "redis publish to " + std::string(subject) + " reached " +
            std::to_string(acknowledged_ < 0 ? 0 : acknowledged_) + " of " + wanted_arg_ +
            " replicas within wait_timeout " + timeout_arg_ +
            " ms (it is on the primary and may still replicate, or be lost in a failover)");
  }
  return step;
}

}  // namespace babelqueue::inline v1::redis::detail
