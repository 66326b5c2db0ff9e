#include "redis/operations.hpp"

#include "redis/connection.hpp"
#include "redis/errors.hpp"
#include "redis/scripts.hpp"

#include <babelqueue/bindings/redis.hpp>

#include <hiredis/hiredis.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>

namespace babelqueue::inline v1::redis::detail {

namespace binding = babelqueue::bindings::redis;
using namespace std::chrono_literals;

namespace {

// Foreign (non-C++) deadline members are assumed to use the Python default of 90 s.
constexpr std::string_view k_foreign_retry_after = "90";

bool is_settle(const command_meta& cmd) {
  return cmd.kind == k_settle_tracked || cmd.kind == k_settle_untracked;
}

}  // namespace

script_set transport_scripts() {
  // The two scripts that move due scheduled messages share their Lua helpers (scripts.hpp).
  static const std::string settle_reserve = std::string(scheduled_lua_lib) + settle_reserve_body;
  static const std::string migrate = std::string(scheduled_lua_lib) + migrate_body;
  return script_set{{settle_reserve.c_str(), release_script, release_untracked_script,
                     recover_script, unreserve_script, migrate.c_str(), schedule_script}};
}

std::string scheduled_key(std::string_view queue) {
  std::string k(queue);
  k.append(scheduled_suffix);
  return k;
}

std::string seconds_arg(std::chrono::milliseconds wait) {
  if (wait.count() < 1) wait = 1ms;
  char buf[32];
  const int n = std::snprintf(buf, sizeof buf, "%" PRId64 ".%03" PRId64,
                              static_cast<std::int64_t>(wait.count() / 1000),
                              static_cast<std::int64_t>(wait.count() % 1000));
  return {buf, static_cast<std::size_t>(n)};
}

std::chrono::milliseconds blocking_wait(std::chrono::milliseconds remaining,
                                        std::int64_t next_due_ms) {
  auto wait = std::min(remaining, k_block_slice);
  if (next_due_ms >= 0) wait = std::min(wait, std::chrono::milliseconds(next_due_ms));
  return std::max(wait, 1ms);
}

// -- transport_state ------------------------------------------------------------------------

transport_state::transport_state(const options& o)
    : opts(o),
      retry_after_arg(o.retry_after ? std::to_string(o.retry_after->count()) : "-1"),
      prefetch_arg(std::to_string(o.prefetch)),
      batch_arg(std::to_string(o.migration_batch)),
      rng_(std::random_device{}()) {}

const transport_state::queue_keys& transport_state::keys(std::string_view queue) {
  if (!keys_valid_ || keys_.queue != queue) {
    keys_.queue.assign(queue);
    keys_.processing = binding::processing_key(queue, opts.processing_suffix);
    keys_.deadlines = binding::deadlines_key(queue, opts.processing_suffix);
    keys_.scheduled = scheduled_key(queue);
    keys_valid_ = true;
  }
  return keys_;
}

void transport_state::random_hex(std::span<char> out) {
  static constexpr char digits[] = "0123456789abcdef";
  std::uint64_t bits = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (i % 16 == 0) bits = rng_();
    out[i] = digits[bits & 0xF];
    bits >>= 4;
  }
}

void transport_state::take_pending() {
  taken.clear();
  taken.swap(pending);
}

void transport_state::give_back() {
  if (pending.empty()) {
    pending.swap(taken);
  } else {
    pending.insert(pending.begin(), taken.begin(), taken.end());
  }
  taken.clear();
}

// -- settles --------------------------------------------------------------------------------

