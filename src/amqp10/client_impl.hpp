#pragma once
// The state of one AMQP 1.0 client (client.hpp): a messaging_handler driven by a
// proton::io::connection_driver on the caller's own thread. Its members are defined in
// client_connection.cpp (connecting, the I/O pump), client_links.cpp (sending, receiving,
// settling, CBS, the Proton events) and client.cpp (the public calls). Every member is used
// under `io_` — held by the caller for the whole of each call, and by the keeper thread
// (with try_lock) for a short non-blocking pump while no call is in progress — except the
// statistics (`stats_m_`). Private to src/amqp10/.
#include "amqp10/client.hpp"
#include "amqp10/conditions.hpp"
#include "amqp10/tcp_socket.hpp"
#include "core/keeper_thread.hpp"
#include "core/reconnect_backoff.hpp"

#include <babelqueue/uuid.hpp>

#include <poll.h>
#include <proton/binary.hpp>
#include <proton/codec.h>
#include <proton/condition.h>
#include <proton/connection.hpp>
#include <proton/connection_options.hpp>
#include <proton/delivery.h>
#include <proton/delivery.hpp>
#include <proton/disposition.h>
#include <proton/duration.hpp>
#include <proton/error_condition.hpp>
#include <proton/io/connection_driver.hpp>
#include <proton/message_id.hpp>
#include <proton/messaging_handler.hpp>
#include <proton/receiver.hpp>
#include <proton/receiver_options.hpp>
#include <proton/scalar.hpp>
#include <proton/sender.hpp>
#include <proton/sender_options.hpp>
#include <proton/source.hpp>
#include <proton/source_options.hpp>
#include <proton/ssl.hpp>
#include <proton/target.hpp>
#include <proton/target_options.hpp>
#include <proton/timestamp.hpp>
#include <proton/tracker.hpp>
#include <proton/transport.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_map>

namespace babelqueue::inline v1::amqp10 {

namespace detail {

// A batch of messages for one address, from a caller waiting for all of them.
struct send_op {
  std::vector<proton::message> messages;
  std::size_t next = 0;  // the next message to send
  std::size_t accepted = 0;
  bool done = false;
  bool abandoned = false;  // the caller stopped waiting
  std::optional<error_info> error;
};

}  // namespace detail

struct client::impl final : proton::messaging_handler {
  using send_op = detail::send_op;

  explicit impl(client_config c)
      : config(std::move(c)), backoff_(config.backoff_min, config.backoff_max) {
    // Half the credit per run: the broker gets credit back while it still has half of it to
    // send with, so the stream does not stall on the caller's batch, and each write (a
    // syscall, a frame the broker must read) carries many settlements. Measured on Artemis
    // (docs/benchmarks-artemis.md): runs of 1 halve the consume rate, 1/4 of the credit costs
    // about a tenth against 1/2 or 3/4.
    settle_run_ = std::max<std::size_t>(1, config.prefetch / 2);
  }

  client_config config;
  std::mutex io_;  // see the file comment

  // ---- the connection -----------------------------------------------------------------
  detail::tcp_socket socket_;
  std::unique_ptr<proton::io::connection_driver> driver_;  // the open (or opening) connection
  bool tcp_connecting_ = false;  // the socket's connect has not completed yet
  proton::connection conn_;
  // idle → connecting → (authorizing: the CBS token, when configured) → up
  enum class state { idle, connecting, authorizing, up } state_ = state::idle;
  std::uint64_t generation_ = 0;          // connections opened so far
  std::uint64_t live_generation_ = 0;     // generation_ of the open connection, 0 while down
  clock::time_point connect_deadline_{};  // of the connect in progress
  std::int64_t next_tick_ms_ = 0;         // when Proton's transport wants its tick (0: never)
  babelqueue::detail::reconnect_backoff backoff_;
  std::optional<error_info> connect_error_;  // why the last connect failed (cleared on open)
  bool closing_ = false;
  bool closed_ = false;

