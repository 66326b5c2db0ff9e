#pragma once
// The round-trip engine of cluster mode (options::cluster): engine.hpp's loop, with one
// connection per primary and every round sent to the owner of one hash slot.
//
//   connect(deadline): CLUSTER SLOTS from the first seed that answers → the slot map
//   run(op, slot, deadline):
//     node = the slot's owner (connected lazily: AUTH, SCRIPT LOAD, TLS like any connection)
//     → compose, exchange (as engine::run: I/O failure → undo and resend while time remains;
//       NOSCRIPT → reload on that node and resend)
//     → a redirect reply in the round (the command did not run): undo(), then
//         MOVED        the slot's owner is updated, the whole map re-read (rate-limited), resend
//         ASK          resend once on the target, each command preceded by ASKING
//         TRYAGAIN,    (a multi-key script while the slot migrates; the cluster failing over)
//         CLUSTERDOWN  pause briefly and resend while the deadline allows, then unavailable
//       at most k_max_redirects MOVED/ASK per call.
//
// Resending a round is safe because of how the router (router.hpp) builds rounds in cluster
// mode: a round holds settles only (gated), or RPUSHes only, or a reservation ([BLMOVE
// rotation] + one script): no round mixes a command whose repetition matters with one that
// may be declined. The residual case — a publish_batch whose RPUSH chunks straddle a MIGRATE
// of the queue's key — resends chunks that ran: duplicates (at-least-once), never a loss.
//
// Thread-safety: not thread-safe; owned by one redis_transport (one thread at a time).

#include "redis/cluster_topology.hpp"
#include "redis/connection.hpp"
#include "redis/operation.hpp"
#include "redis/request.hpp"

#include <babelqueue/redis/redis_transport.hpp>
#include <babelqueue/result.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace babelqueue::inline v1::redis::detail {

class cluster_engine {
 public:
  /// MOVED/ASK redirects followed in one call before giving up (a map that keeps changing).
  static constexpr int k_max_redirects = 16;
  /// Pause before resending after TRYAGAIN/CLUSTERDOWN.
  static constexpr std::chrono::milliseconds k_retry_pause{20};
  /// Minimum interval between two reads of the whole slot map.
  static constexpr std::chrono::milliseconds k_refresh_interval{100};

  cluster_engine(const options& opts, script_set scripts);
  ~cluster_engine();

  /// Reads the slot map from the first seed that answers (each seed gets a share of the time
  /// left). transport_errc::unavailable when none answers; invalid_argument when a node says
  /// it is not in cluster mode.
  result<void> connect(clock::time_point deadline);

  /// Runs `op` on the owner of `slot` until done or `deadline` passes (see the file comment).
  /// `opportunistic`: only over a connection that is up, one attempt, no reconnect — for work
  /// done on the side of another call (other queues' deferred acks), which must not wait for
  /// a node that is down; transport_errc::unavailable otherwise (the work stays to be done).
  result<void> run(operation& op, std::uint16_t slot, clock::time_point deadline,
                   bool opportunistic = false);

  bool connected() const noexcept;
  void disconnect(const std::string& why);
  std::int64_t reconnects() const noexcept;
  std::int64_t round_trips() const noexcept;
  /// The address of the node the map says owns `slot` (tests, errors); empty when unknown.
  std::string owner_of(std::uint16_t slot) const;

  std::int64_t redirects = 0;  ///< rounds declined by a node (MOVED/ASK/TRYAGAIN/CLUSTERDOWN)

 private:
  struct node;
  node& node_at(const node_endpoint& address);
  // Reads CLUSTER SLOTS on `n` (connecting it within `deadline`) and applies it.
  result<void> refresh_from(node& n, clock::time_point deadline);
  // A map refresh after a MOVED, from `n`, at most once per k_refresh_interval.
  void refresh_soon(node& n, clock::time_point deadline);

  const options& opts_;
  script_set scripts_;
  std::vector<std::unique_ptr<node>> nodes_;
  std::vector<node*> owner_;  // by slot; nullptr = unknown
  clock::time_point last_refresh_{};
  request req_;
  request asking_req_;
};

}  // namespace babelqueue::inline v1::redis::detail
