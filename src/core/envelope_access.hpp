#pragma once
// The codec's private door into babelqueue::envelope: decode(), make() and annotate() build
// envelopes through it; users only see the public accessors. Private to babelqueue::core.

#include <babelqueue/envelope.hpp>

#include <string>
#include <string_view>

namespace babelqueue {
inline namespace v1 {

struct envelope_access {
  using span = envelope::span;
  using member_span = envelope::member_span;
  using text_field = envelope::text_field;

  static std::string& text(envelope& e) { return e.text_; }
  static auto& top(envelope& e) { return e.top_; }
  static std::vector<std::string>& dropped(envelope& e) { return e.dropped_; }
  static const auto& top(const envelope& e) { return e.top_; }
  static std::string_view view(const envelope& e, span s) { return e.view(s); }

  static span make_span(const std::string& text, const char* begin, std::size_t length) {
    return span{static_cast<std::uint32_t>(begin - text.data()),
                static_cast<std::uint32_t>(length)};
  }
  static span make_span(std::size_t offset, std::size_t length) {
    return span{static_cast<std::uint32_t>(offset), static_cast<std::uint32_t>(length)};
  }
  /// Sets a string field to a slice of the text (no escapes inside).
  static void set_field_span(text_field& f, span s) {
    f.where = s;
    f.owned = -1;
    f.present = true;
  }
  /// Sets a string field to an owned copy (the wire form carried escapes).
  static void set_field_owned(envelope& e, text_field& f, std::string value) {
    e.owned_.push_back(std::move(value));
    f.owned = static_cast<std::int32_t>(e.owned_.size() - 1);
    f.present = true;
  }

  static text_field& urn(envelope& e) { return e.urn_; }
  static text_field& trace_id(envelope& e) { return e.trace_id_; }
  static text_field& id(envelope& e) { return e.id_; }
  static text_field& queue(envelope& e) { return e.queue_; }
  static text_field& lang(envelope& e) { return e.lang_; }
  static std::optional<std::int64_t>& created_at(envelope& e) { return e.created_at_; }
  static std::int64_t& attempts(envelope& e) { return e.attempts_; }
  static void set_produced(envelope& e) { e.produced_ = true; }
  /// Declares text_ to be the exact canonical encoding of the current state.
  static void set_pristine(envelope& e) {
    e.pristine_ = true;
    e.pristine_attempts_ = e.attempts_;
  }
  /// The whole canonical text when encode() may copy it verbatim, else empty.
  static std::string_view pristine_text(const envelope& e) {
    if (e.pristine_ && e.attempts_ == e.pristine_attempts_ && !e.has_forbidden_extension_)
      return e.text_;
    return {};
  }
  static bool produced(const envelope& e) { return e.produced_; }
  static bool has_forbidden(const envelope& e) { return e.has_forbidden_extension_; }
  /// Recomputes the cached member indices after top_ changed.
  static void reindex(envelope& e);
  /// Sets them when the caller knows them (-1: absent).
  static void set_indices(envelope& e, int data, int meta, int attempts, int dead_letter) {
    e.data_index_ = data;
    e.meta_index_ = meta;
    e.attempts_index_ = attempts;
    e.dead_letter_index_ = dead_letter;
  }
  static std::int32_t attempts_index(const envelope& e) { return e.attempts_index_; }
};

/// Keys the spec forbids (D3): top-level `timestamp`; in meta these four.
bool is_forbidden_top_key(std::string_view key) noexcept;
bool is_forbidden_meta_key(std::string_view key) noexcept;

namespace detail {
/// Appends the canonical form of one value the reader has already validated.
void canonicalize_value_into(std::string_view value_text, std::string& out);
/// Validates `json_text` strictly (one RFC 8259 value, nothing after it) and appends its
/// canonical form (D2/D4: numbers keep their text, strings re-escaped). On error
/// (errc::malformed_json) `out` holds a partial write.
error_info canonicalize_into(std::string_view json_text, std::string& out, std::size_t max_depth);
class output_cursor;
/// write_canonical_json() through a cursor the caller already holds (make() writes the whole
/// envelope through one).
result<void> write_canonical_json_to(const json& value, output_cursor& out);
}  // namespace detail

}  // namespace v1
}  // namespace babelqueue