void compose_settles(request& req, script_shas shas, transport_state& st, std::string_view random12,
                     bool report_errors) {
  auto& rest = st.ack_scratch;
  while (!rest.empty()) {
    const std::string& queue = rest.front()->queue;  // the reservation outlives the round
    const bool tracked = !rest.front()->token.empty();
    auto of_queue = [&](const reservation* r) { return r->queue == queue; };
    const auto n = static_cast<std::size_t>(std::count_if(rest.begin(), rest.end(), of_queue));
    const auto& keys = st.keys(queue);
    if (tracked) {
      req.begin(11 + 2 * n, {k_settle_tracked, report_errors, static_cast<std::uint32_t>(n)});
      for (std::string_view a :
           {std::string_view("EVALSHA"), std::string_view(shas[k_settle_reserve]),
            std::string_view("4"), std::string_view(queue), std::string_view(keys.processing),
            std::string_view(keys.deadlines), std::string_view(keys.scheduled),
            std::string_view(st.retry_after_arg), random12, std::string_view("0"),
            std::string_view(st.batch_arg)}) {
        req.add(a);
      }
      for (const reservation* r : rest) {
        if (!of_queue(r)) continue;
        req.add(r->token);
        req.add(r->raw);
      }
    } else {
      for (const reservation* r : rest) {
        if (of_queue(r))
          req.push({"LREM", keys.processing, "1", r->raw}, {k_settle_untracked, report_errors, 1});
      }
    }
    std::erase_if(rest, of_queue);
  }
}

std::int64_t count_stale(const command_meta& cmd, const redisReply& reply) {
  switch (cmd.kind) {
    case k_settle_tracked:
    case k_reserve_tracked:
      if (reply.type == REDIS_REPLY_ARRAY && reply.elements >= 1)
        return static_cast<std::int64_t>(cmd.count) - reply.element[0]->integer;
      return 0;
    case k_settle_untracked:
      return reply.type == REDIS_REPLY_INTEGER ? 1 - reply.integer : 0;
    default:
      return 0;
  }
}

void all_taken_to_scratch(transport_state& st) {
  st.ack_scratch.clear();
  for (const auto& a : st.taken) st.ack_scratch.push_back(a.get());
}

// -- publish --------------------------------------------------------------------------------

void for_each_push_chunk(std::span<const std::string_view> values,
                         const std::function<void(std::span<const std::string_view>)>& push) {
  // Values per RPUSH, and bytes per RPUSH: bounded so one command never holds the server's
  // query buffer (client-query-buffer-limit, 1 GiB) or one reply hostage.
  constexpr std::size_t max_values = 1000;
  constexpr std::size_t max_bytes = 8u << 20;
  for (std::size_t i = 0; i < values.size();) {
    std::size_t j = i, bytes = 0;
    while (j < values.size() && j - i < max_values &&
           (j == i || bytes + values[j].size() <= max_bytes)) {
      bytes += values[j].size();
      ++j;
    }
    push(values.subspan(i, j - i));
    i = j;
  }
}

publish_op::publish_op(transport_state& st, std::string_view queue,
                       std::span<const std::string_view> values)
    : st_(st), queue_(queue), values_(values) {
  what = "redis RPUSH ";
  subject = queue;
  // A NOSCRIPT can only come from the settles in front: the RPUSHes ran. The acks go back
  // to the queue of deferred acks; the publish is not resent.
  resend_after_noscript = false;
}

// A fixed socket timeout: no setsockopt per publish.
std::chrono::milliseconds publish_op::begin_attempt(std::chrono::milliseconds) {
  return st_.opts.command_timeout;
}

void publish_op::compose(request& req, script_shas shas) {
  // Deferred acks ride along in front of the publish (same round trip). A settle that fails
  // server-side is dropped (its message stays in :processing for recover(): at-least-once).
  st_.take_pending();
  if (!st_.taken.empty()) {
    all_taken_to_scratch(st_);
    char random12[12];
    st_.random_hex(random12);
    compose_settles(req, shas, st_, {random12, sizeof random12}, /*report_errors=*/false);
  }
  for_each_push_chunk(values_, [&](std::span<const std::string_view> chunk) {
    req.begin(2 + chunk.size(), {k_push});
    req.add("RPUSH");
    req.add(queue_);
    for (auto v : chunk) req.add(v);
  });
}

void publish_op::on_reply(const command_meta& cmd, const redisReply& reply) {
  if (is_settle(cmd)) st_.stale_acks += count_stale(cmd, reply);
}

next_step publish_op::finish(std::optional<error_info>&) {
  st_.taken.clear();
  return next_step::done;
}

// -- receive --------------------------------------------------------------------------------

