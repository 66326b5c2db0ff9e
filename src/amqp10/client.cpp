// The Proton C++ layer (see client.hpp): a messaging_handler driven by a
// proton::io::connection_driver on the caller's own thread. Every member of `impl` is used
// under `io_` — held by the caller for the whole of each call, and by the keeper thread
// (with try_lock) for a short non-blocking pump while no call is in progress — except the
// statistics (`stats_m_`) and the keeper's own flags (`keeper_m_`).
#include "amqp10/client.hpp"

#include "amqp10/conditions.hpp"
#include "amqp10/tcp_socket.hpp"
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
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <system_error>
#include <thread>
#include <unordered_map>

namespace babelqueue::inline v1::amqp10 {

namespace {

// Proton C++ 0.37 has no public way from a proton::delivery to its pn_delivery_t, and its
// delivery::modify() does not set delivery-failed (wire-brokers §4.5): reach the protected
// accessor through a derived class (never instantiated). Applying a pointer to a base's
// member function to a derived object is well-defined; GCC 12 at -O2 and above still warns
// that it type-puns (-Wstrict-aliasing, a false positive: no object is read through another
// type), hence the local suppression.
struct delivery_access : proton::delivery {
  static pn_delivery_t* raw(const proton::delivery& d) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-aliasing"
    return (d.*(&delivery_access::pn_object))();
#pragma GCC diagnostic pop
  }
};

void settle_modified_failed(const proton::delivery& d) {
  pn_delivery_t* pd = delivery_access::raw(d);
  pn_disposition_set_failed(pn_delivery_local(pd), true);
  pn_delivery_update(pd, PN_MODIFIED);
  pn_delivery_settle(pd);
}

void settle_rejected(const proton::delivery& d, const settlement& how) {
  pn_delivery_t* pd = delivery_access::raw(d);
  if (!how.condition.empty()) {
    pn_condition_t* c = pn_disposition_condition(pn_delivery_local(pd));
    pn_condition_set_name(c, how.condition.c_str());
    if (!how.description.empty()) pn_condition_set_description(c, how.description.c_str());
    if (!how.info.empty()) {
      pn_data_t* info = pn_condition_info(c);
      pn_data_put_map(info);
      pn_data_enter(info);
      for (const auto& [k, v] : how.info) {
        pn_data_put_symbol(info, pn_bytes(k.size(), k.data()));
        pn_data_put_string(info, pn_bytes(v.size(), v.data()));
      }
      pn_data_exit(info);
    }
  }
  pn_delivery_update(pd, PN_REJECTED);
  pn_delivery_settle(pd);
}

proton::binary tag_of(std::uint64_t n) {
  proton::binary b(sizeof n, 0);
  std::memcpy(b.data(), &n, sizeof n);
  return b;
}

std::uint64_t tag_value(const proton::binary& b) {
  std::uint64_t n = 0;
  if (b.size() == sizeof n) std::memcpy(&n, b.data(), sizeof n);
  return n;
}

// A batch of messages for one address, from a caller waiting for all of them.
struct send_op {
  std::vector<proton::message> messages;
  std::size_t next = 0;  // the next message to send
  std::size_t accepted = 0;
  bool done = false;
  bool abandoned = false;  // the caller stopped waiting
  std::optional<error_info> error;
};

std::int64_t millis_of(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

}  // namespace

struct client::impl final : proton::messaging_handler {
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
  std::thread keeper_;
  std::mutex keeper_m_;
  std::condition_variable keeper_cv_;
  bool keeper_stop_ = false;

  std::chrono::milliseconds keeper_period() const {
    using std::chrono::milliseconds;
    if (config.idle_timeout.count() <= 0) return milliseconds(1000);
    return std::clamp(config.idle_timeout / 4, milliseconds(50), milliseconds(1000));
  }

  // std::thread throws std::system_error when the OS refuses a thread; open() returns that
  // as runtime_errc::resource_exhausted instead of letting it escape.
  result<void> start_keeper() {
    try {
      keeper_ = std::thread([this] {
        std::unique_lock k(keeper_m_);
        while (!keeper_cv_.wait_for(k, keeper_period(), [this] { return keeper_stop_; })) {
          std::unique_lock io(io_, std::try_to_lock);
          if (!io.owns_lock() || closing_ || driver_ == nullptr) continue;  // a call pumps
          guarded([&] { pump_once(clock::now()); });
        }
      });
    } catch (const std::system_error& e) {
      return fail(runtime_errc::resource_exhausted,
                  config.name + ": could not start the connection keeper thread: " + e.what());
    }
    return {};
  }

