#pragma once
/// @file schema/compat.hpp
/// @brief Backward-compatibility lint between two versions of a URN's schema.
///
/// A change is breaking when some `data` valid under OLD can be rejected by NEW — the signal
/// to mint a new URN (`…:created.v2`) instead of mutating the old one (versioning policy §3).
/// Every rule of `bqschema compat` (v0.4.0) is applied with its exact message text:
///  - `type changed "<a>" → "<b>"` (stops descending; integer→number counts),
///  - `enum constraint added where any value was allowed`, `enum value <v> removed`,
///  - `minLength tightened`, `minimum tightened`,
///  - `property "<k>" is now required`, `additionalProperties tightened to false`,
///  - `property "<k>" removed while additionalProperties is false`,
///  - recursion into common properties and into `items` (`<path>[]`).
/// Plus the rules its docs promise but its code misses (reported where bqschema says
/// "compatible"):
///  - a removed (or renamed) property under an open schema: `<path>.<k>: property removed`
///    (the text bqschema 0.4.1 adopts for the same fix);
///  - `type constraint "<b>" added where any type was allowed`;
///  - `const constraint added where any value was allowed`, `const changed <a> → <b>`;
///  - `items` added where the old array allowed any items: the new item schema is compared
///    against an unconstrained one, so its constraints are reported under `<path>[]`;
///  - enum values are compared as JSON values (numbers by value), not by Go's `%v` text, so
///    replacing `"1"` by `1` is reported as `enum value 1 removed`.
/// Messages are prefixed `<path>: ` (omitted at the root) and sorted byte-wise.
/// @note Thread-safety: pure function.

#include <babelqueue/export/schema.hpp>
#include <babelqueue/schema/document.hpp>

#include <string>
#include <vector>

namespace babelqueue {
inline namespace v1 {
namespace schema {

/// The breaking changes from `old_schema` to `new_schema`; empty when compatible.
BABELQUEUE_SCHEMA_EXPORT std::vector<std::string> breaking_changes(const document& old_schema,
                                                                   const document& new_schema);

}  // namespace schema
}  // namespace v1
}  // namespace babelqueue