reserve_op::reserve_op(transport_state& st, std::string_view queue, clock::time_point deadline)
    : st_(st), queue_(queue), deadline_(deadline) {
  what = "redis receive on ";
  subject = queue;
  outage_is_unreachable = true;
  // Untracked, the only script is the move of due scheduled messages in front of a plain
  // LMOVE/BLMOVE, which ran all the same: keep what it reserved (finish) instead of resending
  // and losing track of it; the due messages move on the next attempt.
  resend_after_noscript = st.opts.track_reservations;
}

std::chrono::milliseconds reserve_op::begin_attempt(std::chrono::milliseconds remaining) {
  remaining_ = remaining;
  // A non-blocking try first (it moves the due scheduled messages and says when the next one
  // is due), then waits in slices (k_block_slice), each capped at that due time.
  block_ = remaining.count() > 0 && !first_;
  std::int64_t due_in = next_due_ms_;
  if (due_in > 0) {  // the hint ages while the round that carried it waits
    const auto aged =
        std::chrono::duration_cast<std::chrono::milliseconds>(clock::now() - next_due_at_);
    due_in = std::max<std::int64_t>(0, due_in - aged.count());
  }
  wait_ = blocking_wait(remaining, due_in);
  // The socket waits for the blocking command plus the usual margin.
  return st_.opts.command_timeout + (block_ ? wait_ : 0ms);
}

void reserve_op::compose(request& req, script_shas shas) {
  const bool tracked = st_.opts.track_reservations;
  st_.got.clear();
  st_.take_pending();
  // Tracked acks of this queue merge into the reserving script call; the others go first as
  // settle commands of their own, in the same round trip.
  auto& merged = st_.merged_scratch;
  merged.clear();
  st_.ack_scratch.clear();
  for (const auto& a : st_.taken) {
    bool merge = tracked && a->queue == queue_ && !a->token.empty();
    (merge ? merged : st_.ack_scratch).push_back(a.get());
  }
  char random12[12];
  st_.random_hex(random12);
  const std::string_view rnd(random12, sizeof random12);
  compose_settles(req, shas, st_, rnd, /*report_errors=*/true);

  const std::string seconds = seconds_arg(wait_);
  next_due_ms_ = -1;  // this round's reply says it again

  const auto& keys = st_.keys(queue_);
  if (tracked) {
    if (block_) {
      // Wait without taking: rotating the head onto itself returns once the list is
      // non-empty; the script right behind it (same round trip) then moves the due scheduled
      // messages and reserves.
      req.push({"BLMOVE", queue_, queue_, "LEFT", "LEFT", seconds}, {k_wait});
    }
    req.begin(11 + 2 * merged.size(),
              {k_reserve_tracked, true, static_cast<std::uint32_t>(merged.size())});
    for (std::string_view a :
         {std::string_view("EVALSHA"), std::string_view(shas[k_settle_reserve]),
          std::string_view("4"), queue_, std::string_view(keys.processing),
          std::string_view(keys.deadlines), std::string_view(keys.scheduled),
          std::string_view(st_.retry_after_arg), rnd, std::string_view(st_.prefetch_arg),
          std::string_view(st_.batch_arg)}) {
      req.add(a);
    }
    for (const reservation* r : merged) {
      req.add(r->token);
      req.add(r->raw);
    }
    return;
  }
  // Untracked: the due scheduled messages move first (one script), then the plain move; the
  // script's hint is measured before this round's wait.
  next_due_at_ = clock::now();
  req.push({"EVALSHA", shas[k_migrate], "2", queue_, keys.scheduled, st_.batch_arg},
           {k_move_due, true});
  if (block_) {
    req.push({"BLMOVE", queue_, keys.processing, "LEFT", "RIGHT", seconds}, {k_reserve_untracked});
  } else {
    req.push({"LMOVE", queue_, keys.processing, "LEFT", "RIGHT"}, {k_reserve_untracked});
  }
}

void reserve_op::add(std::string_view raw, std::string_view token) {
  auto res = std::make_shared<reservation>();
  res->queue.assign(queue_);
  res->raw.assign(raw);
  res->token.assign(token);
  st_.got.push_back(std::move(res));
}

