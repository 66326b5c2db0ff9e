// Fuzz target: the read side of a Kafka record's headers (src/kafka/message.hpp) —
// the headers another SDK's producer wrote — and the bq- projection of the write side
// (bindings/kafka.hpp). The input is a header list: repeated `<u8 name length><name><u16le
// value length><value>` entries (a truncated entry ends the list).
//
// Invariants:
//  - nothing crashes, whatever the names and values (any bytes, repeats, empty);
//  - the six contract headers never appear among the out-of-band headers;
//  - `bq-attempts` is the first such header parsed, or nothing;
//  - the schema gate refuses exactly a non-blank value other than "1";
//  - the write side round-trips: the out-of-band headers read here, projected again with a
//    body, read back the same after sanitising (blank names/values dropped), and the
//    contract headers then come from the body.
#include "fuzz_check.hpp"
#include "kafka/message.hpp"

#include <babelqueue/bindings/kafka.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  namespace bk = babelqueue::bindings::kafka;
  namespace d = babelqueue::kafka::detail;
  std::vector<std::pair<std::string, std::string>> raw;
  std::size_t at = 0;
  while (at < size) {
    const std::size_t name_len = bytes[at++];
    if (at + name_len + 2 > size) break;
    std::string name(reinterpret_cast<const char*>(bytes + at), name_len);
    at += name_len;
    const std::size_t value_len = bytes[at] | (static_cast<std::size_t>(bytes[at + 1]) << 8);
    at += 2;
    if (at + value_len > size) break;
    raw.emplace_back(std::move(name),
                     std::string(reinterpret_cast<const char*>(bytes + at), value_len));
    at += value_len;
  }
  const d::received_headers got = d::read_headers(raw);
  for (const auto& [name, value] : got.out_of_band) {
    FUZZ_CHECK(!bk::is_contract_header(name), "a contract header surfaced as out-of-band");
  }
  const std::string* first_attempts = nullptr;
  const std::string* first_version = nullptr;
  for (const auto& [k, v] : raw) {
    if (k == bk::header_attempts && first_attempts == nullptr) first_attempts = &v;
    if (k == bk::header_schema_version && first_version == nullptr) first_version = &v;
  }
  FUZZ_CHECK(got.attempts == (first_attempts != nullptr ? bk::parse_attempts(*first_attempts)
                                                        : std::optional<std::int64_t>()),
             "bq-attempts not read from the first header");
  if (first_version != nullptr) {
    bool blank = true;
    for (char c : *first_version)
      blank = blank && (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v');
    const bool refused = !blank && *first_version != "1";
    FUZZ_CHECK(refused == got.refused_schema_version.has_value(), "schema gate decision");
  } else {
    FUZZ_CHECK(!got.refused_schema_version, "refused without a header");
  }

  static const std::string body =
      R"({"job":"urn:babel:fuzz:kafka","trace_id":"t-1","data":{},"meta":{"id":"m-1","queue":"q","lang":"cpp","schema_version":1,"created_at":1},"attempts":7})";
  const bk::record_projection p = bk::project(body, got.out_of_band);
  const d::received_headers again = d::read_headers(p.headers);
  FUZZ_CHECK(again.out_of_band == babelqueue::sanitize_headers(got.out_of_band),
             "out-of-band headers changed across a publish");
  FUZZ_CHECK(again.attempts == 7, "bq-attempts not from the body");
  FUZZ_CHECK(!again.refused_schema_version, "own projection refused by the gate");
  FUZZ_CHECK(p.timestamp_ms == 1, "timestamp not created_at");
  return 0;
}
