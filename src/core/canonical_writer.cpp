// json -> canonical text (D2), and text -> canonical text (D4: numbers keep their text).
#include "envelope_access.hpp"
#include "json_scanner.hpp"
#include "shared_helpers.hpp"

#include <babelqueue/codec.hpp>

#include <charconv>
#include <cmath>
#include <cstring>

namespace babelqueue {
inline namespace v1 {
namespace {

// Writes the canonical text (D2) of a json tree into `out`. The hot path carries a bool, not
// a result: errors are rare, the first one is kept and every call returns false from then on.
// Short strings that need no escaping (most keys and many values) go out, quotes included,
// in one append.
class tree_writer {
 public:
  explicit tree_writer(std::string& out) : out_(out) {}

  bool value(const json& v, int depth) {
    if (depth > 4096) return fail_with(errc::invalid_argument, "JSON value nested deeper than 4096");
    switch (v.type()) {
      case json::value_t::null: out_.append("null", 4); return true;
      case json::value_t::boolean:
        v.get<bool>() ? out_.append("true", 4) : out_.append("false", 5);
        return true;
      case json::value_t::number_integer: integer(v.get<std::int64_t>()); return true;
      case json::value_t::number_unsigned: integer(v.get<std::uint64_t>()); return true;
      case json::value_t::number_float: {
        const double d = v.get<double>();
        if (!std::isfinite(d)) return fail_with(errc::non_finite_number, "NaN and infinities are not JSON");
        char buf[detail::k_double_text_max];
        out_.append(buf, detail::format_double_to(d, buf));
        return true;
      }
      case json::value_t::string: return string(v.get_ref<const std::string&>(), false);
      case json::value_t::array: {
        out_.push_back('[');
        bool first = true;
        for (const auto& item : v) {
          if (!first) out_.push_back(',');
          first = false;
          if (!value(item, depth + 1)) return false;
        }
        out_.push_back(']');
        return true;
      }
      case json::value_t::object: {
        out_.push_back('{');
        bool first = true;
        for (const auto& [key, item] : v.get_ref<const json::object_t&>()) {
          if (!first) out_.push_back(',');
          first = false;
          if (!string(key, true) || !value(item, depth + 1)) return false;
        }
        out_.push_back('}');
        return true;
      }
      case json::value_t::binary:
        return fail_with(errc::invalid_argument, "binary values are not JSON; base64-encode them");
      case json::value_t::discarded: return fail_with(errc::invalid_argument, "discarded JSON value");
    }
    return fail_with(errc::invalid_argument, "unknown JSON value type");
  }

  result<void> finish() {
    if (failed_) return fail(std::move(error_));
    return {};
  }

 private:
  // A string, or an object key with its ':' when `key` is set.
  bool string(const std::string& s, bool key) {
    const std::size_t n = s.size();
    if (n <= k_short) {
      // Check and copy in one pass; the first byte that needs escaping falls through.
      char buf[k_short + 3];
      buf[0] = '"';
      std::size_t i = 0;
      for (; i < n; ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (detail::k_needs_escape[c]) break;
        buf[i + 1] = static_cast<char>(c);
      }
      if (i == n) {
        buf[n + 1] = '"';
        buf[n + 2] = ':';
        out_.append(buf, n + (key ? 3 : 2));
        return true;
      }
    }
    out_.push_back('"');
    if (!detail::escape_checked_into(s, out_)) return fail_with(errc::invalid_utf8, "string is not valid UTF-8");
    key ? out_.append("\":", 2) : out_.append(1, '"');
    return true;
  }

  template <class Int>
  void integer(Int v) {
    char buf[24];
    auto res = std::to_chars(buf, buf + sizeof buf, v);
    out_.append(buf, res.ptr);
  }

  bool fail_with(errc code, const char* message) {
    if (!failed_) error_ = error_info{make_error_code(code), message};
    failed_ = true;
    return false;
  }

  static constexpr std::size_t k_short = 64;
  std::string& out_;
  bool failed_ = false;
  error_info error_;
};

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
  tree_writer w(out);
  w.value(value, 0);
  return w.finish();
}

result<std::string> to_canonical_json(const json& value) {
  std::string out;
  if (auto r = write_canonical_json(value, out); !r) return fail(r.error());
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
