#pragma once
// The one place where a Redis, socket or TLS failure becomes an error_info. Every site in
// src/redis that reports such a failure names what happened (a `fault`) and lets
// redis_error() choose the code, so a change of the error model (codes, categories, a
// `permission` code for a refused AUTH) is a change of errors.cpp alone.
//
// Errors that are not broker failures — a misused API (empty queue name, a message not
// received by this transport), an unsupported delay, a bad option value — are
// transport_errc::invalid_argument / transport_errc::not_supported where they are found.
//
// Thread-safety: pure functions.

#include <babelqueue/runtime/error.hpp>

#include <string>
#include <string_view>

namespace babelqueue::inline v1::redis::detail {

/// What went wrong, as seen by the redis transport.
enum class fault {
  unreachable,       ///< no connection within the time given (connect refused, backoff pending)
  io,                ///< socket error, protocol error, or the server closed the connection
  timed_out,         ///< the server did not answer within the socket timeout
  tls,               ///< TLS setup or handshake failed (e.g. certificate verify failed)
  server_error,      ///< an error reply to a command (WRONGTYPE, CROSSSLOT, NOSCRIPT, ...)
  unexpected_reply,  ///< a reply of a shape the command never returns
  auth_refused,      ///< AUTH refused (WRONGPASS, ...)
  select_refused,    ///< SELECT refused
  closed,            ///< the transport was closed
};

/// The error for `kind`. The message is `context`, or `context: server_text` when the
/// server (or OpenSSL) said something; `server_text` is passed separately so the mapping
/// can look at it (e.g. a `WRONGPASS` reply).
error_info redis_error(fault kind, std::string context, std::string_view server_text = {});

/// Whether retrying (reconnecting) cannot help with `e`: refused credentials or database,
/// unusable TLS files or names. ensure() gives up at once on these.
bool is_permanent(const error_info& e) noexcept;

}  // namespace babelqueue::inline v1::redis::detail
