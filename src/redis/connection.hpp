#pragma once
// One Redis connection: reconnect with backoff, the handshake (AUTH, SELECT, SCRIPT LOAD),
// bounded socket timeouts, SIGPIPE-free socket I/O (send with MSG_NOSIGNAL) and optional TLS
// (tls.hpp). hiredis makes the TCP connection and parses replies; requests are RESP encoded
// by request.hpp and written here. Its exchange() is the I/O of one round trip; the retry
// policy around it is engine::run() (engine.hpp). Private to the redis transport.
//
// Thread-safety: not thread-safe; owned by one redis_transport (one thread at a time).

#include "core/reconnect_backoff.hpp"
#include "redis/operation.hpp"
#include "redis/request.hpp"
#include "redis/sentinel.hpp"
#include "redis/tls.hpp"

#include <babelqueue/redis/redis_transport.hpp>
#include <babelqueue/result.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

struct redisContext;
struct redisReply;

namespace babelqueue::inline v1::redis::detail {

using clock = std::chrono::steady_clock;

/// The time left until `t`, never negative (the engines' deadlines).
inline std::chrono::milliseconds until(clock::time_point t) {
  auto d = std::chrono::duration_cast<std::chrono::milliseconds>(t - clock::now());
  return d.count() < 0 ? std::chrono::milliseconds(0) : d;
}

struct reply_deleter {
  void operator()(redisReply* r) const noexcept;
};
/// An owned hiredis reply.
using reply_ptr = std::unique_ptr<redisReply, reply_deleter>;

/// A reply's string payload (status, error, bulk or verb), empty for none or a null reply.
std::string_view reply_text(const redisReply* r) noexcept;

class connection {
 public:
  connection(const options& opts, script_set scripts);
  ~connection();
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;

  bool connected() const noexcept { return ctx_ != nullptr; }

  /// Connects when not connected, honouring the backoff schedule; gives up at `deadline`
  /// (at least one attempt is made when no backoff pause is pending).
  result<void> ensure(clock::time_point deadline);
  /// One connect + handshake attempt within `budget`, no backoff (a Sentinel query).
  result<void> connect_once(std::chrono::milliseconds budget) {
    return try_connect(budget, clock::now() + budget);
  }

  /// Drops the connection (after an I/O error or a timeout: hiredis cannot resync).
  void drop(std::string why);

  /// Sets the socket send/receive timeout when it differs from the current one.
  result<void> set_timeout(std::chrono::milliseconds t);

  /// One round trip: writes every command of `req`, then reads one reply per command and
  /// hands each to interpret(op, …, out), in order. An I/O error or timeout drops the
  /// connection and fails (fault::io / fault::timed_out); the replies read before it
  /// have been handed over.
  result<void> exchange(const request& req, operation& op, round_outcome& out);

  /// SHA1s of the scripts as loaded on the current connection.
  script_shas shas() const noexcept { return shas_; }
  /// Reloads the scripts (after a NOSCRIPT reply).
  result<void> reload_scripts();

  const std::string& last_error() const noexcept { return last_error_; }
  std::string endpoint() const;

  std::int64_t reconnects = 0;
  std::int64_t round_trips = 0;

 private:
  // `deadline` bounds Sentinel discovery (which may ask several Sentinels) before the connect.
  result<void> try_connect(std::chrono::milliseconds budget, clock::time_point deadline);
  result<void> start_tls();
  result<void> write(std::string_view bytes);
  result<reply_ptr> read_reply();
  // Drops the connection after a failed send/recv and says why.
  error_info io_failure(const std::string& why, bool timed_out);
  // One send/recv on the socket, through TLS when it is on; -1 sets `why`/`timed_out`.
  long send_some(const char* data, std::size_t size, std::string& why, bool& timed_out);
  long recv_some(char* data, std::size_t size, std::string& why, bool& timed_out);

  options opts_;  // a copy: with Sentinels, host/port become the located primary's
  script_set scripts_;
  std::vector<std::string> shas_;
  redisContext* ctx_ = nullptr;
  std::chrono::milliseconds current_timeout_{-1};
  bool ever_connected_ = false;
  babelqueue::detail::reconnect_backoff backoff_;  // the schedule every networked binding shares
  std::string last_error_;
  request setup_;                               // the handshake's and script reload's commands
  std::vector<char> rbuf_;                      // socket read buffer
  std::unique_ptr<tls_client> tls_;             // rediss://: made on the first connect, then reused
  std::unique_ptr<tls_stream> stream_;          // the TLS session of the current socket
  std::unique_ptr<sentinel_locator> sentinel_;  // redis+sentinel://: locates the primary
};

}  // namespace babelqueue::inline v1::redis::detail
