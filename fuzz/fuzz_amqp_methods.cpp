// Fuzz target: what the amqp:// transport reads from the broker's close and return methods
// (src/rabbitmq/connection.cpp, errors.cpp) — `connection.close`, `channel.close` and
// `basic.return`, decoded by rabbitmq-c's amqp_decode_method() from whatever a broker (or a
// hostile endpoint) sent, then turned into an error_info. The first input byte picks the
// method, the rest are its encoded arguments.
//
// Invariants:
//  - nothing crashes, whatever the arguments hold (bad lengths, any reply code, any bytes);
//  - the error names what we were doing (the context comes first) and keeps the broker's
//    reply code and text in `native`;
//  - the mapped code is one of those docs/errors.md lists for a reply code.
#include "fuzz_check.hpp"
#include "rabbitmq/errors.hpp"

#include <babelqueue/runtime/transport.hpp>

#include <amqp.h>
#include <amqp_framing.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace {

std::string_view view_of(const amqp_bytes_t& b) {
  return b.len == 0 ? std::string_view()
                    : std::string_view(static_cast<const char*>(b.bytes), b.len);
}

void check(const babelqueue::error_info& e, std::string_view context, int reply_code,
           std::string_view text) {
  using babelqueue::transport_errc;
  FUZZ_CHECK(std::string_view(e.message).substr(0, context.size()) == context,
             "the error does not start with its context");
  FUZZ_CHECK(e.native && e.native->code == reply_code && e.native->text == text,
             "the broker's reply code and text are not kept");
  static const std::array allowed = {transport_errc::unavailable, transport_errc::permission,
                                     transport_errc::not_found,   transport_errc::too_large,
                                     transport_errc::refused,     transport_errc::not_supported};
  bool known = false;
  for (auto c : allowed) known = known || e.code == make_error_code(c);
  FUZZ_CHECK(known, "a reply code mapped to a code docs/errors.md does not list");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  namespace d = babelqueue::rabbitmq::detail;
  if (size == 0) return 0;
  static const std::array methods = {AMQP_CONNECTION_CLOSE_METHOD, AMQP_CHANNEL_CLOSE_METHOD,
                                     AMQP_BASIC_RETURN_METHOD};
  const amqp_method_number_t method = methods[bytes[0] % methods.size()];
  std::vector<std::uint8_t> args(bytes + 1, bytes + size);
  amqp_pool_t pool;
  init_amqp_pool(&pool, 4096);
  void* decoded = nullptr;
  if (amqp_decode_method(method, &pool, amqp_bytes_t{args.size(), args.data()}, &decoded) ==
          AMQP_STATUS_OK &&
      decoded != nullptr) {
    if (method == AMQP_BASIC_RETURN_METHOD) {
      const auto* m = static_cast<const amqp_basic_return_t*>(decoded);
      const std::string context =
          "no queue took the message routed to '" + std::string(view_of(m->routing_key)) + "'";
      check(d::reply_code_error(m->reply_code, view_of(m->reply_text), context), context,
            m->reply_code, view_of(m->reply_text));
    } else {
      amqp_rpc_reply_t reply{};
      reply.reply_type = AMQP_RESPONSE_SERVER_EXCEPTION;
      reply.reply.id = method;
      reply.reply.decoded = decoded;
      int code = 0;
      std::string_view text;
      if (method == AMQP_CONNECTION_CLOSE_METHOD) {
        const auto* m = static_cast<const amqp_connection_close_t*>(decoded);
        code = m->reply_code;
        text = view_of(m->reply_text);
      } else {
        const auto* m = static_cast<const amqp_channel_close_t*>(decoded);
        code = m->reply_code;
        text = view_of(m->reply_text);
      }
      check(d::rpc_error(reply, "closed by the broker"), "closed by the broker", code, text);
    }
  }
  empty_amqp_pool(&pool);
  return 0;
}
