// The redis:// transport: D6 owned layout, tracked reservations, pipelined acks, recover().
// Design notes are in include/babelqueue/redis/redis_transport.hpp and docs/transports/redis.md.
#include "redis/connection.hpp"
#include "redis/scripts.hpp"

#include <babelqueue/bindings/redis.hpp>
#include <babelqueue/redis/redis_transport.hpp>

#include <hiredis/hiredis.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <deque>
#include <random>

namespace babelqueue::inline v1::redis {

namespace binding = babelqueue::bindings::redis;
using detail::clock;
using detail::reply_ptr;
using namespace std::chrono_literals;

namespace {

// Script indices in the set loaded on connect.
enum script_index : std::size_t {
  k_settle_reserve = 0,
  k_release = 1,
  k_release_untracked = 2,
  k_recover = 3,
  k_unreserve = 4
};

// Values per RPUSH in publish_batch, and bytes per RPUSH: bounded so one command never holds
// the server's query buffer (client-query-buffer-limit, 1 GiB) or one reply hostage.
constexpr std::size_t k_batch_values = 1000;
constexpr std::size_t k_batch_bytes = 8u << 20;
// A reserved message's retry_after as passed to the scripts (-1 = +inf).
// Foreign (non-C++) deadline members are assumed to use the Python default of 90 s.
constexpr const char* k_foreign_retry_after = "90";

struct reservation {
  const void* owner = nullptr;
  std::string queue;
  std::string raw;    // the stored value: the LREM/ZREM handle
  std::string token;  // tracking token; empty when reserved untracked
  bool settled = false;
};

std::string reply_str(const redisReply* r) {
  if (r == nullptr || r->str == nullptr) return {};
  return std::string(r->str, r->len);
}

bool is_noscript(const redisReply* r) {
  return r->type == REDIS_REPLY_ERROR && r->len >= 8 && std::string_view(r->str, 8) == "NOSCRIPT";
}

std::string seconds_text(std::chrono::milliseconds ms) {
  if (ms.count() < 1) ms = 1ms;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%" PRId64 ".%03" PRId64,
                static_cast<std::int64_t>(ms.count() / 1000),
                static_cast<std::int64_t>(ms.count() % 1000));
  return buf;
}

std::chrono::milliseconds until(clock::time_point t) {
  auto d = std::chrono::duration_cast<std::chrono::milliseconds>(t - clock::now());
  return d.count() < 0 ? 0ms : d;
}

}  // namespace

struct redis_transport::impl {
  explicit impl(const options& o)
      : conn(o, detail::script_set{{detail::settle_reserve_script, detail::release_script,
                                    detail::release_untracked_script, detail::recover_script,
                                    detail::unreserve_script}}),
        rng(std::random_device{}()),
        retry_after_arg(o.retry_after ? std::to_string(o.retry_after->count()) : "-1"),
        prefetch_arg(std::to_string(o.prefetch)) {}

  detail::connection conn;
  std::vector<std::shared_ptr<reservation>> pending;    // deferred acks, in ack order
  std::deque<std::shared_ptr<reservation>> prefetched;  // reserved, not yet delivered
  std::vector<std::string_view> argv;                   // reused command buffer
  bool closed = false;
  std::int64_t stale_acks = 0;
  std::mt19937_64 rng;
  // Script arguments derived from the options once: retry_after in seconds (-1 = +inf) and
  // the number of messages one reservation takes.
  const std::string retry_after_arg;
  const std::string prefetch_arg;

  std::string random_hex(std::size_t n) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string s(n, '0');
    std::uint64_t bits = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (i % 16 == 0) bits = rng();
      s[i] = digits[bits & 0xF];
      bits >>= 4;
    }
    return s;
  }
};

redis_transport::redis_transport(options opts)
    : opts_(std::move(opts)), impl_(std::make_unique<impl>(opts_)) {}

redis_transport::~redis_transport() {
  // Best effort, without waiting for a reconnect: deferred acks go out when the connection is
  // up; otherwise their messages stay in :processing (at-least-once; recover() returns them).
  if (impl_ && !impl_->closed && impl_->conn.connected()) {
    if (!impl_->pending.empty()) (void)flush();
    if (!impl_->prefetched.empty()) (void)unreserve_prefetched();
  }
}

