// The per-message algorithm of decision D5 / wire-core §5.6 (see app.hpp for the rules),
// reported through the observer seam (observer.hpp): one process span per delivery, a
// publish span per retry / dead-letter / message::publish, metrics events, log records
// formatted only when an observer wants their level.
#include "runtime/worker.hpp"

#include "core/propagate.hpp"
#include "runtime/failure_cause.hpp"
#include "runtime/publish_delay.hpp"

#include <babelqueue/dead_letter.hpp>

#include <algorithm>
#include <chrono>
#include <functional>
#include <limits>
#include <thread>

namespace babelqueue {
inline namespace v1 {
namespace {

// Headers added to a poison message on the DLQ, where the transport carries headers: the
// body must stay byte-identical, so the "block" travels out of band.
constexpr std::string_view poison_reason_header = "bq-dead-letter-reason";
constexpr std::string_view poison_error_header = "bq-dead-letter-error";

// The delay of the unknown-URN `release` strategy: the fixed one when set, else the retry
// policy's, growing with the broker's delivery counter where it has one (the body's
// `attempts` does not move on a release).
std::chrono::milliseconds unknown_release_delay(const app_options& o,
                                                const received_message& delivery) {
  if (o.unknown_urn_release_delay.count() > 0) return o.unknown_urn_release_delay;
  return o.retry.delay_for(std::max<std::int64_t>(delivery.delivery_count.value_or(1), 1));
}

std::int64_t saturating_increment(std::int64_t n) {
  return n == std::numeric_limits<std::int64_t>::max() ? n : n + 1;
}

std::string in_quotes(std::string_view queue) { return "'" + std::string(queue) + "'"; }

// A message the binding's header gate refused (received_message::refused_schema_version):
// never decoded, so it takes the same path as a body whose schema_version is not 1.
error_info refused_by_header(std::string_view version) {
  return {errc::unsupported_schema_version,
          "the message's schema-version header is \"" + std::string(version) +
              "\" (routed on babelqueue:unsupported-schema-version:" + std::string(version) +
              "); not decoded"};
}

}  // namespace

// --- job -----------------------------------------------------------------------------------

detail::log_context app::worker::job::context() const noexcept {
  detail::log_context c;
  c.queue = delivery.queue;
  if (env != nullptr) {
    c.urn = env->urn();
    c.id = env->id();
    c.trace_id = env->trace_id();
    c.attempts = attempts;
  }
  return c;
}

void app::worker::job::set_error(error_info e, std::string exception_type) {
  if (!observed) return;
  error = std::move(e);
  exception = std::move(exception_type);
  result.error = &error;
  result.exception_type = exception;
}

void app::worker::job::set_settle_error(const error_info& e) {
  if (!observed) return;
  settle_error = e;
  result.settle_error = &settle_error;
}

void app::worker::job::set_dead_letter_queue(std::string_view q) {
  if (!observed) return;
  dead_letter_queue = q;
  result.dead_letter_queue = dead_letter_queue;
}

process_result app::worker::job::final_result() const noexcept {
  process_result r = result;
  if (unsettled) r.outcome = process_outcome::unsettled;
  return r;
}

// --- receive and dispatch ------------------------------------------------------------------

result<bool> app::worker::poll_once(std::string_view queue) {
  BABELQUEUE_TRY_LET(got, transport_->receive(queue, app_.options_.poll_timeout));
  if (!*got) return false;
  if (drain_guard_ && !released_.empty() &&
      released_.count(std::hash<std::string>{}((*got)->body)) != 0) {
    release_unseen(**got);  // seen in this drain already: leave it for a consumer that knows it
    return false;
  }
  dispatch(**got);
  return true;
}

void app::worker::dispatch(const received_message& delivery) noexcept {
  const detail::observer_hub& hub = app_.observers_;
  notify([&](observer& o) { o.on_consumed(delivery.queue); });
  // Only allocation failures can throw below (handlers are caught in run()); the delivery
  // is then left unsettled: the broker returns it (at-least-once) and the loop goes on.
  std::optional<job> j;
  std::optional<envelope> env;
  std::optional<process_info> info;
  error_info rejection;
  detail::span_states states(hub.size());
  try {
    j.emplace(delivery, !hub.empty());
    // 1. The accept gate (D3), before any routing.
    decode_options gate;
    gate.max_bytes = app_.options_.max_body_bytes;
    if (hub.wants(log_level::warn)) {
      gate.on_warning = [&](std::string_view w) {
        hub.log(log_level::warn, detail::log_context::of_queue(delivery.queue),
                [&] { return std::string(w); });
      };
    }
    auto decoded = delivery.refused_schema_version
                       ? result<envelope>(fail(refused_by_header(*delivery.refused_schema_version)))
                       : decode(std::string_view(delivery.body), gate);
    if (decoded) {
      env.emplace(std::move(*decoded));
      // 2. Reconcile with the broker's native delivery counter (pure, per binding).
      j->attempts = transport_->reconcile_attempts(env->attempts(), delivery);
      if (j->attempts != env->attempts()) env->set_attempts(j->attempts);
      j->env = &*env;
    } else {
      rejection = std::move(decoded).error();
    }
    if (!hub.empty()) {
      info.emplace(process_info{delivery.queue, delivery, j->env,
                                j->env == nullptr ? &rejection : nullptr, j->attempts});
      hub.process_start(*info, states);
    }
    if (env) {
      run(*j, *env);
    } else {
      poison(*j, rejection);
    }
  } catch (...) {
    if (j) j->unsettled = true;
    hub.log(log_level::error, detail::log_context::of_queue(delivery.queue), [&] {
      return "internal error while dispatching a message: " + detail::current_failure_cause().error;
    });
  }
  if (info) hub.process_end(*info, j->final_result(), states);  // info implies j
}

void app::worker::run(job& j, envelope& env) {
  // 3. Route.
  auto fn = app_.find_handler(env.urn());
  if (!fn) {
    unknown_urn(j, env);
    return;
  }
  std::optional<detail::failure_cause> failure;
  std::optional<std::chrono::milliseconds> deferred;
  const auto started = std::chrono::steady_clock::now();
  {
    message msg(j.delivery, env, this);
    try {
      (*fn)(msg);
    } catch (const defer_delivery& later) {
      deferred = std::max(later.delay(), std::chrono::milliseconds(0));
    } catch (...) {
      failure = detail::current_failure_cause();
    }
  }
  const auto latency = std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::steady_clock::now() - started);
  j.result.handler_latency = latency;
  notify([&](observer& o) { o.on_handled(env.urn(), latency, !failure); });
  if (deferred) {
    defer(j, *deferred);
    return;
  }
  if (!failure) {
    j.result.outcome = process_outcome::acked;
    if (ack(j)) notify([&](observer& o) { o.on_acked(j.delivery.queue); });
    return;
  }
  // 4. Failure path.
  j.set_error(error_info{runtime_errc::handler_failed, failure->error}, failure->exception);
  failed(
      j, env,
      cause{dead_letter_reason::failed, std::move(failure->error), std::move(failure->exception)});
}

void app::worker::poison(job& j, const error_info& why) {
  const auto& delivery = j.delivery;
  j.set_error(why);
  j.result.outcome = process_outcome::rejected;
  j.result.reason = dead_letter_reason::poison;
  notify([&](observer& o) { o.on_rejected(delivery.queue, why); });
  auto ctx = j.context();
  ctx.error = &why;
  const auto what = [&why] { return std::string(why.reason()) + ": " + why.message; };
  if (!app_.options_.dead_letter) {
    app_.observers_.log(log_level::warn, ctx, [&] {
      return "dropping a rejected message (dead-lettering is off): " + what();
    });
    if (ack(j)) notify([&](observer& o) { o.on_dropped(delivery.queue); });
    return;
  }
  const std::string dlq = app_.dead_letter_queue_for(delivery.queue);
  headers hdrs = forwarded_headers(delivery);
  if (transport_->capabilities().headers) {
    hdrs[std::string(poison_reason_header)] = std::string(to_string(dead_letter_reason::poison));
    hdrs[std::string(poison_error_header)] = std::string(why.reason());
  }
  // The ORIGINAL bytes, unchanged: a message we cannot understand is never rewritten (D5).
  if (forward_then_ack(j, publish_kind::dead_letter, nullptr, dlq, delivery.body, hdrs,
                       "dead-letter a rejected message")) {
    j.set_dead_letter_queue(dlq);
    app_.observers_.log(log_level::warn, ctx, [&] {
      return "dead-lettered a rejected message to " + in_quotes(dlq) + " unchanged: " + what();
    });
    notify([&](observer& o) { o.on_dead_lettered(dlq, dead_letter_reason::poison); });
  }
}

void app::worker::unknown_urn(job& j, envelope& env) {
  const auto strategy = app_.options_.on_unknown_urn;
  j.result.unknown_urn = strategy;
  const auto& hub = app_.observers_;
  switch (strategy) {
    case unknown_urn_strategy::fail: {
      std::string why =
          "no handler is mapped for the message URN: \"" + std::string(env.urn()) + "\"";
      std::string type = "babelqueue::unknown_urn";
      j.set_error(error_info{runtime_errc::handler_failed, why}, type);
      failed(j, env, cause{dead_letter_reason::unknown_urn, std::move(why), std::move(type)});
      return;
    }
    case unknown_urn_strategy::del:
      hub.log(log_level::info, j.context(), [] { return std::string("deleting: no handler"); });
      j.result.outcome = process_outcome::dropped;
      if (ack(j)) notify([&](observer& o) { o.on_dropped(j.delivery.queue); });
      return;
    case unknown_urn_strategy::release:
      hub.log(log_level::debug, j.context(),
              [] { return std::string("releasing unchanged: no handler (strategy release)"); });
      if (drain_guard_) released_.insert(std::hash<std::string>{}(j.delivery.body));
      j.result.outcome = process_outcome::released;
      release(j, unknown_release_delay(app_.options_, j.delivery));
      return;
    case unknown_urn_strategy::dead_letter:
      if (!app_.options_.dead_letter) {
        hub.log(log_level::info, j.context(), [] {
          return std::string("deleting: no handler (strategy dead_letter, dead-lettering off)");
        });
        j.result.outcome = process_outcome::dropped;
        if (ack(j)) notify([&](observer& o) { o.on_dropped(j.delivery.queue); });
        return;
      }
      // Current attempts, null cause (Go/Python, wire-core §4.2).
      dead_letter_or_drop(j, env, cause{dead_letter_reason::unknown_urn, {}, {}}, env.attempts());
      return;
  }
}

void app::worker::failed(job& j, envelope& env, const cause& c) {
  const std::int64_t delivered = env.attempts();
  const std::int64_t next = saturating_increment(delivered);
  j.result.next_attempts = next;
  if (next >= app_.options_.max_attempts) {
    env.set_attempts(next);
    dead_letter_or_drop(j, env, c, next);
    env.set_attempts(delivered);  // the process span's envelope stays the one delivered
    return;
  }
  // Retry: the same envelope with attempts + 1, nothing else changed (D4), back onto the
  // queue it came from; then ack the original.
  env.set_attempts(next);
  auto body = encode(env);
  const auto& hub = app_.observers_;
  if (!body) {
    env.set_attempts(delivered);
    auto ctx = j.context();
    ctx.error = &body.error();
    hub.log(log_level::error, ctx, [&] {
      return "cannot re-encode for a retry: " + body.error().message + "; releasing it unchanged";
    });
    j.result.outcome = process_outcome::released;
    j.set_settle_error(body.error());
    release(j, {});
    return;
  }
  retry_route route = transport_->route_retry(j.delivery, delivered);
  // A binding that routes its retries (Kafka's tiers) delays them by the route itself;
  // everywhere else the copy waits out the retry policy's backoff on the broker.
  const bool routed = route.queue != j.delivery.queue || !route.hdrs.empty();
  // One draw of the policy (its jitter is random): the delay checked is the delay used.
  const auto backoff = routed ? std::chrono::milliseconds(0) : app_.options_.retry.delay_for(next);
  const auto retried = [&](std::string_view how) {
    j.result.outcome = process_outcome::retried;
    auto ctx = j.context();
    ctx.error = j.result.error;
    hub.log(log_level::info, ctx, [&] {
      return "retrying (attempt " + std::to_string(next) + " of " +
             std::to_string(app_.options_.max_attempts) + std::string(how) +
             "): " + c.error.value_or("");
    });
    notify([&](observer& o) { o.on_retried(j.delivery.queue); });
  };
  if (retries_by_release(backoff)) {
    env.set_attempts(delivered);
    if (release(j, backoff)) {
      note_retry_due(backoff);
      retried(", released with the broker's own delay");
    }
    return;
  }
  const auto delay = deliverable_delay(backoff, j);
  headers hdrs = forwarded_headers(j.delivery);
  for (auto& [k, v] : route.hdrs) hdrs[k] = std::move(v);
  const bool sent =
      forward_then_ack(j, publish_kind::retry, &env, route.queue, *body, hdrs, "retry", delay);
  if (sent) note_retry_due(delay);
  env.set_attempts(delivered);
  if (sent) retried("");
}

void app::worker::dead_letter_or_drop(job& j, envelope& env, const cause& c,
                                      std::int64_t attempts) {
  const auto& hub = app_.observers_;
  j.result.reason = c.reason;
  j.result.next_attempts = attempts;
  auto ctx = j.context();
  ctx.error = j.result.error;
  if (!app_.options_.dead_letter) {
    hub.log(log_level::warn, ctx, [&] {
      return "dropping after " + std::to_string(attempts) + " attempt(s) (" +
             std::string(to_string(c.reason)) + ", dead-lettering is off): " + c.error.value_or("");
    });
    j.result.outcome = process_outcome::dropped;
    if (ack(j)) notify([&](observer& o) { o.on_dropped(j.delivery.queue); });
    return;
  }
  const std::string dlq = app_.dead_letter_queue_for(j.delivery.queue);
  const std::string_view original_queue =
      env.queue().empty() ? std::string_view(j.delivery.queue) : env.queue();
  std::optional<std::string_view> err, exc;
  if (c.error) err = *c.error;
  if (c.exception) exc = *c.exception;
  const envelope annotated = annotate(env, c.reason, original_queue, attempts, err, exc);
  auto body = encode(annotated);
  if (!body) {
    ctx.error = &body.error();
    hub.log(log_level::error, ctx, [&] {
      return "cannot encode the dead-letter copy: " + body.error().message +
             "; releasing it unchanged";
    });
    j.result.outcome = process_outcome::released;
    j.set_settle_error(body.error());
    release(j, {});
    return;
  }
  if (forward_then_ack(j, publish_kind::dead_letter, &annotated, dlq, *body,
                       forwarded_headers(j.delivery), "dead-letter")) {
    j.result.outcome = process_outcome::dead_lettered;
    j.set_dead_letter_queue(dlq);
    hub.log(log_level::warn, ctx, [&] {
      return "dead-lettered to " + in_quotes(dlq) + " (" + std::string(to_string(c.reason)) +
             ", attempts " + std::to_string(attempts) + "): " + c.error.value_or("");
    });
    notify([&](observer& o) { o.on_dead_lettered(dlq, c.reason); });
  }
}

// --- settling --------------------------------------------------------------------------------

bool app::worker::retries_by_release(std::chrono::milliseconds backoff) const {
  // A binding that cannot publish with a delay but releases with one and counts deliveries
  // (an SQS FIFO queue: no per-message DelaySeconds, but ChangeMessageVisibility and
  // ApproximateReceiveCount) retries by releasing the delivery for the backoff: the broker's
  // counter carries attempts + 1 (reconcile_attempts(), D5), where a copy would go back at
  // once and spin through the attempts.
  if (backoff.count() <= 0) return false;
  const auto caps = transport_->capabilities();
  return !caps.delayed_publish && caps.native_delay && caps.delivery_count;
}

void app::worker::note_retry_due(std::chrono::milliseconds delay) {
  // drain() waits for a retry it backed off (it is due on this queue later).
  if (!drain_guard_ || delay.count() <= 0) return;
  const auto due = std::chrono::steady_clock::now() + delay + std::chrono::seconds(1) +
                   transport_->capabilities().delay_granularity;
  if (!retry_due_ || *retry_due_ < due) retry_due_ = due;
}

std::chrono::milliseconds app::worker::deliverable_delay(std::chrono::milliseconds delay,
                                                         const job& j) {
  if (delay.count() <= 0) return std::chrono::milliseconds(0);
  const auto caps = transport_->capabilities();
  if (!caps.delayed_publish) {
    if (!warned_no_delay_) {
      warned_no_delay_ = true;
      app_.observers_.log(log_level::warn, j.context(), [&] {
        return "transport '" + std::string(transport_->scheme()) +
               "' cannot publish with a delay: retries and delayed releases go back at once "
               "(configure its delay support, e.g. Kafka retry tiers)";
      });
    }
    return std::chrono::milliseconds(0);
  }
  if (caps.max_delay.count() > 0 && delay > caps.max_delay) return caps.max_delay;
  return delay;
}

bool app::worker::forward_then_ack(job& j, publish_kind kind, const envelope* env,
                                   std::string_view queue, std::string_view body,
                                   const headers& hdrs, std::string_view what,
                                   std::chrono::milliseconds delay) {
  const auto& hub = app_.observers_;
  auto r = detail::observed_publish(
      hub, kind, queue, env, body, hdrs, transport_->capabilities().headers, &j.delivery,
      [&](const headers& sent) {
        auto first = transport_->publish_delayed(queue, body, sent, delay);
        if (!first && !is_transient(first.code()) && !sent.empty()) {
          // A permanent refusal may come from the out-of-band headers (e.g. a body a frame
          // cannot carry): the body is what must not be lost, so try once without them.
          auto ctx = j.context();
          ctx.error = &first.error();
          hub.log(log_level::warn, ctx, [&] {
            return std::string(what) + " to " + in_quotes(queue) + " refused (" +
                   std::string(first.error().reason()) + "); retrying without headers";
          });
          return transport_->publish_delayed(queue, body, {}, delay);
        }
        return first;
      });
  if (!r) {
    auto ctx = j.context();
    ctx.error = &r.error();
    hub.log(log_level::error, ctx, [&] {
      return std::string(what) + " to " + in_quotes(queue) + " failed (" +
             std::string(r.error().reason()) + ": " + r.error().message +
             "); putting the message back unchanged";
    });
    if (!is_transient(r.code())) {
      // The same message will fail the same way: back off so a permanent failure cannot
      // spin this worker (never ack: the message must not be lost).
      std::this_thread::sleep_for(
          std::min<std::chrono::milliseconds>(app_.options_.poll_timeout, std::chrono::seconds(1)));
    }
    j.result.outcome = process_outcome::released;
    j.set_settle_error(r.error());
    release(j, {});
    return false;
  }
  ack(j);
  return true;
}

bool app::worker::ack(job& j) {
  auto r = transport_->ack(j.delivery);
  if (r) return true;
  // The broker keeps it and redelivers it (at-least-once); nothing else to do here.
  auto ctx = j.context();
  ctx.error = &r.error();
  app_.observers_.log(log_level::error, ctx, [&] {
    return "ack failed (" + std::string(r.error().reason()) + ": " + r.error().message +
           "); the broker may deliver the message again";
  });
  j.unsettled = true;
  j.set_settle_error(r.error());
  return false;
}

bool app::worker::release(job& j, std::chrono::milliseconds delay) {
  const auto& hub = app_.observers_;
  auto r = transport_->release(j.delivery, delay);
  if (!r && r.code() == transport_errc::not_supported && delay.count() > 0) {
    // No delayed release on this binding (Redis, RabbitMQ, Kafka): the same bytes and
    // headers published with the delay, then the original acked — a delayed release in all
    // but the broker's delivery counter.
    const auto later = deliverable_delay(delay, j);
    if (later.count() > 0) {
      const process_outcome outcome = j.result.outcome;
      const bool moved =
          forward_then_ack(j, publish_kind::retry, nullptr, j.delivery.queue, j.delivery.body,
                           forwarded_headers(j.delivery), "delayed release", later);
      if (moved) {
        j.result.outcome = outcome;
        notify([&](observer& o) { o.on_released(j.delivery.queue); });
      }
      return moved;
    }
    r = transport_->release(j.delivery, {});
  }
  if (!r) {
    auto ctx = j.context();
    ctx.error = &r.error();
    hub.log(log_level::error, ctx, [&] {
      return "release failed (" + std::string(r.error().reason()) + ": " + r.error().message +
             "); the broker keeps the message unsettled";
    });
    j.unsettled = true;
    j.set_settle_error(r.error());
    return false;
  }
  notify([&](observer& o) { o.on_released(j.delivery.queue); });
  return true;
}

void app::worker::defer(job& j, std::chrono::milliseconds delay) {
  app_.observers_.log(log_level::debug, j.context(), [&] {
    return "deferred for " + std::to_string(delay.count()) + " ms (not an attempt)";
  });
  j.result.outcome = process_outcome::released;
  const auto later = delay.count() > 0 && transport_->capabilities().delayed_publish
                         ? deliverable_delay(delay, j)
                         : std::chrono::milliseconds(0);
  if (later.count() > 0) {
    // The same bytes and headers as a fresh message (no broker delivery counter grows),
    // then the original acked; if the publish fails the original is released instead.
    if (forward_then_ack(j, publish_kind::retry, nullptr, j.delivery.queue, j.delivery.body,
                         forwarded_headers(j.delivery), "deferral", later)) {
      j.result.outcome = process_outcome::released;
      notify([&](observer& o) { o.on_released(j.delivery.queue); });
    }
    return;
  }
  (void)release(j, delay);
}

void app::worker::release_unseen(const received_message& delivery) {
  job j(delivery, false);
  (void)release(j, {});
}

headers app::worker::forwarded_headers(const received_message& delivery) const {
  if (!transport_->capabilities().headers) return {};
  return delivery.hdrs;
}

// --- message::publish, lifecycle -------------------------------------------------------------

result<std::string> app::worker::publish_continuing(const message& inbound, std::string_view urn,
                                                    const json& data,
                                                    const continue_publish_options& options) {
  BABELQUEUE_TRY_LET(delay, detail::publish_delay(options.delay, options.deliver_at));
  continue_options mo;
  mo.queue = options.queue.empty() ? app_.options_.queue : options.queue;
  auto env = continue_trace(inbound.env(), urn, data, mo);
  if (!env) return fail(env.error());
  BABELQUEUE_TRY_LET(body, encode(*env));
  auto r = detail::observed_publish(
      app_.observers_, publish_kind::message, mo.queue, &*env, *body, options.hdrs,
      transport_->capabilities().headers, &inbound.delivery(), [&](const headers& sent) {
        return transport_->publish_delayed(mo.queue, *body, sent, *delay);
      });
  if (!r) return fail(r.error());
  notify([&](observer& o) { o.on_published(mo.queue); });
  return std::string(env->id());
}

result<void> app::worker::reopen() {
  BABELQUEUE_TRY_LET(fresh, app_.source_());
  close();
  transport_ = std::move(*fresh);
  return {};
}

void app::worker::close() noexcept {
  if (!transport_) return;
  auto r = transport_->close(std::chrono::steady_clock::now() + app_.options_.close_timeout);
  if (!r) {
    detail::log_context ctx;
    ctx.error = &r.error();
    app_.observers_.log(log_level::warn, ctx,
                        [&] { return "closing the transport failed: " + r.error().message; });
  }
}

}  // namespace v1
}  // namespace babelqueue
