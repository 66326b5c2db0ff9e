#pragma once
// The one place where a rabbitmq-c status, an AMQP reply code or a socket/TLS failure
// becomes an error_info (the table of docs/errors.md "amqp://"). Every site in src/rabbitmq
// that reports a broker failure goes through these functions, with the native code and
// text kept in error_info::native.
//
// Thread-safety: pure functions.

#include <babelqueue/runtime/error.hpp>

#include <amqp.h>

#include <string>
#include <string_view>

namespace babelqueue::inline v1::rabbitmq::detail {

/// A rabbitmq-c status (`AMQP_STATUS_*`, negative) seen while doing `context`.
error_info library_error(int status, std::string context);

/// A `connection.close` / `channel.close` reply code (AMQP 0-9-1 §1.9) with its text.
error_info reply_code_error(int reply_code, std::string_view reply_text, std::string context);

/// The error of an RPC reply that is not AMQP_RESPONSE_NORMAL.
error_info rpc_error(const amqp_rpc_reply_t& reply, std::string context);

/// Whether reconnecting cannot help (refused credentials or vhost, unusable TLS files).
bool is_permanent(const error_info& e) noexcept;

}  // namespace babelqueue::inline v1::rabbitmq::detail