  void stop_keeper() {
    {
      std::lock_guard k(keeper_m_);
      keeper_stop_ = true;
    }
    keeper_cv_.notify_all();
    if (keeper_.joinable()) keeper_.join();
  }

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

  bool demand() const {
    if (!receivers_.empty()) return true;
    for (const auto& [address, link] : senders_) {
      if (!link.queue.empty()) return true;
    }
    return false;
  }

  bool fatal_connect_error() const {
    return state_ == state::idle && connect_error_ &&
           connect_error_->code == transport_errc::permission;
  }

  proton::connection_options connection_options() {
    proton::connection_options co;
    co.handler(*this);
    co.container_id(uuid_v4());
    co.idle_timeout(proton::duration(config.idle_timeout.count()));
    co.sasl_enabled(true);
    if (!config.username.empty()) {
      co.user(config.username);
      co.password(config.password);
      co.sasl_allowed_mechs("PLAIN");
      co.sasl_allow_insecure_mechs(true);  // Artemis's default acceptors are plain TCP
    } else {
      co.sasl_allowed_mechs("ANONYMOUS");
    }
    // The AMQP open hostname; Proton checks the server's TLS name against it too.
    std::string vhost = config.virtual_host.empty() ? config.host : config.virtual_host;
    if (config.tls.enabled) {
      const auto mode =
          config.tls.verify ? proton::ssl::VERIFY_PEER_NAME : proton::ssl::ANONYMOUS_PEER;
      if (!config.tls.cert_file.empty()) {
        co.ssl_client_options(proton::ssl_client_options(
            proton::ssl_certificate(config.tls.cert_file, config.tls.key_file), config.tls.ca_file,
            mode));
      } else if (!config.tls.ca_file.empty()) {
        co.ssl_client_options(proton::ssl_client_options(config.tls.ca_file, mode));
      } else {
        co.ssl_client_options(proton::ssl_client_options(mode));
      }
      if (!config.tls.server_name.empty()) vhost = config.tls.server_name;
    }
    co.virtual_host(vhost);
    return co;
  }

  std::string endpoint() const {
    return std::string(config.tls.enabled ? "amqps://" : "amqp://") + config.host + ":" +
           std::to_string(config.port);
  }

  // Starts a connection: the socket's connect, and Proton's open (SASL, TLS) queued behind
  // it. Its completion (on_connection_open) or failure comes through pump_once.
  void connect() {
    state_ = state::connecting;
    connect_deadline_ = clock::now() + config.connect_timeout;
    next_tick_ms_ = 0;
    if (std::string why = socket_.start_connect(config.host, config.port); !why.empty()) {
      state_ = state::idle;
      connect_failed(error_info(transport_errc::unavailable,
                                config.name + ": cannot connect to " + endpoint() + ": " + why));
      return;
    }
    tcp_connecting_ = true;
    try {
      driver_ = std::make_unique<proton::io::connection_driver>();
      driver_->connect(connection_options());
      conn_ = driver_->connection();
    } catch (const std::exception& e) {
      conn_ = proton::connection();
      teardown();
      state_ = state::idle;
      connect_failed(error_info(transport_errc::unavailable, config.name + ": cannot connect to " +
                                                                 endpoint() + ": " + e.what()));
    }
  }

  void connect_failed(error_info why) {
    backoff_.failed();
    const bool fatal = why.code == transport_errc::permission;
    connect_error_ = std::move(why);
    // A refused login does not heal by retrying: fail what waits for this connection.
    if (fatal) fail_queued_sends(*connect_error_);
  }

  // The socket and the driver of a connection that is over (lost() let go of its Proton
  // objects first: the driver frees them).
  void teardown() {
    socket_.close();
    tcp_connecting_ = false;
    driver_.reset();
    next_tick_ms_ = 0;
  }

  // Ends the connection in progress (or open) for `why`, without waiting for the broker.
  void drop(error_info why) {
    if (state_ != state::idle) lost(std::move(why));
    teardown();
  }