result<std::unique_ptr<redis_transport>> redis_transport::open(options opts) {
  if (opts.connect_timeout.count() <= 0 || opts.command_timeout.count() <= 0 ||
      opts.reconnect_backoff_min.count() <= 0 ||
      opts.reconnect_backoff_max < opts.reconnect_backoff_min || opts.processing_suffix.empty() ||
      opts.max_pending_acks < 1 || opts.prefetch < 1 || opts.prefetch > 255 ||
      (opts.prefetch > 1 && !opts.track_reservations)) {
    return fail(transport_errc::invalid_argument,
                "invalid redis options (timeouts must be > 0, suffix non-empty, prefetch 1..255 "
                "and only with "
                "track_reservations)");
  }
  std::unique_ptr<redis_transport> t(new redis_transport(std::move(opts)));
  if (auto r = t->impl_->conn.ensure(clock::now() + t->opts_.connect_timeout); !r)
    return fail(r.error());
  return t;
}

transport_stats redis_transport::stats() const noexcept {
  return {impl_->conn.reconnects, impl_->conn.round_trips, impl_->stale_acks};
}

// ---------------------------------------------------------------------------------------
// Pipelined settles of deferred acks.
//
static void append_settle_command(detail::connection& c, const options& o, std::string_view queue,
                                  const std::vector<std::shared_ptr<reservation>>& acks,
                                  bool tracked, std::string_view reserve_count,
                                  std::string_view random12, const std::string& retry_after) {
  std::string p = binding::processing_key(queue, o.processing_suffix);
  std::string d = binding::deadlines_key(queue, o.processing_suffix);
  if (!tracked) {
    for (const auto& a : acks) {
      std::string_view argv[] = {"LREM", p, "1", a->raw};
      c.append(argv);
    }
    return;
  }
  std::vector<std::string_view> argv;
  argv.reserve(9 + acks.size() * 2);
  argv.insert(argv.end(), {"EVALSHA", c.sha(k_settle_reserve), "3", queue, p, d, retry_after,
                           random12, reserve_count});
  for (const auto& a : acks) {
    argv.push_back(a->token);
    argv.push_back(a->raw);
  }
  c.append(argv);
}

namespace {

// The settle commands one round trip carries for deferred acks: per queue (first-seen
// order) one script call for tracked reservations, or one LREM per untracked ack. A resent
// tracked settle is idempotent (gated on the reservation's member), so on a failure the
// caller puts the acks back and resends them.
struct settle_plan {
  struct command {
    bool tracked;
    std::size_t acks;
  };
  std::vector<command> commands;  // one reply each, in the order appended

  // How many of command i's acks found their reservation already gone, from its reply.
  [[nodiscard]] std::int64_t stale(std::size_t i, const redisReply* rep) const {
    const auto& cmd = commands[i];
    if (cmd.tracked && rep->type == REDIS_REPLY_ARRAY && rep->elements >= 1)
      return static_cast<std::int64_t>(cmd.acks) - rep->element[0]->integer;
    if (!cmd.tracked && rep->type == REDIS_REPLY_INTEGER) return 1 - rep->integer;
    return 0;
  }
};

settle_plan append_settles(detail::connection& c, const options& o,
                           const std::vector<std::shared_ptr<reservation>>& acks,
                           std::string_view random12, const std::string& retry_after) {
  settle_plan plan;
  std::vector<std::string_view> queues;
  for (const auto& a : acks) {
    if (std::find(queues.begin(), queues.end(), a->queue) == queues.end())
      queues.push_back(a->queue);
  }
  std::vector<std::shared_ptr<reservation>> of_queue;
  for (auto queue : queues) {
    of_queue.clear();
    for (const auto& a : acks) {
      if (a->queue == queue) of_queue.push_back(a);
    }
    bool tracked = !of_queue.front()->token.empty();
    append_settle_command(c, o, queue, of_queue, tracked, "0", random12, retry_after);
    if (tracked) {
      plan.commands.push_back({true, of_queue.size()});
    } else {
      plan.commands.insert(plan.commands.end(), of_queue.size(), {false, 1});
    }
  }
  return plan;
}

// Reads the replies of one pipelined round trip. A dropped connection ends the round
// (io_failed); an error reply is recorded — NOSCRIPT on its own, otherwise the first one as
// `error` — and reading goes on, so the connection stays in step with its replies.
struct round_reader {
  explicit round_reader(detail::connection& conn) : c(conn) {}

  detail::connection& c;
  bool io_failed = false;
  bool noscript = false;
  error_info error;

