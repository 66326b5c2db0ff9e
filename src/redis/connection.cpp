#include "redis/connection.hpp"

#include "redis/socket_io.hpp"

// hiredis 0.14 includes sds.h outside its extern "C" block, so sds functions would get C++
// linkage: include sds.h first, wrapped.
extern "C" {
#include <hiredis/sds.h>
}
#include <hiredis/hiredis.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <thread>

namespace babelqueue::inline v1::redis::detail {

void reply_deleter::operator()(redisReply* r) const noexcept {
  if (r != nullptr) freeReplyObject(r);
}

namespace {

timeval to_timeval(std::chrono::milliseconds ms) {
  if (ms.count() < 1) ms = std::chrono::milliseconds(1);
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(ms.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((ms.count() % 1000) * 1000);
  return tv;
}

std::string reply_text(const redisReply* r) {
  if (r == nullptr || r->str == nullptr) return {};
  return std::string(r->str, r->len);
}

}  // namespace

connection::connection(const options& opts, script_set scripts)
    : opts_(opts), scripts_(std::move(scripts)), rng_(std::random_device{}()) {}

connection::~connection() {
  stream_.reset();  // before its socket is closed
  if (ctx_ != nullptr) redisFree(ctx_);
}

std::string connection::endpoint() const { return opts_.host + ":" + std::to_string(opts_.port); }

void connection::drop(std::string why) {
  stream_.reset();  // before its socket is closed
  if (ctx_ != nullptr) {
    redisFree(ctx_);
    ctx_ = nullptr;
  }
  awaiting_ = false;
  current_timeout_ = std::chrono::milliseconds(-1);
  last_error_ = std::move(why);
  // The first reconnect after losing a working connection is immediate: the server may
  // already be back (or only this socket was cut). Backoff applies to failed connects.
  if (backoff_.count() == 0) next_attempt_ = clock::now();
}

result<void> connection::ensure(clock::time_point deadline) {
  while (ctx_ == nullptr) {
    auto now = clock::now();
    if (now < next_attempt_) {
      if (next_attempt_ >= deadline) {
        // Use up the caller's time rather than failing at once, so that a loop around
        // receive()/publish() cannot spin during an outage.
        std::this_thread::sleep_until(deadline);
        now = clock::now();
        return fail(transport_errc::unavailable,
                    "redis at " + endpoint() + " is unavailable (" + last_error_ +
                        "); next reconnect attempt in " +
                        std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                                           next_attempt_ - now)
                                           .count()) +
                        " ms");
      }
      std::this_thread::sleep_until(next_attempt_);
      now = clock::now();
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
    // At least 10 ms per attempt, at most connect_timeout (min/max: connect_timeout may be < 10
    // ms).
    auto budget = std::min(std::max(left, std::chrono::milliseconds(10)), opts_.connect_timeout);
    if (auto r = try_connect(budget); r) {
      backoff_ = std::chrono::milliseconds(0);
      if (ever_connected_) ++reconnects;
      ever_connected_ = true;
      return {};
    } else if (r.code() == transport_errc::invalid_argument) {
      return r;  // AUTH/SELECT refused: retrying cannot help
    }
    // Exponential backoff with jitter in [0.5, 1.5) of the current step.
    backoff_ = backoff_.count() == 0 ? opts_.reconnect_backoff_min
                                     : std::min(backoff_ * 2, opts_.reconnect_backoff_max);
    std::uniform_real_distribution<double> jitter(0.5, 1.5);
    next_attempt_ = clock::now() + std::chrono::milliseconds(static_cast<std::int64_t>(
                                       static_cast<double>(backoff_.count()) * jitter(rng_)));
    if (clock::now() >= deadline) {
      return fail(transport_errc::unavailable, "redis at " + endpoint() + " is unavailable: " + last_error_);
    }
  }
  return {};
}

result<void> connection::try_connect(std::chrono::milliseconds budget) {
  redisContext* c = redisConnectWithTimeout(opts_.host.c_str(), opts_.port, to_timeval(budget));
  if (c == nullptr) {
    last_error_ = "cannot allocate a hiredis context";
    return fail(transport_errc::unavailable, last_error_);
  }
  if (c->err != 0) {
    last_error_ = std::string("connect: ") + c->errstr;
    redisFree(c);
    return fail(transport_errc::unavailable, last_error_);
  }
  ctx_ = c;
  current_timeout_ = std::chrono::milliseconds(-1);
  awaiting_ = false;
  if (auto r = set_timeout(budget); !r) return r;
  redisEnableKeepAlive(ctx_);
  if (opts_.tls) {
    if (auto r = start_tls(); !r) return r;
  }

  // Handshake, pipelined: AUTH, SELECT, SCRIPT LOAD × n — one round trip.
  std::size_t expected = 0;
  bool auth = !opts_.password.empty();
  if (auth) {
    if (opts_.username.empty()) {
      std::string_view a[] = {"AUTH", opts_.password};
      append(a);
    } else {
      std::string_view a[] = {"AUTH", opts_.username, opts_.password};
      append(a);
    }
    ++expected;
  }
  std::string db = std::to_string(opts_.db);
  bool select = opts_.db != 0;
  if (select) {
    std::string_view a[] = {"SELECT", db};
    append(a);
    ++expected;
  }
  for (const char* body : scripts_.bodies) {
    std::string_view a[] = {"SCRIPT", "LOAD", body};
    append(a);
    ++expected;
  }
  std::vector<std::string> shas;
  for (std::size_t i = 0; i < expected; ++i) {
    auto r = get_reply();
    if (!r) return fail(r.error());
    redisReply* rep = r->get();
    bool is_auth = auth && i == 0;
    bool is_select = select && i == (auth ? 1u : 0u);
    if (rep->type == REDIS_REPLY_ERROR) {
      std::string text = reply_text(rep);
      // Read the remaining replies so nothing is left half-consumed, then give up.
      drop("handshake refused: " + text);
      // WRONGPASS / ERR invalid password / NOPERM: a credential problem, not a bad argument.
      if (is_auth)
        return fail(transport_errc::permission, "redis AUTH refused: " + text,
                    native_error{"redis", 0, text});
      if (is_select)
        return fail(transport_errc::invalid_argument, "redis SELECT " + db + " refused: " + text,
                    native_error{"redis", 0, text});
      return fail(transport_errc::unavailable, "redis SCRIPT LOAD refused (is EVAL disabled?): " + text);
    }
    if (!is_auth && !is_select) shas.push_back(reply_text(rep));
  }
  shas_ = std::move(shas);
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

long connection::send_some(const char* data, std::size_t size, std::string& why,
                           bool& timed_out) {
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
  std::vector<std::string> shas;
  for (const char* body : scripts_.bodies) {
    std::string_view a[] = {"SCRIPT", "LOAD", body};
    append(a);
  }
  for (std::size_t i = 0; i < scripts_.bodies.size(); ++i) {
    auto r = get_reply();
    if (!r) return fail(r.error());
    if ((*r)->type == REDIS_REPLY_ERROR) {
      return fail(transport_errc::unavailable, "redis SCRIPT LOAD refused: " + reply_text(r->get()));
    }
    shas.push_back(reply_text(r->get()));
  }
  shas_ = std::move(shas);
  return {};
}

void connection::append(std::span<const std::string_view> argv) {
  if (ctx_ == nullptr) return;
  argv_.clear();
  lens_.clear();
  for (auto a : argv) {
    argv_.push_back(a.data());
    lens_.push_back(a.size());
  }
  redisAppendCommandArgv(ctx_, static_cast<int>(argv_.size()), argv_.data(), lens_.data());
  if (!awaiting_) {
    awaiting_ = true;
    ++round_trips;
  }
}

result<void> connection::set_timeout(std::chrono::milliseconds t) {
  if (ctx_ == nullptr) return fail(transport_errc::unavailable, "not connected");
  if (t == current_timeout_) return {};
  if (redisSetTimeout(ctx_, to_timeval(t)) != REDIS_OK) {
    std::string why = std::string("setting the socket timeout failed: ") + ctx_->errstr;
    drop(why);
    return fail(transport_errc::unavailable, why);
  }
  current_timeout_ = t;
  return {};
}

// hiredis formats commands and parses replies; the socket I/O is done here, with
// send(MSG_NOSIGNAL), because hiredis 0.14 writes with write(2), which raises SIGPIPE (and
// kills a process that does not ignore it) when the server has gone away — and because
// TLS (rediss://) sits between the two.
result<reply_ptr> connection::get_reply() {
  if (ctx_ == nullptr) return fail(transport_errc::unavailable, "redis connection lost: " + last_error_);
  auto io_failure = [&](std::string why, bool timed_out) -> result<reply_ptr> {
    auto waited = current_timeout_;
    drop(why);
    if (timed_out) {
      return fail(transport_errc::timeout, "redis at " + endpoint() + " did not answer in time (" +
                                     std::to_string(waited.count()) + " ms)");
    }
    return fail(transport_errc::unavailable, "redis at " + endpoint() + ": " + why);
  };
  void* raw = nullptr;
  if (redisGetReplyFromReader(ctx_, &raw) != REDIS_OK) {
    return io_failure(std::string("protocol error: ") + ctx_->errstr, false);
  }
  if (raw == nullptr) {
    const std::size_t len = sdslen(ctx_->obuf);
    std::size_t off = 0;
    std::string why;
    bool timed_out = false;
    while (off < len) {
      long n = send_some(ctx_->obuf + off, len - off, why, timed_out);
      if (n < 0) return io_failure(why, timed_out);
      off += static_cast<std::size_t>(n);
    }
    if (len > 0) {
      sdsfree(ctx_->obuf);
      ctx_->obuf = sdsempty();
    }
    if (rbuf_.size() < 65536) rbuf_.resize(65536);
    while (raw == nullptr) {
      long n = recv_some(rbuf_.data(), rbuf_.size(), why, timed_out);
      if (n == 0) return io_failure("server closed the connection", false);
      if (n < 0) return io_failure(why, timed_out);
      if (redisReaderFeed(ctx_->reader, rbuf_.data(), static_cast<std::size_t>(n)) != REDIS_OK ||
          redisGetReplyFromReader(ctx_, &raw) != REDIS_OK) {
        return io_failure(std::string("protocol error: ") + ctx_->errstr, false);
      }
    }
  }
  awaiting_ = false;
  return reply_ptr(static_cast<redisReply*>(raw));
}

}  // namespace babelqueue::inline v1::redis::detail
