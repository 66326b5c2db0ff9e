#pragma once
// GoogleTest support for the amqp:// tests: the shared RabbitMQ node started by
// scripts/services.sh (URLs in BABELQUEUE_RABBITMQ_*), unique queue names per test, and a
// raw rabbitmq-c client to look at (and forge) messages exactly as a peer would — not the
// code under test.
//
// Without the service the live tests skip, except when BABELQUEUE_REQUIRE_SERVICES=1 or
// CI=true (scripts/test.sh sets it), where they fail.

#include "support/services.hpp"

#include <babelqueue/codec.hpp>
#include <babelqueue/envelope.hpp>
#include <babelqueue/rabbitmq/rabbitmq_transport.hpp>

#include <amqp.h>
#include <amqp_framing.h>
#include <amqp_tcp_socket.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>

namespace bqtest {

/// `amqp://guest:guest@127.0.0.1:P/%2F` of the shared node, or empty.
inline std::string rabbitmq_url() { return env_or_empty("BABELQUEUE_RABBITMQ_URL"); }

#define BQ_REQUIRE_RABBITMQ() BQ_REQUIRE_SERVICE(bqtest::rabbitmq_url(), "RabbitMQ", "rabbitmq")

/// A queue name no other test (or test process) uses.
inline std::string unique_queue(const std::string& prefix = "bq-test") {
  return unique_name(prefix);
}

/// One message as a raw basic.get saw it.
struct raw_message {
  std::string body;
  amqp_basic_properties_t props{};
  std::map<std::string, amqp_field_value_t> headers;
  std::string prop(std::string_view name) const {
    auto str = [](const amqp_bytes_t& b) {
      return std::string(static_cast<const char*>(b.bytes), b.len);
    };
    if (name == "content_type" && (props._flags & AMQP_BASIC_CONTENT_TYPE_FLAG))
      return str(props.content_type);
    if (name == "content_encoding" && (props._flags & AMQP_BASIC_CONTENT_ENCODING_FLAG))
      return str(props.content_encoding);
    if (name == "app_id" && (props._flags & AMQP_BASIC_APP_ID_FLAG)) return str(props.app_id);
    if (name == "type" && (props._flags & AMQP_BASIC_TYPE_FLAG)) return str(props.type);
    if (name == "correlation_id" && (props._flags & AMQP_BASIC_CORRELATION_ID_FLAG))
      return str(props.correlation_id);
    if (name == "message_id" && (props._flags & AMQP_BASIC_MESSAGE_ID_FLAG))
      return str(props.message_id);
    return "<unset>";
  }
};

/// A plain rabbitmq-c client on channel 1 (no confirms): declare, purge, count, get, and
/// publish with hand-made properties (a Laravel-style header, another integer width...).
class raw_amqp {
 public:
  raw_amqp() {
    auto url = babelqueue::broker_url::parse(rabbitmq_url()).value();
    conn_ = amqp_new_connection();
    amqp_socket_t* s = amqp_tcp_socket_new(conn_);
    timeval tv{5, 0};
    ok_ =
        amqp_socket_open_noblock(s, url.host.c_str(), *url.port, &tv) == AMQP_STATUS_OK &&
        amqp_login(conn_, "/", 0, 131072, 0, AMQP_SASL_METHOD_PLAIN, "guest", "guest").reply_type ==
            AMQP_RESPONSE_NORMAL &&
        amqp_channel_open(conn_, 1) != nullptr;
  }
  ~raw_amqp() {
    release_kept();
    if (ok_) amqp_connection_close(conn_, AMQP_REPLY_SUCCESS);
    amqp_destroy_connection(conn_);
  }
  raw_amqp(const raw_amqp&) = delete;
  raw_amqp& operator=(const raw_amqp&) = delete;

  bool ok() const { return ok_; }
  /// After a channel error (404 of a passive declare, 406...): acknowledges the broker's
  /// channel.close and opens channel 1 again.
  void reopen_channel() {
    const amqp_rpc_reply_t why = amqp_get_rpc_reply(conn_);
    if (why.reply_type == AMQP_RESPONSE_SERVER_EXCEPTION &&
        why.reply.id == AMQP_CHANNEL_CLOSE_METHOD) {
      amqp_channel_close_ok_t close_ok{};
      amqp_send_method(conn_, 1, AMQP_CHANNEL_CLOSE_OK_METHOD, &close_ok);
    }
    ok_ = ok_ && amqp_channel_open(conn_, 1) != nullptr;
  }
  amqp_connection_state_t native() { return conn_; }

