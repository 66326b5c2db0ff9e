// Fuzz target: parse_json / canonicalize / to_canonical_json on arbitrary JSON text.
//
// Invariants:
//  - canonicalize() is idempotent: canonicalize(canonicalize(x)) == canonicalize(x);
//  - parse_json(x) succeeds iff canonicalize(x) does, except that parse_json() may refuse a
//    valid number no double holds (errc::number_out_of_range);
//  - parsing the canonical text gives the same value as parsing x;
//  - the writer's output is canonical (a fixed point of canonicalize()) and parses back to
//    an equal value (doubles round-trip exactly);
//  - json_reader::skip_value(), the iterative scanner decode() validates `data` with, and
//    json_reader::walk(), which canonicalize() and parse_json() drive, accept exactly the
//    same texts, report the same error at the same byte, and agree on whether a text is
//    already canonical;
//  - make() given the input as URN, queue and trace id (any bytes), and as data text, fails
//    with a typed error or writes an envelope that decodes back to the same fields and data.
#include "core/json_scanner.hpp"
#include "fuzz_check.hpp"

#include <babelqueue/babelqueue.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace {
namespace bq = babelqueue;

void check_made(const bq::result<bq::envelope>& made, std::string_view queue,
                std::string_view trace) {
  if (!made) {
    FUZZ_CHECK(made.code() != bq::errc::ok, "a failed make() must say why");
    return;
  }
  auto text = bq::encode(*made);
  FUZZ_CHECK(text.has_value(), "a made envelope must encode");
  auto back = bq::decode(*text);
  FUZZ_CHECK(back.has_value(), "a made envelope must decode");
  FUZZ_CHECK(back->urn() == made->urn() && back->queue() == made->queue() &&
                 back->trace_id() == made->trace_id() && back->id() == made->id() &&
                 back->data_text() == made->data_text(),
             "a made envelope decodes to other fields");
  FUZZ_CHECK(made->queue() == (queue.empty() ? bq::default_queue : queue),
             "make() changed the queue");
  if (!trace.empty()) FUZZ_CHECK(!made->trace_id().empty(), "make() lost the trace id");
}

// A walk() sink that takes every token: the reader alone decides validity.
struct accept_all {
  bool null() { return true; }
  bool boolean(bool) { return true; }
  bool number(const bq::detail::number_scan&) { return true; }
  bool string(const bq::detail::string_scan&) { return true; }
  bool key(const bq::detail::string_scan&) { return true; }
  bool begin_object() { return true; }
  bool end_object() { return true; }
  bool begin_array() { return true; }
  bool end_array() { return true; }
};

void check_scanners_agree(std::string_view text) {
  constexpr std::size_t depth = 4096;
  bq::detail::json_reader by_skip(text, depth);
  bool skip_ok = by_skip.skip_value();
  if (skip_ok) {
    by_skip.skip_ws();
    if (!by_skip.at_end()) skip_ok = by_skip.fail("trailing data");
  }
  bq::detail::json_reader by_walk(text, depth);
  accept_all sink;
  bool walk_ok = by_walk.walk(sink);
  if (walk_ok) {
    by_walk.skip_ws();
    if (!by_walk.at_end()) walk_ok = by_walk.fail("trailing data");
  }
  FUZZ_CHECK(skip_ok == walk_ok, "skip_value() and walk() disagree on validity");
  FUZZ_CHECK(by_skip.error() == by_walk.error(), "skip_value() and walk() report other errors");
  if (skip_ok) {
    FUZZ_CHECK(by_skip.canonical() == by_walk.canonical(),
               "skip_value() and walk() disagree on the canonical form");
  }
}

void check_make(std::string_view text) {
  bq::make_options options;
  options.queue = std::string(text.substr(0, text.size() / 2));
  options.trace_id = std::string(text.substr(text.size() / 2));
  check_made(bq::make(text, bq::json::object(), options), options.queue, options.trace_id);
  check_made(bq::make("urn:bq:fuzz:data:v1", bq::json_text(text)), {}, {});
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(bytes), size);
  check_scanners_agree(text);
  check_make(text);

  auto canonical = bq::canonicalize(text);
  auto parsed = bq::parse_json(text);
  if (!canonical) {
    FUZZ_CHECK(!parsed.has_value(), "parse_json() accepted what canonicalize() refused");
    return 0;
  }
  FUZZ_CHECK(parsed.has_value() || parsed.code() == bq::errc::number_out_of_range,
             "canonicalize() accepted what parse_json() refused");

  auto twice = bq::canonicalize(*canonical);
  FUZZ_CHECK(twice.has_value(), "canonical text must canonicalize");
  FUZZ_CHECK(*twice == *canonical, "canonicalize() is not idempotent");

  auto reparsed = bq::parse_json(*canonical);
  FUZZ_CHECK(reparsed.has_value() == parsed.has_value(),
             "canonical text parses differently from its source");
  if (!parsed) return 0;
  FUZZ_CHECK(*reparsed == *parsed, "canonical text holds another value than its source");

  auto written = bq::to_canonical_json(*parsed);
  FUZZ_CHECK(written.has_value(), "a parsed value must be writable");
  auto written_canonical = bq::canonicalize(*written);
  FUZZ_CHECK(written_canonical.has_value() && *written_canonical == *written,
             "to_canonical_json() output is not canonical");
  auto written_parsed = bq::parse_json(*written);
  FUZZ_CHECK(written_parsed.has_value(), "to_canonical_json() output does not parse");
  FUZZ_CHECK(*written_parsed == *parsed, "write/parse does not round-trip the value");
  return 0;
}
