#pragma once
/// @file envelope.hpp
/// @brief The BabelQueue wire envelope (`schema_version` 1) as a value type.
///
/// An `envelope` always satisfies the consumer accept rules (decision D3): it is produced
/// either by make() or by decode(), and both refuse anything else. It keeps the canonical
/// JSON text of every member it was built from, so re-emitting a received message (retry,
/// dead-letter, relay) changes only what the SDK deliberately changes — `attempts` and the
/// `dead_letter` block — and nothing else: unknown keys, key order and the exact text of
/// every number in `data` survive (decision D4).
///
/// @note Thread-safety: a value type. Distinct objects may be used from distinct threads;
/// concurrent const access to one object is safe; any mutation needs external locking.
/// @see spec "The Envelope", reference wire-core.md §1–§4.

#include <babelqueue/detail/inline_vector.hpp>
#include <babelqueue/export/core.hpp>
#include <babelqueue/json.hpp>
#include <babelqueue/result.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace babelqueue {
inline namespace v1 {

/// The language tag this SDK writes into `meta.lang` and `dead_letter.lang` (decision D1).
inline constexpr std::string_view lang_tag = "cpp";
/// The only envelope schema version this SDK reads and writes.
inline constexpr std::int64_t schema_version = 1;
/// Default logical queue of make() and of the runtime (decision D5).
inline constexpr std::string_view default_queue = "default";

/// The additive `dead_letter` block, as read from a message (fields absent on the wire, or
/// of an unexpected type, are left empty).
struct BABELQUEUE_CORE_EXPORT dead_letter_info {
  std::string reason;                    ///< `failed` | `unknown_urn` | `poison`
  std::optional<std::string> error;      ///< the cause's message, or null
  std::optional<std::string> exception;  ///< the cause's type name, or null
  std::int64_t failed_at = 0;            ///< Unix ms
  std::string original_queue;
  std::int64_t attempts = 0;
  std::string lang;  ///< the dead-lettering SDK's tag
};

/// Options of make().
struct BABELQUEUE_CORE_EXPORT make_options {
  /// Logical queue written to `meta.queue`; empty means "default".
  std::string queue;
  /// Trace to continue. Trimmed of ASCII white space; blank (empty or ASCII white space
  /// only, D3a) means "mint a fresh UUIDv4" (spec producer rule 2).
  std::string trace_id;
};

/// JSON text given as `data` (rather than a `json` value), e.g. a `--data` argument or a
/// payload read from a file. make() validates it strictly, as decode() validates a received
/// body, and keeps it losslessly: every number keeps its exact text (`-12345678901234567890`,
/// `1.10`, `1E2`), key order and duplicate keys stay, strings are re-escaped per D2.
/// A non-owning view: the text must outlive the call it is passed to. The constructor is
/// explicit and never takes a braced list, so `make(urn, {{"k", 1}})` still means `json`.
class BABELQUEUE_CORE_EXPORT json_text {
 public:
  template <class Text>
  requires std::is_convertible_v<const Text&, std::string_view>
  constexpr explicit json_text(const Text& text) noexcept(
      std::is_nothrow_convertible_v<const Text&, std::string_view>)
      : text_(text) {}
  constexpr std::string_view text() const noexcept { return text_; }

 private:
  std::string_view text_;
};

/// Deepest `data` nesting make() accepts from json_text (`{}` is 1): one less than
/// decode_options' default max_depth, so what make() writes always decodes.
inline constexpr std::size_t max_data_text_depth = 511;

/// Options of continue_trace(). There is no trace_id: a continuing message always carries
/// the inbound message's trace.
struct BABELQUEUE_CORE_EXPORT continue_options {
  /// Logical queue written to `meta.queue`; empty means "default".
  std::string queue;
};

class envelope;

/// Builds a fresh envelope (spec "Producer rules", wire-core §2): the URN is trimmed of ASCII
/// white space and must not be blank (errc::empty_urn; D3a: U+00A0, U+3000 ... are content,
/// not blank, and are kept); `data` must be a JSON object
/// (null is taken as `{}`) whose strings are valid UTF-8 and whose numbers are finite
/// (errc::invalid_utf8, errc::non_finite_number, errc::invalid_data); `meta.id` is a fresh
/// UUIDv4, `meta.lang` "cpp", `created_at` the current Unix time in ms, `attempts` 0.
BABELQUEUE_CORE_EXPORT result<envelope> make(std::string_view urn, const json& data,
                                             const make_options& options = {});
/// As above with `data` given as JSON text, kept losslessly (see json_text). It must be one
/// JSON object, or `[]`, which is read as `{}` as decode() reads it; anything else is
/// errc::invalid_data. Text that is not strict RFC 8259 JSON (invalid UTF-8, a lone
/// surrogate, trailing data, NaN, nesting deeper than max_data_text_depth) is
/// errc::malformed_json. No number range limit applies: the text is never read as doubles.
BABELQUEUE_CORE_EXPORT result<envelope> make(std::string_view urn, json_text data,
                                             const make_options& options = {});

/// Builds a downstream envelope that continues `inbound`'s trace: same `trace_id`, fresh
/// `meta.id` (spec "id vs trace_id"); the URN and `data` as make(), `options.queue` as
/// make_options::queue.
BABELQUEUE_CORE_EXPORT result<envelope> continue_trace(const envelope& inbound,
                                                       std::string_view urn, const json& data,
                                                       const continue_options& options = {});
/// As above with `data` given as JSON text (the rules of make(urn, json_text, ...)).
BABELQUEUE_CORE_EXPORT result<envelope> continue_trace(const envelope& inbound,
                                                       std::string_view urn, json_text data,
                                                       const continue_options& options = {});

class BABELQUEUE_CORE_EXPORT envelope {
 public:
  /// The routed identity: `job` when it is a non-blank string (D3a: not empty or ASCII
  /// white space only), else the `urn` alias — exactly as received, never trimmed.
  std::string_view urn() const noexcept;
  /// `trace_id` exactly as carried, never trimmed (it is non-blank by construction).
  std::string_view trace_id() const noexcept;
  /// `meta.id`, or empty when the producer left it out or it is not a string.
  std::string_view id() const noexcept;
  /// `meta.queue`, or empty when absent / not a string.
  std::string_view queue() const noexcept;
  /// `meta.lang`, or empty when absent / not a string.
  std::string_view lang() const noexcept;
  /// `meta.created_at` when it is an integer.
  std::optional<std::int64_t> created_at() const noexcept;
  /// Always 1: an envelope with another version is never constructed.
  std::int64_t schema_version() const noexcept { return babelqueue::schema_version; }

  /// The top-level transport retry counter.
  std::int64_t attempts() const noexcept { return attempts_; }
  /// Replaces `attempts`; encode() writes it in place, nothing else moves.
  void set_attempts(std::int64_t attempts) noexcept { attempts_ = attempts; }

  /// The canonical JSON text of `data`, numbers exactly as received.
  std::string_view data_text() const noexcept;
  /// `data` materialised as `json` (parsed on every call; cache it if you call it often).
  /// errc::number_out_of_range when a number fits neither int64, uint64 nor a finite double
  /// (e.g. `1e400`, a 25-digit integer) — use data_text() to read such payloads exactly.
  result<json> data() const;
  /// The canonical JSON text of `meta` (forbidden meta keys already dropped).
  std::string_view meta_text() const noexcept;
  /// `meta` materialised as `json`.
  result<json> meta() const;

  /// The `dead_letter` block, when the message carries one.
  std::optional<dead_letter_info> dead_letter() const;
  /// Sets (replaces) the `dead_letter` block; see dead_letter.hpp annotate().
  void set_dead_letter(const dead_letter_info& info);
  /// Removes the `dead_letter` block (redrive).
  void clear_dead_letter() noexcept;
  bool has_dead_letter() const noexcept;

  /// Canonical text of any top-level member (including unknown extension keys), or nullopt.
  std::optional<std::string_view> member(std::string_view key) const noexcept;
  /// Top-level member names in wire order.
  std::vector<std::string_view> member_names() const;
  /// Adds or replaces an extension member (top level, or in `meta` when `in_meta`). Frame
  /// keys (`job`, `trace_id`, `data`, `meta`, `attempts`, `dead_letter`, and `id`, `queue`,
  /// `lang`, `schema_version`, `created_at` in meta) cannot be set this way
  /// (errc::invalid_argument). Forbidden keys are accepted here and refused by encode() (D3).
  result<void> set_extension(std::string_view key, const json& value, bool in_meta = false);

  /// Keys dropped by decode() because the spec forbids them (`timestamp`, `meta.ts`, ...),
  /// or the `urn` alias dropped because `job` was present; as JSON-pointer-like paths.
  const std::vector<std::string>& dropped_keys() const noexcept { return dropped_; }

  /// Number of bytes of the canonical text this envelope holds (for metrics).
  std::size_t size_hint() const noexcept { return text_.size() + 64; }

  friend bool operator==(const envelope& a, const envelope& b) = default;

 private:
  friend struct envelope_access;  // the codec's private builder (src/core)

  /// A [offset, offset+length) slice of text_.
  struct span {
    std::uint32_t offset = 0;
    std::uint32_t length = 0;
    friend bool operator==(const span&, const span&) = default;
  };
  /// One member: key text (as written inside the quotes, canonical escapes) and value text.
  struct member_span {
    span key;
    span value;
    friend bool operator==(const member_span&, const member_span&) = default;
  };
  /// A decoded string field: either a slice of text_ (no escapes) or an index into owned_.
  struct text_field {
    span where;
    std::int32_t owned = -1;
    bool present = false;
    friend bool operator==(const text_field&, const text_field&) = default;
  };

  std::string_view view(span s) const noexcept { return {text_.data() + s.offset, s.length}; }
  std::string_view view(const text_field& f) const noexcept;
  std::int32_t find_top(std::string_view key) const noexcept;

  std::string text_;                           // canonical text the spans point into
  detail::inline_vector<member_span, 8> top_;  // top-level members in wire order
  std::vector<std::string> owned_;             // unescaped copies of fields that carried escapes
  std::vector<std::string> dropped_;
  text_field urn_, trace_id_, id_, queue_, lang_;
  std::optional<std::int64_t> created_at_;
  std::int64_t attempts_ = 0;
  std::int32_t data_index_ = -1, meta_index_ = -1, attempts_index_ = -1, dead_letter_index_ = -1;
  bool produced_ = false;  // built by make(): a producer `urn` member is refused by encode()
  bool has_forbidden_extension_ = false;  // set_extension() was given a forbidden key
  // text_ is exactly the canonical encoding while nothing but attempts (compared by value
  // with pristine_attempts_) changed: encode() is then a single copy.
  bool pristine_ = false;
  std::int64_t pristine_attempts_ = 0;
};

}  // namespace v1
}  // namespace babelqueue
