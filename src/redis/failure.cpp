#include "redis/failure.hpp"

namespace babelqueue::inline v1::redis::detail {

namespace {

errc code_of(fault kind) noexcept {
  switch (kind) {
    case fault::timed_out:
      return errc::timeout;
    case fault::auth_refused:
    case fault::select_refused:
      return errc::invalid_argument;  // retrying cannot help (is_permanent)
    case fault::closed:
      return errc::closed;
    case fault::unreachable:
    case fault::io:
    case fault::tls:
    case fault::server_error:
    case fault::unexpected_reply:
      break;
  }
  return errc::transport;
}

}  // namespace

error_info redis_error(fault kind, std::string context, std::string_view server_text) {
  if (!server_text.empty()) {
    context += ": ";
    context += server_text;
  }
  return {code_of(kind), std::move(context)};
}

bool is_permanent(const error_info& e) noexcept { return e.code == errc::invalid_argument; }

}  // namespace babelqueue::inline v1::redis::detail
