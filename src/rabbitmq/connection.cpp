#include "rabbitmq/connection.hpp"

#include "core/propagate.hpp"
#include "core/shared_helpers.hpp"
#include "rabbitmq/message.hpp"

#include <amqp_framing.h>
#include <amqp_ssl_socket.h>
#include <amqp_tcp_socket.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>

#include <algorithm>
#include <array>
#include <string>
#include <system_error>

namespace babelqueue::inline v1::rabbitmq::detail {

namespace {

timeval timeval_until(clock::time_point deadline, std::chrono::milliseconds cap) {
  auto left = std::chrono::duration_cast<std::chrono::microseconds>(deadline - clock::now());
  left = std::clamp(left, std::chrono::microseconds(0),
                    std::chrono::duration_cast<std::chrono::microseconds>(cap));
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(left.count() / 1'000'000);
  tv.tv_usec = static_cast<suseconds_t>(left.count() % 1'000'000);
  return tv;
}

timeval timeval_of(std::chrono::milliseconds d) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(d.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((d.count() % 1000) * 1000);
  return tv;
}

std::string in_quotes(std::string_view s) { return babelqueue::detail::concat("'", s, "'"); }

}  // namespace

connection::connection(const options& opts) : opts_(opts) {}

result<void> connection::start_keeper() {
  if (opts_.heartbeat.count() <= 0 || keeper_.running()) return {};
  const auto period = std::max<std::chrono::milliseconds>(
      std::chrono::duration_cast<std::chrono::milliseconds>(opts_.heartbeat) / 2,
      std::chrono::milliseconds(500));
  if (auto refused = keeper_.start(period, [this] { keep_alive(); })) {
    return fail(runtime_errc::resource_exhausted,
                "rabbitmq: could not start the heartbeat thread: " + *refused);
  }
  return {};
}

connection::~connection() {
  keeper_.stop();
  std::lock_guard<std::mutex> g(mutex_);
  drop();
}

void connection::keep_alive() {
  std::unique_lock<std::mutex> l(mutex_, std::try_to_lock);
  // A call in progress is inside rabbitmq-c, which services heartbeats itself.
  if (!l.owns_lock() || state_ == nullptr) return;
  amqp_frame_t beat{};
  beat.frame_type = AMQP_FRAME_HEARTBEAT;
  beat.channel = 0;
  // A failed send means a broken socket: the next call of the transport sees it.
  if (amqp_send_frame(state_, &beat) == AMQP_STATUS_OK) ++stats_.heartbeats_sent;
}

// --- connect / close ---------------------------------------------------------------------

result<void> connection::connect(clock::time_point deadline) {
  drop();
  amqp_connection_state_t st = amqp_new_connection();
  if (st == nullptr) return fail(transport_errc::unavailable, "rabbitmq-c: out of memory");
  state_ = st;
  const std::string where =
      (opts_.tls ? "amqps://" : "amqp://") + opts_.host + ":" + std::to_string(opts_.port);
  amqp_socket_t* socket = nullptr;
  if (opts_.tls) {
    socket = amqp_ssl_socket_new(st);
    if (socket == nullptr) {
      drop();
      return fail(transport_errc::unavailable, "cannot create a TLS socket for " + where);
    }
    amqp_ssl_socket_set_verify_peer(socket, opts_.tls_verify ? 1 : 0);
    amqp_ssl_socket_set_verify_hostname(socket,
                                        opts_.tls_verify && opts_.tls_server_name.empty() ? 1 : 0);
    amqp_ssl_socket_set_ssl_versions(socket, AMQP_TLSv1_2, AMQP_TLSvLATEST);
    auto* ctx = static_cast<SSL_CTX*>(amqp_ssl_socket_get_context(socket));
    if (!opts_.tls_ca_file.empty()) {
      if (int rc = amqp_ssl_socket_set_cacert(socket, opts_.tls_ca_file.c_str()); rc != 0) {
        drop();
        return fail(transport_errc::invalid_argument,
                    "amqps option tls_ca_file: cannot load CA certificates from " +
                        in_quotes(opts_.tls_ca_file),
                    native_error{"rabbitmq-c", rc, amqp_error_string2(rc)});
      }
    } else if (ctx != nullptr) {
      SSL_CTX_set_default_verify_paths(ctx);  // the system trust store
    }
    if (!opts_.tls_cert_file.empty()) {
      if (int rc = amqp_ssl_socket_set_key(socket, opts_.tls_cert_file.c_str(),
                                           opts_.tls_key_file.c_str());
          rc != 0) {
        drop();
        return fail(transport_errc::invalid_argument,
                    "amqps options tls_cert_file/tls_key_file: cannot load the client "
                    "certificate " +
                        in_quotes(opts_.tls_cert_file) + " or its key",
                    native_error{"rabbitmq-c", rc, amqp_error_string2(rc)});
      }
    }
    if (opts_.tls_verify && !opts_.tls_server_name.empty() && ctx != nullptr) {
      // rabbitmq-c checks the name it connected to; check the configured one instead.
      X509_VERIFY_PARAM* param = SSL_CTX_get0_param(ctx);
      X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
      X509_VERIFY_PARAM_set1_host(param, opts_.tls_server_name.c_str(), 0);
    }
  } else {
    socket = amqp_tcp_socket_new(st);
    if (socket == nullptr) {
      drop();
      return fail(transport_errc::unavailable, "cannot create a socket for " + where);
    }
  }

  timeval connect_tv = timeval_until(deadline, opts_.connect_timeout);
  if (int rc = amqp_socket_open_noblock(socket, opts_.host.c_str(), opts_.port, &connect_tv);
      rc != AMQP_STATUS_OK) {
    drop();
    return fail(library_error(rc, "cannot connect to " + where));
  }
  timeval handshake_tv = timeval_of(opts_.connect_timeout);
  amqp_set_handshake_timeout(st, &handshake_tv);
  timeval rpc_tv = timeval_of(opts_.operation_timeout);
  amqp_set_rpc_timeout(st, &rpc_tv);

  // Client properties: a name operators see in the management UI, and the capabilities
  // that make the broker tell us why it closes (refused login, blocked connection).
  std::array<amqp_table_entry_t, 4> caps{};
  caps[0].key = bytes_of("authentication_failure_close");
  caps[1].key = bytes_of("connection.blocked");
  caps[2].key = bytes_of("consumer_cancel_notify");
  caps[3].key = bytes_of("publisher_confirms");
  for (auto& c : caps) {
    c.value.kind = AMQP_FIELD_KIND_BOOLEAN;
    c.value.value.boolean = 1;
  }
  std::array<amqp_table_entry_t, 3> client{};
  client[0].key = bytes_of("product");
  client[0].value.kind = AMQP_FIELD_KIND_UTF8;
  client[0].value.value.bytes = bytes_of("babelqueue-cpp");
  client[1].key = bytes_of("connection_name");
  client[1].value.kind = AMQP_FIELD_KIND_UTF8;
  client[1].value.value.bytes = bytes_of("babelqueue-cpp");
  client[2].key = bytes_of("capabilities");
  client[2].value.kind = AMQP_FIELD_KIND_TABLE;
  client[2].value.value.table = amqp_table_t{static_cast<int>(caps.size()), caps.data()};
  const amqp_table_t client_properties{static_cast<int>(client.size()), client.data()};

  const amqp_rpc_reply_t login = amqp_login_with_properties(
      st, opts_.vhost.c_str(), 0, static_cast<int>(opts_.frame_max),
      static_cast<int>(opts_.heartbeat.count()), &client_properties, AMQP_SASL_METHOD_PLAIN,
      opts_.username.c_str(), opts_.password.c_str());
  if (login.reply_type != AMQP_RESPONSE_NORMAL) {
    error_info e = rpc_error(login, "login to " + where + " vhost " + in_quotes(opts_.vhost) +
                                        " as " + in_quotes(opts_.username));
    if (login.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION && e.native &&
        e.native->code == AMQP_STATUS_CONNECTION_CLOSED) {
      // A broker without authentication_failure_close just hangs up on bad credentials.
      e.message += " (the broker closed the connection: refused credentials?)";
    }
    drop();
    return fail(std::move(e));
  }
  if (auto r = open_publish_channel(); !r) {
    drop();
    return r;
  }
  ++generation_;
  ++stats_.connects;
  return {};
}

result<void> connection::open_publish_channel() {
  amqp_channel_open(state_, publish_channel);
  if (amqp_get_rpc_reply(state_).reply_type != AMQP_RESPONSE_NORMAL) {
    return fail(rpc_failure(publish_channel, "channel.open"));
  }
  amqp_confirm_select(state_, publish_channel);
  if (amqp_get_rpc_reply(state_).reply_type != AMQP_RESPONSE_NORMAL) {
    return fail(rpc_failure(publish_channel, "confirm.select"));
  }
  publish_open_ = true;
  next_seq_ = 1;
  unconfirmed_.clear();
  return {};
}

void connection::drop() {
  if (state_ != nullptr) {
    amqp_destroy_connection(state_);  // closes the socket
    state_ = nullptr;
  }
  publish_open_ = false;
  unconfirmed_.clear();
  declared_.clear();
  waits_.clear();
  consumers_.clear();
  next_channel_ = 2;
}

void connection::close(clock::time_point deadline) {
  if (state_ == nullptr) return;
  timeval tv = timeval_until(deadline, opts_.operation_timeout);
  if (tv.tv_sec > 0 || tv.tv_usec > 0) {
    amqp_set_rpc_timeout(state_, &tv);
    (void)amqp_connection_close(state_, AMQP_REPLY_SUCCESS);
  }
  drop();
}

// --- RPC failures ------------------------------------------------------------------------

error_info connection::rpc_failure(amqp_channel_t channel, std::string context) {
  const amqp_rpc_reply_t reply = amqp_get_rpc_reply(state_);
  error_info e = rpc_error(reply, std::move(context));
  if (reply.reply_type == AMQP_RESPONSE_SERVER_EXCEPTION) {
    if (reply.reply.id == AMQP_CONNECTION_CLOSE_METHOD) {
      amqp_connection_close_ok_t ok{};
      (void)amqp_send_method(state_, 0, AMQP_CONNECTION_CLOSE_OK_METHOD, &ok);
      drop();
    } else if (reply.reply.id == AMQP_CHANNEL_CLOSE_METHOD) {
      amqp_channel_close_ok_t ok{};
      (void)amqp_send_method(state_, channel, AMQP_CHANNEL_CLOSE_OK_METHOD, &ok);
      on_channel_closed(channel, e);
    }
  } else {
    drop();  // timeout or socket failure: the connection's state is unknown
  }
  return e;
}

void connection::on_channel_closed(amqp_channel_t channel, const error_info& why) {
  if (channel == publish_channel) {
    publish_open_ = false;
    if (!unconfirmed_.empty()) {
      // The broker forgets what this channel had not confirmed: each of those failed.
      unconfirmed_.clear();
      if (!publish_failure_) publish_failure_ = why;
    }
    return;
  }
  // A consumer channel: the broker requeues its unacked deliveries; forget them here.
  for (auto it = consumers_.begin(); it != consumers_.end(); ++it) {
    if (it->second.channel == channel) {
      consumers_.erase(it);
      return;
    }
  }
}

// --- publish -----------------------------------------------------------------------------

result<void> connection::declare(std::string_view queue) {
  if (declared_.contains(queue)) return {};
  if (!publish_open_) {
    if (auto r = open_publish_channel(); !r) return r;
  }
  amqp_queue_declare(state_, publish_channel, bytes_of(queue), /*passive=*/0, /*durable=*/1,
                     /*exclusive=*/0, /*auto_delete=*/0, amqp_empty_table);
  if (amqp_get_rpc_reply(state_).reply_type != AMQP_RESPONSE_NORMAL) {
    error_info e = rpc_failure(publish_channel,
                               "queue.declare " + in_quotes(queue) + " (durable, no arguments)");
    if (e.code == transport_errc::refused) {
      e.message +=
          " — declared before with other settings? set declare_queues=false to use "
          "a provisioned queue as it is";
    }
    return fail(std::move(e));
  }
  declared_.emplace(queue);
  return {};
}

result<void> connection::declare_wait(const wait_queue& w) {
  const auto now = clock::now();
  if (auto it = waits_.find(w.name); it != waits_.end() && now < it->second) return {};
  if (!publish_open_) {
    if (auto r = open_publish_channel(); !r) return r;
  }
  // Long (`l`) integers: a TTL over 2^31-1 ms does not fit a signed 32-bit `I` (the broker
  // compares values, not widths, when a peer redeclares).
  std::array<amqp_table_entry_t, 7> args{};
  auto set_long = [](amqp_table_entry_t& e, const char* key, std::int64_t v) {
    e.key = amqp_cstring_bytes(key);
    e.value.kind = AMQP_FIELD_KIND_I64;
    e.value.value.i64 = v;
  };
  auto set_text = [](amqp_table_entry_t& e, const char* key, std::string_view v) {
    e.key = amqp_cstring_bytes(key);
    e.value.kind = AMQP_FIELD_KIND_UTF8;
    e.value.value.bytes = bytes_of(v);
  };
  set_text(args[0], "x-queue-type", "quorum");
  set_long(args[1], "x-message-ttl", w.ttl_ms);
  set_long(args[2], "x-expires", w.expires_ms);
  set_text(args[3], "x-dead-letter-exchange", bindings::rabbitmq::default_exchange);
  set_text(args[4], "x-dead-letter-routing-key", w.target);
  // The broker forgets a dead-lettered message only once the work queue confirmed it (a
  // crash may deliver it twice, never lose it); the strategy requires reject-publish.
  set_text(args[5], "x-dead-letter-strategy", "at-least-once");
  set_text(args[6], "x-overflow", "reject-publish");
  const amqp_table_t table{static_cast<int>(args.size()), args.data()};
  amqp_queue_declare(state_, publish_channel, bytes_of(w.name), /*passive=*/0, /*durable=*/1,
                     /*exclusive=*/0, /*auto_delete=*/0, table);
  if (amqp_get_rpc_reply(state_).reply_type != AMQP_RESPONSE_NORMAL) {
    error_info e = rpc_failure(publish_channel, "queue.declare of the wait queue " +
                                                    in_quotes(w.name) + " (delayed publish)");
    if (e.code == transport_errc::refused) {
      e.message +=
          " — declared before with other arguments (delete it once empty), or a broker "
          "without quorum queues with message TTL and at-least-once dead-lettering "
          "(RabbitMQ >= 3.10). Nothing was sent";
    }
    return fail(std::move(e));
  }
  if (waits_.size() >= 64) std::erase_if(waits_, [&](const auto& kv) { return kv.second <= now; });
  waits_.insert_or_assign(w.name, now + w.window_left);
  return {};
}

result<void> connection::send(std::string_view queue, std::string_view body,
                              const bindings::rabbitmq::properties& props) {
  if (!publish_open_) {
    if (auto r = open_publish_channel(); !r) return r;
  }
  const wire_properties wire(props);
  const int rc = amqp_basic_publish(state_, publish_channel,
                                    bytes_of(bindings::rabbitmq::default_exchange), bytes_of(queue),
                                    /*mandatory=*/1, /*immediate=*/0, &wire.props, bytes_of(body));
  if (rc != AMQP_STATUS_OK) {
    error_info e = library_error(rc, "publish to " + in_quotes(queue));
    drop();
    return fail(std::move(e));
  }
  unconfirmed_.insert(next_seq_++);
  return {};
}

result<void> connection::await_confirms(std::size_t limit, clock::time_point deadline) {
  while (unconfirmed_.size() > limit) {
    if (state_ == nullptr) break;
    if (clock::now() >= deadline) {
      return fail(transport_errc::timeout, "no publisher confirm within operation_timeout for " +
                                               std::to_string(unconfirmed_.size()) +
                                               " message(s); the broker may or may not have them");
    }
    if (auto r = pump(deadline); !r) {
      return fail(r.error().code,
                  "connection lost before the broker confirmed the publish (" + r.error().message +
                      "); the broker may or may not have it",
                  r.error().native.value_or(native_error{}));
    }
  }
  if (publish_failure_) {
    error_info e = std::move(*publish_failure_);
    publish_failure_.reset();
    return fail(std::move(e));
  }
  return {};
}

void connection::on_confirm(std::uint64_t tag, bool multiple, bool ack) {
  std::size_t settled = 0;
  if (multiple) {
    auto end = unconfirmed_.upper_bound(tag);
    settled = static_cast<std::size_t>(std::distance(unconfirmed_.begin(), end));
    unconfirmed_.erase(unconfirmed_.begin(), end);
  } else {
    settled = unconfirmed_.erase(tag);
  }
  if (ack) {
    stats_.published += static_cast<std::int64_t>(settled);
  } else if (settled > 0 && !publish_failure_) {
    publish_failure_ =
        error_info(transport_errc::refused, "the broker refused the message (basic.nack)", {},
                   native_error{"amqp", 0, "basic.nack"});
  }
}

// --- consume -----------------------------------------------------------------------------

result<consumer*> connection::consumer_of(std::string_view queue) {
  if (auto it = consumers_.find(queue); it != consumers_.end()) return &it->second;
  if (opts_.declare_queues) {
    BABELQUEUE_TRY(declare(queue));
  }
  if (next_channel_ == 0 || next_channel_ >= 2047) {
    return fail(transport_errc::invalid_argument,
                "too many consumed queues on one amqp:// transport (channel limit)");
  }
  const amqp_channel_t channel = next_channel_++;
  amqp_channel_open(state_, channel);
  if (amqp_get_rpc_reply(state_).reply_type != AMQP_RESPONSE_NORMAL) {
    return fail(rpc_failure(channel, "channel.open for " + in_quotes(queue)));
  }
  amqp_basic_qos(state_, channel, 0, static_cast<std::uint16_t>(opts_.prefetch), 0);
  if (amqp_get_rpc_reply(state_).reply_type != AMQP_RESPONSE_NORMAL) {
    return fail(rpc_failure(channel, "basic.qos"));
  }
  amqp_basic_consume(state_, channel, bytes_of(queue), amqp_empty_bytes, /*no_local=*/0,
                     /*no_ack=*/0, /*exclusive=*/0, amqp_empty_table);
  if (amqp_get_rpc_reply(state_).reply_type != AMQP_RESPONSE_NORMAL) {
    return fail(rpc_failure(channel, "basic.consume " + in_quotes(queue)));
  }
  auto [it, inserted] = consumers_.emplace(std::string(queue), consumer{channel, {}});
  (void)inserted;
  return &it->second;
}

bool connection::consumes_on(amqp_channel_t channel) const noexcept {
  return std::any_of(consumers_.begin(), consumers_.end(),
                     [&](const auto& kv) { return kv.second.channel == channel; });
}

result<void> connection::await_delivery(std::string_view queue, clock::time_point deadline) {
  for (;;) {
    auto it = consumers_.find(queue);
    if (state_ == nullptr || it == consumers_.end()) {
      return fail(transport_errc::unavailable, "the consumer of " + in_quotes(queue) +
                                                   " was lost (connection or channel closed)");
    }
    if (!it->second.ready.empty()) return {};
    if (clock::now() >= deadline) {
      // Out of time (or a zero timeout): still take what already arrived.
      if (auto r = catch_up(); !r) return r;
      return {};
    }
    BABELQUEUE_TRY(pump(deadline));
  }
}

result<void> connection::ack(amqp_channel_t channel, std::uint64_t tag) {
  if (int rc = amqp_basic_ack(state_, channel, tag, 0); rc != AMQP_STATUS_OK) {
    error_info e = library_error(rc, "basic.ack");
    drop();
    return fail(std::move(e));
  }
  return {};
}

// --- the frame pump ----------------------------------------------------------------------

result<void> connection::read_content(amqp_channel_t channel, delivery* into) {
  amqp_message_t message{};
  const amqp_rpc_reply_t r = amqp_read_message(state_, channel, &message, 0);
  if (r.reply_type != AMQP_RESPONSE_NORMAL) {
    error_info e = rpc_error(r, "reading a message");
    drop();
    return fail(std::move(e));
  }
  if (into != nullptr) {
    into->body.assign(view_of(message.body));
    received_headers h = read_headers(message.properties);
    into->hdrs = std::move(h.out_of_band);
    into->x_attempts = h.attempts;
  }
  amqp_destroy_message(&message);
  return {};
}

result<void> connection::catch_up() {
  if (state_ == nullptr) return {};
  if (amqp_frames_enqueued(state_) == 0 && amqp_data_in_buffer(state_) == 0) {
    // Nothing buffered by rabbitmq-c: one poll() says whether the socket has anything, so an
    // idle ack costs one syscall instead of a failed read plus a poll.
    pollfd pfd{amqp_get_sockfd(state_), POLLIN, 0};
    if (pfd.fd < 0 || ::poll(&pfd, 1, 0) <= 0) return {};
  }
  for (int i = 0; i < 1024 && state_ != nullptr; ++i) {
    BABELQUEUE_TRY_LET(r, pump(clock::now()));
    if (!*r) break;
  }
  return {};
}

result<bool> connection::pump(clock::time_point deadline) {
  amqp_frame_t frame{};
  timeval tv = timeval_until(deadline, std::chrono::hours(24));
  const int rc = amqp_simple_wait_frame_noblock(state_, &frame, &tv);
  if (rc == AMQP_STATUS_TIMEOUT) return false;
  if (rc != AMQP_STATUS_OK) {
    error_info e = library_error(rc, "connection lost");
    drop();
    return fail(std::move(e));
  }
  if (frame.frame_type != AMQP_FRAME_METHOD) return true;  // stray content: nothing waits for it
  const amqp_channel_t channel = frame.channel;
  void* decoded = frame.payload.method.decoded;
  switch (frame.payload.method.id) {
    case AMQP_BASIC_ACK_METHOD: {
      const auto* m = static_cast<const amqp_basic_ack_t*>(decoded);
      if (channel == publish_channel) on_confirm(m->delivery_tag, m->multiple != 0, true);
      break;
    }
    case AMQP_BASIC_NACK_METHOD: {
      const auto* m = static_cast<const amqp_basic_nack_t*>(decoded);
      if (channel == publish_channel) on_confirm(m->delivery_tag, m->multiple != 0, false);
      break;
    }
    case AMQP_BASIC_RETURN_METHOD: {
      const auto* m = static_cast<const amqp_basic_return_t*>(decoded);
      error_info e = reply_code_error(m->reply_code, view_of(m->reply_text),
                                      "no queue took the message routed to " +
                                          in_quotes(view_of(m->routing_key)) + " (basic.return)");
      // A queue that no longer takes messages was deleted since we declared it: declare it
      // again before the next publish to it.
      if (auto it = declared_.find(view_of(m->routing_key)); it != declared_.end()) {
        declared_.erase(it);
      }
      if (auto it = waits_.find(view_of(m->routing_key)); it != waits_.end()) waits_.erase(it);
      BABELQUEUE_TRY(read_content(channel, nullptr));
      // The broker confirms a returned message afterwards: report the return instead.
      if (!publish_failure_) publish_failure_ = std::move(e);
      break;
    }
    case AMQP_BASIC_DELIVER_METHOD: {
      const auto* m = static_cast<const amqp_basic_deliver_t*>(decoded);
      delivery d{m->delivery_tag, {}, {}, std::nullopt};
      BABELQUEUE_TRY(read_content(channel, &d));
      ++stats_.delivered;
      for (auto& [queue, c] : consumers_) {
        if (c.channel == channel) {
          c.ready.push_back(std::move(d));
          break;
        }
      }
      break;
    }
    case AMQP_BASIC_CANCEL_METHOD: {
      // The broker cancelled a consumer (its queue was deleted or failed over). Close the
      // channel without waiting (its close-ok is ignored when it comes), so that its unacked
      // deliveries return to the queue now, not when the connection ends; the next receive
      // starts a new consumer on a new channel.
      amqp_channel_close_t close{};
      close.reply_code = AMQP_REPLY_SUCCESS;
      close.reply_text = bytes_of("consumer cancelled by the broker");
      (void)amqp_send_method(state_, channel, AMQP_CHANNEL_CLOSE_METHOD, &close);
      on_channel_closed(channel, error_info(transport_errc::not_found, "consumer cancelled"));
      break;
    }
    case AMQP_CHANNEL_CLOSE_METHOD: {
      const auto* m = static_cast<const amqp_channel_close_t*>(decoded);
      error_info e =
          reply_code_error(m->reply_code, view_of(m->reply_text), "channel closed by the broker");
      amqp_channel_close_ok_t ok{};
      (void)amqp_send_method(state_, channel, AMQP_CHANNEL_CLOSE_OK_METHOD, &ok);
      on_channel_closed(channel, e);
      break;
    }
    case AMQP_CONNECTION_CLOSE_METHOD: {
      const auto* m = static_cast<const amqp_connection_close_t*>(decoded);
      error_info e = reply_code_error(m->reply_code, view_of(m->reply_text),
                                      "connection closed by the broker");
      amqp_connection_close_ok_t ok{};
      (void)amqp_send_method(state_, 0, AMQP_CONNECTION_CLOSE_OK_METHOD, &ok);
      drop();
      return fail(std::move(e));
    }
    default:
      break;  // connection.blocked/unblocked and anything else: nothing to do
  }
  if (state_ != nullptr) amqp_maybe_release_buffers_on_channel(state_, channel);
  return true;
}

}  // namespace babelqueue::inline v1::rabbitmq::detail
