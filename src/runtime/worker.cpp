// The per-message algorithm of decision D5 / wire-core §5.6 (see app.hpp for the rules).
#include "runtime/worker.hpp"

#include "runtime/failure_cause.hpp"

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

std::int64_t saturating_increment(std::int64_t n) {
  return n == std::numeric_limits<std::int64_t>::max() ? n : n + 1;
}

}  // namespace

result<bool> app::worker::poll_once(std::string_view queue) {
  auto got = transport_->receive(queue, app_.options_.poll_timeout);
  if (!got) return fail(got.error());
  if (!*got) return false;
  if (drain_guard_ && !released_.empty() &&
      released_.count(std::hash<std::string>{}((*got)->body)) != 0) {
    release(**got, {});  // seen in this drain already: leave it for a consumer that knows it
    return false;
  }
  dispatch(**got);
  return true;
}

void app::worker::dispatch(const received_message& delivery) noexcept {
  try {
    dispatch_impl(delivery);
  } catch (...) {
    // Only allocation failures can get here (handlers are caught in dispatch_impl). Leave
    // the delivery unsettled: the broker returns it (at-least-once), the loop goes on.
    app_.log(log_level::error, "internal error while dispatching a message from '" +
                                   delivery.queue + "': " + detail::current_failure_cause().error);
  }
}

void app::worker::dispatch_impl(const received_message& delivery) {
  notify([&](metrics& m) { m.on_consumed(delivery.queue); });

  // 1. The accept gate (D3), before any routing.
  decode_options gate;
  gate.max_bytes = app_.options_.max_body_bytes;
  gate.on_warning = [&](std::string_view w) {
    app_.log(log_level::warn, "queue '" + delivery.queue + "': " + std::string(w));
  };
  auto decoded = decode(std::string_view(delivery.body), gate);
  if (!decoded) {
    poison(delivery, decoded.error());
    return;
  }
  envelope env = std::move(*decoded);

  // 2. Reconcile with the broker's native delivery counter (pure, per binding).
  const auto attempts = transport_->reconcile_attempts(env.attempts(), delivery);
  if (attempts != env.attempts()) env.set_attempts(attempts);

  // 3. Route.
  auto fn = app_.find_handler(env.urn());
  if (!fn) {
    unknown_urn(delivery, env);
    return;
  }
  std::optional<detail::failure_cause> failure;
  const auto started = std::chrono::steady_clock::now();
  {
    message msg(delivery, env, this);
    try {
      (*fn)(msg);
    } catch (...) {
      failure = detail::current_failure_cause();
    }
  }
  const auto latency = std::chrono::steady_clock::now() - started;
  notify([&](metrics& m) {
    m.on_handled(env.urn(), std::chrono::duration_cast<std::chrono::nanoseconds>(latency),
                 !failure);
  });
  if (!failure) {
    ack(delivery);
    notify([&](metrics& m) { m.on_acked(delivery.queue); });
    return;
  }
  // 4. Failure path.
  failed(
      delivery, env,
      cause{dead_letter_reason::failed, std::move(failure->error), std::move(failure->exception)});
}

void app::worker::poison(const received_message& delivery, const error_info& why) {
  notify([&](metrics& m) { m.on_rejected(delivery.queue, why.code); });
  const std::string what = std::string(why.reason()) + ": " + why.message;
  if (!app_.options_.dead_letter) {
    app_.log(log_level::warn, "dropping a rejected message from '" + delivery.queue +
                                  "' (dead-lettering is off): " + what);
    ack(delivery);
    notify([&](metrics& m) { m.on_dropped(delivery.queue); });
    return;
  }
  const std::string dlq = app_.dead_letter_queue_for(delivery.queue);
  headers hdrs = forwarded_headers(delivery);
  if (transport_->capabilities().headers) {
    hdrs[std::string(poison_reason_header)] = std::string(to_string(dead_letter_reason::poison));
    hdrs[std::string(poison_error_header)] = std::string(why.reason());
  }
  // The ORIGINAL bytes, unchanged: a message we cannot understand is never rewritten (D5).
  if (forward_then_ack(delivery, dlq, delivery.body, hdrs, "dead-letter a rejected message")) {
    app_.log(log_level::warn, "dead-lettered a rejected message from '" + delivery.queue +
                                  "' to '" + dlq + "' unchanged: " + what);
    notify([&](metrics& m) { m.on_dead_lettered(dlq, dead_letter_reason::poison); });
  }
}

