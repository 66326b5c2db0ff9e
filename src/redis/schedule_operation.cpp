#include "redis/schedule_operation.hpp"

#include "redis/errors.hpp"

#include <hiredis/hiredis.h>

namespace babelqueue::inline v1::redis::detail {

schedule_op::schedule_op(transport_state& st, std::string_view queue, std::string_view value,
                         std::chrono::milliseconds delay)
    : st_(st), queue_(queue), value_(value), delay_(std::to_string(delay.count())) {
  what = "redis delayed publish on ";
  subject = queue;
}

// A fixed socket timeout, as a publish.
std::chrono::milliseconds schedule_op::begin_attempt(std::chrono::milliseconds) {
  return st_.opts.command_timeout;
}

void schedule_op::compose(request& req, script_shas shas) {
  ok_ = false;
  // Deferred acks ride along in front (same round trip), as with a publish. Every script of
  // the round is this connection's, so a NOSCRIPT means none of them ran: resent whole.
  st_.take_pending();
  char random16[16];
  st_.random_hex(random16);
  if (!st_.taken.empty()) {
    all_taken_to_scratch(st_);
    compose_settles(req, shas, st_, {random16, 12}, /*report_errors=*/false);
  }
  req.push({"EVALSHA", shas[k_schedule], "1", st_.keys(queue_).scheduled, delay_,
            std::string_view(random16, sizeof random16), value_},
           {k_single});
}

void schedule_op::on_reply(const command_meta& cmd, const redisReply& reply) {
  if (cmd.kind == k_single) {
    ok_ = reply.type == REDIS_REPLY_INTEGER && reply.integer == 1;
    return;
  }
  st_.stale_acks += count_stale(cmd, reply);
}

// A server-side error of a settle in front drops those acks (their messages stay in
// :processing for recover(): at-least-once), as a publish does.
next_step schedule_op::finish(std::optional<error_info>& error) {
  st_.taken.clear();
  if (!error && !ok_) {
    error =
        redis_error(fault::unexpected_reply, "redis delayed publish failed", "unexpected reply");
  }
  return next_step::done;
}

}  // namespace babelqueue::inline v1::redis::detail
