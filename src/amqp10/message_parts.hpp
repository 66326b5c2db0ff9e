#pragma once
// Reading the parts of a received AMQP message every binding needs, written once: the body
// as bytes whatever its section, and the string-valued application properties. Private to
// the AMQP 1.0 bindings; header-only.
//
// Thread-safety: pure functions over values.

#include <proton/binary.hpp>
#include <proton/codec/decoder.hpp>
#include <proton/error.hpp>
#include <proton/message.hpp>
#include <proton/scalar.hpp>
#include <proton/symbol.hpp>
#include <proton/value.hpp>

#include <string>
#include <string_view>
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

/// The application properties whose values are AMQP strings and whose names `wanted`
/// accepts, in wire order. Read straight from the encoded section (no std::map of
/// proton::scalar built first: that is several allocations per property, paid for every
/// received message). A property map that is not string → scalar (not AMQP-conformant) yields
/// none; reading never throws.
template <class Wanted>
std::vector<std::pair<std::string, std::string>> string_properties(const proton::message& m,
                                                                   Wanted wanted) {
  std::vector<std::pair<std::string, std::string>> out;
  try {
    const proton::value& section = m.properties().value();
    if (section.empty()) return out;
    proton::codec::decoder d(section);
    proton::codec::start map;
    d >> map;  // throws unless a container
    if (map.type != proton::MAP || map.is_described) return {};
    std::string name;
    for (std::size_t i = 0; i < map.size / 2; ++i) {
      d >> name;  // throws for a key that is not a string
      if (d.next_type() == proton::STRING) {
        std::string value;
        d >> value;
        if (wanted(std::string_view(name))) out.emplace_back(name, std::move(value));
      } else {
        proton::scalar other;  // skipped, but it must be a scalar (throws otherwise)
        d >> other;
      }
    }
  } catch (const std::exception&) {
    return {};
  }
  return out;
}

/// Every string application property (see above).
inline std::vector<std::pair<std::string, std::string>> string_properties(
    const proton::message& m) {
  return string_properties(m, [](std::string_view) { return true; });
}

}  // namespace babelqueue::inline v1::amqp10
