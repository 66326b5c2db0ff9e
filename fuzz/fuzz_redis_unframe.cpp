// Fuzz target: the Redis binding's stored-value parser (bindings/redis.hpp, core only).
// The input is a value as read back from a Redis list: a bare envelope, an ADR-0028 frame
// `{"__bq_frame":1,"headers":{…},"body":"…"}`, or anything another producer pushed.
//
// Invariants:
//  - unframe() never fails or crashes; what is not a valid frame (may_be_frame() false
//    included) comes back verbatim as the body, with no headers;
//  - a frame's headers come back cleaned (clean_headers() is a no-op on them);
//  - framing an unframed body and headers again (encode_frame / stored_value) and unframing
//    that gives the same body and headers;
//  - any valid UTF-8 input stored with headers comes back byte-for-byte as the body (the
//    frame hides nothing, whatever the body looks like), and stored without headers is
//    stored unchanged (payload identity); encode_frame() refuses only invalid UTF-8.
#include "fuzz_check.hpp"

#include <babelqueue/bindings/redis.hpp>
#include <babelqueue/error.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  namespace bq = babelqueue;
  namespace rb = babelqueue::bindings::redis;
  const std::string_view stored(reinterpret_cast<const char*>(bytes), size);

  const rb::unframed_value got = rb::unframe(stored);
  if (!rb::may_be_frame(stored)) FUZZ_CHECK(!got.framed, "a frame without the sentinel");
  if (!got.framed) {
    FUZZ_CHECK(got.body == stored, "a bare value must come back verbatim");
    FUZZ_CHECK(got.hdrs.empty(), "a bare value carries no headers");
  } else {
    FUZZ_CHECK(babelqueue::sanitize_headers(got.hdrs) == got.hdrs,
               "unframed headers are not clean");
    // The frame again: encode_frame() always frames; stored_value() frames iff headers.
    auto again = rb::encode_frame(got.body, got.hdrs);
    FUZZ_CHECK(again.has_value(), "an unframed body/headers pair must frame again");
    const rb::unframed_value back = rb::unframe(*again);
    FUZZ_CHECK(back.framed, "our own frame is not recognised");
    FUZZ_CHECK(back.body == got.body, "body changed across frame/unframe");
    FUZZ_CHECK(back.hdrs == got.hdrs, "headers changed across frame/unframe");
    if (!got.hdrs.empty()) {
      auto value = rb::stored_value(got.body, got.hdrs);
      FUZZ_CHECK(value.has_value() && *value == *again,
                 "stored_value() with headers differs from encode_frame()");
    }
  }

  // The whole input as an envelope body, stored with and without headers.
  auto identity = rb::stored_value(stored);
  FUZZ_CHECK(identity.has_value() && *identity == stored, "payload identity broken");
  const rb::frame_headers hdrs{{"traceparent", "00-0af7651916cd43dd8448eb211c80319c-01"},
                               {" ", "dropped: blank key"}};
  auto framed = rb::stored_value(stored, hdrs);
  if (!framed) {
    FUZZ_CHECK(framed.code() == bq::errc::invalid_utf8,
               "encode_frame() may only refuse invalid UTF-8");
  } else {
    const rb::unframed_value back = rb::unframe(*framed);
    FUZZ_CHECK(back.framed, "a framed body is not recognised");
    FUZZ_CHECK(back.body == stored, "a framed body did not come back byte-for-byte");
    FUZZ_CHECK(back.hdrs == babelqueue::sanitize_headers(hdrs),
               "headers did not survive the frame");
  }

  // Key helpers over the input as a queue name.
  FUZZ_CHECK(rb::key_slot(stored) < 16384, "hash slot out of range");
  const std::string tagged = "{" + std::string(stored.substr(0, 64)) + "}";
  if (stored.substr(0, 64).find('}') == std::string_view::npos && !stored.empty()) {
    FUZZ_CHECK(rb::cluster_safe(tagged), "a hash-tagged queue must be cluster safe");
  }
  return 0;
}
