// Checks and ids of a message before it is sent (message.hpp).
#include "sqs/message.hpp"

#include "sqs/json_text.hpp"

#include <babelqueue/codec.hpp>

namespace babelqueue::inline v1::sqs::detail {

namespace bs = bindings::sqs;

std::size_t attributes_size(const std::vector<bs::attribute>& attributes) {
  std::size_t n = 0;
  for (const auto& a : attributes) n += a.name.size() + a.data_type.size() + a.string_value.size();
  return n;
}

// The FIFO deduplication id: meta.id, as the spec says, for a first publish; `<meta.id>:<n>`
// for a copy carrying attempts n > 0 — the App's retry republishes the same meta.id within
// SQS's 5-minute deduplication window, and SQS would silently drop it as a duplicate.
std::string deduplication_id(std::string_view body, std::string id) {
  if (id.empty()) return id;
  if (auto env = decode(body); env && env->attempts() > 0) {
    std::string with = id + ":" + std::to_string(env->attempts());
    if (with.size() <= bs::max_fifo_id) return with;
  }
  return id;
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
