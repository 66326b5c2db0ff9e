#pragma once
// The envelope keys the decoder (codec.cpp) classifies: their ids, and the classifier of a
// key's unescaped text. Split out of codec.cpp, its only includer.
// Private (`#include "core/envelope_keys.hpp"`).
//
// Internal linkage (an unnamed namespace), as when this was part of codec.cpp: GCC inlines
// the classifiers into the decoder's member scan exactly as before (checked: the -O3
// disassembly of codec.o is instruction for instruction the same before and after the split).
//
// Thread-safety: pure functions.

#include <cstdint>
#include <string_view>

namespace babelqueue::inline v1 {
namespace {

// Keys the decoder cares about, classified once per member so that nothing later compares
// strings again.
enum key_id : std::uint8_t {
  k_other = 0,
  // top level
  k_job,
  k_urn,
  k_trace_id,
  k_data,
  k_meta,
  k_attempts,
  k_timestamp,
  k_dead_letter,
  // meta
  k_id,
  k_queue,
  k_lang,
  k_schema_version,
  k_created_at,
  k_max_retries,
  k_meta_attempts,
  k_source,
  k_ts,
  k_count
};

key_id classify_top(std::string_view k) noexcept {
  switch (k.size()) {
    case 3:
      return k == "job" ? k_job : k == "urn" ? k_urn : k_other;
    case 4:
      return k == "data" ? k_data : k == "meta" ? k_meta : k_other;
    case 8:
      return k == "trace_id" ? k_trace_id : k == "attempts" ? k_attempts : k_other;
    case 9:
      return k == "timestamp" ? k_timestamp : k_other;
    case 11:
      return k == "dead_letter" ? k_dead_letter : k_other;
    default:
      return k_other;
  }
}

key_id classify_meta(std::string_view k) noexcept {
  switch (k.size()) {
    case 2:
      return k == "id" ? k_id : k == "ts" ? k_ts : k_other;
    case 4:
      return k == "lang" ? k_lang : k_other;
    case 5:
      return k == "queue" ? k_queue : k_other;
    case 6:
      return k == "source" ? k_source : k_other;
    case 8:
      return k == "attempts" ? k_meta_attempts : k_other;
    case 10:
      return k == "created_at" ? k_created_at : k_other;
    case 11:
      return k == "max_retries" ? k_max_retries : k_other;
    case 14:
      return k == "schema_version" ? k_schema_version : k_other;
    default:
      return k_other;
  }
}

}  // namespace
}  // namespace babelqueue::inline v1
