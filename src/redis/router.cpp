#include "redis/router.hpp"

#include "core/propagate.hpp"
#include "redis/cluster_slot.hpp"
#include "redis/operations.hpp"

#include <babelqueue/bindings/redis.hpp>
#include <babelqueue/runtime/error.hpp>

#include <algorithm>

namespace babelqueue::inline v1::redis::detail {

namespace binding = babelqueue::bindings::redis;

result<std::uint16_t> queue_slot(std::string_view queue, std::string_view suffix) {
  const std::string processing = binding::processing_key(queue, suffix);
  const std::string deadlines = binding::deadlines_key(queue, suffix);
  const std::string scheduled = scheduled_key(queue);
  const auto slot = key_slot(queue);
  const auto processing_slot = key_slot(processing);
  const auto deadlines_slot = key_slot(deadlines);
  const auto scheduled_slot = key_slot(scheduled);
  if (slot == processing_slot && slot == deadlines_slot && slot == scheduled_slot) return slot;
  const std::string q(queue);
  return fail(transport_errc::invalid_argument,
              "redis cluster: the keys of queue '" + q + "' are in different hash slots ('" + q +
                  "' " + std::to_string(slot) + ", '" + processing + "' " +
                  std::to_string(processing_slot) + ", '" + deadlines + "' " +
                  std::to_string(deadlines_slot) + ", '" + scheduled + "' " +
                  std::to_string(scheduled_slot) +
                  "), so its scripts cannot run on a cluster; put a hash tag in the queue name, "
                  "e.g. '{" +
                  q + "}', so that all of them hash to one slot");
}

result<std::uint16_t> laravel_queue_slot(std::string_view queue, std::string_view prefix) {
  const auto k = binding::laravel_keys_of(queue, prefix);
  const auto slot = key_slot(k.ready);
  if (key_slot(k.reserved) == slot && key_slot(k.delayed) == slot && key_slot(k.notify) == slot)
    return slot;
  return fail(transport_errc::invalid_argument,
              "redis cluster: the Laravel keys of queue '" + std::string(queue) + "' ('" + k.ready +
                  "' slot " + std::to_string(slot) + ", '" + k.reserved + "' " +
                  std::to_string(key_slot(k.reserved)) + ", '" + k.delayed + "' " +
                  std::to_string(key_slot(k.delayed)) + ", '" + k.notify + "' " +
                  std::to_string(key_slot(k.notify)) +
                  ") are in different hash slots, so Laravel's scripts cannot run on a cluster; "
                  "put a hash tag in the queue name, e.g. '{" +
                  std::string(queue) + "}' (Laravel: queues:{" + std::string(queue) +
                  "}), or in the prefix");
}

router::router(const options& opts, transport_state& state, script_set scripts,
               laravel_context* laravel)
    : opts_(opts), state_(state), laravel_(laravel), single_(opts, scripts) {
  if (opts.cluster) cluster_ = std::make_unique<cluster_engine>(opts, std::move(scripts));
}

std::string router::endpoint() const {
  if (!cluster_) return single_.endpoint();
  return opts_.host + ":" + std::to_string(opts_.port);
}

result<void> router::connect(clock::time_point deadline) {
  if (!cluster_) return single_.connect(deadline);
  return cluster_->connect(deadline);
}

result<std::uint16_t> router::checked_slot(std::string_view queue) {
  if (!checked_queue_.empty() && checked_queue_ == queue) return checked_slot_;
  auto slot = opts_.laravel ? laravel_queue_slot(queue, opts_.prefix)
                            : queue_slot(queue, opts_.processing_suffix);
  if (!slot) return slot;
  checked_queue_.assign(queue);
  checked_slot_ = *slot;
  return slot;
}

std::uint16_t router::slot_of(std::string_view queue) const {
  if (!opts_.laravel) return key_slot(queue);
  std::string ready(opts_.prefix);
  ready.append(queue);
  return key_slot(ready);
}

template <class Keep>
result<void> router::settle_except(Keep keep, clock::time_point deadline, bool opportunistic) {
  auto& pending = state_.pending;
  if (std::all_of(pending.begin(), pending.end(), keep)) return {};
  std::vector<reservation_ptr> rest;
  rest.swap(pending);
  std::vector<reservation_ptr> kept, unsettled;
  result<void> out;
  while (!rest.empty()) {
    if (keep(rest.front())) {
      kept.push_back(std::move(rest.front()));
      rest.erase(rest.begin());
      continue;
    }
    // The deferred acks of one slot (their queues passed the slot check when received).
    const auto slot = slot_of(rest.front()->queue);
    auto of_slot = [&](const reservation_ptr& r) { return !keep(r) && slot_of(r->queue) == slot; };
    pending.clear();
    std::copy_if(rest.begin(), rest.end(), std::back_inserter(pending), of_slot);
    std::erase_if(rest, of_slot);
    result<void> r;
    if (laravel_ != nullptr) {
      laravel_settle_op op(*laravel_);
      r = cluster_->run(op, slot, deadline, opportunistic);
    } else {
      settle_op op(state_);
      r = cluster_->run(op, slot, deadline, opportunistic);
    }
    // What a failed round gave back stays deferred (retried by the next flush).
    unsettled.insert(unsettled.end(), pending.begin(), pending.end());
    pending.clear();
    if (!r && out) out = r;
  }
  pending = std::move(kept);
  pending.insert(pending.end(), unsettled.begin(), unsettled.end());
  return out;
}

template <class Keep>
result<void> router::run_on_slot(operation& op, std::uint16_t slot, Keep keep,
                                 clock::time_point deadline) {
  // An ack that cannot be settled now (its node is down) stays deferred, and is held out of
  // this call's round (which goes to another node); the call itself goes on, without
  // waiting for a node that is down (opportunistic: over live connections, one attempt).
  (void)settle_except(keep, deadline, /*opportunistic=*/true);
  auto& pending = state_.pending;
  if (std::all_of(pending.begin(), pending.end(), keep)) return cluster_->run(op, slot, deadline);
  std::vector<reservation_ptr> held;
  for (auto& r : pending) {
    if (!keep(r)) held.push_back(std::move(r));
  }
  std::erase(pending, nullptr);
  auto out = cluster_->run(op, slot, deadline);
  pending.insert(pending.end(), held.begin(), held.end());
  return out;
}

result<void> router::run_queue(operation& op, std::string_view queue, clock::time_point deadline) {
  if (!cluster_) return single_.run(op, deadline);
  BABELQUEUE_TRY_LET(slot, checked_slot(queue));
  return run_on_slot(
      op, *slot, [](const reservation_ptr&) { return false; }, deadline);
}

result<void> router::run_receive(operation& op, std::string_view queue,
                                 clock::time_point deadline) {
  if (!cluster_) return single_.run(op, deadline);
  BABELQUEUE_TRY_LET(slot, checked_slot(queue));
  // The acks the reservation merges into its reserving script ride along: the owned layout's
  // tracked ones of this queue (operations.cpp), every one of this queue in Laravel's
  // (laravel_operations.cpp).
  const bool tracked = opts_.track_reservations;
  const bool laravel = opts_.laravel;
  auto merged = [&](const reservation_ptr& r) {
    return r->queue == queue && (laravel || (tracked && !r->token.empty()));
  };
  return run_on_slot(op, *slot, merged, deadline);
}

result<void> router::run_key(operation& op, std::string_view key, clock::time_point deadline) {
  if (!cluster_) return single_.run(op, deadline);
  return cluster_->run(op, key_slot(key), deadline);
}

result<void> router::run_settles(operation& op, clock::time_point deadline) {
  if (!cluster_) return single_.run(op, deadline);
  // The caller's settle_op is not run as such: the acks are settled per slot, each group by
  // a settle_op of its own on its owner.
  auto keep_none = [](const reservation_ptr&) { return false; };
  return settle_except(keep_none, deadline, /*opportunistic=*/false);
}

bool router::connected() const noexcept {
  return cluster_ ? cluster_->connected() : single_.connected();
}

void router::disconnect(std::string why) {
  if (cluster_) {
    cluster_->disconnect(why);
  } else {
    single_.disconnect(std::move(why));
  }
}

std::int64_t router::reconnects() const noexcept {
  return cluster_ ? cluster_->reconnects() : single_.reconnects();
}

std::int64_t router::round_trips() const noexcept {
  return cluster_ ? cluster_->round_trips() : single_.round_trips();
}

}  // namespace babelqueue::inline v1::redis::detail
