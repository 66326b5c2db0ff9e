// The Proton C++ layer (see client.hpp): a messaging_handler on the client's own thread,
// and the caller-side waits. Everything named `*_` below without a lock comment is touched
// only on the Proton thread; what sits under `m_` is shared with the caller.
#include "amqp10/client.hpp"

#include "amqp10/conditions.hpp"
#include "core/reconnect_backoff.hpp"

#include <babelqueue/uuid.hpp>

#include <proton/binary.hpp>
#include <proton/codec.h>
#include <proton/condition.h>
#include <proton/connection.hpp>
#include <proton/connection_options.hpp>
#include <proton/container.hpp>
#include <proton/delivery.h>
#include <proton/delivery.hpp>
#include <proton/disposition.h>
#include <proton/duration.hpp>
#include <proton/error_condition.hpp>
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
#include <proton/tracker.hpp>
#include <proton/transport.hpp>
#include <proton/work_queue.hpp>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
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
  std::size_t next = 0;             // Proton thread: the next message to send
  std::size_t accepted = 0;         // Proton thread
  bool done = false;                // under m_
  bool abandoned = false;           // under m_: the caller stopped waiting
  std::optional<error_info> error;  // under m_
};

}  // namespace

struct client::impl final : proton::messaging_handler {
  explicit impl(client_config c)
      : config(std::move(c)), container_(*this), backoff_(config.backoff_min, config.backoff_max) {
    container_.auto_stop(false);
    // A quarter of the credit per run: the broker gets credit back while it still has some
    // left to send with, so the stream does not stall waiting for the caller's batch.
    settle_run_ = std::max<std::size_t>(1, config.prefetch / 4);
  }

  // ---- shared with the caller (under m_) -------------------------------------------
  client_config config;
  mutable std::mutex m_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> work_;
  // Settlements waiting for the Proton thread: a plain vector, not work_, because there is
  // one per consumed message (no std::function allocation each).
  std::vector<std::pair<delivery_ref, settlement>> settles_;
  proton::work_queue* work_queue_ = nullptr;  // the open connection's, else null
  bool wake_pending_ = false;
  bool connected_ = false;
  // generation_ of the open connection, 0 while there is none. Atomic so that the caller's
  // fast paths (a message already taken over, a settlement) check it without m_.
  std::atomic<std::uint64_t> live_generation_{0};
  int waiters_ = 0;                    // callers blocked in receive(): on_message wakes them
  // A waiting receive() was notified and has not looked yet: the messages arriving meanwhile
  // need no further notify (each is a futex syscall while the waiter has not woken up).
  bool receive_notified_ = false;
  bool closing_ = false;
  bool stopped_ = false;
  std::atomic<bool> closed_for_caller_{false};  // closing_ || stopped_, read without m_
  bool run_finished_ = false;                // container_.run() returned for good
  std::optional<error_info> connect_error_;  // why the last connect failed (cleared on open)
  // One inbox per address received from. Slots are only added (by the caller, under m_) and
  // live as long as the client, so both threads keep plain pointers to them; the caller
  // reads the map without m_ (it is its only writer).
  struct inbox_slot {
    explicit inbox_slot(std::string a) : address(std::move(a)) {}
    const std::string address;
    std::vector<inbound> arrived;  // under m_: appended by the Proton thread
    // Caller only: `arrived` taken over whole in one lock (swapped, so both vectors keep
    // their capacity), handed out from `next` on without the lock.
    std::vector<inbound> taken;
    std::size_t next = 0;
    proton::receiver link;  // Proton thread only: the attached receiver, else null
  };
  std::map<std::string, std::unique_ptr<inbox_slot>, std::less<>> inbox_;
  // Messages the caller has read and handed back (client::recycle): on_message swaps each
  // with the one Proton just decoded into, so Proton decodes the next delivery into a message
  // whose buffers already exist — no pn_message_t built on this thread and freed on the
  // caller's for every message.
  std::vector<proton::message> spare_;
  std::map<std::string, error_info, std::less<>> receiver_errors_;
  std::map<std::string, bool, std::less<>> attached_;  // caller: receivers asked for
  client_stats stats_;

