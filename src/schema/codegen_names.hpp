#pragma once
// C++ spellings for the code generator: identifiers made from JSON names and escaped string
// literals. Kept apart from the emitter so the naming rules are in one place.

#include <set>
#include <string>
#include <string_view>

namespace babelqueue {
inline namespace v1 {
namespace schema {
namespace detail {

// `weird key "q"` → `weird_key_q`; keywords and predefined macros get a trailing `_`.
std::string member_name(std::string_view json_name);
// `orders:created.v2` → `OrdersCreatedV2`.
std::string type_name(std::string_view json_name);
// An enumerator for a string enum value (`USD` stays `USD`, `in-transit` → `in_transit`).
std::string enumerator_name(std::string_view value);
// `name`, or `name_2`, `name_3`, … : the first spelling not yet in `taken` (then added).
std::string unique_name(const std::string& name, std::set<std::string>& taken);
// A C++ string literal with the same bytes ("…" with octal escapes, never a raw string).
std::string string_literal(std::string_view bytes);
// snake_case file stem of a type name: `OrdersCreatedV2` → `orders_created_v2`.
std::string file_stem(std::string_view type);

}  // namespace detail
}  // namespace schema
}  // namespace v1
}  // namespace babelqueue
