#pragma once
// Where a transport call's round trips go: the one connection of engine.hpp (the default),
// or — with options::cluster — the owner of the hash slot of the call's queue
// (cluster_engine.hpp). In single-node mode every run_*() is engine::run() and nothing else:
// cluster support costs that path one branch.
//
// Cluster mode adds, before anything is sent:
//   - the slot check: a queue whose keys (<q>, <q>:processing, <q>:processing:deadlines) do
//     not share one hash slot cannot be served (its scripts would fail with CROSSSLOT):
//     transport_errc::invalid_argument naming the slots and the hash-tag fix;
//   - the deferred acks (pipeline_acks) that the call's round cannot carry are settled
//     first, one settle round per slot on that slot's owner — opportunistically (live
//     connections, one attempt: a call never waits for another queue's node); the rest
//     stays deferred for flush(), which reconnects and reports. A round in cluster mode goes to
//     one node and must not mix commands that may be declined (MOVED/ASK/TRYAGAIN) with
//     commands whose repetition matters (cluster_engine.hpp), so the only acks that still
//     ride along are those a receive merges into its own reserving script (same queue,
//     tracked): the one-round-trip-per-message consume loop is kept, a publish after acks
//     costs one more round trip than in single-node mode.
//
// Thread-safety: not thread-safe; owned by one redis_transport (one thread at a time).

#include "redis/cluster_engine.hpp"
#include "redis/engine.hpp"
#include "redis/laravel_operations.hpp"
#include "redis/operations.hpp"

#include <babelqueue/redis/redis_transport.hpp>
#include <babelqueue/result.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace babelqueue::inline v1::redis::detail {

/// transport_errc::invalid_argument when the keys of `queue` are not in one hash slot
/// (`suffix` = options::processing_suffix); otherwise their slot.
result<std::uint16_t> queue_slot(std::string_view queue, std::string_view suffix);
/// The same for the four keys of the Laravel layout (`<prefix><queue>`, `:reserved`,
/// `:delayed`, `:notify`).
result<std::uint16_t> laravel_queue_slot(std::string_view queue, std::string_view prefix);

class router {
 public:
  /// `laravel` (laravel=1 only; may be under construction, it is only kept): the layout whose
  /// settle operation the per-slot settle rounds use.
  router(const options& opts, transport_state& state, script_set scripts,
         laravel_context* laravel = nullptr);

  /// Connects now (open()): the one connection, or the cluster's slot map.
  result<void> connect(clock::time_point deadline);

  /// A call on `queue` that carries no deferred acks of its own (publish, release, unreserve,
  /// recover, peek): in cluster mode, the slot check and every deferred ack settled first.
  result<void> run_queue(operation& op, std::string_view queue, clock::time_point deadline);
  /// receive(): like run_queue(), but the acks the reservation merges into its script stay.
  result<void> run_receive(operation& op, std::string_view queue, clock::time_point deadline);
  /// A call on one key (list_length): routed by the key's slot, no queue check.
  result<void> run_key(operation& op, std::string_view key, clock::time_point deadline);
  /// A settle_op over the deferred acks: in cluster mode one round per slot.
  result<void> run_settles(operation& op, clock::time_point deadline);

  bool connected() const noexcept;
  /// host:port of the connection (single-node / Sentinel), or the first seed (cluster).
  std::string endpoint() const;
  void disconnect(std::string why);
  std::int64_t reconnects() const noexcept;
  std::int64_t round_trips() const noexcept;
  std::int64_t redirects() const noexcept { return cluster_ ? cluster_->redirects : 0; }

 private:
  // Cluster mode: settles every deferred ack for which `keep` is false, per slot.
  // `opportunistic`: over live connections only, one attempt (cluster_engine::run()); what
  // cannot be settled so stays deferred.
  template <class Keep>
  result<void> settle_except(Keep keep, clock::time_point deadline, bool opportunistic);
  // Cluster mode: settles the acks `keep` rejects, then runs `op` on `slot` with only the
  // kept ones deferred.
  template <class Keep>
  result<void> run_on_slot(operation& op, std::uint16_t slot, Keep keep,
                           clock::time_point deadline);
  result<std::uint16_t> checked_slot(std::string_view queue);
  // The slot of the keys of `queue` (that passed the check) in this transport's layout.
  std::uint16_t slot_of(std::string_view queue) const;

  const options& opts_;
  transport_state& state_;
  laravel_context* laravel_;
  engine single_;
  std::unique_ptr<cluster_engine> cluster_;  // set in cluster mode
  std::string checked_queue_;                // the last queue that passed the slot check
  std::uint16_t checked_slot_ = 0;
};

}  // namespace babelqueue::inline v1::redis::detail
