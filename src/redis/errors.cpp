// Redis, socket and TLS failures → transport_errc (docs/errors.md, table "redis / rediss").
#include "redis/errors.hpp"

namespace babelqueue::inline v1::redis::detail {

namespace {

// An error reply is `<CODE> <text>`; the code word decides.
transport_errc code_of_reply(std::string_view reply) noexcept {
  for (std::string_view word : {"WRONGPASS", "NOAUTH", "NOPERM", "ERR invalid password"}) {
    if (reply.starts_with(word)) return transport_errc::permission;
  }
  for (std::string_view word : {"MOVED", "ASK", "CROSSSLOT"}) {
    if (reply.starts_with(word)) return transport_errc::refused;
  }
  // LOADING, BUSY, OOM, MASTERDOWN, TRYAGAIN, CLUSTERDOWN, READONLY and the rest: the
  // server is (for now) unable to serve; a retry may succeed.
  return transport_errc::unavailable;
}

transport_errc code_of(fault kind, std::string_view server_text) noexcept {
  switch (kind) {
    case fault::timed_out:
      return transport_errc::timeout;
    case fault::auth_refused:
      return transport_errc::permission;
    case fault::select_refused:
      return transport_errc::invalid_argument;
    case fault::closed:
      return transport_errc::closed;
    case fault::server_error:
      return code_of_reply(server_text);
    case fault::unreachable:
    case fault::io:
    case fault::tls:
    case fault::unexpected_reply:
      break;
  }
  return transport_errc::unavailable;
}

}  // namespace

error_info redis_error(fault kind, std::string context, std::string_view server_text) {
  const auto code = code_of(kind, server_text);
  std::optional<native_error> native;
  if (!server_text.empty()) {
    context += ": ";
    context += server_text;
    if (server_text.starts_with("MOVED ") || server_text.starts_with("ASK ")) {
      // Seen by a user who pointed a plain redis:// URL at a cluster node: say what to do.
      context +=
          " (the server is a Redis Cluster node, which sends each key to its slot's owner: "
          "open it in cluster mode, redis://host:port?cluster=1)";
    }
    native = native_error{kind == fault::tls ? "openssl" : "redis", 0, std::string(server_text)};
  }
  return {code, std::move(context), {}, std::move(native)};
}

bool is_permanent(const error_info& e) noexcept {
  // Refused credentials or database, unusable TLS files or names: reconnecting cannot help.
  return e.code == transport_errc::invalid_argument || e.code == transport_errc::permission;
}

}  // namespace babelqueue::inline v1::redis::detail