  // ---- links and deliveries -----------------------------------------------------------
  struct out_link {
    proton::sender sender;
    bool open = false;
    std::deque<std::shared_ptr<send_op>> queue;
  };
  struct flight {
    std::shared_ptr<send_op> op;
    std::string address;
  };
  // One per address received from, made on its first receive() and kept for the client's
  // life (held deliveries point at their slot).
  struct inbox_slot {
    explicit inbox_slot(std::string a) : address(std::move(a)) {}
    const std::string address;
    std::deque<inbound> inbox;  // delivered, not handed out yet
    proton::receiver link;      // the attached receiver, else null
    bool wanted = false;        // receive() asked for it (attached again after a reconnect)
  };
  struct held_delivery {
    proton::delivery delivery;
    inbox_slot* slot;  // whose receiver gets the credit back
  };
  std::map<std::string, out_link, std::less<>> senders_;
  std::map<std::string, std::unique_ptr<inbox_slot>, std::less<>> slots_;
  std::map<std::string, inbox_slot*, std::less<>> receivers_;  // the slots asked for
  inbox_slot* last_slot_ = nullptr;  // the slot of the last receive() (one queue, usually)
  inbox_slot* last_rx_ = nullptr;    // the slot of the last message (one receiver, usually)
  std::map<std::string, error_info, std::less<>> receiver_errors_;
  std::unordered_map<std::uint64_t, flight> in_flight_;
  std::unordered_map<std::uint64_t, held_delivery> deliveries_;
  std::uint64_t next_tag_ = 0;
  std::uint64_t next_delivery_ = 0;
  // Settlements applied to the engine and not written out yet. Each write is a syscall and
  // one more small frame for the broker to read, so they go out in runs: at once when the
  // caller holds no further message of that receiver (it waits for the broker next), else
  // once settle_run_ collected, or with the next I/O (a receive() that finds nothing
  // buffered, a send, the keeper).
  std::size_t unflushed_settles_ = 0;
  std::size_t settle_run_ = 1;
  // Messages the caller has read and handed back (client::recycle): on_message swaps each
  // with the one Proton just decoded into, so Proton decodes the next delivery into buffers
  // that already exist.
  std::vector<proton::message> spare_;

  // CBS (config.cbs): the $cbs links, the request awaiting its reply, the next renewal.
  proton::sender cbs_sender_;
  proton::receiver cbs_receiver_;
  bool cbs_want_send_ = false;
  std::string cbs_request_id_;
  clock::time_point cbs_renew_at_{};

  mutable std::mutex stats_m_;
  client_stats stats_;

  // ---- the keeper -----------------------------------------------------------------------
  // Between calls nobody reads or writes the socket: during a long handler the broker's
  // heartbeats would go unread and ours unsent (a broker drops a silent connection after its
  // idle timeout), settlements unwritten, a CBS token unrenewed. The keeper pumps the
  // connection once per period while no call holds io_ (try_lock); it never reconnects.
  babelqueue::detail::keeper_thread keeper_;

  std::chrono::milliseconds keeper_period() const {
    using std::chrono::milliseconds;
    if (config.idle_timeout.count() <= 0) return milliseconds(1000);
    return std::clamp(config.idle_timeout / 4, milliseconds(50), milliseconds(1000));
  }

  // The OS refusing a thread is an error of open() (runtime_errc::resource_exhausted), never
  // an exception escaping it.
  result<void> start_keeper() {
    auto refused = keeper_.start(keeper_period(), [this] {
      std::unique_lock io(io_, std::try_to_lock);
      if (!io.owns_lock() || closing_ || driver_ == nullptr) return;  // a call pumps
      guarded([&] { pump_once(clock::now()); });
    });
    if (!refused) return {};
    return fail(runtime_errc::resource_exhausted,
                config.name + ": could not start the connection keeper thread: " + *refused);
  }

  void stop_keeper() { keeper_.stop(); }

  error_info closed_error() const {
    return error_info(transport_errc::closed, config.name + " transport is closed");
  }

  // Runs `fn`; a Proton exception escaping it (none should) drops the connection with its
  // text, so that what waits fails typed instead of the exception reaching the caller.
  template <class Fn>
  void guarded(Fn&& fn) {
    try {
      fn();
    } catch (const std::exception& e) {
      drop(error_info(transport_errc::unavailable, config.name + ": AMQP error: " + e.what()));
    }
  }

  // ---- connecting ---------------------------------------------------------------------

  bool demand() const;
  bool fatal_connect_error() const;
  proton::connection_options connection_options();
  std::string endpoint() const;

  // Starts a connection: the socket's connect, and Proton's open (SASL, TLS) queued behind
  // it. Its completion (on_connection_open) or failure comes through pump_once.
  void connect();
  void connect_failed(error_info why);

  // The socket and the driver of a connection that is over (lost() let go of its Proton
  // objects first: the driver frees them).
  void teardown();

  // Ends the connection in progress (or open) for `why`, without waiting for the broker.
  void drop(error_info why);

  // The connection is gone (or never came up): forget its links and deliveries, fail the
  // sends it had in flight, keep unsent work for the next connection.
  void lost(error_info why);

  // ---- the I/O pump -------------------------------------------------------------------