  // The connection is gone (or never came up): forget its links and deliveries, fail the
  // sends it had in flight, keep unsent work for the next connection.
  void lost(error_info why) {
    const bool was_up = state_ == state::up;
    state_ = state::idle;
    live_generation_ = 0;
    conn_ = proton::connection();
    for (auto& [tag, f] : in_flight_) {
      complete(f.op, error_info(transport_errc::unavailable,
                                config.name + ": connection lost before the broker confirmed " +
                                    "the message (unconfirmed): " + why.message,
                                {}, why.native));
    }
    in_flight_.clear();
    for (auto& [address, link] : senders_) {
      link.sender = proton::sender();
      link.open = false;
      // A batch cut in the middle cannot be resumed on a new connection without resending.
      while (!link.queue.empty() && link.queue.front()->next > 0) {
        complete(link.queue.front(), error_info(transport_errc::unavailable,
                                                config.name + ": connection lost during a " +
                                                    "batch (unconfirmed): " + why.message));
        link.queue.pop_front();
      }
    }
    // Unsettled: the broker redelivers them.
    for (auto& [address, slot] : slots_) {
      slot->link = proton::receiver();
      slot->inbox.clear();
    }
    deliveries_.clear();
    unflushed_settles_ = 0;
    cbs_sender_ = proton::sender();
    cbs_receiver_ = proton::receiver();
    cbs_want_send_ = false;
    cbs_request_id_.clear();
    if (was_up) {
      backoff_.succeeded();  // the first reconnect after a working connection is immediate
      connect_error_ = std::move(why);
    } else {
      connect_failed(std::move(why));
    }
  }

  // ---- the I/O pump -------------------------------------------------------------------

  // One round of I/O: dispatches Proton's events and writes what is pending, waits for the
  // socket until `until` at the latest (not at all once it is past), reads what arrived,
  // ticks the transport (heartbeats, the peer's idle timeout), dispatches and writes again.
  void pump_once(clock::time_point until) {
    if (driver_ == nullptr) return;
    if (!tcp_connecting_ && !dispatch_and_write()) return;
    const auto now = clock::now();
    if ((state_ == state::connecting || state_ == state::authorizing) && now >= connect_deadline_) {
      drop(error_info(transport_errc::unavailable,
                      config.name + ": no AMQP connection to " + config.host + ":" +
                          std::to_string(config.port) + " within connect_timeout (" +
                          std::to_string(config.connect_timeout.count()) + " ms)" +
                          (state_ == state::authorizing ? ": no CBS put-token reply" : "")));
      return;
    }
    if (state_ == state::up && config.cbs && cbs_request_id_.empty() && !cbs_want_send_ &&
        now >= cbs_renew_at_) {
      put_token();
      if (!dispatch_and_write()) return;
    }
    pollfd p{socket_.fd(), 0, 0};
    if (tcp_connecting_) {
      p.events = POLLOUT;
    } else {
      if (driver_->read_buffer().size > 0) p.events |= POLLIN;
      if (driver_->write_buffer().size > 0) p.events |= POLLOUT;
    }
    auto wake = until;
    if (state_ != state::up) wake = std::min(wake, connect_deadline_);
    if (state_ == state::up && config.cbs) wake = std::min(wake, cbs_renew_at_);
    std::int64_t wait_ms = std::max<std::int64_t>(
        0, std::chrono::duration_cast<std::chrono::milliseconds>(wake - now).count());
    if (wake > now && wait_ms == 0) wait_ms = 1;  // under a millisecond left: round up
    if (next_tick_ms_ > 0) {
      wait_ms = std::min(wait_ms, std::max<std::int64_t>(0, next_tick_ms_ - millis_of(now)));
    }
    const int ready = ::poll(&p, 1, static_cast<int>(std::min<std::int64_t>(wait_ms, 60000)));
    if (ready < 0 && errno != EINTR) {
      disconnected("poll: " + std::string(std::strerror(errno)));
      return;
    }
    if (tcp_connecting_) {
      if ((p.revents & (POLLOUT | POLLERR | POLLHUP)) == 0) return;
      if (std::string why = socket_.finish_connect(); !why.empty()) {
        drop(error_info(transport_errc::unavailable,
                        config.name + ": cannot connect to " + endpoint() + ": " + why));
        return;
      }
      tcp_connecting_ = false;
      dispatch_and_write();
      return;
    }
    if ((p.revents & (POLLIN | POLLHUP | POLLERR)) != 0 && !read_available()) return;
    if (driver_ == nullptr) return;
    next_tick_ms_ = driver_->tick(proton::timestamp(millis_of(clock::now()))).milliseconds();
    dispatch_and_write();
  }

