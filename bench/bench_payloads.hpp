#pragma once
// The payloads every codec benchmark (ours and the peers', bench/peers/) measures.
#include <babelqueue/codec.hpp>
#include <babelqueue/envelope.hpp>
#include <babelqueue/json.hpp>

#include <cstddef>
#include <string>

namespace bench {

/// The issue's "standard small envelope" data.
inline babelqueue::json small_data() {
  return babelqueue::json::parse(
      R"({"order_id":1042,"amount":99.9,"currency":"EUR","customer":{"id":7,"email":"a@b.c"},"items":[{"sku":"A-1","qty":2},{"sku":"B-2","qty":1}]})");
}

/// ≈16 KiB of data: 120 line items with mixed strings, integers and floats.
inline babelqueue::json large_data() {
  babelqueue::json items = babelqueue::json::array();
  for (int i = 0; i < 120; ++i) {
    items.push_back({{"sku", "SKU-" + std::to_string(100000 + i)},
                     {"qty", i % 7 + 1},
                     {"price", 19.99 + i},
                     {"title", "Item number " + std::to_string(i) + " — naïve café"},
                     {"tags", {"a", "b"}}});
  }
  return {{"order_id", 1042}, {"customer", {{"id", 7}, {"email", "a@b.c"}}}, {"items", items}};
}

/// An encoded `urn:babel:bench:message` envelope of about `size` bytes (data `seq` plus a
/// padding string): the body of `babelqueue bench` and of the broker ceiling loops.
inline std::string sized_envelope(std::size_t size) {
  babelqueue::json data = babelqueue::json::object();
  data["seq"] = 0;
  data["pad"] = "";
  auto probe =
      babelqueue::encode(babelqueue::make("urn:babel:bench:message", data).value()).value();
  if (size > probe.size()) data["pad"] = std::string(size - probe.size(), 'x');
  return babelqueue::encode(babelqueue::make("urn:babel:bench:message", data).value()).value();
}

}  // namespace bench