  // One round of I/O: dispatches Proton's events and writes what is pending, waits for the
  // socket until `until` at the latest (not at all once it is past), reads what arrived,
  // ticks the transport (heartbeats, the peer's idle timeout), dispatches and writes again.
  void pump_once(clock::time_point until);

  // Reads what the socket has, a few buffers at most (the events of a large burst are
  // dispatched before more is read). False when the connection ended.
  bool read_available();

  // Dispatches Proton's events and writes what they produced. False when the connection is
  // over (it is then torn down).
  bool dispatch_and_write();
  bool write_pending();

  // The socket failed: Proton reports it as a transport error (on_transport_error → lost).
  void disconnected(const std::string& what);

  // The driver is done: its connection ended (lost() ran from its events, unless it ended in
  // a way no event reported).
  void finished();

  // Pumps until `done()` or `deadline` (at least one round: a zero timeout still reads what
  // is there), reconnecting on demand with the backoff schedule.
  template <class Done>
  bool run_until(clock::time_point deadline, Done done) {
    for (bool first = true;; first = false) {
      if (done()) return true;
      const auto now = clock::now();
      if (!first && now >= deadline) return false;
      if (driver_ == nullptr) {
        if (!demand() || fatal_connect_error() || closing_) return done();
        if (now < backoff_.next_attempt()) {
          if (now >= deadline) return false;
          std::this_thread::sleep_until(std::min(deadline, backoff_.next_attempt()));
          continue;
        }
        guarded([&] { connect(); });
        continue;
      }
      guarded([&] { pump_once(deadline); });
    }
  }

  // Writes out what the engine holds (settlements, credit) without waiting.
  void flush();

  // ---- sending --------------------------------------------------------------------------

  // (Two functions, not one taking an optional error: GCC 12's -O1 TSan build warns about
  // moving an empty optional<error_info> in, -Wmaybe-uninitialized, a false positive.)
  void succeed(const std::shared_ptr<send_op>& op) { op->done = true; }

  void complete(const std::shared_ptr<send_op>& op, error_info error);
  void fail_queued_sends(const error_info& why);

  std::vector<proton::symbol> capabilities() const { return config.link_capabilities; }

  void open_sender(const std::string& address, out_link& link);
  void open_receiver(inbox_slot& slot);

  // Sends what the credit allows from the head of an address's queue.
  void pump(const std::string& address, out_link& link);
  void do_send(const std::string& address, const std::shared_ptr<send_op>& op);

  // ---- receiving ----------------------------------------------------------------------

  inbox_slot& slot_for(std::string_view address);
  void attach(inbox_slot& slot);

  // Applies a settlement (the caller checked the generation). A delivery of a connection
  // lost since is gone from deliveries_: the broker redelivers it.
  void do_settle(const delivery_ref& ref, const settlement& how);

  // ---- Proton events -------------------------------------------------------------------

  bool current(const proton::connection& c) const { return conn_ && c == conn_; }

  void on_connection_open(proton::connection& c) override;
  void became_up(proton::connection&);

  // ---- CBS ----------------------------------------------------------------------------

  static constexpr const char* cbs_address = "$cbs";
  void open_cbs();
  void put_token();
  void send_put_token();
  void on_cbs_reply(proton::delivery& d, const proton::message& m);

  // A token the broker (or the token maker) refused: the connection cannot be used.
  void cbs_failed(error_info why);

  // ---- link and delivery events ---------------------------------------------------------

  void on_sender_open(proton::sender& s) override;
  void on_sendable(proton::sender& s) override;
  std::optional<flight> take_flight(const proton::tracker& t);
  void on_tracker_accept(proton::tracker& t) override;
  void on_tracker_reject(proton::tracker& t) override;
  void on_tracker_release(proton::tracker& t) override;
  void on_tracker_settle(proton::tracker& t) override;
  void on_message(proton::delivery& d, proton::message& m) override;

  // The slot whose open receiver is `r`; null for a link no longer (or never) ours.
  inbox_slot* slot_of(const proton::receiver& r);
  void link_failed(const std::string& address, bool sender, const proton::error_condition& c);
  void on_sender_error(proton::sender& s) override;
  void on_sender_close(proton::sender& s) override;
  void on_receiver_error(proton::receiver& r) override;
  void on_receiver_close(proton::receiver& r) override;
  void on_transport_error(proton::transport& t) override;
  void on_connection_error(proton::connection& c) override;
  void on_transport_close(proton::transport& t) override;

  void on_session_error(proton::session&) override {}
  void on_error(const proton::error_condition&) override {}
};

}  // namespace babelqueue::inline v1::amqp10
