// The sb:// transport: the seam (amqp10/seam.hpp) over the AMQP 1.0 client with CBS
// authorisation, and the Service Bus message codec (asb/message.hpp).
#include "amqp10/client.hpp"
#include "amqp10/seam.hpp"
#include "asb/message.hpp"
#include "asb/options.hpp"
#include "core/propagate.hpp"
#include "runtime/binding_support.hpp"

#include <babelqueue/asb/asb_transport.hpp>
#include <babelqueue/asb/sas_token.hpp>
#include <babelqueue/bindings/asb.hpp>

namespace babelqueue::inline v1::asb {

namespace {

std::string audience_of(const options& o) { return "sb://" + o.host + "/" + o.entity_path; }

amqp10::client_config client_config_of(const options& o) {
  amqp10::client_config c;
  c.host = o.host;
  c.port = o.port;
  c.virtual_host = o.host;  // the AMQP open hostname and SNI: the namespace FQDN
  c.tls = amqp10::tls_config{o.tls, o.tls_ca_file, {}, {}, o.tls_server_name, o.tls_verify};
  c.connect_timeout = o.connect_timeout;
  c.idle_timeout = o.idle_timeout;
  c.backoff_min = o.reconnect_backoff_min;
  c.backoff_max = o.reconnect_backoff_max;
  c.prefetch = static_cast<std::uint32_t>(o.prefetch);
  c.name = "sb";
  amqp10::cbs_config cbs;
  cbs.audience = audience_of(o);
  const std::string audience = cbs.audience;
  if (!o.sas_token.empty()) {
    cbs.make_token = [token = o.sas_token]() -> result<std::string> { return token; };
    cbs.renew_every = o.token_ttl;
  } else {
    cbs.make_token = [audience, name = o.key_name, key = o.key,
                      ttl = o.token_ttl]() -> result<std::string> {
      return make_sas_token(audience, name, key, std::chrono::system_clock::now() + ttl);
    };
    cbs.renew_every = o.token_ttl * 3 / 4;
  }
  c.cbs = std::move(cbs);
  return c;
}

amqp10::message_codec asb_codec() {
  amqp10::message_codec codec;
  codec.to_message = [](std::string_view body, const headers& hdrs,
                        std::optional<std::chrono::milliseconds> delay) {
    return detail::to_message(body, hdrs, delay);
  };
  codec.read = [](const proton::message& in, received_message& out) {
    detail::read_message(in, out);
  };
  return codec;
}

}  // namespace

struct asb_transport::impl {
  impl(std::unique_ptr<amqp10::client> c, const options& o)
      : seam(std::move(c), asb_codec(), "sb", o.operation_timeout) {}
  amqp10::seam seam;
};

asb_transport::asb_transport(options opts) : opts_(std::move(opts)) {}

asb_transport::~asb_transport() = default;

result<std::unique_ptr<asb_transport>> asb_transport::open(options opts) {
  BABELQUEUE_TRY(detail::validate(opts));
  BABELQUEUE_TRY_LET(c, amqp10::client::open(client_config_of(opts)));
  std::unique_ptr<asb_transport> t(new asb_transport(std::move(opts)));
  t->impl_ = std::make_unique<impl>(std::move(*c), t->opts_);
  return t;
}

result<void> asb_transport::publish(std::string_view queue, std::string_view body,
                                    const headers& hdrs) {
  return impl_->seam.publish(queue, body, hdrs);
}

result<void> asb_transport::publish_later(std::string_view queue, std::string_view body,
                                          const headers& hdrs, std::chrono::milliseconds delay) {
  return impl_->seam.publish(queue, body, hdrs, delay);
}

result<void> asb_transport::publish_batch(std::string_view queue,
                                          std::span<const outgoing_message> messages) {
  return impl_->seam.publish_batch(queue, messages);
}

result<std::optional<received_message>> asb_transport::receive(std::string_view queue,
                                                               std::chrono::milliseconds timeout) {
  return impl_->seam.receive(queue, timeout);
}

result<void> asb_transport::ack(const received_message& message) {
  return impl_->seam.ack(message);
}

result<void> asb_transport::release(const received_message& message,
                                    std::chrono::milliseconds delay) {
  return impl_->seam.release(message, delay);
}

result<void> asb_transport::dead_letter_natively(const received_message& message,
                                                 std::string_view reason,
                                                 std::string_view description) {
  amqp10::settlement how;
  how.how = amqp10::outcome::reject;
  how.condition = "com.microsoft:dead-letter";
  how.description = std::string(description);
  how.info = {{"DeadLetterReason", std::string(reason)},
              {"DeadLetterErrorDescription", std::string(description)}};
  return impl_->seam.settle(message, how);
}

result<std::vector<peeked_message>> asb_transport::peek(std::string_view, std::size_t,
                                                        std::size_t) {
  return cannot_peek(impl_->seam.closed());
}

result<void> asb_transport::close(std::chrono::steady_clock::time_point deadline) {
  return impl_->seam.close(deadline);
}

std::int64_t asb_transport::reconcile_attempts(std::int64_t body_attempts,
                                               const received_message& message) const {
  return bindings::asb::reconcile_attempts(body_attempts, message.delivery_count);
}

transport_stats asb_transport::stats() const noexcept {
  const auto s = impl_->seam.stats();
  return transport_stats{s.connects, s.accepted, s.delivered, s.tokens_put};
}

void register_transport() {
  babelqueue::register_transport("sb",
                                 babelqueue::detail::url_factory<asb_transport>(options_from_url));
}

}  // namespace babelqueue::inline v1::asb

namespace babelqueue::inline v1::asb {

std::vector<std::string> asb_transport::security_warnings() const {
  return babelqueue::detail::security_warnings_of(
      {.scheme = scheme(),
       .tls = opts_.tls,
       .tls_verify = opts_.tls_verify,
       .credential = opts_.key.empty() ? "" : "SAS token",
       .host = opts_.host,
       .secure = "sb:// with TLS (no tls=false, no emulator=true)"});
}

}  // namespace babelqueue::inline v1::asb
