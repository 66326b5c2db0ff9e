#include "redis/sentinel.hpp"

#include "redis/connection.hpp"
#include "redis/errors.hpp"

#include <hiredis/hiredis.h>

#include <algorithm>
#include <charconv>

namespace babelqueue::inline v1::redis::detail {

using namespace std::chrono_literals;

namespace {

std::string address_of(const options::sentinel_endpoint& s) {
  return s.host + ":" + std::to_string(s.port);
}

// `SENTINEL get-master-addr-by-name <name>`: a two-element array (ip, port), or nil when
// this Sentinel does not monitor the name.
class master_address_op final : public operation {
 public:
  explicit master_address_op(const std::string& master) : master_(master) {
    what = "redis SENTINEL get-master-addr-by-name ";
    subject = master_;
  }
  void compose(request& req, script_shas) override {
    req.push({"SENTINEL", "get-master-addr-by-name", master_});
  }
  void on_reply(const command_meta&, const redisReply& reply) override {
    if (reply.type == REDIS_REPLY_NIL) {
      unknown = true;
      return;
    }
    if (reply.type != REDIS_REPLY_ARRAY || reply.elements != 2) return;
    auto host = reply_text(reply.element[0]);
    auto port = reply_text(reply.element[1]);
    std::uint16_t p = 0;
    auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
    if (host.empty() || ec != std::errc() || end != port.data() + port.size() || p == 0) return;
    found = node_address{std::string(host), p};
  }

  bool unknown = false;
  std::optional<node_address> found;

 private:
  const std::string& master_;
};

// `ROLE`: an array whose first element is "master", "slave" or "sentinel".
class role_op final : public operation {
 public:
  role_op() { what = "redis ROLE"; }
  void compose(request& req, script_shas) override { req.push({"ROLE"}); }
  void on_reply(const command_meta&, const redisReply& reply) override {
    if (reply.type == REDIS_REPLY_ARRAY && reply.elements >= 1)
      role.assign(reply_text(reply.element[0]));
  }
  std::string role;
};

}  // namespace

bool is_failover_reply(std::string_view text) noexcept {
  return text.starts_with("READONLY") || text.starts_with("LOADING") ||
         text.starts_with("MASTERDOWN") || text.starts_with("UNBLOCKED");
}

sentinel_locator::sentinel_locator(const options& opts)
    : probe_(opts), sentinels_(opts.sentinels), master_(opts.master_name) {
  // A Sentinel connection: its own credentials, no database, no scripts, no Sentinels of
  // its own; the TLS settings are the transport's.
  probe_.sentinels.clear();
  probe_.username = opts.sentinel_username;
  probe_.password = opts.sentinel_password;
  probe_.db = 0;
}

result<node_address> sentinel_locator::locate(clock::time_point deadline) {
  std::string tried;
  std::size_t permanent = 0;  // answers that waiting cannot change (unknown name, AUTH refused)
  std::optional<error_info> refused;
  const std::size_t n = sentinels_.size();
  const std::size_t first = preferred_;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t at = (first + i) % n;
    const auto& s = sentinels_[at];
    const auto left = until(deadline);
    if (i > 0 && left.count() == 0) {
      tried += (tried.empty() ? "" : "; ") + address_of(s) + ": not asked (no time left)";
      continue;
    }
    // A fair share of the time left, so that a hung Sentinel (it accepts, then never answers)
    // cannot use up the whole call before the others are asked: at least 10 ms, at most
    // connect_timeout; the last one asked gets all that is left.
    const auto share = left / static_cast<std::int64_t>(n - i);
    const auto budget = std::min(std::max(share, 10ms), probe_.connect_timeout);
    probe_.host = s.host;
    probe_.port = s.port;
    connection c(probe_, script_set{});
    std::string why;
    if (auto r = c.connect_once(budget); !r) {
      why = r.error().message;
      if (is_permanent(r.error())) {
        ++permanent;
        if (!refused) refused = r.error();
      }
    } else {
      master_address_op op(master_);
      request req;
      op.compose(req, {});
      round_outcome out;
      if (auto x = c.exchange(req, op, out); !x) {
        why = x.error().message;
      } else if (out.error) {
        why = out.error->message;
        if (is_permanent(*out.error)) {  // NOAUTH: this Sentinel wants a password
          ++permanent;
          if (!refused) refused = *out.error;
        }
      } else if (op.found) {
        preferred_ = at;
        located_ = true;
        return *op.found;
      } else if (op.unknown) {
        why = "does not monitor a master named '" + master_ + "'";
        ++permanent;
      } else {
        why = "unexpected reply to SENTINEL get-master-addr-by-name";
      }
    }
    tried += (tried.empty() ? "" : "; ") + address_of(s) + ": " + why;
    // The one asked first next time is the next one: a dead or hung Sentinel does not stay
    // at the head of every attempt.
    if (i == 0) preferred_ = (first + 1) % n;
  }
  if (permanent == n) {
    if (refused) return fail(refused->code, "redis Sentinels refused (" + tried + ")");
    return fail(transport_errc::invalid_argument,
                "no redis Sentinel monitors a master named '" + master_ + "' (" + tried + ")");
  }
  return fail(redis_error(fault::unreachable, "no redis Sentinel reported the primary of master '" +
                                                  master_ + "' (" + tried + ")"));
}

result<void> sentinel_locator::confirm_primary(connection& conn) const {
  role_op op;
  request req;
  op.compose(req, {});
  round_outcome out;
  if (auto r = conn.exchange(req, op, out); !r) return r;
  if (out.error) return fail(std::move(*out.error));
  if (op.role != "master") {
    return fail(
        redis_error(fault::unreachable, "redis at " + conn.endpoint() + " (master '" + master_ +
                                            "') has role '" + op.role +
                                            "', not master (a Sentinel reported a stale primary)"));
  }
  return {};
}

}  // namespace babelqueue::inline v1::redis::detail