void reserve_op::on_reply(const command_meta& cmd, const redisReply& reply) {
  switch (cmd.kind) {
    case k_settle_tracked:
    case k_settle_untracked:
      st_.stale_acks += count_stale(cmd, reply);
      break;
    case k_reserve_tracked:
      // {settled, next due, value1, token1, value2, token2, ...}
      if (reply.type == REDIS_REPLY_ARRAY && reply.elements >= 1) {
        st_.stale_acks += count_stale(cmd, reply);
        if (reply.elements >= 2 && reply.element[1]->type == REDIS_REPLY_INTEGER) {
          next_due_ms_ = reply.element[1]->integer;  // measured after this round's wait
          next_due_at_ = clock::now();
        }
        for (std::size_t k = 2; k + 1 < reply.elements; k += 2)
          add(reply_text(reply.element[k]), reply_text(reply.element[k + 1]));
      }
      break;
    case k_reserve_untracked:
      if (reply.type == REDIS_REPLY_STRING) add(reply_text(&reply), {});
      break;
    case k_move_due:
      if (reply.type == REDIS_REPLY_INTEGER) next_due_ms_ = reply.integer;
      break;
    default:  // k_wait: the rotation's reply says nothing
      break;
  }
}

next_step finish_reserving(transport_state& st, std::optional<error_info>& error,
                           clock::time_point deadline, std::chrono::milliseconds remaining,
                           bool& first) {
  if (!st.got.empty()) {
    error.reset();  // reserved all the same (e.g. another queue's settle failed)
    st.taken.clear();
    return next_step::done;
  }
  if (error) {
    // A server-side error (e.g. WRONGTYPE, CROSSSLOT): the acks' outcome is unknown; keep
    // them.
    st.give_back();
    return next_step::done;
  }
  st.taken.clear();
  if (clock::now() >= deadline || remaining.count() == 0) return next_step::done;
  first = false;
  return next_step::again;
}

next_step reserve_op::finish(std::optional<error_info>& error) {
  return finish_reserving(st_, error, deadline_, remaining_, first_);
}

// -- flush ----------------------------------------------------------------------------------

settle_op::settle_op(transport_state& st) : st_(st) { what = "redis ack failed"; }

void settle_op::compose(request& req, script_shas shas) {
  st_.take_pending();
  all_taken_to_scratch(st_);
  char random12[12];
  st_.random_hex(random12);
  compose_settles(req, shas, st_, {random12, sizeof random12}, /*report_errors=*/true);
}

void settle_op::on_reply(const command_meta& cmd, const redisReply& reply) {
  st_.stale_acks += count_stale(cmd, reply);
}

// A server-side error reply (e.g. a wrong-typed key): those acks are dropped — their messages
// stay in :processing for recover() — and the error is reported.
next_step settle_op::finish(std::optional<error_info>&) {
  st_.taken.clear();
  return next_step::done;
}

// -- release --------------------------------------------------------------------------------

release_op::release_op(transport_state& st, reservation& r) : st_(st), r_(r) {
  what = "redis release failed";
}

void release_op::compose(request& req, script_shas shas) {
  gone_ = false;
  const auto& keys = st_.keys(r_.queue);
  if (!r_.token.empty()) {
    req.push({"EVALSHA", shas[k_release], "3", r_.queue, keys.processing, keys.deadlines, r_.token,
              r_.raw},
             {k_single});
  } else {
    req.push({"EVALSHA", shas[k_release_untracked], "2", r_.queue, keys.processing, r_.raw},
             {k_single});
  }
}

void release_op::on_reply(const command_meta&, const redisReply& reply) {
  gone_ = reply.type == REDIS_REPLY_INTEGER && reply.integer == 0;
}

next_step finish_release(transport_state& st, reservation& r, bool gone,
                         std::optional<error_info>& error, const char* gone_message) {
  if (error) return next_step::done;
  r.settled = true;
  if (gone) {
    ++st.stale_acks;
    error = error_info{transport_errc::invalid_argument, gone_message};
  }
  return next_step::done;
}

next_step release_op::finish(std::optional<error_info>& error) {
  return finish_release(st_, r_, gone_, error,
                        "the reservation was already gone (recovered or swept back to the "
                        "queue); nothing moved");
}

// -- unreserve ------------------------------------------------------------------------------

unreserve_op::unreserve_op(transport_state& st, std::deque<reservation_ptr>& prefetched)
    : st_(st), prefetched_(prefetched) {
  what = "redis unreserve failed";
}

