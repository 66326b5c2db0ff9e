#pragma once
/// @file schema/codegen.hpp
/// @brief `babelqueue schema codegen --lang cpp`: C++ message types from the schema registry.
///
/// One struct per URN, bound as typed/convert.hpp describes (`static constexpr urn`, hidden
/// friend to_json/from_json), with what maps to what (docs/typed.md has the full table):
///  - `type: object` with `properties` → a struct (nested objects → nested structs), each
///    property a member; `required` → the plain type, otherwise `std::optional<…>`;
///  - `type: string` → std::string (`format: date-time` too: the RFC 3339 text as written);
///    an `enum` of strings → an `enum class`; `integer` → std::int32_t when `minimum` and
///    `maximum` both fit it, std::uint64_t when `minimum` ≥ 0 and `maximum` > INT64_MAX, else
///    std::int64_t; `number` → double; `boolean` → bool; `null` → std::nullptr_t;
///    `array` with one `items` schema → std::vector<…>;
///  - anything else (no `type`, a type list, an object without properties, a non-string
///    enum's own type) → babelqueue::json, so the struct never claims more than the schema;
///  - `enum` / `const`, `minimum`, `minLength` are enforced on conversion (typed::rules);
///    `additionalProperties: false` is not — unknown members are kept in `unknown_fields`
///    and written back (D4);
///  - `x-gdpr-sensitive` members carry a comment, and the root struct lists every marked path
///    (gdpr::sensitive_paths spelling) in `gdpr_sensitive_paths`; the schema text itself is
///    `schema` (for schema::map_provider or gdpr::field_plan::build);
///  - a root schema that is not an object with properties gives a struct whose one member
///    `value` holds the whole `data`, mapped as above (a root array → std::vector).
/// Names: the struct is the URN after its namespace in PascalCase (`urn:babel:orders:created`
/// → `OrdersCreated`), members are snake_case of the property; C++ keywords, predefined
/// macros and clashes get a trailing `_` or a number.
/// @note Thread-safety: each call is independent.

#include <babelqueue/export/schema.hpp>
#include <babelqueue/result.hpp>
#include <babelqueue/schema/registry.hpp>

#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

namespace babelqueue {
inline namespace v1 {
namespace schema {

struct BABELQUEUE_SCHEMA_EXPORT codegen_options {
  /// Only "cpp" is known.
  std::string language = "cpp";
  /// C++ namespace of the generated types (`a::b` allowed).
  std::string name_space = "messages";
  /// Empty: one header per URN (`orders_created.hpp`) plus `messages.hpp` including them all.
  /// Else: this one header holds every URN.
  std::string single_header;
};

struct BABELQUEUE_SCHEMA_EXPORT generated_file {
  std::string name;  ///< file name, relative to the output directory
  std::string text;
};

/// Generates the headers for every URN of `reg`. Errors: errc::invalid_argument (unknown
/// language, bad namespace), and the registry's own load_schema() errors.
BABELQUEUE_SCHEMA_EXPORT result<std::vector<generated_file>> generate_code(
    const registry& reg, const codegen_options& options = {});

/// The command: loads `registry_path` (a registry.json, or a directory holding one, strict
/// rules), generates, and writes each file into `out_dir` (created when missing) only when
/// its text changed, so a build that regenerates does not recompile needlessly. Prints
/// `wrote N file(s) to DIR (M URN(s))` on `out`; errors on `err`; exit 0 / 1 (a schema
/// cannot be generated) / 2 (usage or I/O).
BABELQUEUE_SCHEMA_EXPORT int run_codegen(const std::filesystem::path& registry_path,
                                         const std::filesystem::path& out_dir,
                                         const codegen_options& options, std::ostream& out,
                                         std::ostream& err);

}  // namespace schema
}  // namespace v1
}  // namespace babelqueue
