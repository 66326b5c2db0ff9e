#include "artemis/message.hpp"

#include "amqp10/message_parts.hpp"

#include <babelqueue/bindings/artemis.hpp>

#include <proton/annotation_key.hpp>
#include <proton/binary.hpp>
#include <proton/map.hpp>
#include <proton/message_id.hpp>
#include <proton/symbol.hpp>
#include <proton/timestamp.hpp>
#include <proton/value.hpp>

#include <variant>

namespace babelqueue::inline v1::artemis::detail {

namespace projection = bindings::artemis;

proton::message to_message(std::string_view body, const headers& hdrs,
                           std::optional<std::chrono::milliseconds> delay, bool durable) {
  const projection::message_projection p = projection::project(body, hdrs, delay);
  proton::message m;
  m.body(std::string(body));  // one amqp-value section holding an AMQP string (§4.3)
  // The projection's durable (the C++ default) unless the options opted out: the peers send
  // non-durable messages, and a user may trade restart safety for the journal's latency.
  m.durable(p.durable && durable);
  m.content_type(p.content_type);
  if (p.subject) m.subject(*p.subject);
  if (p.correlation_id) m.correlation_id(proton::message_id(*p.correlation_id));
  if (p.creation_time_ms) m.creation_time(proton::timestamp(*p.creation_time_ms));
  auto& annotations = m.message_annotations();
  for (const auto& [key, value] : p.annotations) {
    const proton::annotation_key k{proton::symbol(key)};
    if (const auto* s = std::get_if<std::string>(&value)) {
      annotations.put(k, proton::value(*s));
    } else {
      annotations.put(k, proton::value(std::get<std::int64_t>(value)));  // AMQP long
    }
  }
  auto& properties = m.properties();
  for (const auto& [name, value] : p.application_properties) properties.put(name, value);
  return m;
}

std::string body_of(const proton::message& m) { return amqp10::body_bytes(m); }

headers headers_of(const proton::message& m) {
  // The contract properties are left out while reading (headers_from_properties drops them
  // anyway): most messages carry only those, so nothing is copied.
  return projection::headers_from_properties(amqp10::string_properties(
      m, [](std::string_view name) { return !projection::is_contract_property(name); }));
}

}  // namespace babelqueue::inline v1::artemis::detail
