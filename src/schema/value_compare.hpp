#pragma once
// JSON value comparison with the Go/bqschema meaning: numbers compare by exact value whatever
// their C++ representation (int64, uint64, double — `1` equals `1.0`), object member order is
// irrelevant, booleans are never numbers.

#include <babelqueue/json.hpp>

#include <compare>

namespace babelqueue {
inline namespace v1 {
namespace schema {
namespace detail {

// Orders two JSON numbers by exact value (no rounding through double for large integers).
// Precondition: both are numbers. NaN cannot come from JSON, so the order is total.
std::strong_ordering compare_numbers(const json& a, const json& b);

// Deep equality as described above.
bool json_equal(const json& a, const json& b);

// True when `value` is a number with no fractional part (`1.0` counts).
bool is_integral_number(const json& value);

}  // namespace detail
}  // namespace schema
}  // namespace v1
}  // namespace babelqueue