  /// Declares `queue` durable with no arguments (as every peer does); message count.
  long declare(const std::string& queue) {
    auto* r = amqp_queue_declare(conn_, 1, amqp_cstring_bytes(queue.c_str()), 0, 1, 0, 0,
                                 amqp_empty_table);
    return r == nullptr ? -1 : static_cast<long>(r->message_count);
  }
  /// Message count of an existing queue (passive declare); -1 when it does not exist (the
  /// broker then closes channel 1, which is opened again so the client stays usable).
  long count(const std::string& queue) {
    auto* r = amqp_queue_declare(conn_, 1, amqp_cstring_bytes(queue.c_str()), 1, 0, 0, 0,
                                 amqp_empty_table);
    if (r == nullptr) {
      reopen_channel();
      return -1;
    }
    return static_cast<long>(r->message_count);
  }
  void remove(const std::string& queue) {
    amqp_queue_delete(conn_, 1, amqp_cstring_bytes(queue.c_str()), 0, 0);
  }
  bool publish(const std::string& queue, const std::string& body,
               const amqp_basic_properties_t* props = nullptr) {
    amqp_basic_properties_t none{};
    return amqp_basic_publish(conn_, 1, amqp_empty_bytes, amqp_cstring_bytes(queue.c_str()), 0, 0,
                              props ? props : &none,
                              amqp_bytes_t{body.size(), const_cast<char*>(body.data())}) ==
           AMQP_STATUS_OK;
  }
  /// basic.get with auto-ack; nullopt when the queue is empty. The returned properties
  /// point into this client's buffers: read them before the next call.
  std::optional<raw_message> get(const std::string& queue) {
    amqp_rpc_reply_t r = amqp_basic_get(conn_, 1, amqp_cstring_bytes(queue.c_str()), 1);
    if (r.reply_type != AMQP_RESPONSE_NORMAL || r.reply.id != AMQP_BASIC_GET_OK_METHOD) {
      return std::nullopt;
    }
    amqp_message_t m{};
    if (amqp_read_message(conn_, 1, &m, 0).reply_type != AMQP_RESPONSE_NORMAL) return std::nullopt;
    raw_message out;
    out.body.assign(static_cast<const char*>(m.body.bytes), m.body.len);
    out.props = m.properties;
    if (m.properties._flags & AMQP_BASIC_HEADERS_FLAG) {
      for (int i = 0; i < m.properties.headers.num_entries; ++i) {
        const auto& e = m.properties.headers.entries[i];
        out.headers[std::string(static_cast<const char*>(e.key.bytes), e.key.len)] = e.value;
      }
    }
    release_kept();
    keep_ = m;  // properties stay valid until the next get (pool kept alive)
    has_kept_ = true;
    return out;
  }

 private:
  void release_kept() {
    if (has_kept_) amqp_destroy_message(&keep_);
    has_kept_ = false;
  }

  amqp_connection_state_t conn_ = nullptr;
  bool ok_ = false;
  amqp_message_t keep_{};
  bool has_kept_ = false;
};

/// Fixture: a raw client plus a fresh queue name per test (deleted afterwards with its DLQ).
class RabbitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    BQ_REQUIRE_RABBITMQ();
    raw_ = std::make_unique<raw_amqp>();
    ASSERT_TRUE(raw_->ok()) << "cannot reach RabbitMQ at " << rabbitmq_url();
    queue_ = unique_queue();
  }
  void TearDown() override {
    if (raw_ && raw_->ok()) {
      raw_->remove(queue_);
      raw_->remove(queue_ + ".dlq");
    }
  }
  std::unique_ptr<babelqueue::rabbitmq::rabbitmq_transport> open(const std::string& query = "") {
    auto url = babelqueue::broker_url::parse(rabbitmq_url() + (query.empty() ? "" : "?" + query));
    EXPECT_TRUE(url);
    auto o = babelqueue::rabbitmq::options_from_url(*url);
    EXPECT_TRUE(o) << o.error().message;
    auto t = babelqueue::rabbitmq::rabbitmq_transport::open(*o);
    EXPECT_TRUE(t) << t.error().message;
    return t ? std::move(*t) : nullptr;
  }

  std::unique_ptr<raw_amqp> raw_;
  std::string queue_;
};

}  // namespace bqtest
