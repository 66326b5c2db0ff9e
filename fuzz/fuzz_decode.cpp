// Fuzz target: decode -> encode -> decode -> encode.
//
// Invariants (any input, valid or not):
//  - decode(), check() and accepts() never crash and agree with each other;
//  - an accepted envelope always re-encodes (nothing forbidden survives decode);
//  - the re-encoded text is a fixed point: decode(encode(decode(x))) encodes to the very
//    same bytes, and keeps urn, trace_id, attempts and the exact `data` text (D4);
//  - dead-lettering (annotate) a decoded envelope yields bytes that decode again, with the
//    `data` text untouched.
#include "fuzz_check.hpp"

#include <babelqueue/babelqueue.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  namespace bq = babelqueue;
  const std::string_view body(reinterpret_cast<const char*>(bytes), size);

  auto first = bq::decode(body);
  FUZZ_CHECK(bq::check(body) == first.code(), "check() disagrees with decode()");
  FUZZ_CHECK(bq::accepts(body) == first.has_value(), "accepts() disagrees with decode()");
  if (!first) {
    FUZZ_CHECK(first.code() != bq::errc::ok, "a failed decode must carry a reason");
    FUZZ_CHECK(!bq::reason(first.code()).empty(), "every reason has a name");
    return 0;
  }

  // The read accessors must be safe on anything decode() accepted.
  FUZZ_CHECK(!bq::is_blank(first->urn()), "accepted envelope without a URN");
  FUZZ_CHECK(!bq::is_blank(first->trace_id()), "accepted envelope without a trace_id");
  (void)first->id();
  (void)first->queue();
  (void)first->lang();
  (void)first->created_at();
  (void)first->dead_letter();
  (void)first->member_names();
  if (auto data = first->data(); !data) {
    FUZZ_CHECK(data.code() == bq::errc::number_out_of_range,
               "data() may only fail on numbers no double holds");
  }
  if (auto meta = first->meta(); !meta) {
    FUZZ_CHECK(meta.code() == bq::errc::number_out_of_range,
               "meta() may only fail on numbers no double holds");
  }

  auto encoded = bq::encode(*first);
  FUZZ_CHECK(encoded.has_value(), "an accepted envelope must re-encode");

  auto second = bq::decode(*encoded);
  FUZZ_CHECK(second.has_value(), "our own encoding must be accepted");
  FUZZ_CHECK(second->urn() == first->urn(), "urn changed across encode/decode");
  FUZZ_CHECK(second->trace_id() == first->trace_id(), "trace_id changed across encode/decode");
  FUZZ_CHECK(second->attempts() == first->attempts(), "attempts changed across encode/decode");
  FUZZ_CHECK(second->data_text() == first->data_text(), "data text changed (D4)");
  FUZZ_CHECK(second->meta_text() == first->meta_text(), "meta text changed (D4)");

  auto reencoded = bq::encode(*second);
  FUZZ_CHECK(reencoded.has_value(), "re-encode failed");
  FUZZ_CHECK(*reencoded == *encoded, "decode(encode(decode(x))) is not byte-stable");

  // The rvalue overload must agree with the view overload.
  auto third = bq::decode(std::string(*reencoded));
  FUZZ_CHECK(third.has_value(), "decode(std::string&&) rejected canonical text");
  auto third_encoded = bq::encode(*third);
  FUZZ_CHECK(third_encoded.has_value() && *third_encoded == *encoded,
             "decode(std::string&&) is not byte-stable");

  // A retry/dead-letter cycle changes attempts and dead_letter only.
  auto retried = *second;
  if (retried.attempts() < std::numeric_limits<std::int64_t>::max()) {
    retried.set_attempts(retried.attempts() + 1);
  }
  auto dead = bq::annotate(retried, bq::dead_letter_reason::failed, second->queue(),
                           retried.attempts(), "fuzz error", std::nullopt);
  auto dead_text = bq::encode(dead);
  FUZZ_CHECK(dead_text.has_value(), "a dead-lettered envelope must encode");
  auto dead_back = bq::decode(*dead_text);
  FUZZ_CHECK(dead_back.has_value(), "a dead-lettered envelope must be accepted");
  FUZZ_CHECK(dead_back->has_dead_letter(), "dead_letter block lost");
  FUZZ_CHECK(dead_back->attempts() == retried.attempts(), "attempts lost");
  FUZZ_CHECK(dead_back->data_text() == first->data_text(), "dead-lettering touched data (D4)");
  return 0;
}
