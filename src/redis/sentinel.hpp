#pragma once
// Redis Sentinel support of the redis transport (`redis+sentinel://`, `rediss+sentinel://`):
// where the primary is, and whether the node we reached still is it.
//
//   before every (re)connect   locate(): ask the Sentinels in turn
//                              `SENTINEL get-master-addr-by-name <name>`, each bounded by
//                              connect_timeout; the one that answered last is asked first
//   after the handshake        confirm_primary(): `ROLE` must say `master` — a Sentinel may
//                              briefly report a stale primary (just demoted, or restarted
//                              and not yet reconfigured); anything else is dropped and the
//                              next attempt asks again, so nothing is ever written to a replica
//   on a reply                 is_failover_reply(): READONLY / UNBLOCKED / LOADING / MASTERDOWN:
//                              the node stopped being a usable primary while we stayed connected;
//                              the connection treats it like a lost connection (drop,
//                              rediscover, resend within the call's deadline)
//
// The connection (connection.hpp) calls these three hooks; the retry policy stays
// engine::run()'s and the backoff connection::ensure()'s. A Sentinel is reached with a
// connection of its own (same TLS settings, sentinel_username/sentinel_password), opened
// for one question and closed: discovery happens only on reconnects.
//
// Thread-safety: not thread-safe; owned by one connection.

#include "redis/operation.hpp"

#include <babelqueue/redis/redis_transport.hpp>
#include <babelqueue/result.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace babelqueue::inline v1::redis::detail {

class connection;

/// A data node's address, as a Sentinel reported it.
struct node_address {
  std::string host;
  std::uint16_t port = 0;
};

/// Whether an error reply says the node cannot serve as the primary right now: `READONLY`
/// (demoted to a replica while we stayed connected), `UNBLOCKED` (the same, for a blocking
/// BLMOVE it interrupted), `LOADING` (loading its dataset, e.g. a restarted node),
/// `MASTERDOWN` (a replica that lost its primary). Other replies are the operation's business.
bool is_failover_reply(std::string_view text) noexcept;

class sentinel_locator {
 public:
  /// `opts` are the transport's options (sentinels, master_name, sentinel_* and tls_*).
  explicit sentinel_locator(const options& opts);

  /// The primary's address from the first Sentinel that knows it, asked in turn starting with
  /// the one that answered last (the next one after a failure); each bounded by
  /// connect_timeout and by a fair share of the time left before `deadline`.
  /// transport_errc::unavailable naming the master and every Sentinel tried with its reason
  /// when none answered; transport_errc::invalid_argument when every Sentinel answered and
  /// none monitors `master_name` (a misspelt name does not get better by waiting), and
  /// transport_errc::permission when every Sentinel refused the Sentinel credentials.
  result<node_address> locate(clock::time_point deadline);

  /// One `ROLE` round trip on the freshly connected `conn`: fails (transport_errc::unavailable)
  /// unless the node says it is a `master`.
  result<void> confirm_primary(connection& conn) const;

  /// Whether locate() has succeeded once (before that the node's address is unknown).
  bool located() const noexcept { return located_; }
  /// "master '<name>' (not located yet)": the endpoint in errors before the first locate().
  std::string unlocated() const { return "master '" + master_ + "' (not located yet)"; }

 private:
  options probe_;  // the options of a connection to one Sentinel (host/port set per ask)
  std::vector<options::sentinel_endpoint> sentinels_;
  std::string master_;
  std::size_t preferred_ = 0;  // index of the Sentinel that answered last
  bool located_ = false;
};

}  // namespace babelqueue::inline v1::redis::detail
