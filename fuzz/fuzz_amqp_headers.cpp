// Fuzz target: the read side of an AMQP 0-9-1 headers table (src/rabbitmq/message.cpp) — the
// table another SDK's client wrote (pika, amqplib, php-amqplib, amqp091-go...). The input
// is an encoded field table; rabbitmq-c's amqp_decode_table() turns it into what a delivery
// carries, then read_headers() maps it.
//
// Invariants:
//  - nothing crashes, whatever the table holds (every field kind, nesting, bad lengths);
//  - the contract headers never appear among the out-of-band headers;
//  - an integer `x-attempts` of any width is read as that integer;
//  - the write side round-trips: the out-of-band headers read here, projected again with a
//    body (bindings::rabbitmq::project) and encoded by rabbitmq-c, read back the same after
//    sanitising (blank names/values dropped), and `x-attempts` comes from the body.
#include "fuzz_check.hpp"
#include "rabbitmq/message.hpp"

#include <babelqueue/bindings/rabbitmq.hpp>

#include <amqp.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  namespace rb = babelqueue::bindings::rabbitmq;
  namespace d = babelqueue::rabbitmq::detail;
  std::vector<std::uint8_t> copy(bytes, bytes + size);  // decode may not write, but be safe
  amqp_pool_t pool;
  init_amqp_pool(&pool, 4096);
  amqp_table_t table{};
  std::size_t offset = 0;
  const int rc = amqp_decode_table(amqp_bytes_t{copy.size(), copy.data()}, &pool, &table, &offset);
  if (rc == AMQP_STATUS_OK) {
    amqp_basic_properties_t props{};
    props._flags = AMQP_BASIC_HEADERS_FLAG;
    props.headers = table;
    const d::received_headers got = d::read_headers(props);
    for (const auto& [name, value] : got.out_of_band) {
      FUZZ_CHECK(!rb::is_contract_header(name), "a contract header surfaced as out-of-band");
    }
    for (int i = 0; i < table.num_entries; ++i) {
      const auto& e = table.entries[i];
      const std::string key(static_cast<const char*>(e.key.bytes), e.key.len);
      if (key == rb::header_attempts && e.value.kind == AMQP_FIELD_KIND_I32) {
        // The last x-attempts wins when a table repeats it; check only a unique one.
        int seen = 0;
        for (int j = 0; j < table.num_entries; ++j) {
          const auto& k = table.entries[j].key;
          seen += std::string(static_cast<const char*>(k.bytes), k.len) == key ? 1 : 0;
        }
        if (seen == 1) {
          FUZZ_CHECK(got.attempts && *got.attempts == e.value.value.i32, "x-attempts (I) lost");
        }
      }
    }

    // Write side: project those headers with a real envelope, encode, decode, read again.
    static const std::string body =
        R"({"job":"urn:babel:fuzz:amqp","trace_id":"t-1","data":{},"meta":{"id":"m-1","queue":"q","lang":"cpp","schema_version":1,"created_at":1},"attempts":7})";
    const rb::properties projected = rb::project(body, got.out_of_band);
    const d::wire_properties wire(projected);
    std::vector<std::uint8_t> buffer(1 << 20);
    std::size_t written = 0;
    auto table_out = wire.props.headers;
    if (amqp_encode_table(amqp_bytes_t{buffer.size(), buffer.data()}, &table_out, &written) ==
        AMQP_STATUS_OK) {
      amqp_table_t again{};
      std::size_t at = 0;
      FUZZ_CHECK(amqp_decode_table(amqp_bytes_t{written, buffer.data()}, &pool, &again, &at) ==
                     AMQP_STATUS_OK,
                 "our own table does not decode");
      amqp_basic_properties_t p2{};
      p2._flags = AMQP_BASIC_HEADERS_FLAG;
      p2.headers = again;
      const d::received_headers back = d::read_headers(p2);
      FUZZ_CHECK(back.out_of_band == babelqueue::sanitize_headers(got.out_of_band),
                 "out-of-band headers changed across publish and receive");
      FUZZ_CHECK(back.attempts && *back.attempts == 7, "x-attempts is not the body's");
    }
  }
  empty_amqp_pool(&pool);
  return 0;
}
