// redrive(): drain the DLQ, then process each taken message in order (redrive.hpp).
#include "core/propagate.hpp"

#include <babelqueue/codec.hpp>
#include <babelqueue/dead_letter.hpp>
#include <babelqueue/redrive/redrive.hpp>
#include <babelqueue/runtime/error.hpp>

#include <algorithm>
#include <utility>

namespace babelqueue::inline v1 {
namespace {

// The W3C trace context travels on with the re-published message; nothing else of the DLQ
// delivery's headers does (a binding's own projection headers must not leak into the copy).
constexpr std::string_view carried_headers[] = {"traceparent", "tracestate"};

struct taken {
  received_message delivery;
  std::optional<envelope> env;  // nullopt: undecodable
  std::string decode_error;
};

struct run_state {
  transport& broker;
  std::string_view dlq;
  const redrive_options& options;
  redrive_report report;
  redrive_progress progress;
  std::string run_token;  // redrive_header's value: this run's start, Unix ms
};

// The work queue a DLQ belongs to: its name without the `.dlq` suffix ("" when it has none).
std::string work_queue_of(std::string_view dlq) {
  if (dlq.size() <= dead_letter_suffix.size() || !dlq.ends_with(dead_letter_suffix)) return {};
  return std::string(dlq.substr(0, dlq.size() - dead_letter_suffix.size()));
}

void stop(run_state& s, const error_info& e) {
  if (!s.report.error) s.report.error = e;
}

// Gives a taken message back to the DLQ unchanged; a failure stops the run (the delivery
// stays in flight, where the broker's own recovery returns it: visibility timeout, Redis
// recover(), a closing memory transport).
void put_back(run_state& s, const taken& t, redrive_item& item) {
  if (auto r = s.broker.release(t.delivery); !r) {
    item.detail +=
        (item.detail.empty() ? "" : "; ") + std::string("put back failed: ") + r.error().message;
    stop(s, r.error());
  }
}

std::string target_of(const redrive_options& options, const envelope& env) {
  if (!options.to_queue.empty()) return options.to_queue;
  if (auto dl = env.dead_letter(); dl && !dl->original_queue.empty()) return dl->original_queue;
  return std::string(env.queue());
}

// Why the target a message names may not be used ("" when it may): it must be the queue the
// DLQ belongs to or an allowed one, unless the operator chose the target (to_queue) or
// lifted the rule.
std::string refusal(const run_state& s, const std::string& target) {
  const redrive_options& o = s.options;
  if (!o.to_queue.empty() || o.allow_any_target) return {};
  const std::string own = work_queue_of(s.dlq);
  if (target == own || std::find(o.allowed_queues.begin(), o.allowed_queues.end(), target) !=
                           o.allowed_queues.end()) {
    return {};
  }
  return "the message names queue '" + target + "', " +
         (own.empty() ? std::string("and the DLQ's name does not say its queue")
                      : "not '" + own + "' the DLQ belongs to") +
         ": redrive it with to_queue, or allow the queue (allowed_queues)";
}

headers headers_for(const run_state& s, const taken& t, bool& bypassed) {
  headers out;
  bypassed = false;
  if (!s.broker.capabilities().headers) return out;
  for (auto name : carried_headers) {
    if (auto it = t.delivery.hdrs.find(name); it != t.delivery.hdrs.end()) out.emplace(*it);
  }
  if (s.options.bypass) {
    out.insert_or_assign(std::string(replay_bypass_header), std::string(replay_bypass_value));
    bypassed = true;
  }
  out.insert_or_assign(std::string(redrive_header), s.run_token);
  return out;
}

// Fills the item's description (id, trace, URN, dead_letter reason and error).
void describe(const run_state& s, const taken& t, redrive_item& item) {
  item.from = std::string(s.dlq);
  if (!t.env) return;
  item.id = std::string(t.env->id());
  item.trace_id = std::string(t.env->trace_id());
  item.urn = std::string(t.env->urn());
  if (auto dl = t.env->dead_letter()) {
    item.reason = dl->reason;
    item.error = dl->error.value_or("");
  }
}

void process(run_state& s, taken& t, redrive_item& item) {
  describe(s, t, item);
  if (!t.env) {
    item.outcome = redrive_outcome::undecodable;
    item.detail = t.decode_error;
    ++s.report.skipped;
    put_back(s, t, item);
    return;
  }
  const envelope& env = *t.env;
  if (s.options.select && !s.options.select(env)) {
    item.outcome = redrive_outcome::unselected;
    ++s.report.skipped;
    put_back(s, t, item);
    return;
  }
  item.to = target_of(s.options, env);
  if (item.to.empty()) {
    item.outcome = redrive_outcome::no_target;
    item.detail = "no target queue: no to_queue, dead_letter.original_queue or meta.queue";
    ++s.report.skipped;
    put_back(s, t, item);
    return;
  }
  if (auto why = refusal(s, item.to); !why.empty()) {
    item.outcome = redrive_outcome::refused_target;
    item.detail = std::move(why);
    ++s.report.skipped;
    put_back(s, t, item);
    return;
  }
  if (s.options.dry_run) {
    item.outcome = redrive_outcome::dry_run;
    ++s.report.skipped;
    put_back(s, t, item);
    return;
  }
  envelope reset = env;
  reset.clear_dead_letter();
  reset.set_attempts(0);
  auto body = encode(reset);
  if (!body) {
    item.outcome = redrive_outcome::failed;
    item.detail = "re-encoding failed: " + body.error().message;
    stop(s, body.error());
    put_back(s, t, item);
    return;
  }
  bool bypassed = false;
  const headers hdrs = headers_for(s, t, bypassed);
  if (auto r = s.broker.publish(item.to, *body, hdrs); !r) {
    item.outcome = redrive_outcome::failed;
    item.detail = "publish to " + item.to + " failed: " + r.error().message;
    stop(s, r.error());
    put_back(s, t, item);
    return;
  }
  item.outcome = redrive_outcome::redriven;
  item.redriven = true;
  item.bypassed = bypassed;
  ++s.report.redriven;
  if (auto r = s.broker.ack(t.delivery); !r) {
    // Published but still in the DLQ: it will be redriven again (at-least-once; consumers
    // dedupe on meta.id). Stop: the connection is probably gone.
    item.detail = "acking the DLQ message failed (it may be redriven again): " + r.error().message;
    stop(s, r.error());
  }
}

}  // namespace

std::string_view to_string(redrive_outcome outcome) noexcept {
  switch (outcome) {
    case redrive_outcome::redriven:
      return "redriven";
    case redrive_outcome::dry_run:
      return "dry_run";
    case redrive_outcome::unselected:
      return "unselected";
    case redrive_outcome::undecodable:
      return "undecodable";
    case redrive_outcome::no_target:
      return "no_target";
    case redrive_outcome::refused_target:
      return "refused_target";
    case redrive_outcome::not_processed:
      return "not_processed";
    case redrive_outcome::failed:
      return "failed";
  }
  return "unknown";
}

result<std::string> reset_for_redrive(std::string_view dead_lettered_body) {
  BABELQUEUE_TRY_LET(env, decode(dead_lettered_body));
  env->clear_dead_letter();
  env->set_attempts(0);
  return encode(*env);
}

redrive_report redrive(transport& broker, std::string_view dlq, const redrive_options& options) {
  run_state s{broker, dlq, options, {}, {}, std::to_string(unix_millis())};
  if (dlq.empty()) {
    s.report.error = error_info(make_error_code(transport_errc::invalid_argument),
                                "redrive: empty dead-letter queue name");
    return s.report;
  }
  // 1. Drain first: messages put back later must not be taken again in this run.
  std::vector<taken> batch;
  while (options.max == 0 || batch.size() < options.max) {
    auto got = broker.receive(dlq, options.receive_timeout);
    if (!got) {
      stop(s, got.error());
      break;
    }
    if (!*got) break;
    taken t{std::move(**got), std::nullopt, {}};
    if (auto env = decode(t.delivery.body)) {
      t.env = std::move(*env);
    } else {
      t.decode_error = std::string(env.error().reason()) + ": " + env.error().message;
    }
    batch.push_back(std::move(t));
  }
  s.progress.taken = batch.size();
  s.report.items.resize(batch.size());
  // 2. Process in order; after a failure, everything not yet processed goes back untouched.
  for (std::size_t i = 0; i < batch.size(); ++i) {
    redrive_item& item = s.report.items[i];
    if (s.report.error) {
      describe(s, batch[i], item);
      item.outcome = redrive_outcome::not_processed;
      put_back(s, batch[i], item);
      continue;
    }
    process(s, batch[i], item);
    ++s.progress.processed;
    s.progress.redriven = s.report.redriven;
    s.progress.skipped = s.report.skipped;
    if (options.on_progress) options.on_progress(s.progress);
  }
  return s.report;
}

}  // namespace babelqueue::inline v1