  // Reads what the socket has, a few buffers at most (the events of a large burst are
  // dispatched before more is read). False when the connection ended.
  bool read_available() {
    for (int i = 0; i < 4; ++i) {
      const auto buf = driver_->read_buffer();
      if (buf.size == 0) return true;
      const auto n = socket_.read_some(buf.data, buf.size);
      if (n > 0) {
        driver_->read_done(static_cast<std::size_t>(n));
        if (static_cast<std::size_t>(n) < buf.size) return true;
        continue;
      }
      if (n == -1) return true;
      if (n == 0) {
        driver_->read_close();  // its events are dispatched next
        return true;
      }
      disconnected("read: " + socket_.error());
      return false;
    }
    return true;
  }

  // Dispatches Proton's events and writes what they produced. False when the connection is
  // over (it is then torn down).
  bool dispatch_and_write() {
    if (driver_ == nullptr) return false;
    for (int i = 0; i < 8; ++i) {
      if (!driver_->dispatch()) {
        finished();
        return false;
      }
      if (!write_pending()) return false;
      if (!driver_->has_events()) break;
    }
    return true;
  }

  bool write_pending() {
    for (;;) {
      const auto buf = driver_->write_buffer();
      if (buf.size == 0) {
        unflushed_settles_ = 0;
        return true;
      }
      const auto n = socket_.write_some(buf.data, buf.size);
      if (n > 0) {
        driver_->write_done(static_cast<std::size_t>(n));
        continue;
      }
      if (n == 0) return true;  // the socket is full: POLLOUT next round
      disconnected("write: " + socket_.error());
      return false;
    }
  }

  // The socket failed: Proton reports it as a transport error (on_transport_error → lost).
  void disconnected(const std::string& what) {
    if (driver_ == nullptr) return;
    driver_->disconnected(proton::error_condition("proton:io", what));
    for (int i = 0; i < 16 && driver_->dispatch(); ++i) {
    }
    finished();
  }

  // The driver is done: its connection ended (lost() ran from its events, unless it ended in
  // a way no event reported).
  void finished() {
    if (state_ != state::idle) {
      lost(closing_ ? closed_error()
                    : error_info(transport_errc::unavailable, config.name + ": connection closed"));
    }
    teardown();
  }

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
  void flush() {
    if (driver_ == nullptr || tcp_connecting_) return;
    dispatch_and_write();
  }

  // ---- sending --------------------------------------------------------------------------

  // (Two functions, not one taking an optional error: GCC 12's -O1 TSan build warns about
  // moving an empty optional<error_info> in, -Wmaybe-uninitialized, a false positive.)
  void succeed(const std::shared_ptr<send_op>& op) { op->done = true; }

  void complete(const std::shared_ptr<send_op>& op, error_info error) {
    if (op->done) return;
    op->done = true;
    op->error = std::move(error);
  }

  void fail_queued_sends(const error_info& why) {
    for (auto& [address, link] : senders_) {
      for (auto& op : link.queue) complete(op, why);
      link.queue.clear();
    }
  }

  std::vector<proton::symbol> capabilities() const { return config.link_capabilities; }

  void open_sender(const std::string& address, out_link& link) {
    proton::sender_options so;
    so.delivery_mode(proton::delivery_mode::AT_LEAST_ONCE);
    so.target(proton::target_options().address(address).capabilities(capabilities()));
    link.sender = conn_.open_sender(address, so);
    link.open = false;
  }

  void open_receiver(inbox_slot& slot) {
    const std::string& address = slot.address;
    proton::receiver_options ro;
    ro.auto_accept(false);
    ro.credit_window(0);  // credit is given back per settled message (see do_settle)
    ro.delivery_mode(proton::delivery_mode::AT_LEAST_ONCE);
    ro.source(proton::source_options().address(address).capabilities(capabilities()));
    slot.link = conn_.open_receiver(address, ro);
    slot.link.add_credit(config.prefetch);
  }

  // Sends what the credit allows from the head of an address's queue.
  void pump(const std::string& address, out_link& link) {
    if (!link.open || !link.sender) return;
    while (!link.queue.empty() && link.sender.credit() > 0) {
      auto op = link.queue.front();
      if (op->next == 0 && (op->abandoned || op->done)) {
        link.queue.pop_front();
        continue;
      }
      const std::uint64_t tag = ++next_tag_;
      link.sender.send(op->messages[op->next], tag_of(tag));
      op->messages[op->next] = proton::message();  // sent: free its body now
      ++op->next;
      in_flight_[tag] = flight{op, address};
      if (op->next == op->messages.size()) link.queue.pop_front();
    }
  }