  // The next reply, or null when the connection failed or the reply is an error. With
  // `what` empty an error reply is not kept as `error` (NOSCRIPT still is noted).
  reply_ptr next(std::string_view what, std::string_view subject = {}) {
    auto r = c.get_reply();
    if (!r) {
      io_failed = true;
      error = r.error();
      return nullptr;
    }
    const redisReply* rep = r->get();
    if (rep->type != REDIS_REPLY_ERROR) return std::move(*r);
    if (is_noscript(rep)) {
      noscript = true;
    } else if (!what.empty() && error.code == errc::ok) {
      error = {transport_errc::unavailable,
               std::string(what) + std::string(subject) + ": " + reply_str(rep)};
    }
    return nullptr;
  }
};

}  // namespace

// The value to store for a body with (non-empty) headers. A body that is not valid UTF-8
// (a poison message being dead-lettered as its original bytes) cannot travel inside the JSON
// frame; it is stored bare — its exact bytes matter more than the informational headers —
// and this is the only case where headers are dropped.
static result<std::string> framed_value(std::string_view body, const headers& hdrs) {
  auto v = binding::stored_value(body, hdrs);
  if (!v && v.code() == errc::invalid_utf8) {
    auto bare = binding::stored_value(body);
    if (bare) return bare;
  }
  return v;
}

// ---------------------------------------------------------------------------------------

result<void> redis_transport::publish(std::string_view queue, std::string_view body,
                                      const headers& hdrs) {
  // The common case (no headers) stores the caller's bytes as they are: no copy.
  std::string framed;
  std::string_view value = body;
  if (!hdrs.empty()) {
    auto v = framed_value(body, hdrs);
    if (!v) return fail(v.error());
    framed = std::move(*v);
    value = framed;
  }
  return publish_values(queue, std::span<const std::string_view>(&value, 1));
}

result<void> redis_transport::publish_batch(std::string_view queue,
                                            std::span<const outgoing_message> messages) {
  std::vector<std::string> framed;
  std::vector<std::string_view> values(messages.size());
  bool any_headers =
      std::any_of(messages.begin(), messages.end(), [](const auto& m) { return !m.hdrs.empty(); });
  if (any_headers) framed.reserve(messages.size());  // views into it must stay valid
  for (std::size_t i = 0; i < messages.size(); ++i) {
    if (messages[i].hdrs.empty()) {
      values[i] = messages[i].body;
      continue;
    }
    auto v = framed_value(messages[i].body, messages[i].hdrs);
    if (!v) return fail(v.error());
    framed.push_back(std::move(*v));
    values[i] = framed.back();
  }
  return publish_values(queue, values);
}

result<void> redis_transport::publish_values(std::string_view queue,
                                             std::span<const std::string_view> values) {
  if (impl_->closed) return fail(transport_errc::closed, "redis transport is closed");
  if (queue.empty()) return fail(transport_errc::invalid_argument, "empty queue name");
  if (values.empty()) return {};
  // Group into bounded variadic RPUSHes.
  std::vector<std::pair<std::size_t, std::size_t>> chunks;
  for (std::size_t i = 0; i < values.size();) {
    std::size_t j = i, bytes = 0;
    while (j < values.size() && j - i < k_batch_values &&
           (j == i || bytes + values[j].size() <= k_batch_bytes)) {
      bytes += values[j].size();
      ++j;
    }
    chunks.emplace_back(i, j);
    i = j;
  }

  auto deadline = clock::now() + opts_.command_timeout;
  auto& c = impl_->conn;
  auto& argv = impl_->argv;
  for (;;) {
    if (auto r = c.ensure(deadline); !r) return r;
    if (auto r = c.set_timeout(opts_.command_timeout); !r) continue;
    // Deferred acks ride along in front of the publish (same round trip).
    auto flushed = std::move(impl_->pending);
    impl_->pending.clear();
    settle_plan plan;
    if (!flushed.empty()) {
      plan = append_settles(c, opts_, flushed, impl_->random_hex(12), impl_->retry_after_arg);
    }
    for (auto [from, to] : chunks) {
      argv.clear();
      argv.push_back("RPUSH");
      argv.push_back(queue);
      for (std::size_t i = from; i < to; ++i) argv.push_back(values[i]);
      c.append(argv);
    }
    round_reader rd(c);
    for (std::size_t i = 0; i < plan.commands.size() && !rd.io_failed; ++i) {
      // A settle that failed server-side is dropped (its message stays in :processing for
      // recover(): at-least-once); only a NOSCRIPT one is retried with the next call.
      if (auto rep = rd.next({})) impl_->stale_acks += plan.stale(i, rep.get());
    }
    for (std::size_t i = 0; i < chunks.size() && !rd.io_failed; ++i) {
      (void)rd.next("redis RPUSH ", queue);
    }
    if (rd.io_failed) {
      // Unknown which commands ran: put the acks back (gated, resend-safe) and resend the
      // publish while time remains — possibly a duplicate, never a loss.
      impl_->pending.insert(impl_->pending.begin(), flushed.begin(), flushed.end());
      if (clock::now() < deadline) continue;
      return fail(std::move(rd.error));
    }
    if (rd.noscript) {
      impl_->pending.insert(impl_->pending.begin(), flushed.begin(), flushed.end());
      (void)c.reload_scripts();
    }
    if (rd.error.code != errc::ok) return fail(std::move(rd.error));
    return {};
  }
}

