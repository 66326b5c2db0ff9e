#include "redis/cluster_engine.hpp"

#include "redis/cluster_slot.hpp"
#include "redis/engine.hpp"
#include "redis/errors.hpp"

#include <hiredis/hiredis.h>

#include <charconv>
#include <thread>

namespace babelqueue::inline v1::redis::detail {

namespace {

// The meta kind of the ASKING commands put in front of an ASK attempt's commands.
constexpr std::uint8_t k_asking = 200;

options node_options(const options& base, const node_endpoint& a) {
  options o = base;
  o.host = a.host;
  o.port = a.port;
  o.cluster_seeds.clear();
  return o;
}

std::string address_text(const node_endpoint& a) { return a.host + ":" + std::to_string(a.port); }

// Reads "<prefix><number>\r\n" at `pos` of a RESP payload this process wrote.
std::size_t read_count(std::string_view p, std::size_t& pos) {
  const auto end = p.find("\r\n", pos);
  std::size_t n = 0;
  std::from_chars(p.data() + pos + 1, p.data() + end, n);
  pos = end + 2;
  return n;
}

// `in` with ASKING in front of every command: the ASKING flag covers the next command only,
// and an ASK attempt resends a whole pipelined round. Only ever run on an ASK (rare), so
// re-reading the RESP the operation wrote costs the hot path nothing.
void with_asking(const request& in, request& out) {
  out.clear();
  const std::string_view p = in.payload();
  std::size_t pos = 0;
  for (std::size_t i = 0; i < in.size(); ++i) {
    out.push({"ASKING"}, {k_asking, false, 0});
    const std::size_t argc = read_count(p, pos);
    out.begin(argc, in.meta(i));
    for (std::size_t a = 0; a < argc; ++a) {
      const std::size_t len = read_count(p, pos);
      out.add(p.substr(pos, len));
      pos += len + 2;
    }
  }
}

// Hands the operation every reply but those of the ASKING commands.
class skip_asking final : public operation {
 public:
  explicit skip_asking(operation& op) : op_(op) {}
  void compose(request&, script_shas) override {}
  void on_reply(const command_meta& cmd, const redisReply& reply) override {
    if (cmd.kind != k_asking) op_.on_reply(cmd, reply);
  }
  error_info on_error_reply(const command_meta& cmd, std::string_view text) const override {
    return op_.on_error_reply(cmd, text);
  }

