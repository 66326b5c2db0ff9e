// AsyncAPI 3.0.0 catalog from a registry, rendered like bqschema's json.MarshalIndent output.
#include "core/propagate.hpp"
#include "go_format.hpp"

#include <babelqueue/codec.hpp>
#include <babelqueue/schema/asyncapi.hpp>

#include <algorithm>
#include <vector>

namespace babelqueue {
inline namespace v1 {
namespace schema {
namespace {

void write_indented(const json& value, std::size_t level, std::string& out) {
  const auto indent = [&](std::size_t n) { out.append(2 * n, ' '); };
  switch (value.type()) {
    case json::value_t::object: {
      if (value.empty()) {
        out += "{}";
        return;
      }
      std::vector<std::pair<std::string_view, const json*>> members;
      for (auto it = value.begin(); it != value.end(); ++it)
        members.emplace_back(it.key(), &it.value());
      std::sort(members.begin(), members.end(),
                [](const auto& a, const auto& b) { return a.first < b.first; });
      out += "{\n";
      for (std::size_t i = 0; i < members.size(); ++i) {
        indent(level + 1);
        detail::go_json_string(members[i].first, out);
        out += ": ";
        write_indented(*members[i].second, level + 1, out);
        if (i + 1 < members.size()) out += ',';
        out += '\n';
      }
      indent(level);
      out += '}';
      return;
    }
    case json::value_t::array: {
      if (value.empty()) {
        out += "[]";
        return;
      }
      out += "[\n";
      for (std::size_t i = 0; i < value.size(); ++i) {
        indent(level + 1);
        write_indented(value[i], level + 1, out);
        if (i + 1 < value.size()) out += ',';
        out += '\n';
      }
      indent(level);
      out += ']';
      return;
    }
    case json::value_t::string:
      detail::go_json_string(value.get_ref<const std::string&>(), out);
      return;
    case json::value_t::boolean:
      out += value.get<bool>() ? "true" : "false";
      return;
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
      // Go decoded the schema into `any`: every number went through float64.
      out += detail::go_json_number(value.get<double>());
      return;
    default:
      out += "null";
      return;
  }
}

}  // namespace

std::string asyncapi_component_id(std::string_view urn) {
  std::string out;
  for (std::size_t i = 0; i < urn.size();) {
    const auto c = static_cast<unsigned char>(urn[i]);
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_') {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    out += '_';
    // One `_` per character (Go ranges over runes); an invalid byte counts as one character.
    std::size_t len = 1;
    if (c >= 0xC0 && c < 0xE0) {
      len = 2;
    } else if (c >= 0xE0 && c < 0xF0) {
      len = 3;
    } else if (c >= 0xF0 && c < 0xF8) {
      len = 4;
    }
    std::size_t k = 1;
    while (k < len && i + k < urn.size() && (static_cast<unsigned char>(urn[i + k]) & 0xC0) == 0x80)
      ++k;
    i += (k == len) ? len : 1;
  }
  return out;
}

result<json> build_asyncapi(const registry& reg, const asyncapi_options& options) {
  json channels = json::object();
  json messages = json::object();
  for (const auto& urn : reg.urns()) {
    BABELQUEUE_TRY_LET(raw, reg.raw_text(urn));
    if (!*raw) continue;
    auto payload = parse_json(**raw);
    if (!payload)
      return fail(payload.code(),
                  "asyncapi: \"" + urn + "\": invalid schema JSON: " + payload.error().message);
    const std::string id = asyncapi_component_id(urn);
    messages[id] = json{{"name", urn}, {"payload", std::move(*payload)}};
    channels[urn] = json{{"address", urn},
                         {"messages", json{{id, json{{"$ref", "#/components/messages/" + id}}}}}};
  }
  json doc = json::object();
  doc["asyncapi"] = "3.0.0";
  doc["info"] = json{{"title", options.title}, {"version", options.version}};
  doc["channels"] = std::move(channels);
  doc["components"] = json{{"messages", std::move(messages)}};
  return doc;
}

std::string go_indent_json(const json& value) {
  std::string out;
  write_indented(value, 0, out);
  return out;
}

}  // namespace schema
}  // namespace v1
}  // namespace babelqueue