void app::worker::unknown_urn(const received_message& delivery, envelope& env) {
  switch (app_.options_.on_unknown_urn) {
    case unknown_urn_strategy::fail:
      failed(delivery, env,
             cause{dead_letter_reason::unknown_urn,
                   "no handler is mapped for the message URN: \"" + std::string(env.urn()) + "\"",
                   std::string("babelqueue::unknown_urn")});
      return;
    case unknown_urn_strategy::del:
      app_.log(log_level::info, "deleting " + describe(delivery, &env) + ": no handler");
      ack(delivery);
      notify([&](metrics& m) { m.on_dropped(delivery.queue); });
      return;
    case unknown_urn_strategy::release:
      app_.log(log_level::debug, "releasing " + describe(delivery, &env) +
                                     " unchanged: no handler (strategy release)");
      if (drain_guard_) released_.insert(std::hash<std::string>{}(delivery.body));
      release(delivery, app_.options_.unknown_urn_release_delay);
      return;
    case unknown_urn_strategy::dead_letter:
      if (!app_.options_.dead_letter) {
        app_.log(log_level::info, "deleting " + describe(delivery, &env) +
                                      ": no handler (strategy dead_letter, dead-lettering off)");
        ack(delivery);
        notify([&](metrics& m) { m.on_dropped(delivery.queue); });
        return;
      }
      // Current attempts, null cause (Go/Python, wire-core §4.2).
      dead_letter_or_drop(delivery, env, cause{dead_letter_reason::unknown_urn, {}, {}},
                          env.attempts());
      return;
  }
}

void app::worker::failed(const received_message& delivery, envelope& env, const cause& c) {
  const std::int64_t next = saturating_increment(env.attempts());
  env.set_attempts(next);
  if (next >= app_.options_.max_attempts) {
    dead_letter_or_drop(delivery, env, c, next);
    return;
  }
  // Retry: the same envelope with attempts + 1, nothing else changed (D4), back onto the
  // queue it came from; then ack the original.
  auto body = encode(env);
  if (!body) {
    app_.log(log_level::error, "cannot re-encode " + describe(delivery, &env) + " for a retry: " +
                                   body.error().message + "; releasing it unchanged");
    release(delivery, {});
    return;
  }
  if (forward_then_ack(delivery, delivery.queue, *body, forwarded_headers(delivery), "retry")) {
    app_.log(log_level::info,
             "retrying " + describe(delivery, &env) + " (attempt " + std::to_string(next) + " of " +
                 std::to_string(app_.options_.max_attempts) + "): " + c.error.value_or(""));
    notify([&](metrics& m) { m.on_retried(delivery.queue); });
  }
}

void app::worker::dead_letter_or_drop(const received_message& delivery, envelope& env,
                                      const cause& c, std::int64_t attempts) {
  const auto reason_text = std::string(to_string(c.reason));
  if (!app_.options_.dead_letter) {
    app_.log(log_level::warn, "dropping " + describe(delivery, &env) + " after " +
                                  std::to_string(attempts) + " attempt(s) (" + reason_text +
                                  ", dead-lettering is off): " + c.error.value_or(""));
    ack(delivery);
    notify([&](metrics& m) { m.on_dropped(delivery.queue); });
    return;
  }
  const std::string dlq = app_.dead_letter_queue_for(delivery.queue);
  const std::string_view original_queue =
      env.queue().empty() ? std::string_view(delivery.queue) : env.queue();
  std::optional<std::string_view> err, exc;
  if (c.error) err = *c.error;
  if (c.exception) exc = *c.exception;
  const envelope annotated = annotate(env, c.reason, original_queue, attempts, err, exc);
  auto body = encode(annotated);
  if (!body) {
    app_.log(log_level::error, "cannot encode the dead-letter copy of " + describe(delivery, &env) +
                                   ": " + body.error().message + "; releasing it unchanged");
    release(delivery, {});
    return;
  }
  if (forward_then_ack(delivery, dlq, *body, forwarded_headers(delivery), "dead-letter")) {
    app_.log(log_level::warn, "dead-lettered " + describe(delivery, &env) + " to '" + dlq + "' (" +
                                  reason_text + ", attempts " + std::to_string(attempts) +
                                  "): " + c.error.value_or(""));
    notify([&](metrics& m) { m.on_dead_lettered(dlq, c.reason); });
  }
}

