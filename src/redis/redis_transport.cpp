// The redis:// transport: D6 owned layout, tracked reservations, pipelined acks, recover().
// Design notes are in include/babelqueue/redis/redis_transport.hpp and docs/transports/redis.md.
#include "core/propagate.hpp"
#include "redis/errors.hpp"
#include "redis/laravel_operations.hpp"
#include "redis/message.hpp"
#include "redis/operations.hpp"
#include "redis/options.hpp"
#include "redis/router.hpp"
#include "redis/schedule_operation.hpp"
#include "redis/wait_replicas.hpp"
#include "runtime/binding_support.hpp"

#include <babelqueue/bindings/redis.hpp>
#include <babelqueue/redis/redis_transport.hpp>
#include <babelqueue/runtime/settlement_handle.hpp>

#include <algorithm>
#include <deque>
#include <limits>
#include <map>

namespace babelqueue::inline v1::redis {

namespace binding = babelqueue::bindings::redis;
using detail::clock;
using detail::deliver;
using detail::framed_value;
using namespace std::chrono_literals;

namespace {

using detail::reservation;
using detail::reservation_ptr;

babelqueue::failure closed_error() {
  return fail(detail::redis_error(detail::fault::closed, "redis transport is closed"));
}

// A caller's deadline for a round trip, bounded by command_timeout (at least 1 ms ahead:
// an attempt is still made when the caller's time has just run out).
clock::time_point bounded(clock::time_point deadline, std::chrono::milliseconds command_timeout) {
  auto now = clock::now();
  return std::min(now + command_timeout, std::max(deadline, now + 1ms));
}

babelqueue::failure no_headers_in_laravel_mode() {
  return fail(transport_errc::not_supported,
              "redis laravel=1: a Laravel job has no header channel (Laravel's pop decodes the "
              "stored job, so no frame can be stored); publish without headers — the envelope's "
              "trace_id still travels");
}

// A publish-like operation through the engine, with options::wait_replicas' WAIT in the same
// round trip when asked for. Unknown outcome after a lost reply: resent while time remains —
// possibly a duplicate, never a loss.
result<void> run_publish(detail::router& engine, const options& opts, detail::operation& op,
                         std::string_view queue) {
  const auto deadline = clock::now() + opts.command_timeout;
  if (opts.wait_replicas > 0) {
    detail::replicated_publish_op durable(op, opts);
    return engine.run_queue(durable, queue, deadline);
  }
  return engine.run_queue(op, queue, deadline);
}

}  // namespace

// Every call below checks its arguments and state, builds one operation (operations.hpp) and
// hands it to the engine (engine.hpp) with its deadline: the engine is the only place that
// does I/O, retries and reconnects.
struct redis_transport::impl {
  explicit impl(const options& o)
      : engine(o, state, o.laravel ? detail::laravel_scripts() : detail::transport_scripts(),
               o.laravel ? &laravel : nullptr),
        state(o),
        laravel(state, o) {}