  void do_send(const std::string& address, const std::shared_ptr<send_op>& op) {
    auto& link = senders_[address];
    link.queue.push_back(op);
    if (state_ != state::up) return;  // run_until connects
    if (!link.sender) open_sender(address, link);
    pump(address, link);
  }

  // ---- receiving ----------------------------------------------------------------------

  inbox_slot& slot_for(std::string_view address) {
    if (last_slot_ != nullptr && last_slot_->address == address) return *last_slot_;
    auto it = slots_.find(address);
    if (it == slots_.end()) {
      it = slots_.emplace(std::string(address), std::make_unique<inbox_slot>(std::string(address)))
               .first;
    }
    return *(last_slot_ = it->second.get());
  }

  void attach(inbox_slot& slot) {
    slot.wanted = true;
    receivers_[slot.address] = &slot;
    if (state_ == state::up && !slot.link) open_receiver(slot);
  }

  // Applies a settlement (the caller checked the generation). A delivery of a connection
  // lost since is gone from deliveries_: the broker redelivers it.
  void do_settle(const delivery_ref& ref, const settlement& how) {
    if (ref.connection != generation_ || state_ != state::up) return;
    auto it = deliveries_.find(ref.id);
    if (it == deliveries_.end()) return;
    proton::delivery d = std::move(it->second.delivery);
    inbox_slot* slot = it->second.slot;
    deliveries_.erase(it);
    switch (how.how) {
      case outcome::accept:
        d.accept();
        break;
      case outcome::modified_failed:
        settle_modified_failed(d);
        break;
      case outcome::release:
        d.release();
        break;
      case outcome::reject:
        settle_rejected(d, how);
        break;
    }
    if (slot->link) slot->link.add_credit(1);
    ++unflushed_settles_;
    if (slot->inbox.empty() || unflushed_settles_ >= settle_run_) flush();
  }

  // ---- Proton events -------------------------------------------------------------------

  bool current(const proton::connection& c) const { return conn_ && c == conn_; }

  void on_connection_open(proton::connection& c) override {
    if (!current(c)) return;
    if (config.cbs) {
      state_ = state::authorizing;  // entity links wait for the token (wire-brokers §2.6)
      open_cbs();
      return;
    }
    became_up(c);
  }

  void became_up(proton::connection&) {
    state_ = state::up;
    ++generation_;
    live_generation_ = generation_;
    backoff_.succeeded();
    connect_error_.reset();
    {
      std::lock_guard lk(stats_m_);
      ++stats_.connects;
    }
    for (auto& [address, slot] : receivers_) open_receiver(*slot);
    for (auto& [address, link] : senders_) {
      if (!link.queue.empty()) open_sender(address, link);
    }
  }

  // ---- CBS ----------------------------------------------------------------------------

  static constexpr const char* cbs_address = "$cbs";

  void open_cbs() {
    proton::sender_options so;
    so.delivery_mode(proton::delivery_mode::AT_LEAST_ONCE);
    so.target(proton::target_options().address(cbs_address));
    cbs_sender_ = conn_.open_sender(cbs_address, so);
    proton::receiver_options ro;
    ro.auto_accept(false);
    ro.credit_window(0);
    ro.source(proton::source_options().address(cbs_address));
    // Replies come on the link whose target is the requests' reply-to.
    ro.target(proton::target_options().address(cbs_address));
    cbs_receiver_ = conn_.open_receiver(cbs_address, ro);
    cbs_receiver_.add_credit(16);
    put_token();
  }

  void put_token() {
    cbs_want_send_ = true;
    if (cbs_sender_ && cbs_sender_.credit() > 0) send_put_token();
  }

  void send_put_token() {
    cbs_want_send_ = false;
    auto token = config.cbs->make_token();
    if (!token) {
      cbs_failed(token.error());
      return;
    }
    // Unique across clients: on a broker where $cbs is multicast every client sees every
    // reply, and matches its own by this id.
    cbs_request_id_ = uuid_v4();
    proton::message m;
    m.id(proton::message_id(cbs_request_id_));
    m.reply_to(cbs_address);
    m.properties().put("operation", std::string("put-token"));
    m.properties().put("type", config.cbs->token_type);
    m.properties().put("name", config.cbs->audience);
    m.body(*token);  // an amqp-value string
    cbs_sender_.send(m);
  }

