// Reading x-gdpr-sensitive marks: the peers' inventory listing and the checked protect plan.
#include "core/propagate.hpp"
#include "core/shared_helpers.hpp"

#include <babelqueue/gdpr/sensitive_paths.hpp>

#include <algorithm>
#include <array>
#include <string_view>

namespace babelqueue {
inline namespace v1 {
namespace gdpr {
namespace {

constexpr std::string_view mark_key = "x-gdpr-sensitive";
// Schemas nest one level per property/items; beyond this a schema is hostile, not real.
constexpr std::size_t max_schema_depth = 256;

// The peers' reading of a mark: true, or a non-empty string (its category).
bool peer_mark(const json& node, std::string& category) {
  const auto it = node.find(mark_key);
  if (it == node.end()) return false;
  if (it->is_boolean()) {
    category.clear();
    return it->get<bool>();
  }
  if (it->is_string() && !it->get_ref<const std::string&>().empty()) {
    category = it->get<std::string>();
    return true;
  }
  return false;
}

void collect(const json& node, const std::string& path, std::size_t depth,
             std::vector<sensitive_path>& out) {
  if (!node.is_object() || depth > max_schema_depth) return;
  std::string category;
  if (peer_mark(node, category)) out.push_back({path, category});
  if (const auto props = node.find("properties"); props != node.end() && props->is_object()) {
    for (const auto& [name, sub] : props->items())
      collect(sub, babelqueue::detail::join_path(path, name), depth + 1, out);
  }
  if (const auto items = node.find("items"); items != node.end() && items->is_object())
    collect(*items, path + "[]", depth + 1, out);
}

using ::babelqueue::detail::pointer_escape;

// Keywords whose values are sub-schemas the walk does NOT follow. A mark below one of them is
// invisible to every SDK's protect(), so the field would travel in clear.
constexpr std::array<std::string_view, 9> single_schema_keywords = {"additionalProperties",
                                                                    "additionalItems",
                                                                    "contains",
                                                                    "propertyNames",
                                                                    "not",
                                                                    "if",
                                                                    "then",
                                                                    "else",
                                                                    "items"};
constexpr std::array<std::string_view, 3> schema_array_keywords = {"anyOf", "allOf", "oneOf"};
constexpr std::array<std::string_view, 5> schema_map_keywords = {
    "properties", "patternProperties", "definitions", "$defs", "dependencies"};

// Finds any mark other than `false` in `node` or below it; returns its schema pointer.
bool find_any_mark(const json& node, const std::string& where, std::size_t depth,
                   std::string& found) {
  if (!node.is_object() || depth > max_schema_depth) return false;
  if (const auto it = node.find(mark_key);
      it != node.end() && !(it->is_boolean() && !it->get<bool>())) {
    found = where;
    return true;
  }
  for (auto kw : single_schema_keywords) {
    const auto it = node.find(kw);
    if (it == node.end()) continue;
    const std::string at = where + "/" + pointer_escape(kw);
    if (it->is_array()) {  // tuple-form items
      for (std::size_t i = 0; i < it->size(); ++i)
        if (find_any_mark((*it)[i], at + "/" + std::to_string(i), depth + 1, found)) return true;
    } else if (find_any_mark(*it, at, depth + 1, found)) {
      return true;
    }
  }
  for (auto kw : schema_array_keywords) {
    const auto it = node.find(kw);
    if (it == node.end() || !it->is_array()) continue;
    for (std::size_t i = 0; i < it->size(); ++i) {
      if (find_any_mark((*it)[i], where + "/" + std::string(kw) + "/" + std::to_string(i),
                        depth + 1, found))
        return true;
    }
  }
  for (auto kw : schema_map_keywords) {
    const auto it = node.find(kw);
    if (it == node.end() || !it->is_object()) continue;
    for (const auto& [name, sub] : it->items()) {
      if (find_any_mark(sub, where + "/" + std::string(kw) + "/" + pointer_escape(name), depth + 1,
                        found))
        return true;
    }
  }
  return false;
}

class plan_builder {
 public:
  result<void> walk(const json& node, const std::string& where, std::vector<path_step>& steps,
                    const std::string& path, std::size_t depth) {
    if (!node.is_object()) return {};  // non-object sub-schemas carry no marks (peers skip them)
    if (depth > max_schema_depth)
      return fail(errc::invalid_schema, "schema nested too deeply", where);

    std::string category;
    bool marked = false;
    if (const auto it = node.find(mark_key); it != node.end()) {
      if (it->is_boolean()) {
        marked = it->get<bool>();
      } else if (it->is_string() && !it->get_ref<const std::string&>().empty()) {
        marked = true;
        category = it->get<std::string>();
      } else {
        return fail(errc::invalid_schema,
                    "x-gdpr-sensitive must be true, false or a non-empty category string (got " +
                        std::string(it->type_name()) + (it->is_string() ? " \"\"" : "") +
                        "); the peer SDKs read it as unmarked",
                    where);
      }
    }
    if (marked) return add_field(where, steps, path, std::move(category));

    if (const auto props = node.find("properties"); props != node.end() && props->is_object()) {
      for (const auto& [name, sub] : props->items()) {
        steps.push_back({name});
        auto r = walk(sub, where + "/properties/" + pointer_escape(name), steps,
                      babelqueue::detail::join_path(path, name), depth + 1);
        steps.pop_back();
        if (!r) return r;
      }
    }
    if (const auto items = node.find("items"); items != node.end() && items->is_object()) {
      steps.push_back({std::nullopt});
      auto r = walk(*items, where + "/items", steps, path + "[]", depth + 1);
      steps.pop_back();
      if (!r) return r;
    }
    // Marks the walk would never reach: refuse them rather than leave the field in clear.
    std::string found;
    for (auto kw : single_schema_keywords) {
      const auto it = node.find(kw);
      if (it == node.end() || (kw == "items" && it->is_object())) continue;
      if (it->is_array()) {
        for (std::size_t i = 0; i < it->size(); ++i) {
          if (find_any_mark((*it)[i], where + "/" + std::string(kw) + "/" + std::to_string(i),
                            depth + 1, found))
            return unreachable(found);
        }
      } else if (find_any_mark(*it, where + "/" + std::string(kw), depth + 1, found)) {
        return unreachable(found);
      }
    }
    for (auto kw : schema_array_keywords) {
      const auto it = node.find(kw);
      if (it == node.end() || !it->is_array()) continue;
      for (std::size_t i = 0; i < it->size(); ++i) {
        if (find_any_mark((*it)[i], where + "/" + std::string(kw) + "/" + std::to_string(i),
                          depth + 1, found))
          return unreachable(found);
      }
    }
    for (auto kw : schema_map_keywords) {
      if (kw == "properties") continue;  // walked above
      const auto it = node.find(kw);
      if (it == node.end() || !it->is_object()) continue;
      for (const auto& [name, sub] : it->items()) {
        if (find_any_mark(sub, where + "/" + std::string(kw) + "/" + pointer_escape(name),
                          depth + 1, found))
          return unreachable(found);
      }
    }
    return {};
  }

  std::vector<field_plan::field> fields;

 private:
  static result<void> unreachable(const std::string& where) {
    return fail(errc::invalid_schema,
                "x-gdpr-sensitive below a keyword protect() does not follow (only properties and "
                "a single items schema are walked, in every SDK); the field would travel in clear",
                where);
  }

  result<void> add_field(const std::string& where, const std::vector<path_step>& steps,
                         const std::string& path, std::string category) {
    if (steps.empty()) {
      return fail(errc::invalid_schema,
                  "x-gdpr-sensitive on the schema root cannot be honoured: data must stay a JSON "
                  "object; mark its properties instead",
                  where);
    }
    if (!steps.front().key) {
      return fail(errc::invalid_schema,
                  "x-gdpr-sensitive under the root items schema never matches: data is always a "
                  "JSON object",
                  where);
    }
    for (const auto& step : steps) {
      if (!step.key) continue;
      const std::string& name = *step.key;
      if (name.empty() || name.find('.') != std::string::npos ||
          (name.size() >= 2 && name.compare(name.size() - 2, 2, "[]") == 0)) {
        return fail(errc::invalid_schema,
                    "property name \"" + name +
                        "\" on a sensitive path is empty, contains '.' or ends in \"[]\": the "
                        "peer SDKs' dotted paths cannot address it and would leave it in clear",
                    where);
      }
    }
    fields.push_back({path, std::move(category), steps});
    return {};
  }
};

}  // namespace

std::vector<sensitive_path> sensitive_paths(const json& schema) {
  std::vector<sensitive_path> out;
  collect(schema, "", 0, out);
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.path < b.path; });
  return out;
}

result<field_plan> field_plan::build(const json& schema) {
  field_plan plan;
  if (schema.is_null()) return plan;
  if (!schema.is_object()) {
    return fail(errc::invalid_schema,
                std::string("a schema must be a JSON object (got ") + schema.type_name() + ")",
                "#");
  }
  plan_builder builder;
  std::vector<path_step> steps;
  BABELQUEUE_TRY(builder.walk(schema, "#", steps, "", 0));
  plan.fields_ = std::move(builder.fields);
  std::stable_sort(plan.fields_.begin(), plan.fields_.end(),
                   [](const field& a, const field& b) { return a.path < b.path; });
  return plan;
}

result<field_plan> field_plan::from_paths(std::span<const std::string_view> paths) {
  std::vector<std::string> sorted(paths.begin(), paths.end());
  std::sort(sorted.begin(), sorted.end());
  field_plan plan;
  for (const auto& path : sorted) {
    const bool subsumed =
        std::any_of(plan.fields_.begin(), plan.fields_.end(), [&](const field& f) {
          return path.size() > f.path.size() && path.compare(0, f.path.size(), f.path) == 0 &&
                 (path[f.path.size()] == '.' || path[f.path.size()] == '[');
        });
    if (subsumed || (!plan.fields_.empty() && plan.fields_.back().path == path)) continue;
    field f{path, {}, {}};
    std::size_t at = 0;
    while (true) {
      const auto dot = path.find('.', at);
      std::string segment =
          path.substr(at, dot == std::string::npos ? std::string::npos : dot - at);
      std::size_t arrays = 0;
      while (segment.size() >= 2 && segment.compare(segment.size() - 2, 2, "[]") == 0) {
        segment.resize(segment.size() - 2);
        ++arrays;
      }
      if (segment.empty()) {
        return fail(error_info{make_error_code(errc::invalid_argument),
                               "a sensitive path names a property in every segment (not the root)",
                               path});
      }
      f.steps.push_back({std::move(segment)});
      f.steps.insert(f.steps.end(), arrays, path_step{std::nullopt});
      if (dot == std::string::npos) break;
      at = dot + 1;
    }
    plan.fields_.push_back(std::move(f));
  }
  return plan;
}

}  // namespace gdpr
}  // namespace v1
}  // namespace babelqueue
