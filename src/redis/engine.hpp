#pragma once
// The round-trip engine of the redis transport: the one loop that does I/O for every
// operation (publish, publish_batch, receive, ack, release, flush, recover, close, …).
//
//   run(op, deadline):
//     ensure connected (reconnect with backoff, bounded by the deadline)
//     → set the socket timeout op.begin_attempt() asks for
//     → op.compose() the pipelined commands → write them, read one reply each (exchange)
//     → I/O failure or timeout: op.undo(), and try again while the deadline has not passed
//     → NOSCRIPT: op.undo(), reload the scripts, resend (or finish, see operation.hpp)
//     → op.finish(): done (success or its error) or another attempt
//
// What the commands are and what the replies mean lives in the operations (operation.hpp,
// operations.hpp), which never touch the socket; what the socket does lives here and in
// connection.hpp. docs/transports/redis.md ("The round-trip engine") shows the pattern.
//
// Thread-safety: not thread-safe; owned by one redis_transport (one thread at a time).

#include "redis/connection.hpp"
#include "redis/operation.hpp"
#include "redis/request.hpp"

#include <babelqueue/result.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace babelqueue::inline v1::redis::detail {

/// The end of a round whose replies were all read, shared by engine::run() and the cluster
/// engine: after NOSCRIPT the operation gives back what it took and the scripts are
/// reloaded (then resent, unless the operation says its commands ran anyway); then
/// op.finish(). nullopt: make another attempt; otherwise what run() returns.
std::optional<result<void>> conclude_round(operation& op, connection& conn, round_outcome& out);

class engine {
 public:
  engine(const options& opts, script_set scripts) : conn_(opts, std::move(scripts)) {}

  /// Connects now (open()): errors as connection::ensure().
  result<void> connect(clock::time_point deadline) { return conn_.ensure(deadline); }

  /// Runs `op` until it is done or `deadline` passes (see the file comment). At least one
  /// attempt is made while the connection is up, even with the deadline already passed.
  result<void> run(operation& op, clock::time_point deadline);

  bool connected() const noexcept { return conn_.connected(); }
  void disconnect(std::string why) { conn_.drop(std::move(why)); }
  std::string endpoint() const { return conn_.endpoint(); }

  std::int64_t reconnects() const noexcept { return conn_.reconnects; }
  std::int64_t round_trips() const noexcept { return conn_.round_trips; }

 private:
  connection conn_;
  request req_;  // reused by every round trip
};

}  // namespace babelqueue::inline v1::redis::detail
