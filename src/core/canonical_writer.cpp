// json -> canonical text (D2), and text -> canonical text (D4: numbers keep their text).
#include "core/propagate.hpp"
#include "envelope_access.hpp"
#include "json_scanner.hpp"
#include "output_cursor.hpp"
#include "shared_helpers.hpp"
#include "string_writer.hpp"

#include <babelqueue/codec.hpp>

#include <charconv>
#include <cmath>
#include <cstring>

namespace babelqueue {
inline namespace v1 {
namespace {

// Writes the canonical text (D2) of a json tree into `out`. The hot path carries a bool, not
// a result: errors are rare, the first one is kept and every call returns false from then on.
// Everything goes through an output_cursor (one room check per token, no std::string append).
class tree_writer {
 public:
  explicit tree_writer(detail::output_cursor& out)
      : out_(out, detail::output_cursor::continue_from_t{}) {}

  bool value(const json& v, int depth) {
    switch (v.type()) {
      case json::value_t::array: {
        const auto& items = *v.get_ptr<const json::array_t*>();
        if (depth >= k_max_depth && !items.empty()) return too_deep();
        out_.put('[');
        bool first = true;
        for (const auto& item : items) {
          if (!first) out_.put(',');
          first = false;
          if (!(item.is_structured() ? value(item, depth + 1) : scalar(item))) return false;
        }
        out_.put(']');
        return true;
      }
      case json::value_t::object: {
        const auto& members = *v.get_ptr<const json::object_t*>();
        if (depth >= k_max_depth && !members.empty()) return too_deep();
        out_.put('{');
        bool first = true;
        for (const auto& [key, item] : members) {
          if (!first) out_.put(',');
          first = false;
          if (!string(key, true)) return false;
          if (!(item.is_structured() ? value(item, depth + 1) : scalar(item))) return false;
        }
        out_.put('}');
        return true;
      }
      default:
        return scalar(v);
    }
  }

  result<void> finish() {
    if (failure_ != errc::ok) return fail(failure_, failure_message_);
    return {};
  }

 private:
  // No value may sit deeper than this (the top-level value is at depth 0).
  static constexpr int k_max_depth = 4096;

  // Every value that is not an array or an object; written inline in the container loops,
  // so the ~5 scalars of a typical object cost no call frame each.
  bool scalar(const json& v) {
    switch (v.type()) {
      case json::value_t::string:
        return string(*v.get_ptr<const std::string*>(), false);
      case json::value_t::number_integer:
        integer(*v.get_ptr<const std::int64_t*>());
        return true;
      case json::value_t::number_unsigned:
        integer(*v.get_ptr<const std::uint64_t*>());
        return true;
      case json::value_t::number_float: {
        const double d = *v.get_ptr<const double*>();
        if (!std::isfinite(d))
          return fail_with(errc::non_finite_number, "NaN and infinities are not JSON");
        char* at = out_.room(detail::k_double_text_max);
        out_.commit(at + detail::format_double_to(d, at));
        return true;
      }
      case json::value_t::boolean:
        *v.get_ptr<const bool*>() ? out_.put("true", 4) : out_.put("false", 5);
        return true;
      case json::value_t::null:
        out_.put("null", 4);
        return true;
      case json::value_t::binary:
        return fail_with(errc::invalid_argument, "binary values are not JSON; base64-encode them");
      case json::value_t::discarded:
        return fail_with(errc::invalid_argument, "discarded JSON value");
      case json::value_t::array:
      case json::value_t::object:
        break;  // value() writes these
    }
    return fail_with(errc::invalid_argument, "unknown JSON value type");
  }

  // A string, or an object key with its ':' when `key` is set.
  bool string(const std::string& s, bool key) {
    if (detail::write_json_string(out_, s.data(), s.size(), key)) return true;
    return fail_with(errc::invalid_utf8, "string is not valid UTF-8");
  }

  template <class Int>
  void integer(Int v) {
    char* at = out_.room(24);
    out_.commit(std::to_chars(at, at + 24, v).ptr);
  }

  bool too_deep() {
    return fail_with(errc::invalid_argument, "JSON value nested deeper than 4096");
  }

  // The first failure is kept as a code and a literal: building an error_info (a category
  // lookup and two strings) is left to finish(), on the rare path.
  bool fail_with(errc code, const char* message) {
    if (failure_ == errc::ok) failure_ = code, failure_message_ = message;
    return false;
  }

  detail::output_cursor out_;
  errc failure_ = errc::ok;
  const char* failure_message_ = "";
};

// Sink for json_reader::walk() that writes the canonical form of what it reads.
struct canonical_sink {
  std::string& out;
  bool need_comma = false;

  void sep() {
    if (need_comma) out.push_back(',');
  }
  bool null() {
    sep();
    out += "null";
    need_comma = true;
    return true;
  }
  bool boolean(bool b) {
    sep();
    out += b ? "true" : "false";
    need_comma = true;
    return true;
  }
  bool number(const detail::number_scan& n) {
    sep();
    out += n.text;
    need_comma = true;
    return true;
  }
  bool string(const detail::string_scan& s) {
    sep();
    out.push_back('"');
    detail::reescape_into(s, out);
    out.push_back('"');
    need_comma = true;
    return true;
  }
  bool key(const detail::string_scan& s) {
    sep();
    out.push_back('"');
    detail::reescape_into(s, out);
    out += "\":";
    need_comma = false;
    return true;
  }
  bool begin_object() { return open('{'); }
  bool end_object() { return close('}'); }
  bool begin_array() { return open('['); }
  bool end_array() { return close(']'); }

 private:
  bool open(char bracket) {
    sep();
    out.push_back(bracket);
    need_comma = false;
    return true;
  }
  bool close(char bracket) {
    out.push_back(bracket);
    need_comma = true;
    return true;
  }
};

}  // namespace

namespace detail {
result<void> write_canonical_json_to(const json& value, output_cursor& out) {
  tree_writer w(out);
  w.value(value, 0);
  return w.finish();
}
}  // namespace detail

result<void> write_canonical_json(const json& value, std::string& out) {
  detail::output_cursor cursor(out);
  return detail::write_canonical_json_to(value, cursor);
}

result<std::string> to_canonical_json(const json& value) {
  std::string out;
  BABELQUEUE_TRY(write_canonical_json(value, out));
  return out;
}

result<std::string> canonicalize(std::string_view json_text, std::size_t max_depth) {
  std::string out;
  out.reserve(json_text.size());
  if (error_info e = detail::canonicalize_into(json_text, out, max_depth); e.code != errc::ok) {
    return fail(std::move(e));
  }
  return out;
}

namespace detail {
error_info canonicalize_into(std::string_view json_text, std::string& out, std::size_t max_depth) {
  json_reader reader(json_text, max_depth);
  v1::canonical_sink sink{out};
  if (!reader.walk(sink)) return {v1::errc::malformed_json, reader.error()};
  reader.skip_ws();
  if (!reader.at_end()) {
    reader.fail("trailing data after the JSON value");
    return {v1::errc::malformed_json, reader.error()};
  }
  return {};
}

// Appends the canonical form of one already-validated value. Used by the envelope decoder
// when a received body is not canonical.
void canonicalize_value_into(std::string_view value_text, std::string& out) {
  json_reader reader(value_text, 4096);
  v1::canonical_sink sink{out};
  reader.walk(sink);
}
}  // namespace detail

}  // namespace v1
}  // namespace babelqueue
