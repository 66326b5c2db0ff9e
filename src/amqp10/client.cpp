// The AMQP 1.0 client's public calls (client.hpp): each takes `io_` for its whole length and
// drives the connection through the state in client_impl.hpp.
#include "amqp10/client_impl.hpp"
#include "core/propagate.hpp"

namespace babelqueue::inline v1::amqp10 {

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
  BABELQUEUE_TRY(p->start_keeper());
  return c;
}

result<void> client::send(std::string_view address, std::vector<proton::message> messages,
                          clock::time_point deadline) {
  if (messages.empty()) return {};
  impl* p = impl_.get();
  std::lock_guard io(p->io_);
  if (p->closed_ || p->closing_) return fail(p->closed_error());
  auto op = std::make_shared<detail::send_op>();
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
