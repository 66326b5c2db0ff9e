#pragma once
// Reading the parts of a received AMQP message every binding needs, written once: the body
// as bytes whatever its section, and the string-valued application properties. Private to
// the AMQP 1.0 bindings; header-only.
//
// Thread-safety: pure functions over values.

#include <proton/binary.hpp>
#include <proton/codec/map.hpp>
#include <proton/error.hpp>
#include <proton/message.hpp>
#include <proton/scalar.hpp>
#include <proton/symbol.hpp>
#include <proton/value.hpp>

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace babelqueue::inline v1::amqp10 {

/// The body's bytes: an `amqp-value` string, binary or symbol, or a `data` section; empty
/// when there is no body section. Any other body (a sequence, a map, a number) is not an
/// envelope: its Proton text form is returned, so the runtime dead-letters it as undecodable
/// rather than dropping it (Proton's printer throws on some values: then a fixed text).
inline std::string body_bytes(const proton::message& m) {
  const proton::value& v = m.body();
  if (v.empty()) return {};
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

/// The application properties whose values are AMQP strings, by name. A property map that
/// is not string → scalar (not AMQP-conformant) yields none; reading never throws.
inline std::vector<std::pair<std::string, std::string>> string_properties(
    const proton::message& m) {
  std::vector<std::pair<std::string, std::string>> out;
  std::map<std::string, proton::scalar> all;
  try {
    // Even empty() decodes the section: a hostile map (e.g. a described value, found by
    // fuzzing) throws from there.
    if (m.properties().empty()) return out;
    proton::get(m.properties().value(), all);
  } catch (const std::exception&) {
    return out;
  }
  for (const auto& [name, value] : all) {
    if (value.type() == proton::STRING) out.emplace_back(name, proton::get<std::string>(value));
  }
  return out;
}

}  // namespace babelqueue::inline v1::amqp10