  void on_cbs_reply(proton::delivery& d, const proton::message& m) {
    d.accept();
    cbs_receiver_.add_credit(1);
    std::string correlation;
    try {
      correlation = proton::get<std::string>(m.correlation_id());
    } catch (const std::exception&) {
      return;  // not a reply to us (e.g. our own request, echoed by a multicast $cbs)
    }
    if (correlation.empty() || correlation != cbs_request_id_) return;
    cbs_request_id_.clear();
    std::int64_t status = 0;
    std::string description;
    try {
      if (m.properties().exists("status-code")) {
        status = proton::coerce<std::int64_t>(m.properties().get("status-code"));
      }
      if (m.properties().exists("status-description")) {
        description = proton::coerce<std::string>(m.properties().get("status-description"));
      }
    } catch (const std::exception&) {
      status = 0;
    }
    if (status == 200 || status == 202) {
      {
        std::lock_guard lk(stats_m_);
        ++stats_.tokens_put;
      }
      cbs_renew_at_ = clock::now() + config.cbs->renew_every;
      if (state_ == state::authorizing) {
        proton::connection c = conn_;
        became_up(c);
      }
      return;
    }
    cbs_failed(error_info(
        status == 401 || status == 403 ? transport_errc::permission : transport_errc::refused,
        config.name + ": the broker refused the CBS token for '" + config.cbs->audience +
            "': status " + std::to_string(status) + (description.empty() ? "" : " " + description),
        {}, native_error{"cbs", status, description}));
  }

  // A token the broker (or the token maker) refused: the connection cannot be used.
  void cbs_failed(error_info why) {
    proton::connection stale = conn_;
    lost(std::move(why));
    try {
      if (stale) stale.close();
    } catch (const std::exception&) {
    }
  }

  void on_sender_open(proton::sender& s) override {
    if (cbs_sender_ && s == cbs_sender_) return;
    auto it = senders_.find(s.target().address());
    if (it == senders_.end() || !(it->second.sender == s)) return;
    it->second.open = true;
    pump(it->first, it->second);
  }

  void on_sendable(proton::sender& s) override {
    if (cbs_sender_ && s == cbs_sender_) {
      if (cbs_want_send_) send_put_token();
      return;
    }
    auto it = senders_.find(s.target().address());
    if (it == senders_.end() || !(it->second.sender == s)) return;
    it->second.open = true;
    pump(it->first, it->second);
  }

  std::optional<flight> take_flight(const proton::tracker& t) {
    auto it = in_flight_.find(tag_value(t.tag()));
    if (it == in_flight_.end()) return std::nullopt;
    flight f = std::move(it->second);
    in_flight_.erase(it);
    return f;
  }

  void on_tracker_accept(proton::tracker& t) override {
    auto f = take_flight(t);
    if (!f) return;
    {
      std::lock_guard lk(stats_m_);
      ++stats_.accepted;
    }
    if (++f->op->accepted == f->op->messages.size()) succeed(f->op);
  }

  void on_tracker_reject(proton::tracker& t) override {
    if (auto f = take_flight(t)) {
      complete(f->op, error_info(transport_errc::refused,
                                 config.name + ": the broker rejected the message on '" +
                                     f->address + "'"));
    }
  }

  void on_tracker_release(proton::tracker& t) override {
    if (auto f = take_flight(t)) {
      complete(f->op, error_info(transport_errc::refused,
                                 config.name + ": the broker released the message on '" +
                                     f->address + "' without storing it"));
    }
  }

  void on_tracker_settle(proton::tracker& t) override {
    if (auto f = take_flight(t)) {  // settled with no outcome we know
      complete(f->op, error_info(transport_errc::refused,
                                 config.name + ": the broker settled the message on '" +
                                     f->address + "' without accepting it"));
    }
  }

  void on_message(proton::delivery& d, proton::message& m) override {
    proton::receiver r = d.receiver();
    if (cbs_receiver_ && r == cbs_receiver_) {
      on_cbs_reply(d, m);
      return;
    }
    inbox_slot* slot = slot_of(r);
    if (slot == nullptr) {  // not a receiver of ours (any more): the broker redelivers it
      d.release();
      return;
    }
    const std::uint64_t id = ++next_delivery_;
    deliveries_.emplace(id, held_delivery{d, slot});
    {
      std::lock_guard lk(stats_m_);
      ++stats_.delivered;
    }
    inbound& in = slot->inbox.emplace_back();
    if (!spare_.empty()) {
      swap(in.message, spare_.back());  // the spare's buffers go to Proton below
      spare_.pop_back();
    }
    swap(in.message, m);
    in.ref = delivery_ref{id, generation_};
  }