// ---------------------------------------------------------------------------------------

namespace {

received_message deliver(std::shared_ptr<reservation> res) {
  auto un = binding::unframe(res->raw);
  received_message m;
  m.body = std::move(un.body);
  m.queue = res->queue;
  m.hdrs = headers(un.hdrs.begin(), un.hdrs.end());
  m.handle = std::shared_ptr<void>(res, res.get());
  return m;
}

}  // namespace

result<void> redis_transport::unreserve_prefetched() {
  if (impl_->prefetched.empty()) return {};
  auto& c = impl_->conn;
  auto deadline = clock::now() + opts_.command_timeout;
  const std::string queue = impl_->prefetched.front()->queue;
  const std::string p = binding::processing_key(queue, opts_.processing_suffix);
  const std::string d = binding::deadlines_key(queue, opts_.processing_suffix);
  for (;;) {
    if (auto e = c.ensure(deadline); !e) return e;
    if (auto e = c.set_timeout(std::max(until(deadline), 1ms)); !e) continue;
    std::vector<std::string_view> argv{"EVALSHA", c.sha(k_unreserve), "3", queue, p, d};
    for (auto it = impl_->prefetched.rbegin(); it != impl_->prefetched.rend(); ++it) {
      argv.push_back((*it)->token);
      argv.push_back((*it)->raw);
    }
    c.append(argv);
    auto rep = c.get_reply();
    if (!rep) {
      if (clock::now() < deadline) continue;  // gated: resending cannot duplicate
      return fail(rep.error());
    }
    if (is_noscript(rep->get())) {
      if (auto rr = c.reload_scripts(); !rr) return rr;
      continue;
    }
    if ((*rep)->type == REDIS_REPLY_ERROR) {
      return fail(transport_errc::unavailable, "redis unreserve failed: " + reply_str(rep->get()));
    }
    impl_->prefetched.clear();
    return {};
  }
}

