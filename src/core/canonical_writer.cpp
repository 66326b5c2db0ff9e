// json -> canonical text (D2), and text -> canonical text (D4: numbers keep their text).
#include "envelope_access.hpp"
#include "json_scanner.hpp"

#include <babelqueue/codec.hpp>

#include <charconv>
#include <cmath>

namespace babelqueue {
inline namespace v1 {
namespace {

result<void> write_string(const std::string& s, std::string& out) {
  out.push_back('"');
  if (!detail::escape_checked_into(s, out)) return fail(errc::invalid_utf8, "string is not valid UTF-8");
  out.push_back('"');
  return {};
}

template <class Int>
void write_int(Int v, std::string& out) {
  char buf[24];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, res.ptr);
}

result<void> write_value(const json& v, std::string& out, int depth) {
  if (depth > 4096) return fail(errc::invalid_argument, "JSON value nested deeper than 4096");
  switch (v.type()) {
    case json::value_t::null: out += "null"; return {};
    case json::value_t::boolean: out += v.get<bool>() ? "true" : "false"; return {};
    case json::value_t::number_integer: write_int(v.get<std::int64_t>(), out); return {};
    case json::value_t::number_unsigned: write_int(v.get<std::uint64_t>(), out); return {};
    case json::value_t::number_float: {
      double d = v.get<double>();
      if (!std::isfinite(d)) return fail(errc::non_finite_number, "NaN and infinities are not JSON");
      out += format_double(d);
      return {};
    }
    case json::value_t::string: return write_string(v.get_ref<const std::string&>(), out);
    case json::value_t::array: {
      out.push_back('[');
      bool first = true;
      for (const auto& item : v) {
        if (!first) out.push_back(',');
        first = false;
        if (auto r = write_value(item, out, depth + 1); !r) return r;
      }
      out.push_back(']');
      return {};
    }
    case json::value_t::object: {
      out.push_back('{');
      bool first = true;
      for (const auto& [key, item] : v.get_ref<const json::object_t&>()) {
        if (!first) out.push_back(',');
        first = false;
        if (auto r = write_string(key, out); !r) return r;
        out.push_back(':');
        if (auto r = write_value(item, out, depth + 1); !r) return r;
      }
      out.push_back('}');
      return {};
    }
    case json::value_t::binary:
      return fail(errc::invalid_argument, "binary values are not JSON; base64-encode them");
    case json::value_t::discarded:
      return fail(errc::invalid_argument, "discarded JSON value");
  }
  return fail(errc::invalid_argument, "unknown JSON value type");
}

// Sink for json_reader::walk() that writes the canonical form of what it reads.
struct canonical_sink {
  std::string& out;
  bool need_comma = false;

  void sep() {
    if (need_comma) out.push_back(',');
  }
  bool null() { sep(); out += "null"; need_comma = true; return true; }
  bool boolean(bool b) { sep(); out += b ? "true" : "false"; need_comma = true; return true; }
  bool number(const detail::number_scan& n) { sep(); out += n.text; need_comma = true; return true; }
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
  bool begin_object() { sep(); out.push_back('{'); need_comma = false; return true; }
  bool end_object() { out.push_back('}'); need_comma = true; return true; }
  bool begin_array() { sep(); out.push_back('['); need_comma = false; return true; }
  bool end_array() { out.push_back(']'); need_comma = true; return true; }
};

}  // namespace

result<void> write_canonical_json(const json& value, std::string& out) {
  return write_value(value, out, 0);
}

result<std::string> to_canonical_json(const json& value) {
  std::string out;
  if (auto r = write_value(value, out, 0); !r) return fail(r.error());
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
