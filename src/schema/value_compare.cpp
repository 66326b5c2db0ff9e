#include "value_compare.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

namespace babelqueue {
inline namespace v1 {
namespace schema {
namespace detail {
namespace {

// long double holds every int64/uint64 exactly on the platforms this SDK targets (x86-64:
// 64-bit mantissa, aarch64: 113-bit). Elsewhere huge integers compare through double, which
// is what Go does for every number anyway.
using wide = long double;

wide as_wide(const json& n) {
  switch (n.type()) {
    case json::value_t::number_integer:
      return static_cast<wide>(n.get<std::int64_t>());
    case json::value_t::number_unsigned:
      return static_cast<wide>(n.get<std::uint64_t>());
    default:
      return static_cast<wide>(n.get<double>());
  }
}

template <class T>
std::strong_ordering order(T a, T b) {
  if (a < b) return std::strong_ordering::less;
  if (b < a) return std::strong_ordering::greater;
  return std::strong_ordering::equal;
}

}  // namespace

std::strong_ordering compare_numbers(const json& a, const json& b) {
  const auto ta = a.type();
  const auto tb = b.type();
  using vt = json::value_t;
  // Exact integer paths first (no conversion at all).
  if (ta == vt::number_integer && tb == vt::number_integer)
    return order(a.get<std::int64_t>(), b.get<std::int64_t>());
  if (ta == vt::number_unsigned && tb == vt::number_unsigned)
    return order(a.get<std::uint64_t>(), b.get<std::uint64_t>());
  if (ta == vt::number_integer && tb == vt::number_unsigned) {
    const auto x = a.get<std::int64_t>();
    if (x < 0) return std::strong_ordering::less;
    return order(static_cast<std::uint64_t>(x), b.get<std::uint64_t>());
  }
  if (ta == vt::number_unsigned && tb == vt::number_integer) {
    const auto y = b.get<std::int64_t>();
    if (y < 0) return std::strong_ordering::greater;
    return order(a.get<std::uint64_t>(), static_cast<std::uint64_t>(y));
  }
  return order(as_wide(a), as_wide(b));
}

bool is_integral_number(const json& value) {
  if (value.is_number_integer()) return true;  // also covers number_unsigned
  if (!value.is_number_float()) return false;
  const double d = value.get<double>();
  return std::isfinite(d) && std::trunc(d) == d;
}

bool json_equal(const json& a, const json& b) {
  if (a.is_number() && b.is_number()) return compare_numbers(a, b) == 0;
  if (a.type() != b.type()) return false;
  switch (a.type()) {
    case json::value_t::object: {
      if (a.size() != b.size()) return false;
      for (auto it = a.begin(); it != a.end(); ++it) {
        auto other = b.find(it.key());
        if (other == b.end() || !json_equal(it.value(), *other)) return false;
      }
      return true;
    }
    case json::value_t::array: {
      if (a.size() != b.size()) return false;
      for (std::size_t i = 0; i < a.size(); ++i)
        if (!json_equal(a[i], b[i])) return false;
      return true;
    }
    case json::value_t::string:
      return a.get_ref<const std::string&>() == b.get_ref<const std::string&>();
    case json::value_t::boolean:
      return a.get<bool>() == b.get<bool>();
    case json::value_t::null:
    case json::value_t::discarded:
      return true;
    default:
      return a == b;
  }
}

}  // namespace detail
}  // namespace schema
}  // namespace v1
}  // namespace babelqueue
