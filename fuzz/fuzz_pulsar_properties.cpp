// Fuzz target: the read side of a Pulsar message's properties (bindings/pulsar.hpp) — what
// another SDK's producer wrote — and the bq- projection of the write side. The input is a
// property list: repeated `<u8 name length><name><u16le value length><value>` entries (a
// truncated entry ends the list; a repeated name keeps its last value, as in a Pulsar map).
//
// Invariants:
//  - nothing crashes, whatever the names and values (any bytes, empty);
//  - the six contract properties and `bq-delay` never appear among the out-of-band headers;
//  - the schema gate refuses exactly a non-blank `bq-schema-version` other than "1";
//  - the write side round-trips: the out-of-band headers read here, projected again with a
//    body, read back the same after sanitising (blank names/values dropped), and the
//    contract properties then come from the body.
#include "fuzz_check.hpp"

#include <babelqueue/bindings/pulsar.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  namespace bp = babelqueue::bindings::pulsar;
  std::map<std::string, std::string> raw;
  std::size_t at = 0;
  while (at < size) {
    const std::size_t name_len = bytes[at++];
    if (at + name_len + 2 > size) break;
    std::string name(reinterpret_cast<const char*>(bytes + at), name_len);
    at += name_len;
    const std::size_t value_len = bytes[at] | (static_cast<std::size_t>(bytes[at + 1]) << 8);
    at += 2;
    if (at + value_len > size) break;
    raw[std::move(name)] = std::string(reinterpret_cast<const char*>(bytes + at), value_len);
    at += value_len;
  }
  const bp::received_properties got = bp::read_properties(raw);
  for (const auto& [name, value] : got.out_of_band) {
    FUZZ_CHECK(!bp::is_contract_header(name) && name != bp::property_delay,
               "a contract property surfaced as out-of-band");
  }
  auto version = raw.find(std::string(bp::header_schema_version));
  if (version != raw.end()) {
    // An oracle of its own (not is_blank): the six ASCII white-space characters.
    bool blank = true;
    for (char c : version->second) {
      blank = blank && (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v');
    }
    const bool refused = !blank && version->second != "1";
    FUZZ_CHECK(refused == got.refused_schema_version.has_value(), "schema gate decision");
  } else {
    FUZZ_CHECK(!got.refused_schema_version, "refused without the property");
  }

  static const std::string body =
      R"({"job":"urn:babel:fuzz:pulsar","trace_id":"t-1","data":{},"meta":{"id":"m-1","queue":"q","lang":"cpp","schema_version":1,"created_at":1},"attempts":7})";
  const bp::message_projection p = bp::project(body, got.out_of_band);
  const bp::received_properties again = bp::read_properties(p.properties);
  FUZZ_CHECK(again.out_of_band == babelqueue::sanitize_headers(got.out_of_band),
             "out-of-band headers changed across a publish");
  FUZZ_CHECK(p.property(bp::header_attempts) != nullptr && *p.property(bp::header_attempts) == "7",
             "bq-attempts not from the body");
  FUZZ_CHECK(!again.refused_schema_version, "own projection refused by the gate");
  FUZZ_CHECK(p.event_time_ms == 1, "event time not created_at");
  return 0;
}
