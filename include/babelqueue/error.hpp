#pragma once
/// @file error.hpp
/// @brief One error-code set, two surfaces: `result<T>` (non-throwing) and `babelqueue::error`.
///
/// Every function that parses outside input returns a result and never throws on bad
/// input. The throwing surface (`result::value()`, and APIs documented with @throws) raises
/// `babelqueue::error`, a `std::system_error` whose code is in babelqueue's category.
///
/// Thread-safety: error_info and error are value types (concurrent reads safe); the error
/// category is a stateless singleton, safe from any thread.

#include <string>
#include <string_view>
#include <system_error>

namespace babelqueue {
inline namespace v1 {

/// Error codes. The first block are the consumer reasons of decision D3, spelled as the PHP
/// `EnvelopeValidator` spells them (see reason()).
enum class errc : int {
  ok = 0,
  // -- D3 decode / accept reasons, in PHP's check order after malformed_json --
  malformed_json = 1,              ///< not strict RFC 8259 JSON, not an object, too deep
  missing_urn = 2,                 ///< neither `job` nor `urn` is a non-blank string
  missing_meta = 3,                ///< `meta` absent or not an object
  unsupported_schema_version = 4,  ///< `meta.schema_version` is not the integer 1
  invalid_data = 5,                ///< `data` is not an object (an empty `[]` reads as `{}`)
  missing_trace_id = 6,            ///< `trace_id` absent, not a string, or blank
  invalid_attempts = 7,            ///< `attempts` absent or not an integer
  // -- producer / encoder errors --
  empty_urn = 20,          ///< make() was given a blank URN (spec producer rule 1)
  invalid_utf8 = 21,       ///< a string is not valid UTF-8 or holds a lone surrogate
  non_finite_number = 22,  ///< NaN or an infinity cannot be written as JSON
  forbidden_key = 23,      ///< `timestamp`, `urn`, `meta.max_retries|attempts|source|ts`
  number_out_of_range = 24,  ///< valid JSON number that no int64/uint64/double holds
  invalid_argument = 25,     ///< a caller-supplied value is unusable
  // -- runtime / transport errors (used by the runtime and transports) --
  timeout = 40,
  transport = 41,      ///< the broker or its client library reported a failure
  closed = 42,         ///< the object was closed, or the connection is gone
  not_supported = 43,  ///< the transport cannot do this (e.g. delayed release)
  unknown_scheme = 44, ///< no transport is registered for a URL scheme
  handler_failed = 45, ///< a message handler raised or returned a failure
  io = 46,             ///< a file or OS call failed
};

/// The category of errc values ("babelqueue").
const std::error_category& category() noexcept;

/// Builds a std::error_code in babelqueue's category.
inline std::error_code make_error_code(errc e) noexcept {
  return {static_cast<int>(e), category()};
}

/// The stable, lowercase snake_case name of a code: `malformed_json`, `missing_urn`, ...
/// These are the reason strings printed by the CLI and recorded in metrics.
std::string_view reason(errc e) noexcept;

/// A code plus a human-readable message saying what exactly was wrong.
struct error_info {
  errc code = errc::ok;
  std::string message;

  std::string_view reason() const noexcept { return babelqueue::reason(code); }
  std::error_code error_code() const noexcept { return make_error_code(code); }
};

/// The exception of the throwing surface. `what()` is "<reason>: <message>".
class error : public std::system_error {
 public:
  explicit error(error_info info)
      : std::system_error(make_error_code(info.code)),
        what_(std::string(babelqueue::reason(info.code)) + ": " + info.message),
        info_(std::move(info)) {}
  /// "<reason>: <message>" (std::system_error's own what() would append the code's name).
  const char* what() const noexcept override { return what_.c_str(); }
  errc code_value() const noexcept { return info_.code; }
  const error_info& info() const noexcept { return info_; }
  std::string_view reason() const noexcept { return info_.reason(); }

 private:
  std::string what_;
  error_info info_;
};

}  // namespace v1
}  // namespace babelqueue

template <>
struct std::is_error_code_enum<babelqueue::errc> : std::true_type {};
