#include "amqp10/seam.hpp"

#include "core/propagate.hpp"

namespace babelqueue::inline v1::amqp10 {

seam::seam(std::unique_ptr<client> c, message_codec codec, std::string name,
           std::chrono::milliseconds operation_timeout)
    : client_(std::move(c)),
      codec_(std::move(codec)),
      name_(std::move(name)),
      operation_timeout_(operation_timeout),
      owner_(name_) {}

result<void> seam::check_queue(std::string_view queue) const {
  if (closed_) return fail(closed_error());
  if (queue.empty()) {
    return fail(transport_errc::invalid_argument, name_ + ": the queue name must not be empty");
  }
  return {};
}

error_info seam::closed_error() const {
  return {transport_errc::closed, name_ + " transport is closed"};
}

result<void> seam::publish(std::string_view queue, std::string_view body, const headers& hdrs,
                           std::optional<std::chrono::milliseconds> delay) {
  if (auto r = check_queue(queue); !r) return r;
  std::vector<proton::message> one;
  one.push_back(codec_.to_message(body, hdrs, delay));
  return client_->send(queue, std::move(one), clock::now() + operation_timeout_);
}

result<void> seam::publish_batch(std::string_view queue,
                                 std::span<const outgoing_message> messages) {
  if (auto r = check_queue(queue); !r) return r;
  std::vector<proton::message> batch;
  batch.reserve(messages.size());
  for (const auto& m : messages) batch.push_back(codec_.to_message(m.body, m.hdrs, std::nullopt));
  return client_->send(queue, std::move(batch), clock::now() + operation_timeout_);
}

result<std::optional<received_message>> seam::receive(std::string_view queue,
                                                      std::chrono::milliseconds timeout) {
  BABELQUEUE_TRY(check_queue(queue));
  BABELQUEUE_TRY_LET(in, client_->receive(queue, clock::now() + timeout));
  if (!*in) return std::optional<received_message>();
  received_message out;
  out.queue = std::string(queue);
  codec_.read((*in)->message, out);
  client_->recycle(std::move((*in)->message));
  out.handle = owner_.issue((*in)->ref);
  return std::optional<received_message>(std::move(out));
}

result<claimed_handle<delivery_ref>> seam::own(const received_message& message) const {
  if (closed_) return fail(closed_error());
  return owner_.claim<delivery_ref>(message);
}

result<void> seam::settle(const received_message& message, const settlement& how) {
  BABELQUEUE_TRY_LET(h, own(message));
  // Settled either way: on error its connection is gone and the broker delivers it again.
  h->settle();
  return client_->settle(**h, how);
}

result<void> seam::ack(const received_message& message) {
  return settle(message, settlement{outcome::accept, {}, {}, {}});
}

result<void> seam::release(const received_message& message, std::chrono::milliseconds delay,
                           outcome failure) {
  if (delay.count() <= 0) return settle(message, settlement{failure, {}, {}, {}});
  // Checked before the copy goes out: a foreign or settled message must not be republished.
  BABELQUEUE_TRY(own(message));
  // The brokers schedule only at publish time: the same bytes and headers again, delayed,
  // then the original is done.
  std::vector<proton::message> copy;
  copy.push_back(codec_.to_message(message.body, message.hdrs, delay));
  if (auto r = client_->send(message.queue, std::move(copy), clock::now() + operation_timeout_);
      !r) {
    return r;
  }
  return ack(message);
}

result<void> seam::close(clock::time_point deadline) {
  if (closed_) return {};
  closed_ = true;
  return client_->close(deadline);
}

}  // namespace babelqueue::inline v1::amqp10