// Newest first: each goes to the HEAD of the ready list, so the queue's order is as if they
// had never been taken.
void unreserve_op::compose(request& req, script_shas shas) {
  const std::string& queue = prefetched_.front()->queue;
  const auto& keys = st_.keys(queue);
  req.begin(6 + 2 * prefetched_.size(), {k_single});
  for (std::string_view a : {std::string_view("EVALSHA"), std::string_view(shas[k_unreserve]),
                             std::string_view("3"), std::string_view(queue),
                             std::string_view(keys.processing), std::string_view(keys.deadlines)}) {
    req.add(a);
  }
  // NOLINTNEXTLINE(modernize-loop-convert): its reverse_view fix does not compile with clang 14
  for (auto it = prefetched_.rbegin(); it != prefetched_.rend(); ++it) {
    req.add((*it)->token);
    req.add((*it)->raw);
  }
}

next_step unreserve_op::finish(std::optional<error_info>& error) {
  if (!error) prefetched_.clear();
  return next_step::done;
}

// -- recover --------------------------------------------------------------------------------

recover_op::recover_op(transport_state& st, std::string_view queue,
                       std::chrono::milliseconds older_than)
    : st_(st), queue_(queue), older_(std::to_string(older_than.count())) {
  what = "redis recover failed";
}

void recover_op::compose(request& req, script_shas shas) {
  ok_ = false;
  char random10[10];
  st_.random_hex(random10);
  const auto& keys = st_.keys(queue_);
  req.push(
      {"EVALSHA", shas[k_recover], "3", queue_, keys.processing, keys.deadlines, older_,
       st_.retry_after_arg, std::string_view(random10, sizeof random10), k_foreign_retry_after},
      {k_single});
}

bool read_recover_report(const redisReply& reply, recover_report& out) {
  if (reply.type != REDIS_REPLY_ARRAY || reply.elements != 3) return false;
  out = {reply.element[0]->integer, reply.element[1]->integer, reply.element[2]->integer};
  return true;
}

void recover_op::on_reply(const command_meta&, const redisReply& reply) {
  ok_ = read_recover_report(reply, report);
}

next_step recover_op::finish(std::optional<error_info>& error) {
  if (!error && !ok_)
    error = redis_error(fault::unexpected_reply, "redis recover failed", "unexpected reply");
  return next_step::done;
}

// -- list_length ----------------------------------------------------------------------------

length_op::length_op(std::string_view key) : key_(key) { what = "redis LLEN failed"; }

void length_op::compose(request& req, script_shas) {
  ok_ = false;
  req.push({"LLEN", key_}, {k_single});
}

void length_op::on_reply(const command_meta&, const redisReply& reply) {
  if (reply.type != REDIS_REPLY_INTEGER) return;
  length = reply.integer;
  ok_ = true;
}

next_step length_op::finish(std::optional<error_info>& error) {
  if (!error && !ok_)
    error = redis_error(fault::unexpected_reply, "redis LLEN failed", "unexpected reply");
  return next_step::done;
}

// -- peek -----------------------------------------------------------------------------------

range_op::range_op(std::string_view key, std::int64_t first, std::int64_t last)
    : key_(key), first_(std::to_string(first)), last_(std::to_string(last)) {
  what = "redis LRANGE failed";
}

void range_op::compose(request& req, script_shas) {
  ok_ = false;
  values.clear();
  req.push({"LRANGE", key_, first_, last_}, {k_single});
}

void range_op::on_reply(const command_meta&, const redisReply& reply) {
  if (reply.type != REDIS_REPLY_ARRAY) return;
  values.reserve(reply.elements);
  for (std::size_t i = 0; i < reply.elements; ++i) {
    const redisReply* e = reply.element[i];
    if (e == nullptr || e->type != REDIS_REPLY_STRING) return;
    values.emplace_back(e->str, e->len);
  }
  ok_ = true;
}

next_step range_op::finish(std::optional<error_info>& error) {
  if (!error && !ok_)
    error = redis_error(fault::unexpected_reply, "redis LRANGE failed", "unexpected reply");
  return next_step::done;
}

}  // namespace babelqueue::inline v1::redis::detail
