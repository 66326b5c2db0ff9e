#pragma once
/// @file typed/convert.hpp
/// @brief Typed messages: how a C++ type binds to a URN, and the checked conversion between
/// a message's `data` and that type (docs/typed.md).
///
/// The one way to bind a type (what `babelqueue schema codegen --lang cpp` writes, and what a
/// hand-written type does too):
///  - a `static constexpr std::string_view urn = "urn:…";` member names the URN;
///  - nlohmann ADL functions `to_json(json&, const T&)` / `from_json(const json&, T&)` (free
///    functions in T's namespace, or hidden friends) convert it. Use babelqueue::json
///    (nlohmann::ordered_json) as the JSON type.
/// A from_json that reads its fields through read_field() reports WHERE the data does not
/// fit as an RFC 6901 pointer (`/order/lines/2/qty`), the same `pointer` the schema
/// validator reports (schema::violation::pointer); one that uses nlohmann's own get()
/// still fails cleanly, at the innermost read_field()/read() around it.
///
/// Conversion is structural and strict, never lossy: a value of the wrong JSON type, an
/// integer that does not fit the member's width, a number with a fraction for an integer, a
/// missing required field, a value outside an `enum` — and, when the binding asks for them
/// (rules), `minimum` and `minLength` — fail. Unknown fields are NOT a failure: they are
/// ignored on read, and a type that keeps them (collect_unknown / write_unknown, as generated
/// types do in `unknown_fields`) writes them back on re-emit (decision D4).
///
/// @note Thread-safety: pure functions over caller-owned values.

#include <babelqueue/error.hpp>
#include <babelqueue/json.hpp>
#include <babelqueue/result.hpp>

#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace babelqueue {
inline namespace v1 {
namespace typed {

/// A type bound to a URN (see the file comment).
template <class T>
concept message_type = std::is_class_v<T> && requires {
  requires std::is_convertible_v<decltype(T::urn), std::string_view>;
} && std::is_default_constructible_v<T> && requires(const T& value, const json& j, T& out) {
  to_json(std::declval<json&>(), value);
  from_json(j, out);
};

/// The URN a message type is bound to.
template <message_type T>
constexpr std::string_view urn_of() noexcept {
  return T::urn;
}

/// Thrown INSIDE a conversion (by read(), read_field() and generated from_json) and turned
/// into a babelqueue::error / failed result by from_data(). `pointer` grows outward as the
/// exception passes each enclosing field or element.
class conversion_error : public std::exception {
 public:
  conversion_error(std::string pointer, std::string problem)
      : pointer_(std::move(pointer)), problem_(std::move(problem)) {}
  const char* what() const noexcept override { return problem_.c_str(); }
  /// RFC 6901 pointer of the value that does not convert, relative to the value being read.
  const std::string& pointer() const noexcept { return pointer_; }
  const std::string& problem() const noexcept { return problem_; }
  /// Puts one parent token (a key, or an array index) in front of the pointer.
  void prepend(std::string_view token) {
    std::string escaped = "/";
    for (char c : token) {
      if (c == '~') {
        escaped += "~0";
      } else if (c == '/') {
        escaped += "~1";
      } else {
        escaped += c;
      }
    }
    pointer_.insert(0, escaped);
  }

 private:
  std::string pointer_;
  std::string problem_;
};

/// The schema keywords a read also enforces beyond the C++ type (generated code sets them
/// from the schema; for an array member they apply to each element).
struct rules {
  std::optional<double> minimum_value;          ///< `minimum` (inclusive), numbers only
  std::optional<std::size_t> min_length_value;  ///< `minLength` in code points, strings only
  const json* allowed_values = nullptr;         ///< `enum` (or `[const]`): a JSON array
  bool object_only = false;                     ///< a free-form json member that must be an object

  constexpr rules& minimum(double v) noexcept {
    minimum_value = v;
    return *this;
  }
  constexpr rules& min_length(std::size_t v) noexcept {
    min_length_value = v;
    return *this;
  }
  constexpr rules& one_of(const json& values) noexcept {
    allowed_values = &values;
    return *this;
  }
  constexpr rules& object() noexcept {
    object_only = true;
    return *this;
  }
};

namespace detail {

[[noreturn]] inline void mismatch(const char* expected, const json& j) {
  throw conversion_error({}, std::string("expected ") + expected + ", got " + j.type_name());
}

/// JSON value equality as the schema validator compares enum/const: numbers by value,
/// object key order ignored, booleans never equal to numbers.
inline bool same_value(const json& a, const json& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_number_float() || b.is_number_float()) return a.get<double>() == b.get<double>();
    if (a.is_number_unsigned() != b.is_number_unsigned()) {
      const json& s = a.is_number_unsigned() ? b : a;
      const json& u = a.is_number_unsigned() ? a : b;
      return s.get<std::int64_t>() >= 0 &&
             static_cast<std::uint64_t>(s.get<std::int64_t>()) == u.get<std::uint64_t>();
    }
    return a == b;
  }
  if (a.type() != b.type()) return false;
  if (a.is_object()) {
    if (a.size() != b.size()) return false;
    for (auto it = a.begin(); it != a.end(); ++it) {
      auto other = b.find(it.key());
      if (other == b.end() || !same_value(it.value(), *other)) return false;
    }
    return true;
  }
  if (a.is_array()) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
      if (!same_value(a[i], b[i])) return false;
    return true;
  }
  return a == b;
}