  // The slot whose open receiver is `r`; null for a link no longer (or never) ours.
  inbox_slot* slot_of(const proton::receiver& r) {
    if (last_rx_ != nullptr && last_rx_->link == r) return last_rx_;
    for (auto& [address, slot] : receivers_) {
      if (slot->link == r) return last_rx_ = slot;
    }
    return nullptr;
  }

  void link_failed(const std::string& address, bool sender, const proton::error_condition& c) {
    error_info why = from_condition(c, config.name,
                                    (sender ? "sending to '" : "receiving from '") + address + "'");
    if (sender) {
      auto it = senders_.find(address);
      if (it == senders_.end()) return;
      for (auto& op : it->second.queue) complete(op, why);
      for (auto f = in_flight_.begin(); f != in_flight_.end();) {
        if (f->second.address == address) {
          complete(f->second.op, why);
          f = in_flight_.erase(f);
        } else {
          ++f;
        }
      }
      senders_.erase(it);
    } else {
      if (auto it = receivers_.find(address); it != receivers_.end()) {
        it->second->link = proton::receiver();
        it->second->wanted = false;  // the next receive() attaches it again
        receivers_.erase(it);
      }
      receiver_errors_[address] = why;
    }
  }

  void on_sender_error(proton::sender& s) override {
    if (cbs_sender_ && s == cbs_sender_) {
      cbs_failed(from_condition(s.error(), config.name, "the CBS link"));
      return;
    }
    const std::string address = s.target().address();
    auto it = senders_.find(address);
    if (it != senders_.end() && it->second.sender == s) link_failed(address, true, s.error());
  }

  void on_sender_close(proton::sender& s) override {
    const std::string address = s.target().address();
    auto it = senders_.find(address);
    if (it != senders_.end() && it->second.sender == s && !closing_) {
      link_failed(address, true,
                  proton::error_condition("amqp:link:detach-forced", "the broker closed the link"));
    }
  }

  void on_receiver_error(proton::receiver& r) override {
    if (cbs_receiver_ && r == cbs_receiver_) {
      cbs_failed(from_condition(r.error(), config.name, "the CBS link"));
      return;
    }
    const std::string address = r.source().address();
    auto it = receivers_.find(address);
    if (it != receivers_.end() && it->second->link == r) link_failed(address, false, r.error());
  }

  void on_receiver_close(proton::receiver& r) override {
    const std::string address = r.source().address();
    auto it = receivers_.find(address);
    if (it != receivers_.end() && it->second->link == r && !closing_) {
      link_failed(address, false,
                  proton::error_condition("amqp:link:detach-forced", "the broker closed the link"));
    }
  }

  void on_transport_error(proton::transport& t) override {
    if (!current(t.connection())) return;
    lost(from_condition(t.error(), config.name,
                        "connection to " + config.host + ":" + std::to_string(config.port)));
  }

  void on_connection_error(proton::connection& c) override {
    if (!current(c)) return;
    lost(from_condition(c.error(), config.name,
                        "connection to " + config.host + ":" + std::to_string(config.port)));
  }

  void on_transport_close(proton::transport& t) override {
    if (closing_ || !current(t.connection())) return;
    lost(error_info(transport_errc::unavailable, config.name + ": connection closed"));
  }

