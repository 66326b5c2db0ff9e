#include "asb/message.hpp"

#include "amqp10/message_parts.hpp"

#include <babelqueue/bindings/asb.hpp>
#include <babelqueue/json.hpp>
#include <babelqueue/text.hpp>

#include <proton/annotation_key.hpp>
#include <proton/binary.hpp>
#include <proton/error.hpp>
#include <proton/message_id.hpp>
#include <proton/scalar.hpp>
#include <proton/symbol.hpp>
#include <proton/timestamp.hpp>
#include <proton/type_id.hpp>
#include <proton/value.hpp>

#include <map>
#include <variant>

namespace babelqueue::inline v1::asb::detail {

namespace projection = bindings::asb;

proton::message to_message(std::string_view body, const headers& hdrs,
                           std::optional<std::chrono::milliseconds> delay) {
  const projection::message_projection p = projection::project(body, hdrs, delay);
  proton::message m;
  m.body(proton::binary(std::string(body)));  // one `data` section (§2.3)
  m.inferred(true);
  // Service Bus keeps every message whatever the header says; the header says it too, so
  // that an AMQP broker standing in for it (the Artemis of docs/testing.md) keeps a message
  // across its restart as Service Bus would (the crash-and-restart matrix, docs/reliability.md).
  m.durable(true);
  m.content_type(p.content_type);
  if (p.subject) m.subject(*p.subject);
  if (p.correlation_id) m.correlation_id(proton::message_id(*p.correlation_id));
  if (p.message_id) m.id(proton::message_id(*p.message_id));
  if (p.scheduled_enqueue_time_ms) {
    m.message_annotations().put(
        proton::annotation_key(proton::symbol(projection::annotation_scheduled_enqueue_time)),
        proton::value(proton::timestamp(*p.scheduled_enqueue_time_ms)));
  }
  auto& properties = m.properties();
  for (const auto& property : p.application_properties) {
    // (not a structured binding: clang 14 cannot capture one in the lambda)
    std::visit([&](const auto& v) { properties.put(property.first, proton::scalar(v)); },
               property.second);
  }
  return m;
}

namespace {

// A JSON string literal holding the envelope (the Node adapter's double encoding): its text.
std::optional<std::string> unwrapped_json_string(const std::string& body) {
  if (body.size() < 2 || body.front() != '"') return std::nullopt;
  try {
    const json j = json::parse(body);
    if (j.is_string()) return j.get<std::string>();
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

}  // namespace

std::string body_of(const proton::message& m) {
  std::string body = amqp10::body_bytes(m);
  if (auto inner = unwrapped_json_string(body)) return *inner;
  return body;
}

namespace {

bool is_integer_type(proton::type_id t) {
  switch (t) {
    case proton::BYTE:
    case proton::UBYTE:
    case proton::SHORT:
    case proton::USHORT:
    case proton::INT:
    case proton::UINT:
    case proton::LONG:
    case proton::ULONG:
      return true;
    default:
      return false;  // char, timestamp, decimal… carry numbers that are not a version
  }
}

}  // namespace

std::optional<std::string> refused_schema_version(const proton::message& m) {
  const std::string name(projection::property_schema_version);
  proton::scalar v;
  try {
    // exists() decodes the whole section: a hostile one throws (found by fuzzing).
    if (!m.properties().exists(name)) return std::nullopt;
    v = m.properties().get(name);
  } catch (const std::exception&) {
    return std::nullopt;  // no readable property: nothing to gate on; the body decides
  }
  if (v.type() == proton::STRING) {
    const auto s = proton::get<std::string>(v);
    if (is_blank(s) || s == "1") return std::nullopt;
    return s;
  }
  const bool integral = is_integer_type(v.type());
  try {
    if (integral && proton::coerce<std::int64_t>(v) == 1) return std::nullopt;
  } catch (const std::exception&) {
  }
  if (integral) {
    try {
      return proton::to_string(v);
    } catch (const std::exception&) {
    }
  }
  // Any other type (a double 1.0, a symbol or char '1', binary) is refused: the contract's
  // value is an integer, compared by value, or the string "1". Its AMQP type is named so
  // that the refusal never reads as the accepted version "1" (found by fuzzing).
  std::string shown = proton::type_name(v.type());
  try {
    shown += ":" + proton::to_string(v);
  } catch (const std::exception&) {
  }
  return shown;
}

void read_message(const proton::message& in, received_message& out) {
  out.body = body_of(in);
  out.hdrs = projection::headers_from_properties(amqp10::string_properties(in));
  out.delivery_count = projection::delivery_count_from_header(in.delivery_count());
  out.refused_schema_version = refused_schema_version(in);
}

}  // namespace babelqueue::inline v1::asb::detail