inline void check_allowed(const json& j, const rules& r) {
  if (r.allowed_values == nullptr) return;
  for (const auto& candidate : *r.allowed_values)
    if (same_value(j, candidate)) return;
  throw conversion_error({}, "value is not one of the allowed values");
}

inline void check_minimum(double value, const rules& r) {
  if (r.minimum_value && value < *r.minimum_value)
    throw conversion_error({}, "value is below the minimum");
}

inline std::size_t code_points(std::string_view s) noexcept {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0u) != 0x80u ? 1 : 0;
  return n;
}

template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};
template <class T>
struct is_vector : std::false_type {};
template <class T, class A>
struct is_vector<std::vector<T, A>> : std::true_type {};

template <std::integral I>
I read_integer(const json& j) {
  constexpr auto lo = std::numeric_limits<I>::min();
  constexpr auto hi = std::numeric_limits<I>::max();
  if (j.is_number_unsigned()) {
    const auto u = j.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(hi)) throw conversion_error({}, "integer out of range");
    return static_cast<I>(u);
  }
  if (j.is_number_integer()) {
    const auto s = j.get<std::int64_t>();
    if constexpr (std::is_signed_v<I>) {
      if (s < static_cast<std::int64_t>(lo) || s > static_cast<std::int64_t>(hi))
        throw conversion_error({}, "integer out of range");
    } else {
      if (s < 0 || static_cast<std::uint64_t>(s) > static_cast<std::uint64_t>(hi))
        throw conversion_error({}, "integer out of range");
    }
    return static_cast<I>(s);
  }
  if (j.is_number_float()) {  // the validator counts 1.0 as an integer
    const double d = j.get<double>();
    if (std::trunc(d) != d) mismatch("an integer", j);
    // 2^63 and 2^64 are exact doubles; the bounds are checked before the cast.
    if (d < static_cast<double>(lo) || d >= static_cast<double>(hi) + 1.0)
      throw conversion_error({}, "integer out of range");
    return static_cast<I>(d);
  }
  mismatch("an integer", j);
}

}  // namespace detail

/// Reads `j` into `out` with `r` applied. Throws conversion_error (pointer relative to `j`).
template <class T>
void read(const json& j, T& out, const rules& r = {}) {
  if constexpr (!detail::is_optional<T>::value && !detail::is_vector<T>::value)
    detail::check_allowed(j, r);  // the rules of an array member are its elements' rules
  if constexpr (std::is_same_v<T, json>) {
    if (r.object_only && !j.is_object()) detail::mismatch("an object", j);
    out = j;
  } else if constexpr (std::is_same_v<T, bool>) {
    if (!j.is_boolean()) detail::mismatch("a boolean", j);
    out = j.get<bool>();
  } else if constexpr (std::is_same_v<T, std::nullptr_t>) {
    if (!j.is_null()) detail::mismatch("null", j);
    out = nullptr;
  } else if constexpr (std::is_integral_v<T>) {
    out = detail::read_integer<T>(j);
    detail::check_minimum(static_cast<double>(out), r);
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!j.is_number()) detail::mismatch("a number", j);
    out = j.get<T>();
    detail::check_minimum(static_cast<double>(out), r);
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!j.is_string()) detail::mismatch("a string", j);
    const auto& s = j.get_ref<const std::string&>();
    if (r.min_length_value && detail::code_points(s) < *r.min_length_value)
      throw conversion_error({}, "string is shorter than the minimum length");
    out = s;
  } else if constexpr (detail::is_optional<T>::value) {
    // Present means present: `null` for an optional integer is a type mismatch, as the
    // validator says (absence is handled by read_field()).
    typename T::value_type inner{};
    read(j, inner, r);
    out = std::move(inner);
  } else if constexpr (detail::is_vector<T>::value) {
    if (!j.is_array()) detail::mismatch("an array", j);
    T items;
    items.resize(j.size());
    for (std::size_t i = 0; i < items.size(); ++i) {
      try {
        read(j[i], items[i], r);
      } catch (conversion_error& e) {
        e.prepend(std::to_string(i));
        throw;
      }
    }
    out = std::move(items);
  } else {
    // A struct or an enum with its own ADL from_json (generated or hand-written).
    try {
      from_json(j, out);
    } catch (const conversion_error&) {
      throw;
    } catch (const json::exception& e) {
      throw conversion_error({}, e.what());
    }
  }
}