  // ---- caller only ----------------------------------------------------------------------
  inbox_slot* last_slot_ = nullptr;  // the slot of the last receive() (one queue, usually)
  std::size_t ready_ = 0;            // messages taken over and not handed out yet, all slots
  // Settlements not handed to the Proton thread yet. Handing each one over wakes the Proton
  // thread (an eventfd write, its epoll, a run, a socket write — and the broker reads one
  // more small frame): they are handed over in runs instead, at the latest when the caller
  // has no message left to hand out (it waits for the broker then), when settle_run_
  // collected, or with the next posted work (close, a send). So a settlement waits only while
  // the caller holds further messages of the same prefetch that it has not asked for yet.
  std::vector<std::pair<delivery_ref, settlement>> unposted_settles_;
  std::size_t settle_run_ = 1;
  std::vector<proton::message> recycled_;  // handed to spare_ with the next lock taken

  // ---- Proton thread only -------------------------------------------------------------
  struct out_link {
    proton::sender sender;
    bool open = false;
    std::deque<std::shared_ptr<send_op>> queue;
  };
  struct flight {
    std::shared_ptr<send_op> op;
    std::string address;
  };
  struct held_delivery {
    proton::delivery delivery;
    inbox_slot* slot;  // whose receiver gets the credit back
  };
  proton::container container_;
  std::thread thread_;
  proton::connection conn_;
  // idle → connecting → (authorizing: the CBS token, when configured) → up
  enum class state { idle, connecting, authorizing, up } state_ = state::idle;
  std::uint64_t generation_ = 0;          // connections opened so far
  clock::time_point connect_deadline_{};  // of the connect in progress
  bool tick_armed_ = false;
  detail::reconnect_backoff backoff_;
  std::map<std::string, out_link, std::less<>> senders_;
  // The receivers asked for, by address; each slot's `link` is its open receiver (null while
  // detached or disconnected).
  std::map<std::string, inbox_slot*, std::less<>> receivers_;
  inbox_slot* last_rx_ = nullptr;  // the slot of the last message (one receiver, usually)
  std::unordered_map<std::uint64_t, flight> in_flight_;
  std::unordered_map<std::uint64_t, held_delivery> deliveries_;
  std::vector<std::pair<delivery_ref, settlement>> settling_;  // the run being applied
  std::uint64_t next_tag_ = 0;
  std::uint64_t next_delivery_ = 0;
  // CBS (config.cbs): the $cbs links, the request awaiting its reply, the next renewal.
  proton::sender cbs_sender_;
  proton::receiver cbs_receiver_;
  bool cbs_want_send_ = false;
  std::string cbs_request_id_;
  clock::time_point cbs_renew_at_{};

  // ---- caller side ----------------------------------------------------------------------

  void start() {
    thread_ = std::thread([this] { run(); });
  }

  void run() {
    for (;;) {
      try {
        container_.run();
        std::lock_guard lk(m_);
        run_finished_ = true;
        cv_.notify_all();
        return;
      } catch (const std::exception& e) {
        // A Proton exception escaped a handler (none should): fail what waits, keep going
        // unless stopping.
        std::lock_guard lk(m_);
        if (stopped_) {
          run_finished_ = true;
          cv_.notify_all();
          return;
        }
        connect_error_ = error_info(transport_errc::unavailable,
                                    config.name + ": AMQP event loop error: " + e.what());
        cv_.notify_all();
      }
    }
  }