result<std::optional<received_message>> redis_transport::receive(
    std::string_view queue, std::chrono::milliseconds timeout) {
  if (impl_->closed) return fail(transport_errc::closed, "redis transport is closed");
  if (queue.empty()) return fail(transport_errc::invalid_argument, "empty queue name");
  if (timeout.count() < 0) timeout = 0ms;
  // Prefetched reservations are handed out first, without a round trip. A different queue
  // first hands them back to their list.
  if (!impl_->prefetched.empty()) {
    if (impl_->prefetched.front()->queue == queue) {
      auto res = std::move(impl_->prefetched.front());
      impl_->prefetched.pop_front();
      return std::optional<received_message>(deliver(std::move(res)));
    }
    if (auto r = unreserve_prefetched(); !r) return fail(r.error());
  }
  auto& c = impl_->conn;
  const std::string& want = impl_->prefetch_arg;
  const bool tracked = opts_.track_reservations;
  const std::string p = binding::processing_key(queue, opts_.processing_suffix);
  const std::string& ra = impl_->retry_after_arg;
  auto deadline = clock::now() + timeout;
  bool first = true;
  error_info last_error;

  for (;;) {
    if (auto r = c.ensure(deadline); !r) return fail(r.error());
    auto remaining = until(deadline);
    bool block = !first && remaining.count() > 0;
    // In untracked mode there is no separate non-blocking first try: BLMOVE itself moves.
    if (!tracked) block = remaining.count() > 0;
    if (auto r = c.set_timeout(opts_.command_timeout + (block ? remaining : 0ms)); !r) continue;

    auto flushed = std::move(impl_->pending);
    impl_->pending.clear();
    // Tracked acks of this queue merge into the reserving script call; the others go first
    // as settle commands of their own, in the same round trip.
    std::vector<std::shared_ptr<reservation>> merged;
    std::vector<std::shared_ptr<reservation>> others;
    for (const auto& a : flushed) {
      bool merge = tracked && a->queue == queue && !a->token.empty();
      (merge ? merged : others).push_back(a);
    }
    std::string rnd = impl_->random_hex(12);
    settle_plan plan = append_settles(c, opts_, others, rnd, ra);
    std::string secs = seconds_text(remaining);
    if (tracked) {
      if (block) {
        // Wait without taking: rotating the head onto itself returns once the list is
        // non-empty; the script right behind it (same round trip) then reserves.
        std::string_view argv[] = {"BLMOVE", queue, queue, "LEFT", "LEFT", secs};
        c.append(argv);
      }
      append_settle_command(c, opts_, queue, merged, true, want, rnd, ra);
    } else if (block) {
      std::string_view argv[] = {"BLMOVE", queue, p, "LEFT", "RIGHT", secs};
      c.append(argv);
    } else {
      std::string_view argv[] = {"LMOVE", queue, p, "LEFT", "RIGHT"};
      c.append(argv);
    }
    const std::size_t settle_replies = plan.commands.size();
    const std::size_t total = settle_replies + (tracked && block ? 2 : 1);

    round_reader rd(c);
    std::vector<std::shared_ptr<reservation>> got;
    auto reserved = [&](std::string value, std::string token) {
      auto res = std::make_shared<reservation>();
      res->owner = this;
      res->queue = std::string(queue);
      res->raw = std::move(value);
      res->token = std::move(token);
      got.push_back(std::move(res));
    };
    for (std::size_t i = 0; i < total && !rd.io_failed; ++i) {
      auto reply = rd.next("redis receive on ", queue);
      if (!reply) continue;
      const redisReply* rep = reply.get();
      if (i < settle_replies) {
        impl_->stale_acks += plan.stale(i, rep);
        continue;
      }
      if (i + 1 != total) continue;  // the BLMOVE rotation's reply
      if (tracked) {
        if (rep->type == REDIS_REPLY_ARRAY && rep->elements >= 1) {
          auto settled = rep->element[0]->integer;
          impl_->stale_acks += static_cast<std::int64_t>(merged.size()) - settled;
          for (std::size_t k = 1; k + 1 < rep->elements; k += 2) {
            reserved(reply_str(rep->element[k]), reply_str(rep->element[k + 1]));
          }
        }
      } else if (rep->type == REDIS_REPLY_STRING) {
        reserved(reply_str(rep), std::string());
      }
    }
    if (rd.io_failed || rd.noscript) {
      impl_->pending.insert(impl_->pending.begin(), flushed.begin(), flushed.end());
      if (rd.noscript) {
        if (auto rr = c.reload_scripts(); !rr) return fail(rr.error());
        continue;
      }
      last_error = rd.error;
      // A timeout or a dropped connection: reconnect and retry while the receive's own
      // time remains; report the outage after that.
      if (clock::now() < deadline) continue;
      return fail(transport_errc::unavailable, last_error.message);
    }
    if (rd.error.code != errc::ok && got.empty()) {
      // A server-side error (e.g. WRONGTYPE): the acks' outcome is unknown; keep them.
      impl_->pending.insert(impl_->pending.begin(), flushed.begin(), flushed.end());
      return fail(std::move(rd.error));
    }
    if (!got.empty()) {
      for (std::size_t k = 1; k < got.size(); ++k) impl_->prefetched.push_back(std::move(got[k]));
      return std::optional<received_message>(deliver(std::move(got[0])));
    }
    if (clock::now() >= deadline || remaining.count() == 0)
      return std::optional<received_message>{};
    first = false;
  }
}

// ---------------------------------------------------------------------------------------

static reservation* handle_of(const received_message& m, const void* owner) {
  auto* r = static_cast<reservation*>(m.handle.get());
  if (r == nullptr || r->owner != owner) return nullptr;
  return r;
}

