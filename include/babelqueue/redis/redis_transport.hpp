#pragma once
/// @file redis/redis_transport.hpp
/// @brief `redis://`, `rediss://` and `redis[s]+sentinel://` — the Redis binding (decision D6,
/// "owned" reliable-queue layout) on hiredis (RESP2) with TLS on OpenSSL (Debian's hiredis 0.14 has
/// no TLS of its own; see "TLS").
///
/// ## Layout (interoperable with the Go, Python, Node, Java and PHP-core SDKs)
/// - ready list = the bare queue name; publish is `RPUSH <queue> <value>`;
/// - reserve moves the head to `<queue>:processing` (`LMOVE … LEFT RIGHT`, FIFO);
/// - ack removes exactly the stored value from `<queue>:processing` (`LREM … 1 <value>`);
/// - the stored value is the envelope byte-for-byte, or the ADR-0028 header frame when a
///   publish carries non-empty headers (bindings/redis.hpp); receive always unframes, and
///   the ack handle stays the stored (framed) value.
///
/// ## Reservation tracking (option `track_reservations`, default on)
/// Every reservation also adds the member `<token>:<stored value>` to the sorted set
/// `<queue>:processing:deadlines`, with score = reservation time (whole epoch seconds, the
/// server's clock) + `retry_after`, or `+inf` when `retry_after` is `never`. This is the
/// layout the Python SDK (≥ 1.24) writes, so a Python consumer's sweep and this SDK's
/// recover() see each other's reservations. The 32-hex `token` starts with the reservation
/// time in milliseconds (16 hex digits), so recover() knows each reservation's exact age.
/// The stored value itself is never changed. The move and the ZADD run in one Lua script
/// (atomic: there is no instant where a message is reserved but untracked). ack/release are
/// *gated*: they act only while their own member still exists, so a late ack of a message
/// that recover() (or a Python sweep) already returned to the queue touches nothing — not
/// even an identical copy another consumer now holds.
/// With `track_reservations=false` the hot path is exactly D6's commands
/// (`BLMOVE <q> <q>:processing LEFT RIGHT <t>`, `LREM <q>:processing 1 <v>`), no Lua.
///
/// ## recover(): the at-least-once window it closes and the one it opens
/// A consumer that dies after the reservation (kill -9, OOM, host loss) leaves its message
/// in `:processing` forever — no peer SDK's BLMOVE layout ever moves it back. recover()
/// moves every message reserved longer ago than `older_than` back to the END of the ready
/// list (bytes unchanged, `attempts` unchanged: a crash is not a handler failure), which
/// closes that window. It opens another: a consumer that is alive but slower than
/// `older_than` still holds the message when it is re-queued, so it is processed twice
/// (its late ack is then a no-op thanks to the gate). Choose `older_than` above the slowest
/// handler, and keep handlers idempotent. Values in `:processing` with no tracking member
/// (reserved by a peer SDK, or with tracking off) get a member stamped on the first
/// recover() that sees them; their age counts from that moment.
///
/// ## Delayed publish (publish_delayed(); capabilities().delayed_publish in both layouts)
/// Redis has no delayed delivery of its own. Owned layout: this SDK's extension (no peer SDK
/// writes it, and a peer that only reads the list needs nothing new to read its messages):
/// - the message waits in the sorted set `<queue>:scheduled` (a hash-tagged queue name puts it
///   in the slot of the list), member `<16 hex: publish time in µs><16 hex random>:<stored
///   value>`, score = the due time in epoch milliseconds. Both times are the SERVER's clock
///   (`TIME` inside the scheduling script): a client whose clock is off schedules exactly as
///   one whose clock is right. The stored value is what publish() would push (the envelope,
///   or the header frame when headers travel). The prefix keeps two identical values two
///   members (a sorted set would merge them) and orders members of one due time by publish
///   time. Not named `:delayed`: a Laravel-layout consumer with an empty prefix on the same
///   name (`orders:delayed`) would move these prefixed members onto its list as jobs;
/// - every receive() of this SDK on the queue (any instance, tracked or not) first moves the
///   due members to the END of the ready list in one Lua script — atomic: a message is in
///   the set or on the list, never both, never neither — prefix stripped, so the list gets
///   exactly the bytes publish() would have pushed, in due order then publish order, up to
///   `migration_batch` per receive. A peer SDK consuming the same list (Go, Python, Node, …)
///   gets the message once a C++ consumer of the queue moved it: a fleet with no C++
///   consumer on the queue never sees it;
/// - a blocking receive waits in slices of at most 1 s, each capped at the earliest due
///   time: it returns a message within milliseconds of its due time, including one another
///   producer scheduled during the wait (an idle consumer costs one round trip a second);
/// - granularity: 1 ms (due = ceil(server now in ms) + delay: never early); no cap of its
///   own (max_delay 0);
/// - the set is an ordinary key: it survives a restart as far as the server's persistence
///   (RDB/AOF) keeps it, like the list; a delay that passed while the server was down is due
///   on the first receive after it is back.
/// laravel=1: Laravel's own later(): `ZADD <prefix><queue>:delayed <due> <job>`, the job
/// exactly as publish() pushes it, due = ceil(server now + delay) in whole epoch seconds
/// (delay_granularity 1 s, rounded up: never early; Laravel and the Python SDK compute
/// floor(now) + delay on their own clocks). Every pop — a Laravel worker's, the Python SDK's,
/// this SDK's — migrates due jobs to the ready list with a notify token. A job identical to
/// one already waiting there is not added again (ZADD NX: the set holds a job once; the
/// waiting one keeps its due time). Headers: transport_errc::not_supported, as publish().
///
/// ## Consume cost: one round trip per message
/// With `pipeline_acks` (default on) ack() does not wait: the settle travels in the same
/// round trip as the next receive's reservation (one EVALSHA that settles message N and
/// reserves N+1) or of the next publish; a release or recover flushes it first, and so do
/// close(), flush() and the destructor, or synchronously once `max_pending_acks` are
/// queued. At-least-once holds: until the flush the message simply stays in `:processing`;
/// if the process dies first, the message is redelivered after recover() (a duplicate,
/// never a loss). An ack's outcome (e.g. "already recovered") is therefore not reported to
/// its caller; with `pipeline_acks=false` ack() waits and reports it
/// (errc::invalid_argument).
///
/// With `prefetch` N > 1 one round trip settles the deferred acks and reserves up to N
/// messages (see options::prefetch).
///
/// ## Connection loss
/// Any I/O error drops the connection; the next call reconnects with exponential backoff
/// (`reconnect_backoff_min`…`_max`, with ±50 % jitter), re-authenticates, re-selects the db
/// and reloads the scripts. publish(), ack(), release() and flush() retry within
/// `command_timeout`, then fail with transport_errc::unavailable (never hang, never crash; SIGPIPE
/// is suppressed per call). receive() keeps trying until its own timeout and then fails with
/// transport_errc::unavailable, so a consume loop sees the outage and can log it; the next
/// receive() tries again. A command whose reply was lost may have executed: a resent publish can
/// duplicate a message, a reservation whose reply was lost stays in `:processing` until
/// recover() — both at-least-once, neither a loss.
///
/// ## Redis Cluster (`cluster=1`)
/// `redis[s]://host:port[,host:port…]?cluster=1`: the hosts are seed nodes — owners or not,
/// any one that answers will do. open() reads `CLUSTER SLOTS` from the first seed that
/// answers; every call then goes to the primary that owns the hash slot of its queue, over
/// one connection per primary opened on first use (each with the same AUTH / SCRIPT LOAD /
/// TLS handshake; database 0 only). Redirects are followed within the call's deadline:
/// `MOVED` updates the slot and re-reads the whole map (at most every 100 ms), `ASK` resends
/// that one attempt on the target after `ASKING`, `TRYAGAIN` and `CLUSTERDOWN` (and a script
/// stopped on a key its node no longer has while the slot migrates) pause 20 ms and resend;
/// after 16 `MOVED`/`ASK` in one call, or when the deadline passes, the call fails with
/// transport_errc::unavailable. A node that is gone is transport_errc::unavailable within the
/// call's deadline, as in single-node mode.
///
/// A queue's four keys (`<q>`, `<q>:processing`, `<q>:processing:deadlines`, `<q>:scheduled`)
/// must share one slot — name it with a hash tag, `{orders}`. An untagged name fails every call
/// on it with errc::invalid_argument naming the slots and the fix, before anything is sent. With
/// laravel=1 the same holds for its four keys (`queues:{orders}`, `…:reserved`, `…:delayed`,
/// `…:notify`), which a hash tag in the queue name or in the prefix puts in one slot; a
/// receive merges every deferred ack of its queue into its script.
/// Deferred acks: a round trip goes to one node, so only the acks a receive merges into its
/// own reserving script (same queue, tracked) still ride along; any other deferred ack is
/// settled first, in one settle round per slot on that slot's owner — over connections that
/// are up, one attempt, so that a call never waits for another queue's dead node (such acks
/// stay deferred for flush(), which reconnects and reports). A consume loop on one
/// queue stays at one round trip per message; a publish after acks costs one more round trip
/// than in single-node mode. A resent round after a redirect is safe for the reasons of
/// "Connection loss" (gated settles and scripts; a publish_batch whose RPUSH chunks straddle
/// a MIGRATE of its key may duplicate, never lose). With cluster=0 none of this runs: the
/// single-node path is the same code as before, behind one branch.
///
/// ## TLS
/// `rediss://` wraps the connection in TLS ≥ 1.2 (OpenSSL): the server's certificate chain
/// is verified against `tls_ca_file` (else the system trust store) and its name against
/// `tls_server_name` (else the URL host; an IP host is matched against IP SANs). A client
/// certificate (`tls_cert_file` + `tls_key_file`) serves servers that set
/// `tls-auth-clients yes`. A failed verification is transport_errc::unavailable naming OpenSSL's
/// reason; an unreadable CA/certificate/key file is errc::invalid_argument. Reconnects redo the
/// handshake. The `tls_*` keys are refused on `redis://`.
///
/// ## Laravel-compatible mode (`laravel=1`)
/// Laravel's own layout instead of D6, shared with Laravel workers and the Python SDK's
/// `laravel_compat` mode: ready list `<prefix><queue>`, sorted sets `…:reserved` (member = the
/// job with `attempts` + 1 re-encoded by cjson, score = expiry) and `…:delayed`, wake-up list
/// `…:notify`; no other key. receive() is one script (migrate due delayed and lapsed reserved
/// jobs, pop, reserve, take a notify token, plus this queue's deferred acks); the handler gets
/// the job as popped; ack() is `ZREM :reserved`; release(m, delay) is gated and honours the
/// delay (`:delayed`, due ceil(server now + delay) in whole seconds: never early). Headers are
/// refused (transport_errc::not_supported): a Laravel job has no header channel.
/// docs/transports/redis.md says which bytes Laravel's scripts rewrite and how this differs from
/// Laravel's scripts.
///
/// ## Sentinel
/// `redis[s]+sentinel://[[user]:password@]host[:port][,host[:port]…]/<master-name>[/db]?…`:
/// the host list is the Sentinels (port 26379 by default), the userinfo the DATA nodes' AUTH,
/// `sentinel_username`/`sentinel_password` the Sentinels'. Before every (re)connect the
/// Sentinels are asked in turn (`SENTINEL get-master-addr-by-name`, each bounded by
/// connect_timeout and a fair share of the call's time, the last one that answered first);
/// after the handshake `ROLE` must say
/// `master`, otherwise the node is dropped and the Sentinels are asked again — no write ever
/// goes to a replica. A lost connection, and the replies READONLY / UNBLOCKED / LOADING /
/// MASTERDOWN (a primary demoted under a live connection), reconnect through the Sentinels and
/// resend within the call's deadline (see "Connection loss"). No Sentinel answering in time is
/// transport_errc::unavailable naming the master and each Sentinel tried; a name no Sentinel
/// monitors is errc::invalid_argument, Sentinel credentials every Sentinel refuses
/// transport_errc::permission (both at once). A failover can lose publishes the old primary had
/// acknowledged but not replicated (asynchronous replication); `wait_replicas` (any scheme)
/// trades one replica round trip per publish for not acknowledging those
/// (docs/transports/redis.md, "Sentinel", has the measured loss and cost).
///
/// ## URL
/// `redis[s]://[[user]:password@]host[:port][,host:port…][/db]?key=value&…`, keys = the
/// `options` fields (durations `250ms`/`5s`/`1m`, bare = ms; `retry_after` bare = seconds, the
/// Python SDK's unit); a host list needs `cluster=1`. Unknown keys are errc::invalid_argument.
/// Options built in code are checked by open() with the same rules and messages.
///
/// @note Thread-safety: an instance is NOT thread-safe (transport.hpp contract): it owns one
/// hiredis connection (one per primary in cluster mode) used by one thread at a time. Any number of
/// instances (threads, processes, hosts) may share queues. It runs no callbacks and starts no
/// threads.