/// Throws unless `j` is a JSON object (the start of every struct's from_json).
inline void expect_object(const json& j) {
  if (!j.is_object()) detail::mismatch("an object", j);
}

/// Reads member `key` of the object `obj`: an absent key leaves a std::optional empty and
/// is `missing required property` for any other type.
template <class T>
void read_field(const json& obj, std::string_view key, T& out, const rules& r = {}) {
  const auto it = obj.find(key);
  if (it == obj.end()) {
    if constexpr (detail::is_optional<T>::value) {
      out.reset();
      return;
    } else {
      conversion_error e({}, "missing required property");
      e.prepend(key);
      throw e;
    }
  }
  try {
    read(*it, out, r);
  } catch (conversion_error& e) {
    e.prepend(key);
    throw;
  }
}

/// The members of `obj` whose keys are not in `known` (kept for re-emit, D4).
inline json collect_unknown(const json& obj, std::initializer_list<std::string_view> known) {
  json extra = json::object();
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    bool is_known = false;
    for (auto k : known) is_known = is_known || k == it.key();
    if (!is_known) extra[it.key()] = it.value();
  }
  return extra;
}

/// Writes `value` as member `key` of `obj` (an empty std::optional writes nothing).
template <class T>
void write_field(json& obj, std::string_view key, const T& value) {
  if constexpr (detail::is_optional<T>::value) {
    if (!value) return;
    obj[std::string(key)] = json(*value);
  } else {
    obj[std::string(key)] = json(value);
  }
}

/// Appends the kept unknown members after the known ones (a known key always wins).
inline void write_unknown(json& obj, const json& unknown) {
  if (!unknown.is_object()) return;
  for (auto it = unknown.begin(); it != unknown.end(); ++it)
    if (!obj.contains(it.key())) obj[it.key()] = it.value();
}

/// Converts a message's `data` to T. Failure: errc::invalid_data, message
/// `data for "<urn>" does not convert: <problem>`, error_info::path = the pointer.
template <message_type T>
result<T> from_data(const json& data) {
  std::string pointer;
  std::string problem;
  try {
    // Built in place and returned by name: moving a whole T into the result made GCC 12's
    // -O2 -Wmaybe-uninitialized misfire inside nlohmann's move constructor.
    result<T> value(std::in_place);
    read(data, *value);
    return value;
  } catch (const conversion_error& e) {
    pointer = e.pointer();
    problem = e.problem();
  } catch (const std::exception& e) {  // a hand-written from_json threw something else
    problem = e.what();
  }
  return fail(error_info{make_error_code(errc::invalid_data),
                         "data for \"" + std::string(T::urn) + "\" does not convert: " + problem,
                         std::move(pointer)});
}

/// Converts T to a message's `data` (a JSON object). Failure: errc::invalid_data when the
/// type's to_json throws or does not produce an object.
template <message_type T>
result<json> to_data(const T& value) {
  try {
    json j = value;
    if (!j.is_object()) {
      return fail(errc::invalid_data, "\"" + std::string(T::urn) + "\": to_json wrote " +
                                          j.type_name() + ", not an object");
    }
    return j;
  } catch (const std::exception& e) {
    return fail(errc::invalid_data, "\"" + std::string(T::urn) + "\": to_json: " + e.what());
  }
}

}  // namespace typed
}  // namespace v1
}  // namespace babelqueue