bool app::worker::forward_then_ack(const received_message& delivery, std::string_view queue,
                                   std::string_view body, const headers& hdrs,
                                   std::string_view what) {
  auto r = transport_->publish(queue, body, hdrs);
  const auto transient = [](errc code) {
    return code == errc::transport || code == errc::timeout || code == errc::closed || code == errc::io;
  };
  if (!r && !transient(r.code()) && !hdrs.empty()) {
    // A permanent refusal may come from the out-of-band headers (e.g. a body a frame cannot
    // carry): the body is what must not be lost, so try once without them.
    app_.log(log_level::warn, std::string(what) + " to '" + std::string(queue) + "' refused (" +
                                  std::string(r.error().reason()) + "); retrying without headers");
    r = transport_->publish(queue, body, {});
  }
  if (!r) {
    app_.log(log_level::error, std::string(what) + " to '" + std::string(queue) + "' failed (" +
                                   std::string(r.error().reason()) + ": " + r.error().message +
                                   "); putting the message back on '" + delivery.queue +
                                   "' unchanged");
    if (!transient(r.code())) {
      // The same message will fail the same way: back off so a permanent failure cannot
      // spin this worker (never ack: the message must not be lost).
      std::this_thread::sleep_for(std::min<std::chrono::milliseconds>(app_.options_.poll_timeout,
                                                                       std::chrono::seconds(1)));
    }
    release(delivery, {});
    return false;
  }
  ack(delivery);
  return true;
}

void app::worker::ack(const received_message& delivery) {
  if (auto r = transport_->ack(delivery); !r) {
    // The broker keeps it and redelivers it (at-least-once); nothing else to do here.
    app_.log(log_level::error, "ack on '" + delivery.queue + "' failed (" +
                                   std::string(r.error().reason()) + ": " + r.error().message +
                                   "); the broker may deliver the message again");
  }
}

void app::worker::release(const received_message& delivery, std::chrono::milliseconds delay) {
  auto r = transport_->release(delivery, delay);
  if (!r && r.code() == errc::not_supported && delay.count() > 0) {
    app_.log(log_level::warn, "transport '" + std::string(transport_->scheme()) +
                                  "' cannot delay a release; releasing at once");
    r = transport_->release(delivery, {});
  }
  if (!r) {
    app_.log(log_level::error, "release on '" + delivery.queue + "' failed (" +
                                   std::string(r.error().reason()) + ": " + r.error().message +
                                   "); the broker keeps the message unsettled");
    return;
  }
  notify([&](metrics& m) { m.on_released(delivery.queue); });
}

headers app::worker::forwarded_headers(const received_message& delivery) const {
  if (!transport_->capabilities().headers) return {};
  return delivery.hdrs;
}

std::string app::worker::describe(const received_message& delivery, const envelope* env) const {
  std::string out = "message";
  if (env != nullptr) {
    out += " " + std::string(env->urn());
    if (!env->id().empty()) out += " id=" + std::string(env->id());
  }
  out += " from '" + delivery.queue + "'";
  return out;
}

result<std::string> app::worker::publish_continuing(const message& inbound, std::string_view urn,
                                                    const json& data,
                                                    const continue_publish_options& options) {
  continue_options mo;
  mo.queue = options.queue.empty() ? app_.options_.queue : options.queue;
  auto env = continue_trace(inbound.env(), urn, data, mo);
  if (!env) return fail(env.error());
  auto body = encode(*env);
  if (!body) return fail(body.error());
  if (auto r = transport_->publish(mo.queue, *body, options.hdrs); !r) return fail(r.error());
  notify([&](metrics& m) { m.on_published(mo.queue); });
  return std::string(env->id());
}

result<void> app::worker::reopen() {
  auto fresh = app_.source_();
  if (!fresh) return fail(fresh.error());
  close();
  transport_ = std::move(*fresh);
  return {};
}

void app::worker::close() noexcept {
  if (!transport_) return;
  auto r = transport_->close(std::chrono::steady_clock::now() + app_.options_.close_timeout);
  if (!r) {
    app_.log(log_level::warn, "closing the transport failed: " + r.error().message);
  }
}

}  // namespace v1
}  // namespace babelqueue
