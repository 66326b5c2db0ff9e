#pragma once
/// @file idempotency/redis_store.hpp
/// @brief The idempotency seen-set with claims in Redis (component
/// babelqueue::idempotency_redis), in the Go SDK's layout (wire-helpers §1.5, decision D8),
/// so a Go worker and this one share marks on one server.
///
/// ## Layout
/// - committed mark: key `<prefix><meta.id>` (default `bq:idemp:<id>`), value `"1"`; the id is
///   committed while the key EXISTS (any value: a peer's mark counts). remember = `SET key 1`
///   (`SET key 1 PX <ttl ms>` with a TTL) — a plain SET, not NX, so remembering refreshes an
///   existing mark and turns a claim-era key into a committed one; seen = `EXISTS key`;
///   forget = `DEL key`.
/// - claim (the extension of store.hpp): key `<claim_prefix><meta.id>` (default
///   `bq:idemp-claim:<id>`) holding a random owner token, `PX <claim ttl>`. claim() is one Lua
///   script — no claim while the committed key exists, else `SET claim token NX PX ttl` —
///   sent as EVALSHA (scripts are loaded on every connect; a NOSCRIPT reply reloads them and
///   resends). release() is a compare-and-delete script on the token, so a worker whose
///   claim expired and was taken over never drops the new holder's claim. remember() sends
///   the SET and `DEL <claim key>` pipelined in one round trip.
/// Go has no claim keys (its Claim IS the committed SET NX, wire-helpers §1.3); a Go worker
/// ignores ours and ours honour its committed marks.
///
/// ## Cost
/// seen, remember, forget, claim and release are ONE round trip each (stats().round_trips
/// counts them), so the plain wrap costs two per message (seen + remember) and the claiming
/// wrap three (seen, claim, remember).
///
/// ## Connection
/// The redis transport's connection code (src/redis: reconnect with backoff and jitter,
/// AUTH/SELECT, TLS for `rediss://`, socket timeouts, SIGPIPE-free I/O) — not a second
/// client. Each call takes an idle connection from a small pool (`connections`, made on
/// first use), so consume() workers do not queue behind one socket. A call retries within
/// `command_timeout` across a reconnect and then fails with errc::unavailable; all five
/// operations are safe to resend (claim: a resent claim whose first copy won reads as lost,
/// and the id is parked until the claim TTL ends — at-least-once, never a double run).
/// The claim script touches the committed and the claim key of one id: on a Redis Cluster
/// they hash to different slots (CROSSSLOT → errc::backend) unless the id carries a
/// `{hash tag}`; a standalone server (or Sentinel primary) is the supported setup.
/// @note Thread-safety: thread-safe (the pool hands each connection to one call at a time).

#include <babelqueue/export/idempotency_redis.hpp>
#include <babelqueue/idempotency/store.hpp>
#include <babelqueue/redis/redis_transport.hpp>
#include <babelqueue/result.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace babelqueue {
inline namespace v1 {
namespace idempotency {

struct BABELQUEUE_IDEMPOTENCY_REDIS_EXPORT redis_store_options {
  /// Prefix of the committed keys (Go: `bq:idemp:`; PHP uses `bq:idem:`, D8). 1..256 bytes
  /// of printable ASCII without spaces; neither prefix may start the other (their keys
  /// would collide).
  std::string prefix = "bq:idemp:";
  /// Prefix of the claim keys.
  std::string claim_prefix = "bq:idemp-claim:";
  /// How long a committed mark lasts; 0 (or negative) = forever (Go's default).
  std::chrono::milliseconds ttl{0};
  /// Connections in the pool (1..64): calls beyond it wait for an idle one.
  std::size_t connections = 4;
};

/// Counters of one store, summed over its connections.
struct BABELQUEUE_IDEMPOTENCY_REDIS_EXPORT redis_store_stats {
  std::int64_t reconnects = 0;   ///< successful connects after the first, per connection
  std::int64_t round_trips = 0;  ///< request/response exchanges, the connect handshakes included
};

class BABELQUEUE_IDEMPOTENCY_REDIS_EXPORT redis_store final : public claiming_store {
 public:
  /// Connects to `redis://[user:pass@]host:port[/db]` or `rediss://…` (the redis transport's
  /// URL and query keys, e.g. `?command_timeout=2s&tls_ca_file=…`) and checks the server
  /// once: errc::invalid_argument for a bad URL, options or refused AUTH/SELECT,
  /// errc::unavailable when it cannot be reached within connect_timeout.
  static result<std::unique_ptr<redis_store>> open(std::string_view url,
                                                   redis_store_options options = {});
  /// The same with connection options built in code.
  static result<std::unique_ptr<redis_store>> open(redis::options connection,
                                                   redis_store_options options = {});
  ~redis_store() override;
  redis_store(const redis_store&) = delete;
  redis_store& operator=(const redis_store&) = delete;

  result<bool> seen(std::string_view id) override;
  result<void> remember(std::string_view id) override;
  result<void> forget(std::string_view id) override;
  result<bool> claim(std::string_view id, std::chrono::milliseconds ttl) override;
  /// Drops the claim only while it still holds the token this instance wrote.
  result<void> release(std::string_view id) override;

  redis_store_stats stats() const;

 private:
  struct impl;
  explicit redis_store(std::unique_ptr<impl> state);
  std::unique_ptr<impl> impl_;
};

}  // namespace idempotency
}  // namespace v1
}  // namespace babelqueue
