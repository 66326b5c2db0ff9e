#pragma once
// The keyword tree a schema document compiles to: only the keywords of the draft-07 subset,
// read in the shapes Go/bqschema read them (wire-helpers §5.1). Other shapes are dropped here
// so the validator and the compat lint never see them.

#include <babelqueue/json.hpp>
#include <babelqueue/schema/document.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace babelqueue {
inline namespace v1 {
namespace schema {
namespace detail {

struct node {
  std::string type;                        // "" = unconstrained (absent or not a string)
  std::vector<std::string> required;       // string entries only, schema order
  std::map<std::string, node> properties;  // object-valued entries only
  std::optional<bool> additional;          // boolean form only; nullopt = open
  std::unique_ptr<node> items;             // single-schema form only
  bool has_enum = false;
  json enum_values;  // the array, when has_enum
  bool has_const = false;
  json const_value;                        // any value, null included
  std::optional<std::int64_t> min_length;  // JSON number, truncated toward zero
  bool has_minimum = false;
  json minimum;  // the JSON number, compared by exact value
};

// Builds the tree from a schema object (sub-schemas that are not objects are ignored).
node compile(const json& schema_object);

}  // namespace detail
}  // namespace schema
}  // namespace v1
}  // namespace babelqueue