  detail::router engine;                   // the connection, or the cluster's (router.hpp)
  detail::transport_state state;           // deferred acks, scratch, script args
  detail::laravel_context laravel;         // laravel=1: keys and script args of that layout
  std::deque<reservation_ptr> prefetched;  // reserved, not yet delivered
  settlement_owner owner{"redis"};         // marks the handles of delivered reservations
  // reclaim_after: when each queue's reservations were last swept by receive().
  std::map<std::string, clock::time_point, std::less<>> last_reclaim;
  bool closed = false;
};

redis_transport::redis_transport(options opts)
    : opts_(std::move(opts)), impl_(std::make_unique<impl>(opts_)) {}

redis_transport::~redis_transport() {
  // Best effort, without waiting for a reconnect: deferred acks go out when the connection is
  // up; otherwise their messages stay in :processing (at-least-once; recover() returns them).
  if (impl_ && !impl_->closed && impl_->engine.connected()) {
    if (!impl_->state.pending.empty()) (void)flush();
    if (!impl_->prefetched.empty())
      (void)unreserve_prefetched(clock::now() + opts_.command_timeout);
  }
}

result<std::unique_ptr<redis_transport>> redis_transport::open(options opts) {
  BABELQUEUE_TRY(detail::validate(opts));
  std::unique_ptr<redis_transport> t(new redis_transport(std::move(opts)));
  BABELQUEUE_TRY(t->impl_->engine.connect(clock::now() + t->opts_.connect_timeout));
  return t;
}

std::string redis_transport::endpoint() const { return impl_->engine.endpoint(); }

transport_stats redis_transport::stats() const noexcept {
  return {impl_->engine.reconnects(), impl_->engine.round_trips(), impl_->state.stale_acks,
          impl_->engine.redirects()};
}

// ---------------------------------------------------------------------------------------

result<void> redis_transport::publish(std::string_view queue, std::string_view body,
                                      const headers& hdrs) {
  // The common case (no headers) stores the caller's bytes as they are: no copy.
  std::string framed;
  std::string_view value = body;
  if (!hdrs.empty()) {
    if (opts_.laravel) return no_headers_in_laravel_mode();
    BABELQUEUE_TRY_LET(v, framed_value(body, hdrs));
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
  if (any_headers && opts_.laravel) return no_headers_in_laravel_mode();
  if (any_headers) framed.reserve(messages.size());  // views into it must stay valid
  for (std::size_t i = 0; i < messages.size(); ++i) {
    if (messages[i].hdrs.empty()) {
      values[i] = messages[i].body;
      continue;
    }
    BABELQUEUE_TRY_LET(v, framed_value(messages[i].body, messages[i].hdrs));
    framed.push_back(std::move(*v));
    values[i] = framed.back();
  }
  return publish_values(queue, values);
}

result<void> redis_transport::publish_values(std::string_view queue,
                                             std::span<const std::string_view> values) {
  if (impl_->closed) return closed_error();
  if (queue.empty()) return fail(transport_errc::invalid_argument, "empty queue name");
  if (values.empty()) return {};
  if (opts_.laravel) {
    detail::laravel_publish_op op(impl_->laravel, queue, values);
    return run_publish(impl_->engine, opts_, op, queue);
  }
  detail::publish_op op(impl_->state, queue, values);
  return run_publish(impl_->engine, opts_, op, queue);
}

// The seam (transport::publish_delayed) has checked the delay: > 0, and no cap of ours.
result<void> redis_transport::publish_later(std::string_view queue, std::string_view body,
                                            const headers& hdrs, std::chrono::milliseconds delay) {
  if (impl_->closed) return closed_error();
  if (queue.empty()) return fail(transport_errc::invalid_argument, "empty queue name");
  // Exactly the value publish() would push: the envelope, or its frame when headers travel.
  std::string framed;
  std::string_view value = body;
  if (!hdrs.empty()) {
    if (opts_.laravel) return no_headers_in_laravel_mode();
    BABELQUEUE_TRY_LET(v, framed_value(body, hdrs));
    framed = std::move(*v);
    value = framed;
  }
  if (opts_.laravel) {
    detail::laravel_schedule_op op(impl_->laravel, queue, value, delay);
    return run_publish(impl_->engine, opts_, op, queue);
  }
  detail::schedule_op op(impl_->state, queue, value, delay);
  return run_publish(impl_->engine, opts_, op, queue);
}

// ---------------------------------------------------------------------------------------

result<void> redis_transport::unreserve_prefetched(clock::time_point deadline) {
  if (impl_->prefetched.empty()) return {};
  detail::unreserve_op op(impl_->state, impl_->prefetched);  // gated: resending is harmless
  return impl_->engine.run_queue(op, impl_->prefetched.front()->queue, deadline);
}

result<std::optional<received_message>> redis_transport::receive(
    std::string_view queue, std::chrono::milliseconds timeout) {
  if (impl_->closed) return closed_error();
  if (queue.empty()) return fail(transport_errc::invalid_argument, "empty queue name");
  if (timeout.count() < 0) timeout = 0ms;
  // Prefetched reservations are handed out first, without a round trip. A different queue
  // first hands them back to their list.
  auto& prefetched = impl_->prefetched;
  if (!prefetched.empty()) {
    if (prefetched.front()->queue == queue) {
      auto res = std::move(prefetched.front());
      prefetched.pop_front();
      return std::optional<received_message>(deliver(impl_->owner, std::move(res), opts_.laravel));
    }
    BABELQUEUE_TRY(unreserve_prefetched(clock::now() + opts_.command_timeout));
  }
  reclaim_if_due(queue);
  // A timeout or a dropped connection: reconnect and retry while the receive's own time
  // remains; report the outage after that (transport_errc::unavailable).
  auto deadline = clock::now() + timeout;
  // Either layout's reserve op, then one tail: the first reservation is delivered, the rest
  // (the owned layout's prefetch; Laravel reserves one at a time) wait in `prefetched`.
  auto reserve = [&](auto& op) -> result<std::optional<received_message>> {
    BABELQUEUE_TRY(impl_->engine.run_receive(op, queue, deadline));
    auto& got = op.reserved();
    if (got.empty()) return std::optional<received_message>{};
    for (std::size_t k = 1; k < got.size(); ++k) prefetched.push_back(std::move(got[k]));
    auto first = std::move(got[0]);
    got.clear();
    return std::optional<received_message>(deliver(impl_->owner, std::move(first), opts_.laravel));
  };
  if (opts_.laravel) {
    detail::laravel_reserve_op op(impl_->laravel, queue, deadline);
    return reserve(op);
  }
  detail::reserve_op op(impl_->state, queue, deadline);
  return reserve(op);
}

// ---------------------------------------------------------------------------------------

result<void> redis_transport::ack(const received_message& message) {
  if (impl_->closed) return closed_error();
  BABELQUEUE_TRY_LET(owned, impl_->owner.claim<reservation_ptr>(message));
  owned->settle();
  auto& pending = impl_->state.pending;
  pending.push_back(**owned);
  if (opts_.pipeline_acks) {
    if (static_cast<std::int64_t>(pending.size()) >= opts_.max_pending_acks) return flush();
    return {};
  }
  auto before = impl_->state.stale_acks;
  if (auto f = flush(); !f) return f;
  if (impl_->state.stale_acks != before) {
    return fail(
        transport_errc::invalid_argument,
        "the reservation was already gone (recovered or swept back to the queue); nothing removed");
  }
  return {};
}

result<void> redis_transport::flush() {
  if (impl_->closed) return closed_error();
  return flush_until(clock::now() + opts_.command_timeout);
}

result<void> redis_transport::flush_until(clock::time_point deadline) {
  if (impl_->state.pending.empty()) return {};
  if (opts_.laravel) {
    detail::laravel_settle_op op(impl_->laravel);
    return impl_->engine.run_settles(op, deadline);
  }
  detail::settle_op op(impl_->state);
  return impl_->engine.run_settles(op, deadline);
}

result<void> redis_transport::release(const received_message& message,
                                      std::chrono::milliseconds delay) {
  if (impl_->closed) return closed_error();
  if (delay.count() > 0 && !opts_.laravel) {
    return fail(transport_errc::not_supported,
                "redis lists have no delayed delivery (D6 owned layout); release with delay 0 or "
                "retry by publishing a copy");
  }
  BABELQUEUE_TRY_LET(owned, impl_->owner.claim<reservation_ptr>(message));
  reservation& r = ***owned;
  if (auto f = flush(); !f) return f;
  const auto deadline = clock::now() + opts_.command_timeout;
  result<void> done;
  if (opts_.laravel) {
    // Whole seconds (Laravel's and Python's unit), the due time rounded up by the script on
    // the server's clock: never earlier than asked.
    detail::laravel_release_op op(impl_->laravel, r, delay);  // gated, as below
    done = impl_->engine.run_queue(op, r.queue, deadline);
  } else {
    detail::release_op op(impl_->state, r);  // gated script: resending cannot duplicate
    done = impl_->engine.run_queue(op, r.queue, deadline);
  }
  if (r.settled) owned->settle();  // the gated script ran (finish_release): no second release
  return done;
}

result<void> redis_transport::close(clock::time_point deadline) {
  if (impl_->closed) return {};
  // Each round trip is bounded by the caller's deadline as well as by command_timeout.
  result<void> out;
  if (!impl_->state.pending.empty()) out = flush_until(bounded(deadline, opts_.command_timeout));
  if (!impl_->prefetched.empty() && impl_->engine.connected()) {
    auto r = unreserve_prefetched(bounded(deadline, opts_.command_timeout));
    if (!r && out) out = r;
  }
  impl_->engine.disconnect("closed");
  impl_->closed = true;
  return out;
}

// ---------------------------------------------------------------------------------------

void redis_transport::reclaim_if_due(std::string_view queue) {
  if (opts_.reclaim_after.count() <= 0) return;
  const auto now = clock::now();
  auto it = impl_->last_reclaim.find(queue);
  if (it != impl_->last_reclaim.end() && now < it->second + opts_.reclaim_after / 2) return;
  if (it == impl_->last_reclaim.end()) {
    it = impl_->last_reclaim.emplace(std::string(queue), now).first;
  }
  it->second = now;
  // A failure here is the receive's too (an outage), which reports it itself.
  (void)recover(queue, opts_.reclaim_after);
}

result<recover_report> redis_transport::recover(std::string_view queue,
                                                std::chrono::milliseconds older_than) {
  if (impl_->closed) return closed_error();
  if (queue.empty()) return fail(transport_errc::invalid_argument, "empty queue name");
  if (older_than.count() < 0) older_than = 0ms;
  BABELQUEUE_TRY(flush());
  if (opts_.laravel) {
    if (!opts_.retry_after && older_than.count() > 0) {
      return fail(transport_errc::invalid_argument,
                  "redis laravel=1 with retry_after=never scores every reservation +inf, so its "
                  "age is unknown: recover with older_than 0 (every reservation)");
    }
    detail::laravel_recover_op op(impl_->laravel, queue, older_than);
    BABELQUEUE_TRY(impl_->engine.run_queue(op, queue, clock::now() + opts_.command_timeout));
    return op.report;
  }
  detail::recover_op op(impl_->state, queue, older_than);
  BABELQUEUE_TRY(impl_->engine.run_queue(op, queue, clock::now() + opts_.command_timeout));
  return op.report;
}

result<std::int64_t> redis_transport::list_length(std::string_view key) {
  if (impl_->closed) return closed_error();
  detail::length_op op(key);
  BABELQUEUE_TRY(impl_->engine.run_key(op, key, clock::now() + opts_.command_timeout));
  return op.length;
}

result<std::vector<peeked_message>> redis_transport::peek(std::string_view queue,
                                                          std::size_t offset, std::size_t limit) {
  if (impl_->closed) return closed_error();
  if (queue.empty()) return fail(transport_errc::invalid_argument, "empty queue name");
  std::vector<peeked_message> out;
  constexpr auto max_index = static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max());
  if (limit == 0 || offset >= max_index) return out;
  const auto first = static_cast<std::int64_t>(offset);
  const std::size_t count = std::min(limit, max_index - offset);  // offset + count <= max
  const auto last = static_cast<std::int64_t>(offset + count - 1);
  // laravel=1: the ready list is `<prefix><queue>`, and its values are never framed.
  const std::string ready = opts_.laravel ? impl_->laravel.keys(queue).ready : std::string(queue);
  detail::range_op op(ready, first, last);
  BABELQUEUE_TRY(impl_->engine.run_queue(op, queue, clock::now() + opts_.command_timeout));
  out.reserve(op.values.size());
  for (auto& raw : op.values) {
    if (opts_.laravel) {
      out.push_back(peeked_message{std::move(raw), {}});
      continue;
    }
    auto un = binding::unframe(raw);
    out.push_back(peeked_message{std::move(un.body), headers(un.hdrs.begin(), un.hdrs.end())});
  }
  return out;
}

// ---------------------------------------------------------------------------------------

void register_transport() {
  const auto factory =
      babelqueue::detail::url_factory<redis_transport, /*HostList=*/true>(options_from_url);
  babelqueue::register_transport("redis", factory);
  babelqueue::register_transport("rediss", factory);
  // Sentinel schemes take a host list: the Sentinels (sentinel_options.hpp).
  const auto sentinel_factory =
      babelqueue::detail::url_factory<redis_transport, /*HostList=*/true>(options_from_url);
  babelqueue::register_transport("redis+sentinel", sentinel_factory);
  babelqueue::register_transport("rediss+sentinel", sentinel_factory);
}

}  // namespace babelqueue::inline v1::redis

namespace babelqueue::inline v1::redis {

std::vector<std::string> redis_transport::security_warnings() const {
  return babelqueue::detail::security_warnings_of(
      {.scheme = scheme(),
       .tls = opts_.tls,
       .tls_verify = opts_.tls_verify,
       .credential = opts_.password.empty() ? "" : "password",
       .host = opts_.host,
       .secure = "rediss://"});
}

}  // namespace babelqueue::inline v1::redis
