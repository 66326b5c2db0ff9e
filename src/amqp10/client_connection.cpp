// The AMQP 1.0 client's connection (client_impl.hpp): connecting with the backoff schedule,
// losing and dropping a connection, and the I/O pump that moves bytes between the socket and
// Proton's connection driver.
#include "amqp10/client_impl.hpp"

namespace babelqueue::inline v1::amqp10 {

namespace {

std::int64_t millis_of(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

}  // namespace

bool client::impl::demand() const {
  if (!receivers_.empty()) return true;
  for (const auto& [address, link] : senders_) {
    if (!link.queue.empty()) return true;
  }
  return false;
}

bool client::impl::fatal_connect_error() const {
  return state_ == state::idle && connect_error_ &&
         connect_error_->code == transport_errc::permission;
}

proton::connection_options client::impl::connection_options() {
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

std::string client::impl::endpoint() const {
  return std::string(config.tls.enabled ? "amqps://" : "amqp://") + config.host + ":" +
         std::to_string(config.port);
}

void client::impl::connect() {
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
    connect_failed(error_info(transport_errc::unavailable,
                              config.name + ": cannot connect to " + endpoint() + ": " + e.what()));
  }
}

void client::impl::connect_failed(error_info why) {
  backoff_.failed();
  const bool fatal = why.code == transport_errc::permission;
  connect_error_ = std::move(why);
  // A refused login does not heal by retrying: fail what waits for this connection.
  if (fatal) fail_queued_sends(*connect_error_);
}

void client::impl::teardown() {
  socket_.close();
  tcp_connecting_ = false;
  driver_.reset();
  next_tick_ms_ = 0;
}

void client::impl::drop(error_info why) {
  if (state_ != state::idle) lost(std::move(why));
  teardown();
}

void client::impl::lost(error_info why) {
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
      complete(link.queue.front(),
               error_info(transport_errc::unavailable, config.name + ": connection lost during a " +
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

void client::impl::pump_once(clock::time_point until) {
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

bool client::impl::read_available() {
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

bool client::impl::dispatch_and_write() {
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

bool client::impl::write_pending() {
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

void client::impl::disconnected(const std::string& what) {
  if (driver_ == nullptr) return;
  driver_->disconnected(proton::error_condition("proton:io", what));
  for (int i = 0; i < 16 && driver_->dispatch(); ++i) {
  }
  finished();
}

void client::impl::finished() {
  if (state_ != state::idle) {
    lost(closing_ ? closed_error()
                  : error_info(transport_errc::unavailable, config.name + ": connection closed"));
  }
  teardown();
}

void client::impl::flush() {
  if (driver_ == nullptr || tcp_connecting_) return;
  dispatch_and_write();
}

}  // namespace babelqueue::inline v1::amqp10