#include <babelqueue/export/redis.hpp>
#include <babelqueue/result.hpp>
#include <babelqueue/runtime/transport.hpp>
#include <babelqueue/runtime/url.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace babelqueue {
inline namespace v1 {
namespace redis {

/// Options of a redis transport; each field but host/port/username/password/db is the URL
/// query key of the same name. Every timeout is finite.
struct BABELQUEUE_REDIS_EXPORT options {
  std::string host = "127.0.0.1";
  std::uint16_t port = 6379;
  std::string username;  ///< Redis 6 ACL user; empty = `AUTH <password>` only
  std::string password;  ///< empty = no AUTH
  std::int64_t db = 0;   ///< the URL path `/N`

  /// Bound of one TCP connect (and its AUTH/SELECT/SCRIPT LOAD handshake).
  std::chrono::milliseconds connect_timeout{std::chrono::seconds(2)};
  /// Bound of publish/ack/release/flush including reconnect attempts, and the extra margin
  /// the socket timeout gets over a blocking reservation's own wait.
  std::chrono::milliseconds command_timeout{std::chrono::seconds(5)};
  /// Processing-list suffix (D6 `:processing`).
  std::string processing_suffix = ":processing";
  /// Track reservation times in `<processing>:deadlines` (see the file comment).
  bool track_reservations = true;
  /// Deadline written with each tracked reservation (the Python SDK's `retry_after`, whose
  /// sweep returns the message after it); with laravel=1 the `:reserved` expiry, after which
  /// any worker's pop migrates the job back. URL: a duration, a bare number of seconds, or
  /// `never` (score `+inf`).
  /// nullopt = never. Does not by itself make this SDK re-queue anything: only recover() does.
  std::optional<std::chrono::seconds> retry_after{std::chrono::seconds(90)};
  /// The in-consumer reclaimer (opt-in; URL `reclaim_after=5m`). 0 (default): messages a
  /// dead consumer left in `:processing` come back only when recover() runs (schedule
  /// `babelqueue recover`, docs/transports/redis.md). > 0: receive() itself runs
  /// recover(queue, reclaim_after) on the queue it reads, at most once per reclaim_after / 2
  /// (one script call), so such a message is back within 1.5 × reclaim_after of its
  /// reservation while any consumer of the queue runs. Above the slowest handler (see
  /// recover()'s window). Not with laravel=1 and retry_after=never (no reservation age).
  std::chrono::milliseconds reclaim_after{0};
  /// Defer ack() into the next round trip (see "Consume cost").
  bool pipeline_acks = true;
  /// Flush synchronously once this many acks are deferred (1..100000).
  std::int64_t max_pending_acks = 64;
  /// Messages reserved per round trip (1..255; > 1 needs track_reservations). The extra
  /// ones wait in this instance and are handed out by the next receive() calls without a
  /// round trip; close() (and the destructor) hands undelivered ones back to the HEAD of the
  /// queue. Like AMQP's prefetch: more throughput, but a prefetched message is reserved —
  /// invisible to other consumers and aging for recover() — from the moment it is fetched.
  std::int64_t prefetch = 1;
  /// Reconnect backoff: first pause, and the cap it doubles up to.
  std::chrono::milliseconds reconnect_backoff_min{100};
  std::chrono::milliseconds reconnect_backoff_max{std::chrono::seconds(5)};

  /// Redis Cluster mode (URL `cluster=1`; see "Redis Cluster" above): host:port and
  /// cluster_seeds are seed nodes — any node will do, the slot map is read from the first one
  /// that answers.
  bool cluster = false;
  /// Further seed nodes (the URL's comma-separated host list `h1:p1,h2:p2`); cluster only.
  std::vector<std::pair<std::string, std::uint16_t>> cluster_seeds;
  /// Laravel-compatible layout (see "Laravel-compatible mode" above; URL `laravel=1`, also
  /// `laravel_compat=1` as the Python SDK accepts). Off: the owned layout (D6).
  bool laravel = false;
  /// laravel=1: the prefix of every key, `<prefix><queue>` (Python's `prefix`, default
  /// `queues:`). A Laravel app puts its Redis connection prefix in front of `queues:` (by
  /// default `<app>_database_`): name the whole thing, e.g. `laravel_database_queues:`.
  std::string prefix = "queues:";
  /// Messages moved per migration before each reservation; -1 = all of them (Laravel's and
  /// Python's default). laravel=1: due `:delayed` jobs, expired `:reserved` ones; owned
  /// layout: due `<queue>:scheduled` messages (see "Delayed publish").
  std::int64_t migration_batch = -1;

  /// TLS (set by the `rediss://` scheme, not a query key). See "TLS" above.
  bool tls = false;
  std::string tls_ca_file;      ///< PEM CA bundle to trust; empty = the system trust store
  std::string tls_cert_file;    ///< client certificate chain (PEM); needs tls_key_file
  std::string tls_key_file;     ///< the client certificate's private key (PEM)
  std::string tls_server_name;  ///< SNI and the name checked in the certificate; empty = host
  /// Verify the server's certificate and name. Off accepts any certificate (a test-only
  /// setting: the connection is then encrypted but not authenticated).
  bool tls_verify = true;

  /// A `host:port` of a Sentinel (options::sentinels).
  struct sentinel_endpoint {
    std::string host;
    std::uint16_t port = 26379;
  };
  /// Sentinel mode (set by `redis+sentinel://` / `rediss+sentinel://`, see "Sentinel"):
  /// non-empty = ask these Sentinels for the primary of `master_name` before every
  /// (re)connect; `host`/`port` are then ignored. Not query keys: the URL's host list.
  std::vector<sentinel_endpoint> sentinels;
  std::string master_name;  ///< the monitored name (the URL path `/<master-name>`)
  /// AUTH to the Sentinels (query keys); the URL userinfo (username/password) is the data
  /// nodes' AUTH, because Sentinels and data nodes usually have different credentials.
  std::string sentinel_username;
  std::string sentinel_password;

  /// Durability (any scheme): > 0 appends `WAIT wait_replicas wait_timeout` to every publish
  /// round trip and fails the publish (transport_errc::timeout) when fewer replicas
  /// acknowledged. 0..64.
  std::int64_t wait_replicas = 0;
  /// WAIT's own bound; must be below command_timeout (the socket timeout of a publish).
  std::chrono::milliseconds wait_timeout{1000};
};

/// Reads options from a `redis://`, `rediss://`, `redis+sentinel://` or `rediss+sentinel://`
/// URL. errc::invalid_argument on a bad db path or master name, unknown keys, malformed
/// values, or `tls_*` keys without TLS.
BABELQUEUE_REDIS_EXPORT result<options> options_from_url(const broker_url& url);

/// What recover() did.
struct BABELQUEUE_REDIS_EXPORT recover_report {
  std::int64_t moved = 0;      ///< messages returned to the ready list
  std::int64_t stamped = 0;    ///< untracked `:processing` values given a tracking member now
  std::int64_t remaining = 0;  ///< values left in `:processing`
};

/// Counters of one instance (for tests, benchmarks and operators).
struct BABELQUEUE_REDIS_EXPORT transport_stats {
  std::int64_t reconnects = 0;   ///< successful connects after the first
  std::int64_t round_trips = 0;  ///< request/response exchanges with the server
  std::int64_t stale_acks = 0;   ///< acks/releases whose reservation was already gone
  /// Cluster mode: rounds a node declined and that were resent (MOVED, ASK, TRYAGAIN,
  /// CLUSTERDOWN); always 0 otherwise.
  std::int64_t redirects = 0;
};

/// The `redis` transport. See the file comment for guarantees and thread-safety.
class BABELQUEUE_REDIS_EXPORT redis_transport final : public transport {
 public:
  /// Checks the options (the same rules and messages as options_from_url()), then connects
  /// once to check the server (transport_errc::unavailable when it cannot be reached within
  /// connect_timeout, errc::invalid_argument for bad options or a refused AUTH/SELECT).
  static result<std::unique_ptr<redis_transport>> open(options opts);

  ~redis_transport() override;

  /// `RPUSH` of the stored value (frame only with non-empty headers). Deferred acks travel
  /// in the same round trip. A body (or header) that is not valid UTF-8 cannot travel in the
  /// JSON frame: it is then stored bare and its headers are dropped — the only case where
  /// headers are dropped (it happens when the runtime dead-letters a binary poison body).
  result<void> publish(std::string_view queue, std::string_view body,
                       const headers& hdrs = {}) override;
  /// All values in one pipelined round trip (variadic RPUSHes of ≤ 1000 values / 8 MiB).
  result<void> publish_batch(std::string_view queue,
                             std::span<const outgoing_message> messages) override;
  /// Reserves the head of `queue`, waiting at most `timeout` (millisecond granularity;
  /// 0 = do not wait). See the file comment for the round-trip structure and outages.
  result<std::optional<received_message>> receive(std::string_view queue,
                                                  std::chrono::milliseconds timeout) override;
  /// Removes the stored value from `:processing` (deferred with pipeline_acks).
  /// errc::invalid_argument when the message was not received by this instance or was
  /// already settled here.
  result<void> ack(const received_message& message) override;
  /// delay 0: moves the stored value (same bytes, same frame) from `:processing` back to the
  /// END of the ready list (RPUSH) in one script — the end, so that a message nobody can
  /// handle (unknown-URN `release`) does not starve the rest of the queue by coming straight
  /// back to the consumer that just gave it up. delay > 0: transport_errc::not_supported in
  /// the owned layout (capabilities().native_delay is false; publish_delayed() of a copy is the
  /// way to retry later). laravel=1 honours the delay (`:delayed`, whole seconds).
  result<void> release(const received_message& message,
                       std::chrono::milliseconds delay = {}) override;
  /// Flushes deferred acks (bounded by `deadline` and command_timeout), then disconnects.
  /// Unsettled messages stay in `:processing` (recover() returns them).
  result<void> close(std::chrono::steady_clock::time_point deadline) override;

  /// LRANGE on the ready list (one round trip, read-only): the next messages a receive()
  /// would take, frames removed. Messages in `:processing` and delayed ones (not yet moved to
  /// the list) are not listed.
  result<std::vector<peeked_message>> peek(std::string_view queue, std::size_t offset,
                                           std::size_t limit) override;

  /// "rediss" when the connection uses TLS (options::tls), else "redis"; with Sentinels
  /// "rediss+sentinel" / "redis+sentinel".
  std::string_view scheme() const noexcept override {
    if (!opts_.sentinels.empty()) return opts_.tls ? "rediss+sentinel" : "redis+sentinel";
    return opts_.tls ? "rediss" : "redis";
  }
  /// Owned layout: headers, delayed publish (`<queue>:scheduled`, 1 ms), no release delay.
  /// laravel=1: delayed publish and release delay (the `:delayed` set, whole seconds), no
  /// headers. No cap on a delay in either.
  std::vector<std::string> security_warnings() const override;
  transport_capabilities capabilities() const noexcept override {
    return {.native_delay = opts_.laravel,
            .headers = !opts_.laravel,
            .delivery_count = false,
            .peek = true,
            .ordered = true,
            .delayed_publish = true,
            .max_delay = std::chrono::milliseconds(0),
            .delay_granularity =
                opts_.laravel ? std::chrono::milliseconds(1000) : std::chrono::milliseconds(0)};
  }

  /// Sends the deferred acks now and waits for their replies.
  result<void> flush();

  /// Moves messages reserved longer than `older_than` ago from `<queue>:processing` back to
  /// the end of `queue` (see the file comment). `older_than` 0 moves everything. One Lua
  /// script: atomic, but it scans the whole processing list (keep it small — it holds only
  /// in-flight messages). Works whatever `track_reservations` is set to on this instance.
  result<recover_report> recover(std::string_view queue, std::chrono::milliseconds older_than);

  /// Length of a list (ready or processing key), for operators and tests.
  result<std::int64_t> list_length(std::string_view key);

  const options& config() const noexcept { return opts_; }
  /// `host:port` of the server this instance is connected to or last connected to (with
  /// Sentinels: the primary they reported), for operators and tests.
  std::string endpoint() const;
  transport_stats stats() const noexcept;

 protected:
  /// See "Delayed publish" above: one round trip (deferred acks ride along), the server's
  /// clock, WAIT with wait_replicas as a publish. Closed: transport_errc::closed.
  result<void> publish_later(std::string_view queue, std::string_view body, const headers& hdrs,
                             std::chrono::milliseconds delay) override;

 private:
  struct impl;
  explicit redis_transport(options opts);
  // reclaim_after: recover() of `queue` when its last sweep is reclaim_after / 2 old.
  void reclaim_if_due(std::string_view queue);
  result<void> flush_until(std::chrono::steady_clock::time_point deadline);
  result<void> unreserve_prefetched(std::chrono::steady_clock::time_point deadline);
  result<void> publish_values(std::string_view queue, std::span<const std::string_view> values);
  options opts_;
  std::unique_ptr<impl> impl_;
};

/// Registers the `redis`, `rediss`, `redis+sentinel` and `rediss+sentinel` schemes with the
/// URL factory (url.hpp). Idempotent.
BABELQUEUE_REDIS_EXPORT void register_transport();

}  // namespace redis
}  // namespace v1
}  // namespace babelqueue
