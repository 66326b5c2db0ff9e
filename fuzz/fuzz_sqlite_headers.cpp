// Fuzz target: the headers column of the sqlite:// transport (src/sqlite/message.hpp) — text
// a row holds, which another process (or a hand edit) may have written. The input is the
// column's text.
//
// Invariants:
//  - reading never crashes or throws: text that is not a JSON object of strings yields the
//    string entries it has (or none), never an error (refusing the row would redeliver it
//    forever);
//  - the write side round-trips: headers read here, written back (sanitised: blank names
//    and values dropped), read back the same.
#include "fuzz_check.hpp"
#include "sqlite/message.hpp"

#include <babelqueue/headers.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace sd = babelqueue::sqlite::detail;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const babelqueue::headers read = sd::headers_from_json(text);
  auto written = sd::headers_to_json(read);
  FUZZ_CHECK(static_cast<bool>(written), "headers read from a column could not be written back");
  const babelqueue::headers expected = babelqueue::sanitize_headers(read);
  if (!written->has_value()) {
    FUZZ_CHECK(expected.empty(), "non-empty headers were written as NULL");
    return 0;
  }
  FUZZ_CHECK(sd::headers_from_json(**written) == expected, "the headers column did not round-trip");
  return 0;
}