  // Hands `fn` to the Proton thread. While connected it runs in the connection's context
  // (its work queue), so that what it changes on the connection is written out at once;
  // otherwise a container timer runs it. One wake-up per non-empty queue.
  // Called by the caller only (as every post): the caller's unposted settlements go first,
  // so that the Proton thread applies them before `fn` (a close must find them applied).
  bool post(std::function<void()> fn) {
    std::unique_lock lk(m_);
    if (stopped_) return false;
    hand_over_settles();
    work_.push_back(std::move(fn));
    wake(lk);
    return true;
  }

  // Moves the caller's unposted settlements to settles_ (the caller holds m_); true when
  // there were any.
  bool hand_over_settles() {
    if (unposted_settles_.empty()) return false;
    if (settles_.empty()) {
      settles_.swap(unposted_settles_);  // both keep their capacity
    } else {
      settles_.insert(settles_.end(), std::make_move_iterator(unposted_settles_.begin()),
                      std::make_move_iterator(unposted_settles_.end()));
      unposted_settles_.clear();
    }
    return true;
  }

  // Hands the caller's settlements to the Proton thread now (one lock, one wake-up).
  bool post_settles() {
    std::unique_lock lk(m_);
    if (stopped_) return false;
    if (hand_over_settles()) wake(lk);
    return true;
  }

  // The next message the caller took over for `slot`, without m_; nullopt when none is
  // left. Messages of a connection lost since are dropped (the broker redelivers them).
  std::optional<inbound> take_ready(inbox_slot& slot) {
    if (slot.next == slot.taken.size()) return std::nullopt;
    if (slot.taken[slot.next].ref.connection != live_generation_.load()) {
      ready_ -= slot.taken.size() - slot.next;
      slot.taken.clear();
      slot.next = 0;
      return std::nullopt;
    }
    inbound in = std::move(slot.taken[slot.next]);
    ++slot.next;
    --ready_;
    if (slot.next == slot.taken.size()) {
      slot.taken.clear();
      slot.next = 0;
    }
    return in;
  }

  // Takes over what arrived for `slot` (the caller holds m_ and has nothing left of it), and
  // hands back the messages it recycled meanwhile.
  void take_arrived(inbox_slot& slot) {
    slot.taken.swap(slot.arrived);
    ready_ += slot.taken.size();
    hand_over_recycled();
  }

  // At most this many spare messages are kept (more can only pile up after a burst of
  // several receivers' prefetch).
  std::size_t spare_limit() const { return 2 * static_cast<std::size_t>(config.prefetch) + 16; }

  void hand_over_recycled() {  // the caller holds m_
    for (auto& m : recycled_) {
      if (spare_.size() >= spare_limit()) break;
      spare_.push_back(std::move(m));
    }
    recycled_.clear();
  }

  // The caller's slot for `address`, made on first use.
  inbox_slot& caller_slot(std::string_view address) {
    if (last_slot_ != nullptr && last_slot_->address == address) return *last_slot_;
    auto it = inbox_.find(address);  // the caller is the map's only writer: no lock to read
    if (it == inbox_.end()) {
      std::lock_guard lk(m_);  // the Proton thread reads the map (do_attach, lost)
      it = inbox_.emplace(std::string(address), std::make_unique<inbox_slot>(std::string(address)))
               .first;
    }
    return *(last_slot_ = it->second.get());
  }

  // Makes the Proton thread drain (once per non-empty queue). `lk` holds m_.
  void wake(std::unique_lock<std::mutex>& lk) {
    if (wake_pending_) return;
    wake_pending_ = true;
    if (work_queue_ != nullptr && work_queue_->add([this] { drain(true); })) return;
    lk.unlock();
    container_.schedule(proton::duration::IMMEDIATE, [this] { drain(false); });
  }

  bool run_finished_now() const {
    std::lock_guard lk(m_);
    return run_finished_;
  }

  error_info closed_error() const {
    return error_info(transport_errc::closed, config.name + " transport is closed");
  }

  // ---- Proton thread: work and connection ----------------------------------------------

