// Canonical text -> babelqueue::json (parse_json and envelope::data()).
#include "json_scanner.hpp"

#include <babelqueue/codec.hpp>

#include <locale.h>  // NOLINT(modernize-deprecated-headers): newlocale/strtod_l are POSIX, not in <clocale>

#include <cerrno>
#include <charconv>
#include <clocale>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace babelqueue {
inline namespace v1 {
namespace {

// strtod in the "C" locale: a process that called setlocale() must not change how JSON
// numbers read. Returns false when the magnitude overflows a double.
bool parse_double(std::string_view text, double& out) {
  static locale_t c_locale = newlocale(LC_ALL_MASK, "C", nullptr);
  char small[64];
  std::string big;
  const char* z;
  if (text.size() < sizeof small) {
    std::memcpy(small, text.data(), text.size());
    small[text.size()] = '\0';
    z = small;
  } else {
    big.assign(text);
    z = big.c_str();
  }
  errno = 0;
  out = strtod_l(z, nullptr, c_locale);
  return !std::isinf(out);  // underflow to 0 or a subnormal is a faithful reading
}

struct build_sink {
  detail::json_reader& reader;
  std::vector<json*> stack;
  json root;
  std::string pending_key;
  bool have_root = false;
  bool range_error = false;  // a number no int64/uint64/double holds

  json* place(json&& v) {
    if (stack.empty()) {
      root = std::move(v);
      have_root = true;
      return &root;
    }
    json& parent = *stack.back();
    if (parent.is_array()) {
      parent.push_back(std::move(v));
      return &parent.back();
    }
    json& slot = parent[pending_key];  // duplicate keys: last wins, first position kept
    slot = std::move(v);
    return &slot;
  }
  bool null() {
    place(json(nullptr));
    return true;
  }
  bool boolean(bool b) {
    place(json(b));
    return true;
  }
  bool number(const detail::number_scan& n) {
    const char* first = n.text.data();
    const char* last = first + n.text.size();
    if (n.is_integer) {
      std::int64_t i = 0;
      if (auto r = std::from_chars(first, last, i); r.ec == std::errc() && r.ptr == last) {
        place(json(i));
        return true;
      }
      std::uint64_t u = 0;
      if (auto r = std::from_chars(first, last, u); r.ec == std::errc() && r.ptr == last) {
        place(json(u));
        return true;
      }
      // Beyond 64 bits: a double whose ECMAScript text is exactly this literal is what Go and
      // Node write for large floats (1e20 -> 100000000000000000000): read it losslessly as
      // that double. Any other such integer would be rounded, so it is refused.
      double wide = 0;
      if (parse_double(n.text, wide) && format_double(wide) == n.text) {
        place(json(wide));
        return true;
      }
      range_error = true;
      return reader.fail("integer " + std::string(n.text.substr(0, 40)) +
                         " does not fit 64 bits (read it with data_text())");
    }
    double d = 0;
    if (!parse_double(n.text, d)) {
      range_error = true;
      return reader.fail("number " + std::string(n.text.substr(0, 40)) +
                         " is out of the range of a double");
    }
    place(json(d));
    return true;
  }
  bool string(const detail::string_scan& s) {
    if (!s.has_escapes) {
      place(json(std::string(s.raw)));
    } else {
      std::string v;
      detail::unescape_into(s.raw, v);
      place(json(std::move(v)));
    }
    return true;
  }
  bool key(const detail::string_scan& s) {
    pending_key.clear();
    if (!s.has_escapes) {
      pending_key.assign(s.raw);
    } else {
      detail::unescape_into(s.raw, pending_key);
    }
    return true;
  }
  bool begin_object() {
    stack.push_back(place(json::object()));
    return true;
  }
  bool end_object() {
    stack.pop_back();
    return true;
  }
  bool begin_array() {
    stack.push_back(place(json::array()));
    return true;
  }
  bool end_array() {
    stack.pop_back();
    return true;
  }
};

}  // namespace

result<json> parse_json(std::string_view json_text, std::size_t max_depth) {
  detail::json_reader reader(json_text, max_depth);
  build_sink sink{reader, {}, json(), {}, false, false};
  if (!reader.walk(sink)) {
    return fail(sink.range_error ? errc::number_out_of_range : errc::malformed_json,
                reader.error());
  }
  reader.skip_ws();
  if (!reader.at_end()) {
    reader.fail("trailing data after the JSON value");
    return fail(errc::malformed_json, reader.error());
  }
  return std::move(sink.root);
}

}  // namespace v1
}  // namespace babelqueue
