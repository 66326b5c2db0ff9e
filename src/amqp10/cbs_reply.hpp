#pragma once
// Reading the broker's answer to a CBS put-token request (the `$cbs` node of Service Bus):
// which request it answers, and its status — written as a pure function so that the fuzz
// target (fuzz/fuzz_artemis_message.cpp) reads hostile replies exactly as the client does.
// Private to the AMQP 1.0 layer; header-only.
//
// Thread-safety: pure functions over values.

#include <proton/error.hpp>
#include <proton/message.hpp>
#include <proton/message_id.hpp>
#include <proton/scalar.hpp>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <string_view>

namespace babelqueue::inline v1::amqp10 {

/// What a message on the CBS reply link says.
struct cbs_reply {
  /// It answers the request `request_id` (its correlation-id is that string).
  bool answers_request = false;
  /// Status 200 or 202: the token was put.
  bool accepted = false;
  /// `status-code` (any AMQP integer); 0 when absent or unreadable.
  std::int64_t status = 0;
  /// `status-description`, cut to max_cbs_description bytes (it goes into an error message).
  std::string description;
};

/// The longest `status-description` kept: a broker's text, not a place for megabytes.
inline constexpr std::size_t max_cbs_description = 512;

/// Reads `m` as the answer to the put-token request `request_id` (never empty). Never
/// throws: a reply whose properties do not decode has status 0 (refused).
inline cbs_reply read_cbs_reply(const proton::message& m, std::string_view request_id) {
  cbs_reply r;
  try {
    const proton::message_id id = m.correlation_id();
    if (id.type() != proton::STRING) return r;  // not a reply to us (e.g. an echoed request)
    const std::string correlation = proton::get<std::string>(id);
    if (request_id.empty() || correlation != request_id) return r;
  } catch (const std::exception&) {
    return r;
  }
  r.answers_request = true;
  try {
    // exists() decodes the whole section: a hostile one throws.
    if (m.properties().exists("status-code")) {
      r.status = proton::coerce<std::int64_t>(m.properties().get("status-code"));
    }
  } catch (const std::exception&) {
    r.status = 0;
  }
  try {
    if (m.properties().exists("status-description")) {
      const proton::scalar d = m.properties().get("status-description");
      if (d.type() == proton::STRING || d.type() == proton::SYMBOL) {
        r.description = proton::coerce<std::string>(d);
      }
    }
  } catch (const std::exception&) {
    r.description.clear();
  }
  if (r.description.size() > max_cbs_description) {
    std::size_t cut = max_cbs_description;  // at a character boundary, not inside one
    while (cut > 0 && (static_cast<unsigned char>(r.description[cut]) & 0xC0U) == 0x80U) --cut;
    r.description.resize(cut);
  }
  r.accepted = r.status == 200 || r.status == 202;
  return r;
}

}  // namespace babelqueue::inline v1::amqp10