result<void> redis_transport::ack(const received_message& message) {
  if (impl_->closed) return fail(transport_errc::closed, "redis transport is closed");
  reservation* r = handle_of(message, this);
  if (r == nullptr)
    return fail(transport_errc::invalid_argument, "message was not received by this redis transport");
  if (r->settled) return fail(transport_errc::invalid_argument, "message already settled");
  r->settled = true;
  auto shared = std::shared_ptr<reservation>(message.handle, r);
  if (opts_.pipeline_acks) {
    impl_->pending.push_back(std::move(shared));
    if (static_cast<std::int64_t>(impl_->pending.size()) >= opts_.max_pending_acks) return flush();
    return {};
  }
  impl_->pending.push_back(std::move(shared));
  auto before = impl_->stale_acks;
  if (auto f = flush(); !f) return f;
  if (impl_->stale_acks != before) {
    return fail(
        transport_errc::invalid_argument,
        "the reservation was already gone (recovered or swept back to the queue); nothing removed");
  }
  return {};
}

result<void> redis_transport::flush() {
  if (impl_->closed) return fail(transport_errc::closed, "redis transport is closed");
  if (impl_->pending.empty()) return {};
  auto deadline = clock::now() + opts_.command_timeout;
  auto& c = impl_->conn;
  const std::string& ra = impl_->retry_after_arg;
  for (;;) {
    if (auto r = c.ensure(deadline); !r) return r;
    if (auto r = c.set_timeout(std::max(until(deadline), 1ms)); !r) continue;
    auto flushed = std::move(impl_->pending);
    impl_->pending.clear();
    settle_plan plan = append_settles(c, opts_, flushed, impl_->random_hex(12), ra);
    round_reader rd(c);
    for (std::size_t i = 0; i < plan.commands.size() && !rd.io_failed; ++i) {
      if (auto rep = rd.next("redis ack failed")) impl_->stale_acks += plan.stale(i, rep.get());
    }
    if (rd.io_failed || rd.noscript) {
      impl_->pending.insert(impl_->pending.begin(), flushed.begin(), flushed.end());
      if (rd.noscript) {
        if (auto rr = c.reload_scripts(); !rr) return rr;
        continue;
      }
      if (clock::now() < deadline) continue;
      return fail(std::move(rd.error));
    }
    // A server-side error reply (e.g. a wrong-typed key): those acks are dropped — their
    // messages stay in :processing for recover() — and the error is reported.
    if (rd.error.code != errc::ok) return fail(std::move(rd.error));
    return {};
  }
}

result<void> redis_transport::release(const received_message& message,
                                      std::chrono::milliseconds delay) {
  if (impl_->closed) return fail(transport_errc::closed, "redis transport is closed");
  if (delay.count() > 0) {
    return fail(transport_errc::not_supported,
                "redis lists have no delayed delivery (D6 owned layout); release with delay 0 or "
                "retry by publishing a copy");
  }
  reservation* r = handle_of(message, this);
  if (r == nullptr)
    return fail(transport_errc::invalid_argument, "message was not received by this redis transport");
  if (r->settled) return fail(transport_errc::invalid_argument, "message already settled");
  if (auto f = flush(); !f) return f;
  auto& c = impl_->conn;
  auto deadline = clock::now() + opts_.command_timeout;
  std::string p = binding::processing_key(r->queue, opts_.processing_suffix);
  std::string d = binding::deadlines_key(r->queue, opts_.processing_suffix);
  for (;;) {
    if (auto e = c.ensure(deadline); !e) return e;
    if (auto e = c.set_timeout(std::max(until(deadline), 1ms)); !e) continue;
    if (!r->token.empty()) {
      std::string_view argv[] = {"EVALSHA", c.sha(k_release), "3",   r->queue, p,
                                 d,         r->token,         r->raw};
      c.append(argv);
    } else {
      std::string_view argv[] = {"EVALSHA", c.sha(k_release_untracked), "2", r->queue, p, r->raw};
      c.append(argv);
    }
    auto rep = c.get_reply();
    if (!rep) {
      // Gated script: resending cannot duplicate the message.
      if (clock::now() < deadline) continue;
      return fail(rep.error());
    }
    if (is_noscript(rep->get())) {
      if (auto rr = c.reload_scripts(); !rr) return rr;
      continue;
    }
    if ((*rep)->type == REDIS_REPLY_ERROR) {
      return fail(transport_errc::unavailable, "redis release failed: " + reply_str(rep->get()));
    }
    r->settled = true;
    if ((*rep)->type == REDIS_REPLY_INTEGER && (*rep)->integer == 0) {
      ++impl_->stale_acks;
      return fail(
          transport_errc::invalid_argument,
          "the reservation was already gone (recovered or swept back to the queue); nothing moved");
    }
    return {};
  }
}

