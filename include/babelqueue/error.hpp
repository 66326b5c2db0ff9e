#pragma once
/// @file error.hpp
/// @brief The SDK's one error model: `std::error_code`s in one category per component, the
/// `error_info` value that carries a code with its message, and the one exception type.
///
/// Every public function of every component either returns `result<T>` (result.hpp), whose
/// failure is an `error_info`, or throws `babelqueue::error`, which carries the same
/// `error_info`. There is no second result type and no second exception hierarchy (the
/// schema guard's `invalid_payload_error` derives from `babelqueue::error` to carry its
/// violation report). Constructors and factories that cannot return a result throw it for a
/// caller mistake, with a code whose condition is `invalid_argument` (their headers say
/// which); a thread the SDK cannot start inside a call is `runtime_errc::resource_exhausted`
/// from that call, never an escaping std::system_error.
///
/// Codes (each enum is a `std::error_code` enum in its own category):
///  - `errc`            "babelqueue.core"       the wire contract: D3 reasons, encoder errors
///  - `runtime_errc`    "babelqueue.runtime"    app/URL registry/worker failures, and
///  - `transport_errc`  "babelqueue.transport"  what every broker binding maps native
///                      failures to: both live with the runtime (runtime/error.hpp)
///  - `schema::errc`    "babelqueue.schema"     (schema/error.hpp)
///  - `gdpr::errc`      "babelqueue.gdpr"       (gdpr/error.hpp)
///  - `idempotency::errc`, `outbox::errc`, `amqp10::auth_errc` likewise in their components
/// `condition` groups codes of every category into the questions a caller asks
/// (`r.code() == condition::timeout`, `condition::invalid_argument`, ...), and
/// `is_transient()` (on those conditions) is the one retry predicate of every component.
///
/// Native failures (hiredis, SQLite, OpenSSL, rabbitmq-c, librdkafka, ...) keep their own
/// code and text in `error_info::native`, beside the mapped code.
///
/// Thread-safety: error_info and error are value types (concurrent reads safe); the
/// categories are stateless singletons, safe from any thread.

#include <babelqueue/export/core.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

namespace babelqueue {
inline namespace v1 {

/// Core codes ("babelqueue.core"). The first block are the consumer reasons of decision D3,
/// spelled as the PHP `EnvelopeValidator` spells them (see reason()). `ok` is what check()
/// returns for an accepted body and what a default error_info holds.
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
  empty_urn = 20,            ///< make() was given a blank URN (spec producer rule 1)
  invalid_utf8 = 21,         ///< a string is not valid UTF-8 or holds a lone surrogate
  non_finite_number = 22,    ///< NaN or an infinity cannot be written as JSON
  forbidden_key = 23,        ///< `timestamp`, `urn`, `meta.max_retries|attempts|source|ts`
  number_out_of_range = 24,  ///< valid JSON number that no int64/uint64/double holds
  invalid_argument = 25,     ///< a caller-supplied value is unusable
};

/// Portable questions over every category (a std::error_condition enum):
/// `if (r.code() == babelqueue::condition::timeout) ...`.
enum class condition : int {
  rejected = 1,          ///< a body failed the D3 accept gate (core errc 1..7)
  invalid_argument = 2,  ///< a caller mistake, in any component
  unavailable = 3,
  timeout = 4,
  permission = 5,
  not_found = 6,
  too_large = 7,
  not_supported = 8,
  closed = 9,
  io = 10,
};

}  // namespace v1
}  // namespace babelqueue

template <>
struct std::is_error_code_enum<babelqueue::errc> : std::true_type {};
template <>
struct std::is_error_condition_enum<babelqueue::condition> : std::true_type {};

namespace babelqueue {
inline namespace v1 {

BABELQUEUE_CORE_EXPORT const std::error_category& core_category() noexcept;
BABELQUEUE_CORE_EXPORT const std::error_category& condition_category() noexcept;
/// The core category (kept under its first name).
inline const std::error_category& category() noexcept { return core_category(); }

inline std::error_code make_error_code(errc e) noexcept {
  return {static_cast<int>(e), core_category()};
}
inline std::error_condition make_error_condition(condition c) noexcept {
  return {static_cast<int>(c), condition_category()};
}

/// The stable, lowercase snake_case name of a code: `malformed_json`, `unavailable`, ...
/// These are the reason strings printed by the CLI and carried by metrics and logs. A code
/// of a category outside babelqueue reads "unknown".
BABELQUEUE_CORE_EXPORT std::string_view reason(const std::error_code& code) noexcept;
BABELQUEUE_CORE_EXPORT std::string_view reason(errc e) noexcept;

/// True for failures where the same call may succeed later without any change by the caller:
/// a code whose condition is `unavailable`, `timeout` or `io`, in any babelqueue category
/// (transport_errc::unavailable, runtime_errc::io, idempotency::errc::unavailable, ...). The
/// one retry predicate: the runtime's back-off, the transports' own retries and the outbox
/// read it; none keeps a copy.
BABELQUEUE_CORE_EXPORT bool is_transient(const std::error_code& code) noexcept;

/// The failure as the broker's client library reported it, kept beside the mapped code.
struct BABELQUEUE_CORE_EXPORT native_error {
  std::string source;     ///< `hiredis`, `sqlite`, `openssl`, `errno`, `rabbitmq-c`, ...
  std::int64_t code = 0;  ///< the library's own code (0 when it has none)
  std::string text;       ///< the library's own text (never a secret: see url.hpp redact())
};

/// A code plus a human-readable message saying what exactly was wrong.
struct BABELQUEUE_CORE_EXPORT error_info {
  // User-provided on purpose: `return {};` (success, on hot paths) value-initialises, and a
  // defaulted constructor would zero-fill the whole object (its strings and optional
  // included) before constructing it.
  error_info() noexcept {}  // NOLINT(modernize-use-equals-default)
  error_info(std::error_code c, std::string msg, std::string where = {},
             std::optional<native_error> from = std::nullopt)
      : code(c), message(std::move(msg)), path(std::move(where)), native(std::move(from)) {}

  std::error_code code = make_error_code(errc::ok);
  std::string message;
  /// Where in the data the failure is, when one applies (gdpr: `addresses[1].line`).
  std::string path;
  /// The client library's own code and text, when the failure came from one.
  std::optional<native_error> native;

  std::string_view reason() const noexcept { return babelqueue::reason(code); }
  const std::error_code& error_code() const noexcept { return code; }
};

/// The exception of the throwing surface. `what()` is "<reason>: <message>", plus
/// " (at <path>)" when a path is set.
class BABELQUEUE_CORE_EXPORT error : public std::system_error {
 public:
  explicit error(error_info info);
  const char* what() const noexcept override { return what_.c_str(); }
  const error_info& info() const noexcept { return info_; }
  std::string_view reason() const noexcept { return info_.reason(); }

 private:
  std::string what_;
  error_info info_;
};

/// Base of every babelqueue category: a stable reason name per value and the mapping onto
/// `condition`. Components define their categories on it (schema, gdpr); so may users.
class BABELQUEUE_CORE_EXPORT error_category_base : public std::error_category {
 public:
  virtual std::string_view reason(int value) const noexcept = 0;
  /// The portable condition of a value, or 0 when none applies.
  virtual int condition_of(int value) const noexcept {
    (void)value;
    return 0;
  }
  std::string message(int value) const override { return std::string(reason(value)); }
  std::error_condition default_error_condition(int value) const noexcept override;
};

}  // namespace v1
}  // namespace babelqueue
