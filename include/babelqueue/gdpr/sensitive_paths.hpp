#pragma once
/// @file gdpr/sensitive_paths.hpp
/// @brief Reading `x-gdpr-sensitive` marks: the registry listing and the protect plan.
///
/// Two views of the same marks, on purpose:
/// - sensitive_paths() is the *inventory* view, exactly as Go / Python / bqschema list them
///   (root mark `""`, `a.b`, `list[].field`, `a[][]`, nested marks under a marked container
///   all reported, sorted by path bytes). It never fails; `babelqueue schema gdpr` prints it.
/// - field_plan is the *enforcement* view protect()/unprotect() walk. Building it rejects
///   every mark the walk could not honour, so a marked field is either protected and
///   restored, or the schema is refused at load — never left in clear by accident
///   (wire-helpers §6.2 lists how the peers fail here). See field_plan::build().
///
/// A mark is `"x-gdpr-sensitive": true` (category "") or a non-empty string (the category,
/// white space included); `false` means unmarked.
/// @note Thread-safety: field_plan is immutable after build() and safe to share.

#include <babelqueue/export/gdpr.hpp>
#include <babelqueue/gdpr/error.hpp>
#include <babelqueue/json.hpp>

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace babelqueue {
inline namespace v1 {
namespace gdpr {

struct BABELQUEUE_GDPR_EXPORT sensitive_path {
  std::string path;      ///< `""` (root), `email`, `profile.full_name`, `addresses[].line`, `a[][]`
  std::string category;  ///< the string mark, or "" for `true`
  friend bool operator==(const sensitive_path&, const sensitive_path&) = default;
};

/// Every marked node reachable through `properties` (objects only) and `items` (a single
/// object schema), as the peers and bqschema walk them, sorted by path. Other shapes of the
/// mark (numbers, `""`, ...) count as unmarked here, as in the peers. Never fails; a
/// non-object schema has no paths.
BABELQUEUE_GDPR_EXPORT std::vector<sensitive_path> sensitive_paths(const json& schema);

/// One step of a compiled path: a property key, or "every element of this array".
struct BABELQUEUE_GDPR_EXPORT path_step {
  std::optional<std::string> key;  ///< nullopt = array descent (`[]`)
  friend bool operator==(const path_step&, const path_step&) = default;
};

/// The compiled protect/unprotect plan of one schema.
class BABELQUEUE_GDPR_EXPORT field_plan {
 public:
  struct field {
    std::string path;  ///< inventory spelling, e.g. `addresses[].line`
    std::string category;
    std::vector<path_step> steps;
  };

  /// Compiles `schema` (null = "no schema": an empty plan, protect is a no-op). Rejected with
  /// errc::invalid_schema (the `path` names the schema location):
  /// - a schema that is neither an object nor null;
  /// - a mark value that is not `true`, `false` or a non-empty string (`1`, `null`, `""`,
  ///   an object: the peers read these as "unmarked" and would publish the field in clear);
  /// - a mark on the root (data must stay a JSON object, it cannot become a string);
  /// - a mark under root `items` (`[]…`): data is an object, such a path never matches;
  /// - a mark under a keyword the walk does not follow (`anyOf`, `oneOf`, `allOf`, `not`,
  ///   `if`/`then`/`else`, `additionalProperties`, `patternProperties`, tuple `items`,
  ///   `additionalItems`, `contains`, `dependencies`, `propertyNames`, `definitions`,
  ///   `$defs`): the peers ignore those marks and would publish the field in clear;
  /// - a property on a marked path whose name is empty, contains `.` or ends in `[]`: the
  ///   peers' string paths cannot address it, so they would publish it in clear.
  /// A marked container with marked descendants is accepted: the container is protected as
  /// one value and the descendants' marks are subsumed (so unprotect round-trips, unlike
  /// the peers). Nested arrays (`a[][]`) are followed to any depth.
  static result<field_plan> build(const json& schema);

  /// Compiles a plan from inventory paths (`email`, `profile.full_name`, `addresses[].line`,
  /// `a[][]`) — e.g. a generated message type's `gdpr_sensitive_paths` (docs/typed.md), so a
  /// typed producer protects without parsing its schema. As build(): fields sorted by path,
  /// a path inside another listed one is subsumed by it; categories are not known (empty).
  /// errc::invalid_argument (`path` = the path) for the root (`""`) or an empty segment.
  static result<field_plan> from_paths(std::span<const std::string_view> paths);

  /// The outermost marked fields, in path order; no field is inside another.
  const std::vector<field>& fields() const noexcept { return fields_; }
  bool empty() const noexcept { return fields_.empty(); }

 private:
  std::vector<field> fields_;
};

}  // namespace gdpr
}  // namespace v1
}  // namespace babelqueue
