// The artemis transport: the seam (transport.hpp) over the shared AMQP 1.0 client
// (amqp10/client.hpp) with the Artemis projection (artemis/message.hpp).
#include <babelqueue/artemis/artemis_transport.hpp>
#include <babelqueue/bindings/artemis.hpp>

#include "amqp10/client.hpp"
#include "artemis/message.hpp"
#include "artemis/options.hpp"
#include "runtime/binding_support.hpp"

namespace babelqueue::inline v1::artemis {

namespace {

using clock = std::chrono::steady_clock;

// What a received_message's handle holds: the delivery to settle, and the same bytes and
// headers for a delayed release (a republish).
struct settle_handle {
  amqp10::delivery_ref ref;
  const void* owner = nullptr;  // the impl that received it
  bool settled = false;
};

amqp10::client_config client_config_of(const options& o) {
  amqp10::client_config c;
  c.host = o.host;
  c.port = o.port;
  c.username = o.username;
  c.password = o.password;
  c.tls = amqp10::tls_config{o.tls,          o.tls_ca_file,     o.tls_cert_file,
                             o.tls_key_file, o.tls_server_name, o.tls_verify};
  c.connect_timeout = o.connect_timeout;
  c.idle_timeout = o.idle_timeout;
  c.backoff_min = o.reconnect_backoff_min;
  c.backoff_max = o.reconnect_backoff_max;
  c.prefetch = static_cast<std::uint32_t>(o.prefetch);
  c.link_capabilities = {proton::symbol("queue")};  // anycast, whatever the defaults (§4.4)
  c.name = o.tls ? "artemis+ssl" : "artemis";
  return c;
}

}  // namespace

struct artemis_transport::impl {
  std::unique_ptr<amqp10::client> client;
  bool closed = false;
};

artemis_transport::artemis_transport(options opts) : opts_(std::move(opts)) {}

artemis_transport::~artemis_transport() = default;

result<std::unique_ptr<artemis_transport>> artemis_transport::open(options opts) {
  if (auto r = detail::validate(opts); !r) return fail(r.error());
  auto c = amqp10::client::open(client_config_of(opts));
  if (!c) return fail(c.error());
  std::unique_ptr<artemis_transport> t(new artemis_transport(std::move(opts)));
  t->impl_ = std::make_unique<impl>();
  t->impl_->client = std::move(*c);
  return t;
}

namespace {

result<void> check_queue(std::string_view queue) {
  if (queue.empty()) {
    return fail(transport_errc::invalid_argument, "artemis: the queue name must not be empty");
  }
  return {};
}

error_info closed_error() {
  return error_info(transport_errc::closed, "artemis transport is closed");
}

}  // namespace

result<void> artemis_transport::publish(std::string_view queue, std::string_view body,
                                        const headers& hdrs) {
  if (impl_->closed) return fail(closed_error());
  if (auto r = check_queue(queue); !r) return r;
  std::vector<proton::message> one;
  one.push_back(detail::to_message(body, hdrs));
  return impl_->client->send(queue, std::move(one), clock::now() + opts_.operation_timeout);
}

result<void> artemis_transport::publish_batch(std::string_view queue,
                                              std::span<const outgoing_message> messages) {
  if (impl_->closed) return fail(closed_error());
  if (auto r = check_queue(queue); !r) return r;
  std::vector<proton::message> batch;
  batch.reserve(messages.size());
  for (const auto& m : messages) batch.push_back(detail::to_message(m.body, m.hdrs));
  return impl_->client->send(queue, std::move(batch), clock::now() + opts_.operation_timeout);
}

result<std::optional<received_message>> artemis_transport::receive(
    std::string_view queue, std::chrono::milliseconds timeout) {
  if (impl_->closed) return fail(closed_error());
  if (auto r = check_queue(queue); !r) return fail(r.error());
  auto in = impl_->client->receive(queue, clock::now() + timeout);
  if (!in) return fail(in.error());
  if (!*in) return std::optional<received_message>();
  received_message out;
  out.body = detail::body_of((*in)->message);
  out.queue = std::string(queue);
  out.hdrs = detail::headers_of((*in)->message);
  out.delivery_count = static_cast<std::int64_t>((*in)->message.delivery_count());
  out.handle = std::make_shared<settle_handle>(settle_handle{(*in)->ref, impl_.get(), false});
  return std::optional<received_message>(std::move(out));
}

namespace {

result<settle_handle*> handle_of(const received_message& message, const void* owner) {
  auto* h = static_cast<settle_handle*>(message.handle.get());
  if (h == nullptr || h->owner != owner) {
    return fail(transport_errc::invalid_argument,
                "artemis: this message was not received by this transport instance");
  }
  if (h->settled) {
    return fail(transport_errc::invalid_argument, "artemis: message already settled");
  }
  return h;
}

}  // namespace

result<void> artemis_transport::ack(const received_message& message) {
  if (impl_->closed) return fail(closed_error());
  auto h = handle_of(message, impl_.get());
  if (!h) return fail(h.error());
  auto r = impl_->client->settle((*h)->ref, amqp10::outcome::accept,
                                 clock::now() + opts_.operation_timeout);
  if (r || r.code() != transport_errc::timeout) (*h)->settled = true;
  return r;
}

result<void> artemis_transport::release(const received_message& message,
                                        std::chrono::milliseconds delay) {
  if (impl_->closed) return fail(closed_error());
  auto h = handle_of(message, impl_.get());
  if (!h) return fail(h.error());
  const auto deadline = clock::now() + opts_.operation_timeout;
  if (delay.count() > 0) {
    // Artemis schedules only at publish time: the same bytes and headers again, delayed,
    // then the original is done.
    std::vector<proton::message> copy;
    copy.push_back(detail::to_message(message.body, message.hdrs, delay));
    if (auto r = impl_->client->send(message.queue, std::move(copy), deadline); !r) return r;
    auto r = impl_->client->settle((*h)->ref, amqp10::outcome::accept, deadline);
    if (r || r.code() != transport_errc::timeout) (*h)->settled = true;
    return r;
  }
  auto r = impl_->client->settle((*h)->ref, amqp10::outcome::modified_failed, deadline);
  if (r || r.code() != transport_errc::timeout) (*h)->settled = true;
  return r;
}

result<void> artemis_transport::close(std::chrono::steady_clock::time_point deadline) {
  if (impl_->closed) return {};
  impl_->closed = true;
  return impl_->client->close(deadline);
}

std::int64_t artemis_transport::reconcile_attempts(std::int64_t body_attempts,
                                                   const received_message& message) const {
  return bindings::artemis::reconcile_attempts(body_attempts, message.delivery_count);
}

transport_stats artemis_transport::stats() const noexcept {
  const auto s = impl_->client->stats();
  return transport_stats{s.connects, s.accepted, s.delivered};
}

void register_transport() {
  auto factory = babelqueue::detail::url_factory<artemis_transport>(options_from_url);
  babelqueue::register_transport("artemis", factory);
  babelqueue::register_transport("artemis+ssl", factory);
}

}  // namespace babelqueue::inline v1::artemis