result<void> redis_transport::close(std::chrono::steady_clock::time_point deadline) {
  if (impl_->closed) return {};
  result<void> out;
  if (!impl_->pending.empty()) {
    // Bound the flush by the caller's deadline as well as by command_timeout.
    auto saved = opts_.command_timeout;
    opts_.command_timeout = std::min(saved, std::max(until(deadline), 1ms));
    out = flush();
    opts_.command_timeout = saved;
  }
  if (!impl_->prefetched.empty() && impl_->conn.connected()) {
    auto saved = opts_.command_timeout;
    opts_.command_timeout = std::min(saved, std::max(until(deadline), 1ms));
    auto r = unreserve_prefetched();
    opts_.command_timeout = saved;
    if (!r && out) out = r;
  }
  impl_->conn.drop("closed");
  impl_->closed = true;
  return out;
}

// ---------------------------------------------------------------------------------------

result<recover_report> redis_transport::recover(std::string_view queue,
                                                std::chrono::milliseconds older_than) {
  if (impl_->closed) return fail(transport_errc::closed, "redis transport is closed");
  if (queue.empty()) return fail(transport_errc::invalid_argument, "empty queue name");
  if (older_than.count() < 0) older_than = 0ms;
  if (auto f = flush(); !f) return fail(f.error());
  auto& c = impl_->conn;
  auto deadline = clock::now() + opts_.command_timeout;
  std::string p = binding::processing_key(queue, opts_.processing_suffix);
  std::string d = binding::deadlines_key(queue, opts_.processing_suffix);
  std::string older = std::to_string(older_than.count());
  const std::string& ra = impl_->retry_after_arg;
  for (;;) {
    if (auto e = c.ensure(deadline); !e) return fail(e.error());
    if (auto e = c.set_timeout(std::max(until(deadline), 1ms)); !e) continue;
    std::string rnd = impl_->random_hex(10);
    std::string_view argv[] = {"EVALSHA", c.sha(k_recover),     "3", queue, p, d, older, ra,
                               rnd,       k_foreign_retry_after};
    c.append(argv);
    auto rep = c.get_reply();
    if (!rep) {
      if (clock::now() < deadline) continue;
      return fail(rep.error());
    }
    if (is_noscript(rep->get())) {
      if (auto rr = c.reload_scripts(); !rr) return fail(rr.error());
      continue;
    }
    const redisReply* x = rep->get();
    if (x->type != REDIS_REPLY_ARRAY || x->elements != 3) {
      return fail(
          transport_errc::unavailable,
          "redis recover failed: " +
              (x->type == REDIS_REPLY_ERROR ? reply_str(x) : std::string("unexpected reply")));
    }
    return recover_report{x->element[0]->integer, x->element[1]->integer, x->element[2]->integer};
  }
}

result<std::int64_t> redis_transport::list_length(std::string_view key) {
  if (impl_->closed) return fail(transport_errc::closed, "redis transport is closed");
  auto& c = impl_->conn;
  auto deadline = clock::now() + opts_.command_timeout;
  for (;;) {
    if (auto e = c.ensure(deadline); !e) return fail(e.error());
    if (auto e = c.set_timeout(std::max(until(deadline), 1ms)); !e) continue;
    std::string_view argv[] = {"LLEN", key};
    c.append(argv);
    auto rep = c.get_reply();
    if (!rep) {
      if (clock::now() < deadline) continue;
      return fail(rep.error());
    }
    if ((*rep)->type != REDIS_REPLY_INTEGER)
      return fail(transport_errc::unavailable, "redis LLEN failed: " + reply_str(rep->get()));
    return static_cast<std::int64_t>((*rep)->integer);
  }
}

// ---------------------------------------------------------------------------------------

namespace {

result<std::unique_ptr<transport>> open_transport_from(const broker_url& url) {
  auto o = options_from_url(url);
  if (!o) return fail(o.error());
  auto t = redis_transport::open(std::move(*o));
  if (!t) return fail(t.error());
  return std::unique_ptr<transport>(std::move(*t));
}

}  // namespace

void register_transport() {
  babelqueue::register_transport("redis", open_transport_from);
  babelqueue::register_transport("rediss", open_transport_from);
}

}  // namespace babelqueue::inline v1::redis
