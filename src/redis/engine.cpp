#include "redis/engine.hpp"

#include "redis/errors.hpp"

#include <hiredis/hiredis.h>

namespace babelqueue::inline v1::redis::detail {

namespace {

bool is_noscript(const redisReply& r) {
  return r.len >= 8 && std::string_view(r.str, 8) == "NOSCRIPT";
}

// The replies by which a cluster node declines a command (it did not run), and the one a
// script gets when a command inside it touches a key of a slot being migrated that the node
// no longer (or not yet) has (cluster_topology.hpp).
bool is_cluster_redirect(std::string_view text) {
  for (std::string_view word : {"MOVED ", "ASK ", "TRYAGAIN", "CLUSTERDOWN",
                                "ERR Script attempted to access a non local key"}) {
    if (text.substr(0, word.size()) == word) return true;
  }
  return false;
}

}  // namespace

error_info operation::on_error_reply(const command_meta&, std::string_view text) const {
  std::string context(what);
  context += subject;
  return redis_error(fault::server_error, std::move(context), text);
}

void interpret(operation& op, const command_meta& cmd, const redisReply& reply,
               round_outcome& out) {
  if (reply.type != REDIS_REPLY_ERROR) {
    op.on_reply(cmd, reply);
    return;
  }
  const std::string_view text(reply.str, reply.len);
  if (out.redirect.empty() && is_cluster_redirect(text)) out.redirect.assign(text);
  if (is_noscript(reply)) {
    out.noscript = true;
  } else if (cmd.report_errors && !out.error) {
    out.error = op.on_error_reply(cmd, text);
  }
}

std::optional<result<void>> conclude_round(operation& op, connection& conn, round_outcome& out) {
  if (out.noscript) {
    op.undo();
    auto reloaded = conn.reload_scripts();
    if (op.resend_after_noscript) {
      if (!reloaded) return reloaded;
      return std::nullopt;
    }
  }
  if (op.finish(out.error) == next_step::again) return std::nullopt;
  if (out.error) return result<void>(fail(std::move(*out.error)));
  return result<void>{};
}

result<void> engine::run(operation& op, clock::time_point deadline) {
  for (;;) {
    if (auto r = conn_.ensure(deadline); !r) return r;
    // A failed setsockopt drops the connection; the next ensure() reconnects or gives up.
    if (auto r = conn_.set_timeout(op.begin_attempt(until(deadline))); !r) continue;
    req_.clear();
    op.compose(req_, conn_.shas());
    round_outcome out;
    if (auto r = conn_.exchange(req_, op, out); !r) {
      // Unknown which commands ran: the operation takes back what it took, and everything
      // is resent while time remains (settles and scripts are gated, so resending them is
      // harmless; a resent publish may duplicate a message, never lose one).
      op.undo();
      if (clock::now() < deadline) continue;
      if (op.outage_is_unreachable) {
        return fail(redis_error(fault::unreachable, r.error().message));
      }
      return r;
    }
    if (auto done = conclude_round(op, conn_, out)) return std::move(*done);
  }
}

}  // namespace babelqueue::inline v1::redis::detail
