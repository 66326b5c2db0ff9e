#pragma once
// The AMQP 1.0 layer the Artemis (and Azure Service Bus) bindings share, on Qpid Proton C++
// 0.37: one connection behind the blocking calls the transport seam needs — a confirmed
// send, a receive with a timeout, and settlement of what was received.
//
// The connection runs on proton::io::connection_driver — Proton's AMQP engine over a socket
// this client owns (tcp_socket.hpp; SASL and TLS stay in Proton's transport) — pumped on the
// caller's thread inside each call: a receive() that finds a message buffered does no I/O,
// one that finds none reads (and writes what is pending) until a message arrives or its
// deadline; a send() writes and reads until the broker accepted. No hand-off to another
// thread on the message path (a Proton container would need one: it only runs inside
// container::run()). While no call is in progress a keeper thread pumps the connection now
// and then without waiting (try_lock), so heartbeats, settlements and CBS renewals go out
// during a long handler.
//
// Credit is manual: each receiver starts with `prefetch` credit and gets one back for each
// message settled, so at most `prefetch` unsettled messages per address are held — a slow
// caller never makes the client buffer without bound.
//
// Connection loss fails the sends in flight (unavailable, "unconfirmed"); unsent work waits
// for a reconnect within its caller's deadline. Deliveries of a lost connection can no
// longer be settled (the broker redelivers them). Reconnects happen only on demand (a send,
// a receive, or attached receivers) with the shared backoff schedule, never by the keeper.
//
// Thread-safety: a client is used by one caller thread at a time (the transport contract);
// it synchronises internally with its keeper (one mutex, held for the whole of each call).

#include <babelqueue/result.hpp>
#include <babelqueue/runtime/error.hpp>

#include <proton/message.hpp>
#include <proton/symbol.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace babelqueue::inline v1::amqp10 {

struct tls_config {
  bool enabled = false;
  std::string ca_file;
  std::string cert_file;
  std::string key_file;
  std::string server_name;
  bool verify = true;
};

/// Claims-based security (Azure Service Bus, wire-brokers §2.6): after the AMQP open and
/// before any entity link, a token is put on `$cbs` (SASL ANONYMOUS), and put again every
/// `renew_every` while the connection lives.
struct cbs_config {
  /// The token's audience: `sb://<namespace host>/` (namespace policy) or `.../<entity>`.
  std::string audience;
  std::string token_type = "servicebus.windows.net:sastoken";
  /// Makes a fresh token; called while the connection is pumped (pure: e.g. an HMAC).
  std::function<result<std::string>()> make_token;
  std::chrono::milliseconds renew_every{std::chrono::minutes(45)};
};

struct client_config {
  std::string host;
  std::uint16_t port = 5672;
  /// Empty: SASL ANONYMOUS; else SASL PLAIN (allowed over plain TCP).
  std::string username;
  std::string password;
  /// The AMQP `open` hostname (virtual host); empty = host.
  std::string virtual_host;
  tls_config tls;
  std::chrono::milliseconds connect_timeout{5000};
  std::chrono::milliseconds idle_timeout{30000};
  std::chrono::milliseconds backoff_min{100};
  std::chrono::milliseconds backoff_max{5000};
  /// Credit of each receiver (unsettled messages held per address).
  std::uint32_t prefetch = 64;
  /// Capabilities put on every sender target and receiver source (Artemis: `queue`).
  std::vector<proton::symbol> link_capabilities;
  /// Names the binding in error messages ("artemis").
  std::string name = "amqp";
  /// Set: authorise with a CBS token (and SASL ANONYMOUS) before attaching links.
  std::optional<cbs_config> cbs;
};

/// How a received message is settled.
enum class outcome {
  accept,           ///< `accepted`: done, the broker forgets it
  modified_failed,  ///< `modified{delivery-failed=true}`: back to the queue, counted as failed
  release,          ///< `released`: back to the queue, not counted
  reject,           ///< `rejected`: the broker's own dead-letter handling
};

/// A settlement: the outcome, and for `reject` the error condition sent with it (ASB's
/// `com.microsoft:dead-letter` with its DeadLetterReason / DeadLetterErrorDescription info).
struct settlement {
  outcome how = outcome::accept;
  std::string condition;
  std::string description;
  std::vector<std::pair<std::string, std::string>> info;
};

/// Identifies a received delivery for settlement.
struct delivery_ref {
  std::uint64_t id = 0;
  std::uint64_t connection = 0;  ///< the connection generation it arrived on
};

struct inbound {
  proton::message message;
  delivery_ref ref;
};

struct client_stats {
  std::int64_t connects = 0;
  std::int64_t accepted = 0;
  std::int64_t delivered = 0;
  std::int64_t tokens_put = 0;  ///< CBS put-token requests the broker accepted
};

class client {
 public:
  using clock = std::chrono::steady_clock;

  /// Connects once (and starts the keeper): transport_errc::unavailable when the
  /// broker cannot be reached before connect_timeout, transport_errc::permission for a
  /// refused login.
  static result<std::unique_ptr<client>> open(client_config config);
  ~client();
  client(const client&) = delete;
  client& operator=(const client&) = delete;

  /// Sends each message to `address` unsettled and waits until the broker accepted all of
  /// them (or the first failure), at most until `deadline`.
  result<void> send(std::string_view address, std::vector<proton::message> messages,
                    clock::time_point deadline);

  /// The next message of `address` (attaching a receiver on first use), waiting until
  /// `deadline`. nullopt when nothing arrived.
  result<std::optional<inbound>> receive(std::string_view address, clock::time_point deadline);

  /// Hands a received message back once it has been read, so that a later delivery is decoded
  /// into its buffers (optional: a message not handed back is simply freed).
  void recycle(proton::message&& m);

  /// Settles a received delivery without waiting for the broker (an at-least-once
  /// receiver's settlement has no reply): applied to the engine at once and written out in
  /// runs — at once when no further message of that address is buffered, else when half of
  /// `prefetch` collected, or with the next I/O (a receive() that finds nothing buffered, a
  /// send, the keeper). transport_errc::unavailable when its connection was lost, closed
  /// after close().
  result<void> settle(const delivery_ref& ref, const settlement& how);
  result<void> settle(const delivery_ref& ref, outcome how) {
    return settle(ref, settlement{how, {}, {}, {}});
  }

  /// Closes the connection (unsettled deliveries go back to the broker) and stops the
  /// keeper, waiting at most until `deadline`. Every later call fails with
  /// transport_errc::closed.
  result<void> close(clock::time_point deadline);

  client_stats stats() const;

 private:
  struct impl;
  explicit client(std::unique_ptr<impl> impl);
  std::unique_ptr<impl> impl_;
};

}  // namespace babelqueue::inline v1::amqp10
