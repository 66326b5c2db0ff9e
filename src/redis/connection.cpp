#include "redis/connection.hpp"

#include "core/propagate.hpp"
#include "redis/errors.hpp"
#include "redis/reply_limits.hpp"
#include "redis/socket_io.hpp"

#include <hiredis/hiredis.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <optional>
#include <thread>

namespace babelqueue::inline v1::redis::detail {

void reply_deleter::operator()(redisReply* r) const noexcept {
  if (r != nullptr) freeReplyObject(r);
}

std::string_view reply_text(const redisReply* r) noexcept {
  if (r == nullptr || r->str == nullptr) return {};
  return {r->str, r->len};
}

namespace {

timeval to_timeval(std::chrono::milliseconds ms) {
  if (ms.count() < 1) ms = std::chrono::milliseconds(1);
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(ms.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((ms.count() % 1000) * 1000);
  return tv;
}

// The handshake on every connect — AUTH, SELECT, SCRIPT LOAD × n, one round trip — and,
// without AUTH/SELECT, the script reload after a NOSCRIPT reply. Sans-I/O like the
// transport's operations; run once through exchange() (the reconnect policy is ensure()'s).
class handshake final : public operation {
 public:
  enum kind : std::uint8_t { k_auth, k_select, k_script };

  handshake(const options& o, const script_set& scripts, bool login)
      : opts_(o), scripts_(scripts), login_(login), db_(std::to_string(o.db)) {}

  void compose(request& req, script_shas) override {
    if (login_ && !opts_.password.empty()) {
      if (opts_.username.empty()) {
        req.push({"AUTH", opts_.password}, {k_auth});
      } else {
        req.push({"AUTH", opts_.username, opts_.password}, {k_auth});
      }
    }
    if (login_ && opts_.db != 0) req.push({"SELECT", db_}, {k_select});
    for (const char* body : scripts_.bodies) req.push({"SCRIPT", "LOAD", body}, {k_script});
  }
  void on_reply(const command_meta& cmd, const redisReply& reply) override {
    if (cmd.kind == k_script) shas.emplace_back(reply_text(&reply));
  }
  error_info on_error_reply(const command_meta& cmd, std::string_view text) const override {
    switch (cmd.kind) {
      case k_auth:
        return redis_error(fault::auth_refused, "redis AUTH refused", text);
      case k_select:
        return redis_error(fault::select_refused, "redis SELECT " + db_ + " refused", text);
      default:
        return redis_error(fault::server_error, "redis SCRIPT LOAD refused (is EVAL disabled?)",
                           text);
    }
  }

  std::vector<std::string> shas;

 private:
  const options& opts_;
  const script_set& scripts_;
  bool login_;
  std::string db_;
};

}  // namespace

connection::connection(const options& opts, script_set scripts)
    : opts_(opts),
      scripts_(std::move(scripts)),
      backoff_(opts.reconnect_backoff_min, opts.reconnect_backoff_max) {
  if (!opts_.sentinels.empty()) sentinel_ = std::make_unique<sentinel_locator>(opts_);
}

connection::~connection() {
  stream_.reset();  // before its socket is closed
  if (ctx_ != nullptr) redisFree(ctx_);
}

std::string connection::endpoint() const {
  if (sentinel_ && !sentinel_->located()) return sentinel_->unlocated();
  return opts_.host + ":" + std::to_string(opts_.port);
}

void connection::drop(std::string why) {
  stream_.reset();  // before its socket is closed
  if (ctx_ != nullptr) {
    redisFree(ctx_);
    ctx_ = nullptr;
  }
  current_timeout_ = std::chrono::milliseconds(-1);
  last_error_ = std::move(why);
  // The first reconnect after losing a working connection is immediate (backoff_.succeeded()
  // made the next attempt due); the backoff applies to failed connects.
}

result<void> connection::ensure(clock::time_point deadline) {
  while (ctx_ == nullptr) {
    auto now = clock::now();
    if (const auto next_attempt = backoff_.next_attempt(); now < next_attempt) {
      if (next_attempt >= deadline) {
        // Use up the caller's time rather than failing at once, so that a loop around
        // receive()/publish() cannot spin during an outage.
        std::this_thread::sleep_until(deadline);
        now = clock::now();
        return fail(redis_error(
            fault::unreachable,
            "redis at " + endpoint() + " is unavailable (" + last_error_ +
                "); next reconnect attempt in " +
                std::to_string(
                    std::chrono::duration_cast<std::chrono::milliseconds>(next_attempt - now)
                        .count()) +
                " ms"));
      }
      std::this_thread::sleep_until(next_attempt);
      now = clock::now();
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
    // At least 10 ms per attempt, at most connect_timeout (min/max: connect_timeout may be < 10
    // ms).
    auto budget = std::min(std::max(left, std::chrono::milliseconds(10)), opts_.connect_timeout);
    auto r = try_connect(budget, deadline);
    if (r) {
      backoff_.succeeded();
      if (ever_connected_) ++reconnects;
      ever_connected_ = true;
      return {};
    }
    if (is_permanent(r.error())) {
      return r;  // AUTH/SELECT refused, unusable TLS files: retrying cannot help
    }
    backoff_.failed();
    if (clock::now() >= deadline) {
      return fail(redis_error(fault::unreachable, "redis at " + endpoint() + " is unavailable",
                              last_error_));
    }
  }
  return {};
}

result<void> connection::try_connect(std::chrono::milliseconds budget, clock::time_point deadline) {
  if (sentinel_) {
    // Ask the Sentinels where the primary is now (sentinel.hpp); what is left of the
    // attempt's time bounds the connect to it.
    auto primary = sentinel_->locate(deadline);
    if (!primary) {
      last_error_ = primary.error().message;
      return fail(primary.error());
    }
    opts_.host = std::move(primary->host);
    opts_.port = primary->port;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now());
    budget = std::min(budget, std::max(left, std::chrono::milliseconds(10)));
  }
  redisContext* c = redisConnectWithTimeout(opts_.host.c_str(), opts_.port, to_timeval(budget));
  if (c == nullptr) {
    last_error_ = "cannot allocate a hiredis context";
    return fail(redis_error(fault::unreachable, last_error_));
  }
  if (c->err != 0) {
    last_error_ = std::string("connect: ") + c->errstr;
    redisFree(c);
    return fail(redis_error(fault::unreachable, last_error_));
  }
  ctx_ = c;
  bound_reply_sizes(ctx_->reader);
  current_timeout_ = std::chrono::milliseconds(-1);
  if (auto r = set_timeout(budget); !r) return r;
  redisEnableKeepAlive(ctx_);
  if (opts_.tls) {
    if (auto r = start_tls(); !r) return r;
  }

  // Handshake, pipelined: AUTH, SELECT, SCRIPT LOAD × n — one round trip.
  handshake hs(opts_, scripts_, /*login=*/true);
  setup_.clear();
  hs.compose(setup_, {});
  round_outcome out;
  if (auto r = exchange(setup_, hs, out); !r) return r;
  if (out.error) {
    drop("handshake refused: " + out.error->message);
    return fail(std::move(*out.error));
  }
  shas_ = std::move(hs.shas);
  if (sentinel_) {
    // Never write to a replica: the node a Sentinel named must say it is the primary.
    if (auto r = sentinel_->confirm_primary(*this); !r) {
      drop(r.error().message);
      return r;
    }
  }
  return {};
}

// The TLS handshake on the fresh socket, bounded by the socket timeout set for the connect.
result<void> connection::start_tls() {
  if (!tls_) {
    auto made = tls_client::create(opts_);
    if (!made) {
      drop(made.error().message);
      return fail(made.error());  // invalid_argument: a bad file does not get better
    }
    tls_ = std::move(*made);
  }
  auto session = tls_->handshake(ctx_->fd);
  if (!session) {
    drop(session.error().message);
    return fail(session.error());
  }
  stream_ = std::move(*session);
  return {};
}

long connection::send_some(const char* data, std::size_t size, std::string& why, bool& timed_out) {
  if (stream_) {
    long n = stream_->write(data, size);
    if (n < 0) {
      why = stream_->error();
      timed_out = stream_->timed_out();
    }
    return n;
  }
  int e = 0;
  long n = send_nosignal(ctx_->fd, data, size, e);
  if (n < 0) {
    why = std::string("send: ") + std::strerror(e);
    timed_out = is_timeout(e);
  }
  return n;
}

long connection::recv_some(char* data, std::size_t size, std::string& why, bool& timed_out) {
  if (stream_) {
    long n = stream_->read(data, size);
    if (n < 0) {
      why = stream_->error();
      timed_out = stream_->timed_out();
    }
    return n;
  }
  int e = 0;
  long n = recv_retrying(ctx_->fd, data, size, e);
  if (n < 0) {
    why = std::string("recv: ") + std::strerror(e);
    timed_out = is_timeout(e);
  }
  return n;
}

result<void> connection::reload_scripts() {
  handshake hs(opts_, scripts_, /*login=*/false);
  setup_.clear();
  hs.compose(setup_, {});
  round_outcome out;
  if (auto r = exchange(setup_, hs, out); !r) return r;
  if (out.error) return fail(std::move(*out.error));
  shas_ = std::move(hs.shas);
  return {};
}

result<void> connection::set_timeout(std::chrono::milliseconds t) {
  if (ctx_ == nullptr) return fail(redis_error(fault::io, "not connected"));
  if (t == current_timeout_) return {};
  if (redisSetTimeout(ctx_, to_timeval(t)) != REDIS_OK) {
    std::string why = std::string("setting the socket timeout failed: ") + ctx_->errstr;
    drop(why);
    return fail(redis_error(fault::io, std::move(why)));
  }
  current_timeout_ = t;
  return {};
}

result<void> connection::exchange(const request& req, operation& op, round_outcome& out) {
  if (auto w = write(req.payload()); !w) return w;
  std::optional<std::string> failover;
  for (std::size_t i = 0; i < req.size(); ++i) {
    BABELQUEUE_TRY_LET(reply, read_reply());
    if (sentinel_ && (*reply)->type == REDIS_REPLY_ERROR &&
        is_failover_reply({(*reply)->str, (*reply)->len}) && !failover) {
      failover = "redis at " + endpoint() +
                 " stopped serving as the primary: " + std::string((*reply)->str, (*reply)->len);
    }
    interpret(op, req.meta(i), **reply, out);
  }
  // With Sentinels, READONLY/UNBLOCKED/LOADING/MASTERDOWN mean a failover: handled like a
  // lost connection (the engine undoes the round, reconnects through the Sentinels, resends).
  if (failover) {
    drop(*failover);
    return fail(redis_error(fault::io, std::move(*failover)));
  }
  return {};
}

error_info connection::io_failure(const std::string& why, bool timed_out) {
  auto waited = current_timeout_;
  drop(why);
  if (timed_out) {
    return redis_error(fault::timed_out, "redis at " + endpoint() + " did not answer in time (" +
                                             std::to_string(waited.count()) + " ms)");
  }
  return redis_error(fault::io, "redis at " + endpoint(), why);
}

// The socket I/O is done here, with send(MSG_NOSIGNAL), not by hiredis: hiredis 0.14 writes
// with write(2), which raises SIGPIPE (and kills a process that does not ignore it) when the
// server has gone away — and TLS (rediss://) sits between the two. hiredis parses replies.
result<void> connection::write(std::string_view bytes) {
  if (ctx_ == nullptr) return fail(redis_error(fault::io, "redis connection lost", last_error_));
  ++round_trips;
  std::string why;
  bool timed_out = false;
  for (std::size_t off = 0; off < bytes.size();) {
    long n = send_some(bytes.data() + off, bytes.size() - off, why, timed_out);
    if (n < 0) return fail(io_failure(why, timed_out));
    off += static_cast<std::size_t>(n);
  }
  return {};
}

result<reply_ptr> connection::read_reply() {
  if (ctx_ == nullptr) return fail(redis_error(fault::io, "redis connection lost", last_error_));
  void* raw = nullptr;
  if (redisGetReplyFromReader(ctx_, &raw) != REDIS_OK) {
    return fail(io_failure(std::string("protocol error: ") + ctx_->errstr, false));
  }
  if (raw == nullptr) {
    std::string why;
    bool timed_out = false;
    if (rbuf_.size() < 65536) rbuf_.resize(65536);
    while (raw == nullptr) {
      long n = recv_some(rbuf_.data(), rbuf_.size(), why, timed_out);
      if (n == 0) return fail(io_failure("server closed the connection", false));
      if (n < 0) return fail(io_failure(why, timed_out));
      if (redisReaderFeed(ctx_->reader, rbuf_.data(), static_cast<std::size_t>(n)) != REDIS_OK ||
          redisGetReplyFromReader(ctx_, &raw) != REDIS_OK) {
        return fail(io_failure(std::string("protocol error: ") + ctx_->errstr, false));
      }
    }
  }
  return reply_ptr(static_cast<redisReply*>(raw));
}

}  // namespace babelqueue::inline v1::redis::detail