  // Runs the posted work. A timer (`in_connection` false) must not change a live
  // connection — Proton writes only what a connection's own events change — so while up it
  // hands the batch over to the connection's work queue.
  void drain(bool in_connection) {
    if (!in_connection && state_ == state::up && conn_) {
      conn_.work_queue().add([this] { drain(true); });
      return;
    }
    std::deque<std::function<void()>> batch;
    {
      std::lock_guard lk(m_);
      batch.swap(work_);
      settling_.swap(settles_);
      wake_pending_ = false;
    }
    // Settlements first: a close() posted after them must find them applied.
    for (const auto& [ref, how] : settling_) do_settle(ref, how);
    settling_.clear();  // keeps its capacity for the next run
    for (auto& fn : batch) {
      try {
        fn();
      } catch (const std::exception& e) {
        fail_everything(
            error_info(transport_errc::unavailable, config.name + ": AMQP error: " + e.what()));
      }
    }
  }

  bool demand() const {
    if (!receivers_.empty()) return true;
    for (const auto& [address, link] : senders_) {
      if (!link.queue.empty()) return true;
    }
    return false;
  }

  void ensure_connected() {
    if (state_ != state::idle || closing()) return;
    if (clock::now() < backoff_.next_attempt()) {
      arm_tick();  // connects once the backoff pause is over
      return;
    }
    connect();
  }

  // Proton 0.37 cannot cancel a scheduled timer, and container::run() does not return while
  // one is pending: so no long timers. One short tick runs only while something waits on
  // time — a connect in progress (its connect_timeout) or a reconnect pause — and stops
  // re-arming once the client is closing.
  static constexpr std::int64_t tick_interval_ms = 50;
  static constexpr std::int64_t renew_tick_ms = 250;

  void arm_tick(std::int64_t interval_ms = tick_interval_ms) {
    if (tick_armed_ || closing()) return;
    tick_armed_ = true;
    container_.schedule(proton::duration(interval_ms), [this] {
      tick_armed_ = false;
      on_tick();
    });
  }

  void on_tick() {
    if (closing()) return;
    const auto now = clock::now();
    if ((state_ == state::connecting || state_ == state::authorizing) && now >= connect_deadline_) {
      proton::connection stale = conn_;
      lost(error_info(transport_errc::unavailable,
                      config.name + ": no AMQP connection to " + config.host + ":" +
                          std::to_string(config.port) + " within connect_timeout (" +
                          std::to_string(config.connect_timeout.count()) + " ms)" +
                          (state_ == state::authorizing ? ": no CBS put-token reply" : "")));
      try {
        stale.close();
      } catch (const std::exception&) {  // already gone
      }
    }
    if (state_ == state::up && config.cbs && cbs_request_id_.empty() && !cbs_want_send_ &&
        now >= cbs_renew_at_) {
      // A timer must not change the connection: the renewal runs in its context.
      cbs_want_send_ = true;
      conn_.work_queue().add([this] {
        if (state_ == state::up && cbs_sender_) put_token();
      });
    }
    if (state_ == state::idle && demand()) ensure_connected();
    if (state_ == state::connecting || state_ == state::authorizing) arm_tick();
    if (state_ == state::up && config.cbs) arm_tick(renew_tick_ms);  // waits for the renewal
  }

  bool closing() const {
    std::lock_guard lk(m_);
    return closing_;
  }

