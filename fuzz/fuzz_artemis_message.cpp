// Fuzz target: the read side of an AMQP 1.0 message as the Artemis (and, when built, the
// Azure Service Bus) transport sees it — any
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
//    values dropped), with the body as one amqp-value string (Artemis) or data section (ASB);
//  - ASB: DeliveryCount is the header + 1; a refused schema version is never "1";
//  - the same bytes as a reply on the CBS link (src/amqp10/cbs_reply.hpp): read without a
//    crash, accepted only with status 200/202 and only as the answer to the request whose id
//    is its correlation-id, the description bounded.
#include "amqp10/cbs_reply.hpp"
#include "artemis/message.hpp"
#include "fuzz_check.hpp"

#include <babelqueue/bindings/artemis.hpp>
#ifdef BABELQUEUE_FUZZ_WITH_ASB
#include "asb/message.hpp"
#endif
#include <babelqueue/text.hpp>

#include <proton/error.hpp>
#include <proton/message.hpp>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <vector>

namespace {

void check_cbs_reply(const proton::message& in) {
  namespace a10 = babelqueue::amqp10;
  const a10::cbs_reply other = a10::read_cbs_reply(in, "a-request-id-no-input-holds");
  FUZZ_CHECK(!other.answers_request && !other.accepted, "a reply to another request was taken");
  std::string id;
  try {
    if (in.correlation_id().type() == proton::STRING) {
      id = proton::get<std::string>(in.correlation_id());
    }
  } catch (const std::exception&) {
  }
  if (id.empty()) return;
  const a10::cbs_reply ours = a10::read_cbs_reply(in, id);
  FUZZ_CHECK(ours.answers_request, "the reply to our request was not recognised");
  FUZZ_CHECK(ours.accepted == (ours.status == 200 || ours.status == 202),
             "accepted without status 200/202");
  FUZZ_CHECK(ours.description.size() <= a10::max_cbs_description, "description not bounded");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  namespace d = babelqueue::artemis::detail;
  proton::message in;
  try {
    in.decode(std::vector<char>(reinterpret_cast<const char*>(bytes),
                                reinterpret_cast<const char*>(bytes) + size));
  } catch (const std::exception&) {
    return 0;  // not an AMQP message: Proton refuses it with an exception, as the transport sees
  }
  check_cbs_reply(in);
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

#ifdef BABELQUEUE_FUZZ_WITH_ASB
  namespace a = babelqueue::asb::detail;
  babelqueue::received_message r;
  a::read_message(in, r);
  FUZZ_CHECK(r.delivery_count == static_cast<std::int64_t>(in.delivery_count()) + 1,
             "DeliveryCount is not the AMQP header + 1");
  FUZZ_CHECK(!r.refused_schema_version || *r.refused_schema_version != "1",
             "bq-schema-version 1 refused");
  proton::message asb_out = a::to_message(r.body, r.hdrs);
  std::vector<char> asb_wire;
  asb_out.encode(asb_wire);
  proton::message asb_back;
  asb_back.decode(asb_wire);
  babelqueue::received_message r2;
  a::read_message(asb_back, r2);
  FUZZ_CHECK(asb_back.body().type() == proton::BINARY, "the ASB body is not one data section");
  // A body that is itself a JSON string literal is unwrapped once more on each read.
  if (r.body.empty() || r.body.front() != '"') {
    FUZZ_CHECK(r2.body == r.body, "the ASB body changed through a publish");
  }
  babelqueue::headers asb_expected;
  for (const auto& [name, value] : r.hdrs) {
    if (!babelqueue::is_blank(name) && !babelqueue::is_blank(value))
      asb_expected.emplace(name, value);
  }
  FUZZ_CHECK(r2.hdrs == asb_expected, "the ASB headers changed through a publish");
#endif
  return 0;
}
