#include "artemis/message.hpp"

#include <babelqueue/bindings/artemis.hpp>

#include <proton/annotation_key.hpp>
#include <proton/binary.hpp>
#include <proton/codec/map.hpp>
#include <proton/error.hpp>
#include <proton/map.hpp>
#include <proton/message_id.hpp>
#include <proton/scalar.hpp>
#include <proton/symbol.hpp>
#include <proton/timestamp.hpp>
#include <proton/types_fwd.hpp>
#include <proton/value.hpp>

#include <variant>

namespace babelqueue::inline v1::artemis::detail {

namespace projection = bindings::artemis;

proton::message to_message(std::string_view body, const headers& hdrs,
                           std::optional<std::chrono::milliseconds> delay) {
  const projection::message_projection p = projection::project(body, hdrs, delay);
  proton::message m;
  m.body(std::string(body));  // one amqp-value section holding an AMQP string (§4.3)
  m.durable(p.durable);
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

std::string body_of(const proton::message& m) {
  const proton::value& v = m.body();
  if (v.empty()) return {};  // no body section at all (the fuzzer's first find)
  switch (v.type()) {
    case proton::STRING:
      return proton::get<std::string>(v);
    case proton::BINARY:
      return std::string(proton::get<proton::binary>(v));
    case proton::SYMBOL:
      return std::string(proton::get<proton::symbol>(v));
    default:
      try {
        return proton::to_string(v);
      } catch (const proton::error&) {
        return "<an AMQP body Proton cannot print>";
      }
  }
}

headers headers_of(const proton::message& m) {
  headers out;
  const auto& properties = m.properties();
  if (properties.empty()) return out;
  std::map<std::string, proton::scalar> all;
  try {
    proton::get(properties.value(), all);
  } catch (const proton::error&) {
    return out;  // not a map of string → scalar (not AMQP-conformant): no headers
  }
  for (const auto& [name, value] : all) {
    if (value.type() != proton::STRING || projection::is_contract_property(name)) continue;
    out.emplace(name, proton::get<std::string>(value));
  }
  return out;
}

}  // namespace babelqueue::inline v1::artemis::detail
