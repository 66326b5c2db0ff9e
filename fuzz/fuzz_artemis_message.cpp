// Fuzz target: the read side of an AMQP 1.0 message as the Artemis transport sees it — any
// bytes Proton decodes as a message (a peer's, a STOMP or JMS producer's, a hostile one) —
// and the Artemis projection of the write side (src/artemis/message.cpp over
// bindings/artemis.hpp). The input is an encoded AMQP message (header, annotations,
// properties, application-properties, body sections).
//
// Invariants:
//  - nothing crashes, whatever Proton decodes (any body type, any property types);
//  - the contract properties (bq_*) never appear among the out-of-band headers;
//  - the write side round-trips: the body and headers read here, projected again, encoded
//    and decoded by Proton, read back the same (headers after sanitising: blank names or
//    values dropped), with the body as one amqp-value string.
#include "artemis/message.hpp"
#include "fuzz_check.hpp"

#include <babelqueue/bindings/artemis.hpp>
#include <babelqueue/text.hpp>

#include <proton/error.hpp>
#include <proton/message.hpp>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  namespace d = babelqueue::artemis::detail;
  proton::message in;
  try {
    in.decode(std::vector<char>(reinterpret_cast<const char*>(bytes),
                                reinterpret_cast<const char*>(bytes) + size));
  } catch (const std::exception&) {
    return 0;  // not an AMQP message: Proton refuses it with an exception, as the transport sees
  }
  const std::string body = d::body_of(in);
  const babelqueue::headers hdrs = d::headers_of(in);
  for (const auto& [name, value] : hdrs) {
    FUZZ_CHECK(!babelqueue::bindings::artemis::is_contract_property(name),
               "a bq_ contract property surfaced as an out-of-band header");
  }

  proton::message out = d::to_message(body, hdrs);
  std::vector<char> wire;
  out.encode(wire);
  proton::message back;
  back.decode(wire);
  FUZZ_CHECK(back.body().type() == proton::STRING, "the body is not one amqp-value string");
  FUZZ_CHECK(d::body_of(back) == body, "the body changed through a publish");
  babelqueue::headers expected;
  for (const auto& [name, value] : hdrs) {
    if (!babelqueue::is_blank(name) && !babelqueue::is_blank(value)) expected.emplace(name, value);
  }
  FUZZ_CHECK(d::headers_of(back) == expected, "the headers changed through a publish");
  return 0;
}