  void on_session_error(proton::session&) override {}
  void on_error(const proton::error_condition&) override {}
};

client::client(std::unique_ptr<impl> i) : impl_(std::move(i)) {}

client::~client() {
  if (impl_) (void)close(clock::now() + std::chrono::milliseconds(500));
}

result<std::unique_ptr<client>> client::open(client_config config) {
  auto i = std::make_unique<impl>(std::move(config));
  impl* p = i.get();
  std::unique_ptr<client> c(new client(std::move(i)));
  {
    std::lock_guard io(p->io_);
    const auto deadline = clock::now() + p->config.connect_timeout;
    p->guarded([p] { p->connect(); });
    // Pumped by hand: the connection itself is the demand here.
    while (p->state_ != impl::state::up && p->driver_ != nullptr && clock::now() < deadline) {
      p->guarded([&] { p->pump_once(deadline); });
    }
    if (p->state_ != impl::state::up) {
      error_info why = p->connect_error_.value_or(error_info(
          transport_errc::unavailable, p->config.name + ": no AMQP connection to " +
                                           p->config.host + ":" + std::to_string(p->config.port) +
                                           " within connect_timeout"));
      p->drop(why);
      p->closed_ = true;
      return fail(std::move(why));
    }
  }
  // On failure `c` closes the connection it opened as it goes out of scope.
  if (auto keeper = p->start_keeper(); !keeper) return fail(keeper.error());
  return c;
}

result<void> client::send(std::string_view address, std::vector<proton::message> messages,
                          clock::time_point deadline) {
  if (messages.empty()) return {};
  impl* p = impl_.get();
  std::lock_guard io(p->io_);
  if (p->closed_ || p->closing_) return fail(p->closed_error());
  auto op = std::make_shared<send_op>();
  op->messages = std::move(messages);
  p->guarded([&] { p->do_send(std::string(address), op); });
  p->run_until(deadline, [&] { return op->done; });
  if (op->done) {
    if (op->error) return fail(*op->error);
    return {};
  }
  op->abandoned = true;
  if (p->state_ != impl::state::up && p->connect_error_) {
    error_info why = *p->connect_error_;
    why.message += " (gave up at operation_timeout)";
    return fail(std::move(why));
  }
  return fail(transport_errc::timeout,
              p->config.name + ": the broker did not confirm the message on '" +
                  std::string(address) + "' within operation_timeout (unconfirmed)");
}

result<std::optional<inbound>> client::receive(std::string_view address,
                                               clock::time_point deadline) {
  impl* p = impl_.get();
  std::lock_guard io(p->io_);
  if (p->closed_ || p->closing_) return fail(p->closed_error());
  auto& slot = p->slot_for(address);
  auto take = [&slot] {
    std::optional<inbound> in(std::move(slot.inbox.front()));
    slot.inbox.pop_front();
    return in;
  };
  if (!slot.inbox.empty()) return take();  // the common case: no I/O
  auto refusal = [&]() -> std::optional<error_info> {
    auto e = p->receiver_errors_.find(address);
    if (e == p->receiver_errors_.end()) return std::nullopt;
    error_info why = std::move(e->second);
    p->receiver_errors_.erase(e);
    return why;
  };
  if (auto why = refusal()) return fail(std::move(*why));
  if (!slot.wanted) p->guarded([&] { p->attach(slot); });
  p->run_until(deadline, [&] {
    return !slot.inbox.empty() || p->receiver_errors_.count(address) != 0 ||
           p->fatal_connect_error();
  });
  if (!slot.inbox.empty()) return take();
  if (auto why = refusal()) return fail(std::move(*why));
  if (p->state_ != impl::state::up && p->connect_error_) return fail(*p->connect_error_);
  return std::optional<inbound>();
}

result<void> client::settle(const delivery_ref& ref, const settlement& how) {
  impl* p = impl_.get();
  std::lock_guard io(p->io_);
  if (p->closed_ || p->closing_) return fail(p->closed_error());
  if (ref.connection != p->live_generation_) {
    return fail(transport_errc::unavailable,
                p->config.name + ": the connection this message arrived on was lost; " +
                    "the broker delivers it again");
  }
  // No broker reply to wait for: an at-least-once receiver's settlement is done once
  // written, in runs (see unflushed_settles_).
  p->guarded([&] { p->do_settle(ref, how); });
  return {};
}

result<void> client::close(clock::time_point deadline) {
  impl* p = impl_.get();
  p->stop_keeper();
  std::lock_guard io(p->io_);
  if (p->closed_ || p->closing_) return {};
  p->closing_ = true;
  if (p->driver_ != nullptr) {
    // Unsettled deliveries go back to the broker with the connection.
    p->guarded([&] {
      if (p->state_ != impl::state::idle && p->conn_) p->conn_.close();
      while (p->driver_ != nullptr && clock::now() < deadline) p->pump_once(deadline);
    });
    if (p->state_ != impl::state::idle) p->lost(p->closed_error());
    p->teardown();
  }
  p->fail_queued_sends(p->closed_error());
  p->closed_ = true;
  return {};
}

void client::recycle(proton::message&& m) {
  impl* p = impl_.get();
  std::lock_guard io(p->io_);
  if (p->spare_.size() < 2 * static_cast<std::size_t>(p->config.prefetch) + 16) {
    p->spare_.push_back(std::move(m));
  }
}

client_stats client::stats() const {
  std::lock_guard lk(impl_->stats_m_);
  return impl_->stats_;
}

}  // namespace babelqueue::inline v1::amqp10
