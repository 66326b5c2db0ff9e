#include "redis/laravel_operations.hpp"

#include "redis/connection.hpp"
#include "redis/errors.hpp"
#include "redis/laravel_scripts.hpp"

#include <hiredis/hiredis.h>

#include <algorithm>

namespace babelqueue::inline v1::redis::detail {

using namespace std::chrono_literals;

namespace {

// Command kinds of this file (apart from operations.hpp's k_push, k_wait and k_single).
enum laravel_kind : std::uint8_t {
  k_zrem = 32,  // ZREM <reserved> member…; count = members
  k_reserve,    // the reserve script; count = acks merged into it
};

std::int64_t stale_of(const command_meta& cmd, const redisReply& reply) {
  switch (cmd.kind) {
    case k_zrem:
      return reply.type == REDIS_REPLY_INTEGER
                 ? static_cast<std::int64_t>(cmd.count) - reply.integer
                 : 0;
    case k_reserve:
      if (reply.type == REDIS_REPLY_ARRAY && reply.elements >= 1 &&
          reply.element[0]->type == REDIS_REPLY_INTEGER)
        return static_cast<std::int64_t>(cmd.count) - reply.element[0]->integer;
      return 0;
    default:
      return 0;
  }
}

// One `ZREM <reserved> m…` per queue, in first-seen order, for the acks in
// `st.ack_scratch` (consumed).
void compose_zrems(request& req, laravel_context& lc, bool report_errors) {
  auto& rest = lc.st.ack_scratch;
  while (!rest.empty()) {
    const std::string& queue = rest.front()->queue;  // the reservation outlives the round
    auto of_queue = [&](const reservation* r) { return r->queue == queue; };
    const auto n = static_cast<std::size_t>(std::count_if(rest.begin(), rest.end(), of_queue));
    req.begin(2 + n, {k_zrem, report_errors, static_cast<std::uint32_t>(n)});
    req.add("ZREM");
    req.add(lc.keys(queue).reserved);
    for (const reservation* r : rest) {
      if (of_queue(r)) req.add(r->raw);
    }
    std::erase_if(rest, of_queue);
  }
}

}  // namespace

script_set laravel_scripts() {
  return script_set{{laravel_reserve_script, laravel_release_script, laravel_recover_script,
                     laravel_schedule_script}};
}

// -- laravel_context ------------------------------------------------------------------------

laravel_context::laravel_context(transport_state& s, const options& o)
    : st(s), batch_arg(std::to_string(o.migration_batch)), prefix_(o.prefix) {}

const bindings::redis::laravel_keys& laravel_context::keys(std::string_view queue) {
  if (!valid_ || queue_ != queue) {
    queue_.assign(queue);
    keys_ = bindings::redis::laravel_keys_of(queue, prefix_);
    valid_ = true;
  }
  return keys_;
}

// -- publish --------------------------------------------------------------------------------

laravel_publish_op::laravel_publish_op(laravel_context& lc, std::string_view queue,
                                       std::span<const std::string_view> values)
    : lc_(lc), queue_(queue), values_(values) {
  what = "redis RPUSH ";
  subject = queue;
  // No script in this round trip: a NOSCRIPT cannot happen.
  resend_after_noscript = false;
}

std::chrono::milliseconds laravel_publish_op::begin_attempt(std::chrono::milliseconds) {
  return lc_.st.opts.command_timeout;
}

void laravel_publish_op::compose(request& req, script_shas) {
  auto& st = lc_.st;
  st.take_pending();
  all_taken_to_scratch(st);
  compose_zrems(req, lc_, /*report_errors=*/false);
  // Laravel's push: the job onto the ready list, one `1` onto :notify per job (what wakes a
  // Laravel worker blocked with block_for). Two commands instead of Laravel's script: one
  // round trip either way, and a notify token lost with the connection only delays a wake-up.
  const auto& keys = lc_.keys(queue_);
  for_each_push_chunk(values_, [&](std::span<const std::string_view> chunk) {
    req.begin(2 + chunk.size(), {k_push});
    req.add("RPUSH");
    req.add(keys.ready);
    for (auto v : chunk) req.add(v);
    req.begin(2 + chunk.size(), {k_push});
    req.add("RPUSH");
    req.add(keys.notify);
    for (std::size_t k = 0; k < chunk.size(); ++k) req.add("1");
  });
}

void laravel_publish_op::on_reply(const command_meta& cmd, const redisReply& reply) {
  lc_.st.stale_acks += stale_of(cmd, reply);
}

next_step laravel_publish_op::finish(std::optional<error_info>&) {
  lc_.st.taken.clear();
  return next_step::done;
}

// -- receive --------------------------------------------------------------------------------

laravel_reserve_op::laravel_reserve_op(laravel_context& lc, std::string_view queue,
                                       clock::time_point deadline)
    : lc_(lc), queue_(queue), deadline_(deadline) {
  what = "redis receive on ";
  subject = queue;
  outage_is_unreachable = true;
}

std::chrono::milliseconds laravel_reserve_op::begin_attempt(std::chrono::milliseconds remaining) {
  remaining_ = remaining;
  // The first attempt only tries (migrate + pop); later ones wait on :notify first, in
  // slices capped at the next delayed job's due time (k_block_slice: a job that comes due in
  // :delayed, or that another producer adds there, pushes no notify token).
  block_ = remaining.count() > 0 && !first_;
  wait_ = blocking_wait(remaining, next_due_ms_);
  return lc_.st.opts.command_timeout + (block_ ? wait_ : 0ms);
}

void laravel_reserve_op::compose(request& req, script_shas shas) {
  auto& st = lc_.st;
  st.got.clear();
  next_due_ms_ = -1;  // this round's reply says it again
  st.take_pending();
  auto& merged = st.merged_scratch;
  merged.clear();
  st.ack_scratch.clear();
  for (const auto& a : st.taken) (a->queue == queue_ ? merged : st.ack_scratch).push_back(a.get());
  compose_zrems(req, lc_, /*report_errors=*/true);

  const auto& keys = lc_.keys(queue_);
  if (block_) req.push({"BLPOP", keys.notify, seconds_arg(wait_)}, {k_wait});
  req.begin(10 + merged.size(), {k_reserve, true, static_cast<std::uint32_t>(merged.size())});
  for (std::string_view a :
       {std::string_view("EVALSHA"), std::string_view(shas[k_laravel_reserve]),
        std::string_view("4"), std::string_view(keys.ready), std::string_view(keys.reserved),
        std::string_view(keys.delayed), std::string_view(keys.notify),
        std::string_view(st.retry_after_arg), std::string_view(lc_.batch_arg)}) {
    req.add(a);
  }
  // ARGV[3] = 1 (reserve), then the members of this queue's deferred acks.
  req.add("1");
  for (const reservation* r : merged) req.add(r->raw);
}

void laravel_reserve_op::on_reply(const command_meta& cmd, const redisReply& reply) {
  auto& st = lc_.st;
  st.stale_acks += stale_of(cmd, reply);
  if (cmd.kind != k_reserve || reply.type != REDIS_REPLY_ARRAY) return;
  if (reply.elements == 3) {
    auto res = std::make_shared<reservation>();
    res->queue.assign(queue_);
    res->job.assign(reply_text(reply.element[1]));
    res->raw.assign(reply_text(reply.element[2]));
    st.got.push_back(std::move(res));
  } else if (reply.elements == 2 && reply.element[1]->type == REDIS_REPLY_INTEGER) {
    next_due_ms_ = reply.element[1]->integer;
  }
}

next_step laravel_reserve_op::finish(std::optional<error_info>& error) {
  return finish_reserving(lc_.st, error, deadline_, remaining_, first_);
}

// -- flush ----------------------------------------------------------------------------------

laravel_settle_op::laravel_settle_op(laravel_context& lc) : lc_(lc) { what = "redis ack failed"; }

void laravel_settle_op::compose(request& req, script_shas) {
  auto& st = lc_.st;
  st.take_pending();
  all_taken_to_scratch(st);
  compose_zrems(req, lc_, /*report_errors=*/true);
}

void laravel_settle_op::on_reply(const command_meta& cmd, const redisReply& reply) {
  lc_.st.stale_acks += stale_of(cmd, reply);
}

// As the owned layout's settle_op: on a server-side error the acks are dropped (their
// reservations expire and migrate back: at-least-once) and the error is reported.
next_step laravel_settle_op::finish(std::optional<error_info>&) {
  lc_.st.taken.clear();
  return next_step::done;
}

// -- release --------------------------------------------------------------------------------

laravel_release_op::laravel_release_op(laravel_context& lc, reservation& r,
                                       std::chrono::milliseconds delay)
    : lc_(lc), r_(r), delay_(std::to_string(std::max<std::int64_t>(delay.count(), 0))) {
  what = "redis release failed";
}

void laravel_release_op::compose(request& req, script_shas shas) {
  gone_ = false;
  const auto& keys = lc_.keys(r_.queue);
  req.push({"EVALSHA", shas[k_laravel_release], "4", keys.ready, keys.reserved, keys.delayed,
            keys.notify, r_.raw, r_.job, delay_},
           {k_single});
}

void laravel_release_op::on_reply(const command_meta&, const redisReply& reply) {
  gone_ = reply.type == REDIS_REPLY_INTEGER && reply.integer == 0;
}

next_step laravel_release_op::finish(std::optional<error_info>& error) {
  return finish_release(lc_.st, r_, gone_, error,
                        "the reservation was already gone (it expired and migrated back to the "
                        "queue, or a worker removed it); nothing re-queued");
}

// -- publish_later --------------------------------------------------------------------------

laravel_schedule_op::laravel_schedule_op(laravel_context& lc, std::string_view queue,
                                         std::string_view job, std::chrono::milliseconds delay)
    : lc_(lc), queue_(queue), job_(job), delay_(std::to_string(delay.count())) {
  what = "redis delayed publish on ";
  subject = queue;
}

std::chrono::milliseconds laravel_schedule_op::begin_attempt(std::chrono::milliseconds) {
  return lc_.st.opts.command_timeout;
}

void laravel_schedule_op::compose(request& req, script_shas shas) {
  ok_ = false;
  auto& st = lc_.st;
  st.take_pending();
  all_taken_to_scratch(st);
  compose_zrems(req, lc_, /*report_errors=*/false);
  req.push({"EVALSHA", shas[k_laravel_schedule], "1", lc_.keys(queue_).delayed, delay_, job_},
           {k_single});
}

void laravel_schedule_op::on_reply(const command_meta& cmd, const redisReply& reply) {
  lc_.st.stale_acks += stale_of(cmd, reply);
  if (cmd.kind == k_single) ok_ = reply.type == REDIS_REPLY_INTEGER;
}

// As a publish: the deferred ZREMs in front ran (a server-side error drops them: their
// reservations expire and migrate back).
next_step laravel_schedule_op::finish(std::optional<error_info>& error) {
  lc_.st.taken.clear();
  if (!error && !ok_) {
    error =
        redis_error(fault::unexpected_reply, "redis delayed publish failed", "unexpected reply");
  }
  return next_step::done;
}

// -- recover --------------------------------------------------------------------------------

laravel_recover_op::laravel_recover_op(laravel_context& lc, std::string_view queue,
                                       std::chrono::milliseconds older_than)
    : lc_(lc), queue_(queue), older_(std::to_string(older_than.count())) {
  what = "redis recover failed";
}

void laravel_recover_op::compose(request& req, script_shas shas) {
  ok_ = false;
  const auto& keys = lc_.keys(queue_);
  req.push({"EVALSHA", shas[k_laravel_recover], "3", keys.ready, keys.reserved, keys.notify, older_,
            lc_.st.retry_after_arg},
           {k_single});
}

void laravel_recover_op::on_reply(const command_meta&, const redisReply& reply) {
  ok_ = read_recover_report(reply, report);
}

next_step laravel_recover_op::finish(std::optional<error_info>& error) {
  if (!error && !ok_)
    error = redis_error(fault::unexpected_reply, "redis recover failed", "unexpected reply");
  return next_step::done;
}

}  // namespace babelqueue::inline v1::redis::detail
