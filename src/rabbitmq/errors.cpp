// rabbitmq-c statuses and AMQP reply codes → transport_errc (docs/errors.md "amqp://").
#include "rabbitmq/errors.hpp"

#include <amqp_framing.h>

namespace babelqueue::inline v1::rabbitmq::detail {

namespace {

std::string with_text(std::string context, std::string_view text) {
  if (text.empty()) return context;
  context.append(": ");
  context.append(text);
  return context;
}

}  // namespace

error_info library_error(int status, std::string context) {
  const char* text = amqp_error_string2(status);
  transport_errc code = transport_errc::unavailable;
  switch (status) {
    case AMQP_STATUS_TIMEOUT:
      code = transport_errc::timeout;
      break;
    case AMQP_STATUS_SSL_ERROR:
    case AMQP_STATUS_SSL_HOSTNAME_VERIFY_FAILED:
    case AMQP_STATUS_SSL_PEER_VERIFY_FAILED:
    case AMQP_STATUS_SSL_CONNECTION_FAILED:
      code = transport_errc::unavailable;
      break;
    case AMQP_STATUS_INVALID_PARAMETER:
    case AMQP_STATUS_BAD_URL:
      code = transport_errc::invalid_argument;
      break;
    case AMQP_STATUS_TABLE_TOO_BIG:
      code = transport_errc::too_large;
      break;
    default:
      break;  // socket errors, heartbeat timeout, closed connection, protocol errors
  }
  return error_info(code, with_text(std::move(context), text ? text : ""), {},
                    native_error{"rabbitmq-c", status, text ? text : ""});
}

error_info reply_code_error(int reply_code, std::string_view reply_text, std::string context) {
  transport_errc code = transport_errc::unavailable;
  switch (reply_code) {
    case AMQP_ACCESS_REFUSED:  // 403
    case AMQP_NOT_ALLOWED:     // 530: e.g. an unknown vhost
      code = transport_errc::permission;
      break;
    case AMQP_NOT_FOUND:  // 404
    case AMQP_NO_ROUTE:   // 312: a mandatory publish no queue took (basic.return)
      code = transport_errc::not_found;
      break;
    case AMQP_CONTENT_TOO_LARGE:  // 311
      code = transport_errc::too_large;
      break;
    case AMQP_PRECONDITION_FAILED:  // 406: RabbitMQ reports max_message_size here
      code = reply_text.find("larger than configured max size") != std::string_view::npos
                 ? transport_errc::too_large
                 : transport_errc::refused;
      break;
    case AMQP_RESOURCE_LOCKED:  // 405: an exclusive queue of another connection
    case AMQP_FRAME_ERROR:
    case AMQP_SYNTAX_ERROR:
    case AMQP_COMMAND_INVALID:
    case AMQP_CHANNEL_ERROR:
    case AMQP_UNEXPECTED_FRAME:
      code = transport_errc::refused;
      break;
    case AMQP_NOT_IMPLEMENTED:  // 540
      code = transport_errc::not_supported;
      break;
    default:  // 320 connection-forced, 506 resource-error, 541 internal-error, ...
      break;
  }
  std::string text(reply_text);
  return error_info(code, with_text(std::move(context), text), {},
                    native_error{"amqp", reply_code, text});
}

error_info rpc_error(const amqp_rpc_reply_t& reply, std::string context) {
  switch (reply.reply_type) {
    case AMQP_RESPONSE_LIBRARY_EXCEPTION: {
      // AMQP_STATUS_* values are negative; older rabbitmq-c stored them negated.
      const int status = reply.library_error > 0 ? -reply.library_error : reply.library_error;
      return library_error(status, std::move(context));
    }
    case AMQP_RESPONSE_SERVER_EXCEPTION: {
      // connection.close and channel.close carry the same reply code and text.
      auto close_error = [&](const auto* m) {
        return reply_code_error(
            m->reply_code,
            std::string_view(static_cast<const char*>(m->reply_text.bytes), m->reply_text.len),
            std::move(context));
      };
      if (reply.reply.id == AMQP_CONNECTION_CLOSE_METHOD && reply.reply.decoded != nullptr) {
        return close_error(static_cast<const amqp_connection_close_t*>(reply.reply.decoded));
      }
      if (reply.reply.id == AMQP_CHANNEL_CLOSE_METHOD && reply.reply.decoded != nullptr) {
        return close_error(static_cast<const amqp_channel_close_t*>(reply.reply.decoded));
      }
      return error_info(transport_errc::refused, context + ": unexpected server method", {},
                        native_error{"amqp", static_cast<std::int64_t>(reply.reply.id), ""});
    }
    case AMQP_RESPONSE_NONE:
      return error_info(transport_errc::unavailable, context + ": no reply (connection lost)");
    case AMQP_RESPONSE_NORMAL:
      break;
  }
  return error_info(transport_errc::unavailable, context);
}

bool is_permanent(const error_info& e) noexcept {
  return e.code == transport_errc::permission || e.code == transport_errc::invalid_argument;
}

}  // namespace babelqueue::inline v1::rabbitmq::detail
