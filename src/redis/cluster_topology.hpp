#pragma once
// What a Redis Cluster says about where slots live, sans-I/O: the redirect replies a node
// answers instead of running a command (MOVED, ASK, TRYAGAIN, CLUSTERDOWN), and the
// CLUSTER SLOTS reply that maps every slot range to its primary. cluster_engine.hpp acts on
// them; this file only reads them.
//
// Thread-safety: pure functions and value types.

#include "redis/operation.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace babelqueue::inline v1::redis::detail {

/// A node's address; an empty host in a redirect means "the host you asked".
struct node_endpoint {
  std::string host;
  std::uint16_t port = 0;
  bool operator==(const node_endpoint&) const = default;
};

struct cluster_redirect {
  enum class kind {
    moved,         ///< `MOVED <slot> <host:port>`: the slot lives there now
    ask,           ///< `ASK <slot> <host:port>`: this one command, there, after ASKING
    try_again,     ///< `TRYAGAIN` (a multi-key command during a migration), or a script
                   ///< stopped on a non-local key (ditto): retry shortly
    cluster_down,  ///< `CLUSTERDOWN`: the cluster cannot serve the slot; retry shortly
  };
  enum kind what = kind::try_again;
  std::uint16_t slot = 0;
  node_endpoint target;  ///< moved/ask only
};

/// Reads a redirect reply's text; nullopt when it is none (or a MOVED/ASK without a valid
/// slot and `host:port`, split at the last ':' so that an IPv6 host works).
std::optional<cluster_redirect> parse_redirect(std::string_view text);

/// One slot range of CLUSTER SLOTS and its primary.
struct slot_range {
  std::uint16_t first = 0;
  std::uint16_t last = 0;
  node_endpoint primary;
};

/// `CLUSTER SLOTS`: the slot map of the node it runs on. `ranges` is empty when the reply
/// had no usable range (a cluster whose slots are not assigned yet).
class cluster_slots_op final : public operation {
 public:
  cluster_slots_op() { what = "redis CLUSTER SLOTS failed"; }
  void compose(request& req, script_shas) override;
  void on_reply(const command_meta& cmd, const redisReply& reply) override;
  next_step finish(std::optional<error_info>& error) override;
  std::vector<slot_range> ranges;

 private:
  bool ok_ = false;
};

}  // namespace babelqueue::inline v1::redis::detail
