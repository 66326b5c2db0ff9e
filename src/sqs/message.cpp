// Checks and ids of a message before it is sent (message.hpp).
#include "sqs/message.hpp"

#include "sqs/json_text.hpp"
#include "sqs/sigv4.hpp"

#include <babelqueue/codec.hpp>

namespace babelqueue::inline v1::sqs::detail {

namespace bs = bindings::sqs;

std::size_t attributes_size(const std::vector<bs::attribute>& attributes) {
  std::size_t n = 0;
  for (const auto& a : attributes) n += a.name.size() + a.data_type.size() + a.string_value.size();
  return n;
}

// The FIFO deduplication id (message.hpp).
std::string deduplication_id(std::string_view body, std::string id, const headers& hdrs) {
  if (id.empty()) return id;
  std::string with = id;
  if (auto env = decode(body); env && env->attempts() > 0) {
    with += ":" + std::to_string(env->attempts());
  }
  if (auto r = hdrs.find(redrive_header); r != hdrs.end() && !r->second.empty()) {
    // The token as redrive writes it (digits); anything else a sender put there is hashed
    // into characters SQS accepts.
    const bool plain =
        r->second.size() <= 20 && r->second.find_first_not_of("0123456789") == std::string::npos;
    with += ":r" + (plain ? r->second : sha256_hex(r->second).substr(0, 16));
  }
  if (with.size() <= bs::max_fifo_id) return with;
  return sha256_hex(with);
}

// What publish and publish_each check before any call: the body's characters and size.
result<void> check_message(std::string_view body, const std::vector<bs::attribute>& attributes,
                           std::int64_t max_bytes) {
  if (auto why = sqs_text_problem(body)) {
    return fail(transport_errc::invalid_argument, "sqs: the body cannot be sent to SQS: " + *why);
  }
  for (const auto& a : attributes) {
    if (auto why = sqs_text_problem(a.string_value)) {
      return fail(transport_errc::invalid_argument,
                  "sqs: header '" + a.name + "' cannot be sent to SQS: " + *why);
    }
  }
  const std::size_t size = body.size() + attributes_size(attributes);
  if (size > static_cast<std::size_t>(max_bytes)) {
    return fail(transport_errc::too_large,
                "sqs: the message is " + std::to_string(size) +
                    " bytes (body and attributes), more than max_message_bytes " +
                    std::to_string(max_bytes));
  }
  return {};
}

}  // namespace babelqueue::inline v1::sqs::detail
