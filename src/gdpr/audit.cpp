// Registry-side governance: the PII-name audit and masking (bqschema `gdpr` semantics).
#include "core/shared_helpers.hpp"

#include <babelqueue/gdpr/audit.hpp>

#include <algorithm>
#include <regex>

namespace babelqueue {
inline namespace v1 {
namespace gdpr {
namespace {

constexpr std::size_t max_depth = 256;

bool marked(const json& node) {
  const auto it = node.find("x-gdpr-sensitive");
  if (it == node.end()) return false;
  if (it->is_boolean()) return it->get<bool>();
  return it->is_string() && !it->get_ref<const std::string&>().empty();
}

// bqschema's parsed model keeps only object-valued properties and a single object items.
const json* items_of(const json& node) {
  const auto it = node.find("items");
  return it != node.end() && it->is_object() ? &*it : nullptr;
}
const json* property_of(const json& node, const std::string& name) {
  const auto props = node.find("properties");
  if (props == node.end() || !props->is_object()) return nullptr;
  const auto it = props->find(name);
  return it != props->end() && it->is_object() ? &*it : nullptr;
}
bool has_properties(const json& node) {
  const auto props = node.find("properties");
  if (props == node.end() || !props->is_object()) return false;
  return std::any_of(props->begin(), props->end(), [](const json& s) { return s.is_object(); });
}

bool is_container(const json& node) {
  const auto type = node.find("type");
  if (type != node.end() && type->is_string() && (*type == "object" || *type == "array"))
    return true;
  return has_properties(node) || items_of(node) != nullptr;
}

void audit(const json& node, const std::string& path, const name_pattern& pattern,
           std::size_t depth, std::vector<std::string>& out) {
  if (!node.is_object() || depth > max_depth) return;
  if (const auto props = node.find("properties"); props != node.end() && props->is_object()) {
    for (const auto& [name, sub] : props->items()) {
      if (!sub.is_object()) continue;
      const std::string child = babelqueue::detail::join_path(path, name);
      if (pattern.matches(name) && !marked(sub) && !is_container(sub)) out.push_back(child);
      audit(sub, child, pattern, depth + 1, out);
    }
  }
  if (const json* items = items_of(node)) audit(*items, path + "[]", pattern, depth + 1, out);
}

// The first UTF-8 sequence of a (valid UTF-8) string.
std::string first_character(const std::string& s) {
  const auto lead = static_cast<unsigned char>(s[0]);
  std::size_t n = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
  return s.substr(0, std::min(n, s.size()));
}

json mask_node(const json& value, const json* schema, std::size_t depth) {
  if (schema != nullptr && schema->is_object() && marked(*schema)) {
    if (value.is_string() && !value.get_ref<const std::string&>().empty())
      return first_character(value.get_ref<const std::string&>()) + "***";
    return "***";
  }
  if (depth > max_depth || schema == nullptr || !schema->is_object()) return value;
  if (value.is_object()) {
    json out = json::object();
    for (const auto& [key, child] : value.items())
      out[key] = mask_node(child, property_of(*schema, key), depth + 1);
    return out;
  }
  if (value.is_array()) {
    json out = json::array();
    const json* items = items_of(*schema);
    for (const auto& child : value) out.push_back(mask_node(child, items, depth + 1));
    return out;
  }
  return value;
}

}  // namespace

struct name_pattern::impl {
  std::regex re;
};

result<name_pattern> name_pattern::compile(std::string_view pattern) {
  if (pattern.empty()) pattern = default_pii_pattern;
  auto flags = std::regex::ECMAScript;
  if (pattern.substr(0, 4) == "(?i)") {
    pattern.remove_prefix(4);
    flags |= std::regex::icase;
  }
  try {
    name_pattern out;
    out.impl_ = std::make_shared<const impl>(impl{std::regex(std::string(pattern), flags)});
    return out;
  } catch (const std::regex_error& e) {
    return fail(errc::invalid_argument, std::string("invalid PII name pattern: ") + e.what());
  }
}

bool name_pattern::matches(std::string_view name) const {
  return impl_ && std::regex_search(name.begin(), name.end(), impl_->re);
}

std::vector<std::string> unannotated_pii(const json& schema, const name_pattern& pattern) {
  std::vector<std::string> out;
  audit(schema, "", pattern, 0, out);
  std::sort(out.begin(), out.end());
  return out;
}

json mask(const json& value, const json& schema) { return mask_node(value, &schema, 0); }

}  // namespace gdpr
}  // namespace v1
}  // namespace babelqueue
