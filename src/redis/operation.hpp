#pragma once
// The sans-I/O half of a Redis round trip: an operation writes its pipelined commands into a
// request and reads meaning into the replies; it never touches a socket. The I/O half — the
// one loop that connects, sets the socket timeout, writes, reads, reloads scripts after
// NOSCRIPT and retries until the deadline — is engine::run() (engine.hpp). The split is the
// one of Boost.Redis (a request that holds the pipelined commands and an adapter that
// interprets their replies, apart from the connection that writes and reads them).
//
// One attempt, as engine::run() drives it:
//   begin_attempt(time left)  → the socket timeout of this attempt
//   compose(request, shas)    → the commands (taking, e.g., the deferred acks along)
//   on_reply / on_error_reply → one call per reply, in command order (via interpret())
//   then exactly one of:
//     undo()    the round did not complete (I/O failure, NOSCRIPT): give back what
//               compose() took; the engine resends while time remains
//     finish()  every reply was read: done (success or the error it leaves) or again
//
// Thread-safety: an operation is used by one thread, for one call of the transport.

#include "redis/errors.hpp"
#include "redis/request.hpp"

#include <babelqueue/runtime/error.hpp>

#include <algorithm>
#include <chrono>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

struct redisReply;

namespace babelqueue::inline v1::redis::detail {

using clock = std::chrono::steady_clock;

/// Script bodies loaded (SCRIPT LOAD) on every connect, by script index.
struct script_set {
  std::vector<const char*> bodies;
};
/// SHA1s of the scripts loaded on the current connection, by script index.
using script_shas = std::span<const std::string>;

enum class next_step {
  done,   ///< run() returns: success, or the error finish() left
  again,  ///< run() makes another attempt (the operation decides whether time remains)
};

/// What the replies of one round said besides what the operation took from them.
struct round_outcome {
  bool noscript = false;            ///< a reply was NOSCRIPT (the server lost the scripts)
  std::optional<error_info> error;  ///< the first error reply of a command that reports errors
  /// The first MOVED/ASK/TRYAGAIN/CLUSTERDOWN reply of the round, whatever command it
  /// answered: cluster mode (cluster_engine.hpp) follows it; the single-node engine ignores it
  /// (such a reply is then just an error reply, as above).
  std::string redirect;
};

class operation {
 public:
  virtual ~operation() = default;

  /// The socket timeout of the coming attempt, given the time left before run()'s deadline
  /// (0 once it has passed). Default: that time, at least 1 ms.
  virtual std::chrono::milliseconds begin_attempt(std::chrono::milliseconds remaining) {
    return std::max(remaining, std::chrono::milliseconds(1));
  }
  /// Writes this attempt's commands into `req` (empty on entry).
  virtual void compose(request& req, script_shas scripts) = 0;
  /// A reply that is not an error, with the meta of its command.
  virtual void on_reply(const command_meta& cmd, const redisReply& reply) = 0;
  /// The error an error reply to `cmd` stands for. Default: fault::server_error, message
  /// "<what><subject>: <server text>".
  virtual error_info on_error_reply(const command_meta& cmd, std::string_view text) const;
  /// The round did not complete: give back what compose() took (deferred acks).
  virtual void undo() {}
  /// Every reply was read. `error` is the round's first reported error reply; the operation
  /// may clear it or set its own. done: run() returns (failing with `error` when set).
  virtual next_step finish(std::optional<error_info>& /*error*/) { return next_step::done; }

  /// After NOSCRIPT: reload the scripts and resend (true); false when the commands that
  /// matter ran anyway (publish: its RPUSHes) — then reload and finish().
  bool resend_after_noscript = true;
  /// When run()'s deadline passes during an outage, report fault::unreachable (receive:
  /// a consume loop sees "the broker is down") instead of the last I/O error as it is.
  bool outage_is_unreachable = false;
  /// Context of server errors (see on_error_reply()).
  std::string_view what;
  std::string_view subject;
};

/// Sorts one reply of a round, sans-I/O: NOSCRIPT is noted in `out`; an error reply becomes
/// `out.error` when its command reports errors and no earlier one did; any other reply goes
/// to the operation.
void interpret(operation& op, const command_meta& cmd, const redisReply& reply, round_outcome& out);

}  // namespace babelqueue::inline v1::redis::detail
