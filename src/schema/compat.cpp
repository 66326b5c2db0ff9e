// Backward-compatibility lint (see compat.hpp for the rule list and where it goes beyond
// bqschema).
#include "core/shared_helpers.hpp"
#include "go_format.hpp"
#include "node.hpp"
#include "value_compare.hpp"

#include <babelqueue/schema/compat.hpp>

#include <algorithm>
#include <set>

namespace babelqueue {
inline namespace v1 {
namespace schema {
namespace {

using detail::node;

class linter {
 public:
  explicit linter(std::vector<std::string>& out) : out_(out) {}

  void compare(const std::string& path, const node& old_n, const node& new_n) {
    auto at = [&](const std::string& msg) {
      out_.push_back(path.empty() ? msg : path + ": " + msg);
    };

    // A retype invalidates everything beneath it: report and stop descending (bqschema).
    if (!old_n.type.empty() && !new_n.type.empty() && old_n.type != new_n.type) {
      at("type changed " + detail::go_quote(old_n.type) + " → " + detail::go_quote(new_n.type));
      return;
    }
    // Beyond bqschema: a type where any type was allowed rejects the other types.
    if (old_n.type.empty() && !new_n.type.empty())
      at("type constraint " + detail::go_quote(new_n.type) + " added where any type was allowed");

    if (!old_n.has_enum && new_n.has_enum) {
      at("enum constraint added where any value was allowed");
    } else if (old_n.has_enum && new_n.has_enum) {
      for (const auto& value : old_n.enum_values) {
        const bool kept = std::any_of(new_n.enum_values.begin(), new_n.enum_values.end(),
                                      [&](const json& v) { return detail::json_equal(value, v); });
        if (!kept) at("enum value " + detail::go_value(value) + " removed");
      }
    }
    // Beyond bqschema: const narrows exactly like enum does.
    if (!old_n.has_const && new_n.has_const) {
      at("const constraint added where any value was allowed");
    } else if (old_n.has_const && new_n.has_const &&
               !detail::json_equal(old_n.const_value, new_n.const_value)) {
      at("const changed " + detail::go_value(old_n.const_value) + " → " +
         detail::go_value(new_n.const_value));
    }

    if (new_n.min_length && (!old_n.min_length || *new_n.min_length > *old_n.min_length))
      at("minLength tightened");
    if (new_n.has_minimum &&
        (!old_n.has_minimum || detail::compare_numbers(new_n.minimum, old_n.minimum) > nullptr))
      at("minimum tightened");

    const std::set<std::string> old_required(old_n.required.begin(), old_n.required.end());
    for (const auto& name : new_n.required) {
      if (old_required.count(name) == 0)
        at("property " + detail::go_quote(name) + " is now required");
    }

    const bool old_open = !old_n.additional.has_value() || *old_n.additional;
    const bool new_closed = new_n.additional.has_value() && !*new_n.additional;
    if (old_open && new_closed) at("additionalProperties tightened to false");

    for (const auto& [name, old_p] : old_n.properties) {
      auto it = new_n.properties.find(name);
      if (it == new_n.properties.end()) {
        if (new_closed) {
          at("property " + detail::go_quote(name) + " removed while additionalProperties is false");
        } else {
          // Beyond bqschema 0.4.0 (fixed the same way in 0.4.1): the field is no longer
          // governed, so a removal or rename is breaking whatever additionalProperties says.
          out_.push_back(babelqueue::detail::join_path(path, name) + ": property removed");
        }
        continue;
      }
      compare(babelqueue::detail::join_path(path, name), old_p, it->second);
    }

    if (new_n.items) {
      // bqschema compares items only when both sides have them; an item schema added to an
      // array that allowed anything is compared against an unconstrained one instead.
      static const node unconstrained;
      compare(path + "[]", old_n.items ? *old_n.items : unconstrained, *new_n.items);
    }
  }

 private:
  std::vector<std::string>& out_;
};

}  // namespace

std::vector<std::string> breaking_changes(const document& old_schema, const document& new_schema) {
  std::vector<std::string> out;
  linter(out).compare("", old_schema.root(), new_schema.root());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace schema
}  // namespace v1
}  // namespace babelqueue
