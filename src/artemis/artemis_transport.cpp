// The artemis transport: the seam (transport.hpp) over the shared AMQP 1.0 client
// (amqp10/client.hpp) with the Artemis projection (artemis/message.hpp).
#include "amqp10/client.hpp"
#include "amqp10/seam.hpp"
#include "artemis/message.hpp"
#include "artemis/options.hpp"
#include "core/propagate.hpp"
#include "runtime/binding_support.hpp"

#include <babelqueue/artemis/artemis_transport.hpp>
#include <babelqueue/bindings/artemis.hpp>

namespace babelqueue::inline v1::artemis {

namespace {

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

// Every message the seam sends (publish, publish_batch, a delayed release's republish) is
// built here, so `durable` reaches all of them.
amqp10::message_codec artemis_codec(bool durable) {
  amqp10::message_codec codec;
  codec.to_message = [durable](std::string_view body, const headers& hdrs,
                               std::optional<std::chrono::milliseconds> delay) {
    return detail::to_message(body, hdrs, delay, durable);
  };
  codec.read = [](const proton::message& in, received_message& out) {
    out.body = detail::body_of(in);
    out.hdrs = detail::headers_of(in);
    out.delivery_count = static_cast<std::int64_t>(in.delivery_count());
  };
  return codec;
}

}  // namespace

struct artemis_transport::impl {
  explicit impl(std::unique_ptr<amqp10::client> c, const options& o)
      : seam(std::move(c), artemis_codec(o.durable), o.tls ? "artemis+ssl" : "artemis",
             o.operation_timeout) {}
  amqp10::seam seam;
};

artemis_transport::artemis_transport(options opts) : opts_(std::move(opts)) {}

artemis_transport::~artemis_transport() = default;

result<std::unique_ptr<artemis_transport>> artemis_transport::open(options opts) {
  BABELQUEUE_TRY(detail::validate(opts));
  BABELQUEUE_TRY_LET(c, amqp10::client::open(client_config_of(opts)));
  std::unique_ptr<artemis_transport> t(new artemis_transport(std::move(opts)));
  t->impl_ = std::make_unique<impl>(std::move(*c), t->opts_);
  return t;
}

result<void> artemis_transport::publish(std::string_view queue, std::string_view body,
                                        const headers& hdrs) {
  return impl_->seam.publish(queue, body, hdrs);
}

result<void> artemis_transport::publish_later(std::string_view queue, std::string_view body,
                                              const headers& hdrs,
                                              std::chrono::milliseconds delay) {
  return impl_->seam.publish(queue, body, hdrs, delay);
}

result<void> artemis_transport::publish_batch(std::string_view queue,
                                              std::span<const outgoing_message> messages) {
  return impl_->seam.publish_batch(queue, messages);
}

result<std::optional<received_message>> artemis_transport::receive(
    std::string_view queue, std::chrono::milliseconds timeout) {
  return impl_->seam.receive(queue, timeout);
}

result<void> artemis_transport::ack(const received_message& message) {
  return impl_->seam.ack(message);
}

result<void> artemis_transport::release(const received_message& message,
                                        std::chrono::milliseconds delay) {
  return impl_->seam.release(message, delay);
}

result<std::vector<peeked_message>> artemis_transport::peek(std::string_view, std::size_t,
                                                            std::size_t) {
  return cannot_peek(impl_->seam.closed());
}

result<void> artemis_transport::close(std::chrono::steady_clock::time_point deadline) {
  return impl_->seam.close(deadline);
}

std::int64_t artemis_transport::reconcile_attempts(std::int64_t body_attempts,
                                                   const received_message& message) const {
  return bindings::artemis::reconcile_attempts(body_attempts, message.delivery_count);
}

transport_stats artemis_transport::stats() const noexcept {
  const auto s = impl_->seam.stats();
  return transport_stats{s.connects, s.accepted, s.delivered};
}

void register_transport() {
  auto factory = babelqueue::detail::url_factory<artemis_transport>(options_from_url);
  babelqueue::register_transport("artemis", factory);
  babelqueue::register_transport("artemis+ssl", factory);
}

}  // namespace babelqueue::inline v1::artemis

namespace babelqueue::inline v1::artemis {

std::vector<std::string> artemis_transport::security_warnings() const {
  return babelqueue::detail::security_warnings_of(
      {.scheme = scheme(),
       .tls = opts_.tls,
       .tls_verify = opts_.tls_verify,
       .credential = opts_.password.empty() ? "" : "password",
       .host = opts_.host,
       .secure = "artemis+ssl://"});
}

}  // namespace babelqueue::inline v1::artemis
