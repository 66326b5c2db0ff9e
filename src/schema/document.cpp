// Parsing a schema document into the keyword tree, and the validator over that tree.
#include "core/propagate.hpp"
#include "core/shared_helpers.hpp"
#include "go_format.hpp"
#include "node.hpp"
#include "value_compare.hpp"

#include <babelqueue/codec.hpp>
#include <babelqueue/schema/document.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace babelqueue {
inline namespace v1 {
namespace schema {

// Reported on the implicit special members; what they can throw (allocation) reaches
// document's callers like any allocation failure.
// NOLINTNEXTLINE(bugprone-exception-escape)
struct document::state {
  json raw;
  detail::node root;
};

namespace detail {
namespace {

std::int64_t truncate_to_int64(const json& number) {
  if (number.is_number_integer() && !number.is_number_unsigned()) return number.get<std::int64_t>();
  if (number.is_number_unsigned()) {
    const auto u = number.get<std::uint64_t>();
    return u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())
               ? std::numeric_limits<std::int64_t>::max()
               : static_cast<std::int64_t>(u);
  }
  const double d = std::trunc(number.get<double>());
  if (d >= 9.2e18) return std::numeric_limits<std::int64_t>::max();
  if (d <= -9.2e18) return std::numeric_limits<std::int64_t>::min();
  return static_cast<std::int64_t>(d);
}

}  // namespace

node compile(const json& s) {
  node n;
  if (auto it = s.find("type"); it != s.end() && it->is_string()) n.type = it->get<std::string>();
  if (auto it = s.find("required"); it != s.end() && it->is_array()) {
    for (const auto& name : *it)
      if (name.is_string()) n.required.push_back(name.get<std::string>());
  }
  if (auto it = s.find("properties"); it != s.end() && it->is_object()) {
    for (auto p = it->begin(); p != it->end(); ++p)
      if (p.value().is_object()) n.properties.insert_or_assign(p.key(), compile(p.value()));
  }
  if (auto it = s.find("additionalProperties"); it != s.end() && it->is_boolean())
    n.additional = it->get<bool>();
  if (auto it = s.find("items"); it != s.end() && it->is_object())
    n.items = std::make_unique<node>(compile(*it));
  if (auto it = s.find("enum"); it != s.end() && it->is_array()) {
    n.has_enum = true;
    n.enum_values = *it;
  }
  if (auto it = s.find("const"); it != s.end()) {
    n.has_const = true;
    n.const_value = *it;
  }
  if (auto it = s.find("minLength"); it != s.end() && it->is_number())
    n.min_length = truncate_to_int64(*it);
  if (auto it = s.find("minimum"); it != s.end() && it->is_number()) {
    n.has_minimum = true;
    n.minimum = *it;
  }
  return n;
}

namespace {

std::string pointer_join(const std::string& pointer, const std::string& token) {
  std::string out = pointer;
  out += '/';
  ::babelqueue::detail::append_pointer_token(token, out);
  return out;
}

std::int64_t code_points(const std::string& text) {
  std::int64_t count = 0;
  for (unsigned char c : text)
    if ((c & 0xC0) != 0x80) ++count;
  return count;
}

// Walks schema and value together, appending violations in evaluation order (the order
// Python's first-violation validator meets them).
class walker {
 public:
  explicit walker(std::vector<violation>& out) : out_(out) {}

  void visit(const node& n, const json& value, const std::string& path,
             const std::string& pointer) {
    if (n.has_const && !json_equal(value, n.const_value))
      add(path, pointer, "must equal const " + go_value(n.const_value), "wrong_const");
    if (n.has_enum) {
      const bool found =
          std::any_of(n.enum_values.begin(), n.enum_values.end(),
                      [&](const json& allowed) { return json_equal(value, allowed); });
      if (!found) add(path, pointer, "value is not one of the allowed enum values", "not_in_enum");
    }
    const std::string& type = n.type;
    if (type == "object") {
      visit_object(n, value, path, pointer);
    } else if (type == "array") {
      if (!value.is_array()) return add(path, pointer, "must be an array", "not_an_array");
      if (!n.items) return;
      for (std::size_t i = 0; i < value.size(); ++i) {
        visit(*n.items, value[i], path + "[" + std::to_string(i) + "]",
              pointer + "/" + std::to_string(i));
      }
    } else if (type == "string") {
      if (!value.is_string()) return add(path, pointer, "must be a string", "not_a_string");
      if (n.min_length && code_points(value.get_ref<const std::string&>()) < *n.min_length) {
        add(path, pointer, "must be at least " + std::to_string(*n.min_length) + " characters",
            "below_min_length");
      }
    } else if (type == "integer") {
      if (!is_integral_number(value))
        return add(path, pointer, "must be an integer", "not_an_integer");
      check_minimum(n, value, path, pointer);
    } else if (type == "number") {
      if (!value.is_number()) return add(path, pointer, "must be a number", "not_a_number");
      check_minimum(n, value, path, pointer);
    } else if (type == "boolean") {
      if (!value.is_boolean()) add(path, pointer, "must be a boolean", "not_a_boolean");
    } else if (type == "null") {
      if (!value.is_null()) add(path, pointer, "must be null", "not_null");
    }
  }

 private:
  void visit_object(const node& n, const json& value, const std::string& path,
                    const std::string& pointer) {
    if (!value.is_object()) return add(path, pointer, "must be an object", "not_an_object");
    for (const auto& key : n.required) {
      if (!value.contains(key)) {
        add_at(path, "missing required property " + go_quote(key), "missing_required",
               babelqueue::detail::join_path(path, key), pointer_join(pointer, key));
      }
    }
    const bool closed = n.additional.has_value() && !*n.additional;
    for (auto it = value.begin(); it != value.end(); ++it) {
      const std::string& key = it.key();
      if (auto prop = n.properties.find(key); prop != n.properties.end()) {
        visit(prop->second, it.value(), babelqueue::detail::join_path(path, key),
              pointer_join(pointer, key));
      } else if (closed) {
        add_at(path, "additional property " + go_quote(key) + " is not allowed",
               "additional_not_allowed", babelqueue::detail::join_path(path, key),
               pointer_join(pointer, key));
      }
    }
  }

  void check_minimum(const node& n, const json& value, const std::string& path,
                     const std::string& pointer) {
    if (n.has_minimum && compare_numbers(value, n.minimum) < nullptr)
      add(path, pointer, "must be >= " + go_float(n.minimum.get<double>()), "below_minimum");
  }

  void add(const std::string& path, const std::string& pointer, std::string message,
           std::string reason) {
    add_at(path, std::move(message), std::move(reason), path, pointer);
  }
  // `path` is where bqschema reports it; reason_path/value_pointer locate the value itself
  // (they differ for a missing or extra member, which Go reports at the parent).
  void add_at(const std::string& path, std::string message, std::string reason,
              const std::string& reason_path, const std::string& value_pointer) {
    out_.push_back(violation{path, std::move(message), std::move(reason),
                             reason_path.empty() ? "<root>" : reason_path, value_pointer});
  }

  std::vector<violation>& out_;
};

// Depth of a JSON value (a scalar is 0, `{}` is 1), without recursion.
std::size_t depth_of(const json& value, std::size_t limit) {
  std::vector<std::pair<const json*, std::size_t>> stack{{&value, 0}};
  std::size_t deepest = 0;
  while (!stack.empty()) {
    auto [v, d] = stack.back();
    stack.pop_back();
    if (!v->is_structured()) continue;
    deepest = std::max(deepest, d + 1);
    if (deepest > limit) return deepest;
    for (const auto& child : *v) stack.emplace_back(&child, d + 1);
  }
  return deepest;
}

}  // namespace
}  // namespace detail

std::string violation::text() const { return path.empty() ? message : path + ": " + message; }

std::string violation::reason_text() const { return reason_path + ": " + reason; }

report::report(std::vector<violation> in_evaluation_order)
    : sorted_(in_evaluation_order), evaluation_order_(std::move(in_evaluation_order)) {
  std::stable_sort(sorted_.begin(), sorted_.end(),
                   [](const violation& a, const violation& b) { return a.text() < b.text(); });
}

const violation* report::first() const noexcept {
  return evaluation_order_.empty() ? nullptr : &evaluation_order_.front();
}

std::string report::summary() const {
  std::string out;
  for (const auto& v : sorted_) {
    if (!out.empty()) out += "; ";
    out += v.text();
  }
  return out;
}

result<document> document::parse(std::string_view text, const parse_options& options) {
  BABELQUEUE_TRY_LET(parsed, parse_json(text, std::max<std::size_t>(options.max_depth + 1, 512)));
  return from_json(*parsed, options);
}

result<document> document::from_json(const json& schema_value, const parse_options& options) {
  if (!schema_value.is_object()) {
    return fail(errc::invalid_schema,
                std::string("schema must be a JSON object, got ") + schema_value.type_name());
  }
  if (detail::depth_of(schema_value, options.max_depth) > options.max_depth) {
    return fail(errc::invalid_schema,
                "schema is nested deeper than " + std::to_string(options.max_depth) + " levels");
  }
  auto s = std::make_shared<state>();
  s->raw = schema_value;
  s->root = detail::compile(schema_value);
  return document(std::move(s));
}

report document::validate(const json& value) const {
  std::vector<violation> found;
  detail::walker(found).visit(state_->root, value, "", "");
  return report(std::move(found));
}

const json& document::raw() const noexcept { return state_->raw; }

const detail::node& document::root() const noexcept { return state_->root; }

}  // namespace schema
}  // namespace v1
}  // namespace babelqueue