 private:
  operation& op_;
};

}  // namespace

struct cluster_engine::node {
  node(const options& base, const node_endpoint& a, script_set scripts)
      : address(a), opts(node_options(base, a)), conn(opts, std::move(scripts)) {}
  node_endpoint address;
  options opts;  // the base options with this node's host and port; conn refers to it
  connection conn;
};

cluster_engine::cluster_engine(const options& opts, script_set scripts)
    : opts_(opts), scripts_(std::move(scripts)), owner_(k_cluster_slots, nullptr) {}

cluster_engine::~cluster_engine() = default;

cluster_engine::node& cluster_engine::node_at(const node_endpoint& address) {
  for (auto& n : nodes_) {
    if (n->address == address) return *n;
  }
  nodes_.push_back(std::make_unique<node>(opts_, address, scripts_));
  return *nodes_.back();
}

bool cluster_engine::connected() const noexcept {
  for (const auto& n : nodes_) {
    if (n->conn.connected()) return true;
  }
  return false;
}

void cluster_engine::disconnect(const std::string& why) {
  for (auto& n : nodes_) n->conn.drop(why);
}

std::int64_t cluster_engine::reconnects() const noexcept {
  std::int64_t sum = 0;
  for (const auto& n : nodes_) sum += n->conn.reconnects;
  return sum;
}

std::int64_t cluster_engine::round_trips() const noexcept {
  std::int64_t sum = 0;
  for (const auto& n : nodes_) sum += n->conn.round_trips;
  return sum;
}

std::string cluster_engine::owner_of(std::uint16_t slot) const {
  const node* n = slot < owner_.size() ? owner_[slot] : nullptr;
  return n == nullptr ? std::string() : address_text(n->address);
}

result<void> cluster_engine::refresh_from(node& n, clock::time_point deadline) {
  if (auto r = n.conn.ensure(deadline); !r) return r;
  if (auto r = n.conn.set_timeout(std::max(until(deadline), std::chrono::milliseconds(1))); !r)
    return r;
  cluster_slots_op op;
  req_.clear();
  op.compose(req_, {});
  round_outcome out;
  if (auto r = n.conn.exchange(req_, op, out); !r) return r;
  op.finish(out.error);
  if (out.error) {
    if (out.error->message.find("cluster support disabled") != std::string::npos) {
      return fail(transport_errc::invalid_argument,
                  "redis cluster=1, but " + address_text(n.address) +
                      " is not in cluster mode (cluster-enabled no): use a URL without cluster=1");
    }
    return fail(std::move(*out.error));
  }
  if (op.ranges.empty()) {
    return fail(redis_error(fault::unexpected_reply, "redis cluster at " + address_text(n.address) +
                                                         " has no slots assigned yet"));
  }
  std::fill(owner_.begin(), owner_.end(), nullptr);
  for (auto& range : op.ranges) {
    if (range.primary.host.empty()) range.primary.host = n.address.host;
    node* owner = &node_at(range.primary);
    for (std::uint32_t s = range.first; s <= range.last; ++s) owner_[s] = owner;
  }
  last_refresh_ = clock::now();
  return {};
}

void cluster_engine::refresh_soon(node& n, clock::time_point deadline) {
  if (clock::now() - last_refresh_ < k_refresh_interval) return;
  // A failed refresh changes nothing: the redirect itself already says where the slot is.
  (void)refresh_from(n, deadline);
}

result<void> cluster_engine::connect(clock::time_point deadline) {
  std::vector<node_endpoint> seeds{{opts_.host, opts_.port}};
  for (const auto& [host, port] : opts_.cluster_seeds) seeds.push_back({host, port});
  std::string why;
  for (std::size_t i = 0; i < seeds.size(); ++i) {
    // Each seed gets its share of the time left, so that one that does not answer cannot
    // use up the time of the others.
    const auto share = (deadline - clock::now()) / static_cast<long>(seeds.size() - i);
    auto r = refresh_from(node_at(seeds[i]), clock::now() + share);
    if (r) return {};
    if (r.error().code == transport_errc::invalid_argument || is_permanent(r.error())) return r;
    why += (why.empty() ? "" : "; ") + address_text(seeds[i]) + ": " + r.error().message;
  }
  return fail(redis_error(fault::unreachable, "no redis cluster seed node answered", why));
}

result<void> cluster_engine::run(operation& op, std::uint16_t slot, clock::time_point deadline,
                                 bool opportunistic) {
  node* ask = nullptr;
  int followed = 0;  // MOVED/ASK of this call
  for (;;) {
    node* n = ask != nullptr ? ask : owner_[slot];
    if (n == nullptr) {
      // A slot the last map did not assign (a cluster being reconfigured): read it again.
      for (auto& candidate : nodes_) {
        if (candidate->conn.connected() && refresh_from(*candidate, deadline)) break;
      }
      n = owner_[slot];
      if (n == nullptr) {
        if (clock::now() + k_retry_pause < deadline) {
          std::this_thread::sleep_for(k_retry_pause);
          continue;
        }
        return fail(redis_error(fault::unreachable,
                                "redis cluster: no node owns hash slot " + std::to_string(slot)));
      }
    }
    connection& conn = n->conn;
    if (opportunistic && !conn.connected()) {
      return fail(redis_error(fault::unreachable, "redis cluster node " + address_text(n->address) +
                                                      " is not connected"));
    }
    if (auto r = conn.ensure(deadline); !r) {
      // The node is gone; if the cluster moved its slots elsewhere (a failover), the next
      // call finds them there.
      for (auto& other : nodes_) {
        if (other.get() != n && other->conn.connected()) {
          refresh_soon(*other, clock::now() + opts_.connect_timeout);
          break;
        }
      }
      return r;
    }
    if (auto r = conn.set_timeout(op.begin_attempt(until(deadline))); !r) continue;
    req_.clear();
    op.compose(req_, conn.shas());
    round_outcome out;
    result<void> io;
    if (ask != nullptr) {
      with_asking(req_, asking_req_);
      skip_asking reader(op);
      io = conn.exchange(asking_req_, reader, out);
    } else {
      io = conn.exchange(req_, op, out);
    }
    ask = nullptr;
    if (!io) {
      // As engine::run(): unknown which commands ran; take back, resend while time remains.
      op.undo();
      if (clock::now() < deadline && !opportunistic) continue;
      if (op.outage_is_unreachable)
        return fail(redis_error(fault::unreachable, io.error().message));
      return io;
    }
    if (!out.redirect.empty()) {
      // The node declined (at least) one command of the round; it did not run.
      op.undo();
      ++redirects;
      const auto redirect = parse_redirect(out.redirect);
      std::string context(op.what);
      context += op.subject;
      if (!redirect) return fail(redis_error(fault::server_error, context, out.redirect));
      using kind = cluster_redirect::kind;
      if (redirect->what == kind::try_again || redirect->what == kind::cluster_down) {
        if (opportunistic || clock::now() + k_retry_pause >= deadline)
          return fail(redis_error(fault::server_error, std::move(context), out.redirect));
        std::this_thread::sleep_for(k_retry_pause);
        continue;
      }
      if (++followed > k_max_redirects) {
        return fail(redis_error(fault::unreachable,
                                context + " (redis cluster: more than " +
                                    std::to_string(k_max_redirects) + " redirects for slot " +
                                    std::to_string(slot) + ")",
                                out.redirect));
      }
      node_endpoint target = redirect->target;
      if (target.host.empty()) target.host = n->address.host;
      node& to = node_at(target);
      if (redirect->what == kind::ask) {
        ask = &to;
      } else {
        owner_[redirect->slot] = &to;
        refresh_soon(to, deadline);
      }
      continue;
    }
    if (auto done = conclude_round(op, conn, out)) return std::move(*done);
  }
}

}  // namespace babelqueue::inline v1::redis::detail