  void connect() {
    proton::connection_options co;
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
    std::string vhost = config.virtual_host;
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
      // Proton checks the server's name against the AMQP open hostname.
      if (!config.tls.server_name.empty()) vhost = config.tls.server_name;
    }
    if (!vhost.empty()) co.virtual_host(vhost);
    const std::string url = std::string(config.tls.enabled ? "amqps://" : "amqp://") + config.host +
                            ":" + std::to_string(config.port);
    state_ = state::connecting;
    try {
      conn_ = container_.connect(url, co);
    } catch (const std::exception& e) {
      state_ = state::idle;
      conn_ = proton::connection();
      connect_failed(error_info(transport_errc::unavailable,
                                config.name + ": cannot connect to " + url + ": " + e.what()));
      return;
    }
    connect_deadline_ = clock::now() + config.connect_timeout;
    arm_tick();
  }

  void connect_failed(error_info why) {
    backoff_.failed();
    const bool fatal = why.code == transport_errc::permission;
    {
      std::lock_guard lk(m_);
      connect_error_ = why;
      cv_.notify_all();
    }
    if (fatal) {
      // A refused login does not heal by retrying: fail what waits for this connection.
      fail_queued_sends(why);
    } else if (demand()) {
      ensure_connected();
    }
  }

  // The connection is gone (or never came up): forget its links and deliveries, fail the
  // sends it had in flight, keep unsent work for the next connection.
  void lost(error_info why) {
    const bool was_up = state_ == state::up;
    state_ = state::idle;
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
    for (auto& [address, slot] : receivers_) slot->link = proton::receiver();
    deliveries_.clear();
    cbs_sender_ = proton::sender();
    cbs_receiver_ = proton::receiver();
    cbs_want_send_ = false;
    cbs_request_id_.clear();
    {
      std::lock_guard lk(m_);
      connected_ = false;
      live_generation_ = 0;  // what the caller took over of this connection is dropped too
      work_queue_ = nullptr;
      // unsettled: the broker redelivers them
      for (auto& [address, slot] : inbox_) slot->arrived.clear();
      // A drain handed to the dead connection's work queue may never run: a timer does it.
      if (wake_pending_) {
        container_.schedule(proton::duration::IMMEDIATE, [this] { drain(false); });
      }
    }
    if (was_up) {
      backoff_.succeeded();  // the first reconnect after a working connection is immediate
      {
        std::lock_guard lk(m_);
        connect_error_ = why;
        cv_.notify_all();
      }
      if (demand()) ensure_connected();
    } else {
      connect_failed(std::move(why));
    }
  }

  void fail_queued_sends(const error_info& why) {
    for (auto& [address, link] : senders_) {
      for (auto& op : link.queue) complete(op, why);
      link.queue.clear();
    }
  }

  void fail_everything(const error_info& why) {
    for (auto& [tag, f] : in_flight_) complete(f.op, why);
    in_flight_.clear();
    fail_queued_sends(why);
  }

  void complete(const std::shared_ptr<send_op>& op, std::optional<error_info> error) {
    std::lock_guard lk(m_);
    if (op->done) return;
    op->done = true;
    op->error = std::move(error);
    cv_.notify_all();
  }

  bool abandoned(const send_op& op) const {
    std::lock_guard lk(m_);
    return op.abandoned || op.done;
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
    ro.credit_window(0);  // credit is given back per settled message (see settle)
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
      if (op->next == 0 && abandoned(*op)) {
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

  // ---- work items ----------------------------------------------------------------------

  void do_send(const std::string& address, const std::shared_ptr<send_op>& op) {
    auto& link = senders_[address];
    link.queue.push_back(op);
    if (state_ != state::up) {
      ensure_connected();
      return;
    }
    if (!link.sender) open_sender(address, link);
    pump(address, link);
  }

  void do_attach(const std::string& address) {
    inbox_slot*& slot = receivers_[address];
    if (slot == nullptr) {
      std::lock_guard lk(m_);
      slot = inbox_.at(address).get();  // made by receive() before it posted this
    }
    if (state_ != state::up) {
      ensure_connected();
      return;
    }
    if (!slot->link) open_receiver(*slot);
  }

  // Applies a settlement the caller already checked (see client::settle). A delivery of a
  // connection lost since is gone from deliveries_: the broker redelivers it.
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
  }

  void do_close() {
    if (state_ != state::idle) {
      try {
        conn_.close();
        return;  // on_transport_close stops the container
      } catch (const std::exception&) {
      }
    }
    container_.stop();
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

  void became_up(proton::connection& c) {
    state_ = state::up;
    ++generation_;
    backoff_.succeeded();
    {
      std::lock_guard lk(m_);
      connected_ = true;
      live_generation_ = generation_;
      work_queue_ = &c.work_queue();
      connect_error_.reset();
      ++stats_.connects;
      cv_.notify_all();
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
        std::lock_guard lk(m_);
        ++stats_.tokens_put;
      }
      cbs_renew_at_ = clock::now() + config.cbs->renew_every;
      if (state_ == state::authorizing) {
        proton::connection c = conn_;
        became_up(c);
      }
      arm_tick(renew_tick_ms);
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
      std::lock_guard lk(m_);
      ++stats_.accepted;
    }
    if (++f->op->accepted == f->op->messages.size()) complete(f->op, std::nullopt);
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
    std::unique_lock lk(m_);
    ++stats_.delivered;
    inbound& in = slot->arrived.emplace_back();
    if (!spare_.empty()) {
      swap(in.message, spare_.back());  // the spare's buffers go to Proton below
      spare_.pop_back();
    }
    swap(in.message, m);
    in.ref = delivery_ref{id, generation_};
    if (waiters_ > 0 && !receive_notified_) {
      receive_notified_ = true;
      // Notified after unlocking: a waiter woken while m_ is still held only blocks on m_
      // again (two more futex calls and a context switch per wake-up).
      lk.unlock();
      cv_.notify_all();
    }
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
        receivers_.erase(it);
      }
      std::lock_guard lk(m_);
      receiver_errors_[address] = why;
      attached_.erase(address);
      cv_.notify_all();
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
    if (it != senders_.end() && it->second.sender == s && !closing()) {
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
    if (it != receivers_.end() && it->second->link == r && !closing()) {
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
    if (closing()) {
      container_.stop();
      return;
    }
    if (!current(t.connection())) return;
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
  const auto deadline = clock::now() + i->config.connect_timeout;
  impl* p = i.get();
  std::unique_ptr<client> c(new client(std::move(i)));
  p->start();
  p->post([p] { p->ensure_connected(); });
  std::unique_lock lk(p->m_);
  p->cv_.wait_until(lk, deadline, [p] { return p->connected_ || p->connect_error_.has_value(); });
  if (p->connected_) return c;
  error_info why = p->connect_error_.value_or(error_info(
      transport_errc::unavailable, p->config.name + ": no AMQP connection to " + p->config.host +
                                       ":" + std::to_string(p->config.port) +
                                       " within connect_timeout"));
  lk.unlock();
  (void)c->close(clock::now() + std::chrono::milliseconds(500));
  return fail(std::move(why));
}

result<void> client::send(std::string_view address, std::vector<proton::message> messages,
                          clock::time_point deadline) {
  if (messages.empty()) return {};
  auto op = std::make_shared<send_op>();
  op->messages = std::move(messages);
  impl* p = impl_.get();
  if (!p->post([p, op, a = std::string(address)] { p->do_send(a, op); })) {
    return fail(p->closed_error());
  }
  std::unique_lock lk(p->m_);
  p->cv_.wait_until(lk, deadline, [&] { return op->done || p->stopped_; });
  if (op->done) {
    if (op->error) return fail(*op->error);
    return {};
  }
  op->abandoned = true;
  if (p->stopped_) return fail(p->closed_error());
  if (!p->connected_ && p->connect_error_) {
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
  if (p->closed_for_caller_.load()) return fail(p->closed_error());
  auto& slot = p->caller_slot(address);
  if (auto in = p->take_ready(slot)) return in;  // the common case: no lock, no wake-up
  std::unique_lock lk(p->m_);
  if (p->stopped_ || p->closing_) return fail(p->closed_error());
  // About to take more (or to wait for more): what the caller settled goes to the Proton
  // thread in the same lock, so the broker gets the credit back before the caller waits.
  if (p->hand_over_settles()) p->wake(lk);
  if (!slot.arrived.empty()) {
    p->take_arrived(slot);
    lk.unlock();
    return p->take_ready(slot);
  }
  if (auto e = p->receiver_errors_.find(address); e != p->receiver_errors_.end()) {
    error_info why = std::move(e->second);
    p->receiver_errors_.erase(e);
    return fail(std::move(why));
  }
  const bool attached = p->attached_.count(address) != 0;
  if (!attached || !p->connected_) {
    p->attached_[std::string(address)] = true;
    lk.unlock();
    p->post([p, a = std::string(address)] { p->do_attach(a); });
    lk.lock();
  }
  ++p->waiters_;
  p->cv_.wait_until(lk, deadline, [&] {
    p->receive_notified_ = false;  // awake and looking: the next arrival notifies again
    return !slot.arrived.empty() || p->stopped_ || p->receiver_errors_.count(address) != 0 ||
           (!p->connected_ && p->connect_error_ &&
            p->connect_error_->code == transport_errc::permission);
  });
  --p->waiters_;
  if (!slot.arrived.empty()) {
    p->take_arrived(slot);
    lk.unlock();
    return p->take_ready(slot);
  }
  if (p->stopped_) return fail(p->closed_error());
  if (auto e = p->receiver_errors_.find(address); e != p->receiver_errors_.end()) {
    error_info why = std::move(e->second);
    p->receiver_errors_.erase(e);
    return fail(std::move(why));
  }
  if (!p->connected_ && p->connect_error_) return fail(*p->connect_error_);
  return std::optional<inbound>();
}

result<void> client::settle(const delivery_ref& ref, const settlement& how) {
  impl* p = impl_.get();
  if (p->closed_for_caller_.load()) return fail(p->closed_error());
  if (ref.connection != p->live_generation_.load()) {
    return fail(transport_errc::unavailable,
                p->config.name + ": the connection this message arrived on was lost; " +
                    "the broker delivers it again");
  }
  // Not waited for: a settlement from an at-least-once receiver gets no reply from the broker,
  // so waiting would only wait for the Proton thread (a thread round trip per message — most
  // of the consume cost, docs/benchmarks-artemis.md). Settlements are applied in order, in
  // runs; one lost with its connection before it went out is redelivered (at-least-once).
  // Handed over at once only when the caller has nothing more to hand out (see
  // unposted_settles_), else with the next run.
  p->unposted_settles_.emplace_back(ref, how);
  if (p->ready_ == 0 || p->unposted_settles_.size() >= p->settle_run_) {
    if (!p->post_settles()) return fail(p->closed_error());
  }
  return {};
}

result<void> client::close(clock::time_point deadline) {
  impl* p = impl_.get();
  {
    std::lock_guard lk(p->m_);
    if (p->closing_) return {};
    p->closing_ = true;
    p->closed_for_caller_ = true;
  }
  p->post([p] { p->do_close(); });
  {
    std::lock_guard lk(p->m_);
    p->stopped_ = true;  // no more work is accepted; waiting calls return `closed`
    p->cv_.notify_all();
  }
  // The Proton thread ends once the connection is closed; past the deadline, stop it.
  {
    std::unique_lock lk(p->m_);
    p->cv_.wait_until(lk, deadline, [p] { return p->run_finished_; });
  }
  if (!p->run_finished_now()) p->container_.stop();
  if (p->thread_.joinable()) p->thread_.join();
  return {};
}

void client::recycle(proton::message&& m) {
  impl* p = impl_.get();
  if (p->recycled_.size() < p->spare_limit()) p->recycled_.push_back(std::move(m));
}

client_stats client::stats() const {
  std::lock_guard lk(impl_->m_);
  return impl_->stats_;
}

}  // namespace babelqueue::inline v1::amqp10
