// `babelqueue schema codegen --lang cpp`: the C++ emitter (mapping rules: schema/codegen.hpp).
#include "codegen_names.hpp"
#include "core/propagate.hpp"

#include <babelqueue/json.hpp>
#include <babelqueue/schema/codegen.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace babelqueue {
inline namespace v1 {
namespace schema {
namespace {

using detail::string_literal;
using detail::unique_name;

constexpr std::string_view gdpr_mark = "x-gdpr-sensitive";

std::string indent(int depth) { return std::string(static_cast<std::size_t>(depth) * 2, ' '); }

const json* member_of(const json& s, const char* key) {
  if (!s.is_object()) return nullptr;
  const auto it = s.find(key);
  return it == s.end() ? nullptr : &*it;
}

// `type` is read only as a string (as the validator reads it).
std::string type_of(const json& s) {
  const json* t = member_of(s, "type");
  return t != nullptr && t->is_string() ? t->get<std::string>() : std::string();
}

// A double literal with the schema number's value.
std::string number_literal(const json& n) {
  std::string text = n.dump();
  return n.is_number_integer() ? text + ".0" : text;
}

// The x-gdpr-sensitive mark as the peers read it: true, or a non-empty string category.
bool gdpr_marked(const json& s, std::string& category) {
  const json* m = member_of(s, std::string(gdpr_mark).c_str());
  if (m == nullptr) return false;
  category = m->is_string() ? m->get<std::string>() : std::string();
  return m->is_boolean() ? m->get<bool>() : !category.empty();
}

// Every marked path, spelled and ordered as gdpr::sensitive_paths() lists them.
void collect_gdpr_paths(const json& s, const std::string& path, int depth,
                        std::vector<std::string>& out) {
  if (!s.is_object() || depth > 256) return;
  std::string category;
  if (gdpr_marked(s, category)) out.push_back(path);
  if (const json* props = member_of(s, "properties"); props != nullptr && props->is_object())
    for (const auto& [name, sub] : props->items())
      collect_gdpr_paths(sub, path.empty() ? name : path + "." + name, depth + 1, out);
  if (const json* items = member_of(s, "items"); items != nullptr && items->is_object())
    collect_gdpr_paths(*items, path + "[]", depth + 1, out);
}

// std::int32_t when [minimum, maximum] fits; std::uint64_t for a non-negative range wider
// than int64; else std::int64_t.
std::string integer_type(const json& s) {
  const json* lo = member_of(s, "minimum");
  const json* hi = member_of(s, "maximum");
  const double min = lo != nullptr && lo->is_number() ? lo->get<double>()
                                                      : -std::numeric_limits<double>::infinity();
  const double max = hi != nullptr && hi->is_number() ? hi->get<double>()
                                                      : std::numeric_limits<double>::infinity();
  if (min >= std::numeric_limits<std::int32_t>::min() &&
      max <= std::numeric_limits<std::int32_t>::max())
    return "std::int32_t";
  if (min >= 0 && std::isfinite(max) && max > 9223372036854775807.0) return "std::uint64_t";
  return "std::int64_t";
}

// What one struct being emitted accumulates besides its members.
struct scope {
  int depth = 0;                // indentation of the struct's members
  std::set<std::string> taken;  // member and nested type names (one C++ scope)
  std::string nested;           // nested enum and struct definitions
  std::string friends;          // to_json/from_json of the nested enums
  std::string statics;          // `static const json allowed_N` lines of from_json
  int allowed_count = 0;
};

struct mapped {
  std::string type;
  std::string rules;  // `.minimum(1.0).one_of(allowed_0)`, or empty
  std::string comment;
};

class emitter {
 public:
  // The definition of struct `name` for the object schema `s`, its body at `depth` + 1.
  // `root_head` (static members of a root struct) goes first in the body.
  std::string object_struct(const json& s, const std::string& name, int depth,
                            const std::string& root_head);
  // The root struct of a schema that is not an object with properties.
  std::string value_struct(const json& s, const std::string& name, const std::string& root_head);

 private:
  mapped map(const json& s, const std::string& hint, scope& sc);
  std::string allowed_rule(const json& values, scope& sc);
  std::string string_enum(const json& values, const std::string& hint, scope& sc);
};

std::string emitter::allowed_rule(const json& values, scope& sc) {
  const std::string name = "allowed_" + std::to_string(sc.allowed_count++);
  sc.statics += indent(sc.depth + 1) + "static const babelqueue::json " + name +
                " = babelqueue::json::parse(" + string_literal(values.dump()) + ");\n";
  return ".one_of(" + name + ")";
}

std::string emitter::string_enum(const json& values, const std::string& hint, scope& sc) {
  const std::string type = unique_name(detail::type_name(hint), sc.taken);
  std::vector<std::pair<std::string, std::string>> cases;  // enumerator, JSON string
  std::set<std::string> names;
  std::set<std::string> seen;
  for (const auto& v : values) {
    const auto& text = v.get_ref<const std::string&>();
    if (!seen.insert(text).second) continue;
    cases.emplace_back(unique_name(detail::enumerator_name(text), names), text);
  }
  const std::string in = indent(sc.depth);
  sc.nested += in + "enum class " + type + " {";
  for (std::size_t i = 0; i < cases.size(); ++i)
    sc.nested += (i == 0 ? " " : ", ") + cases[i].first;
  sc.nested += " };\n";

  sc.friends +=
      in + "friend void to_json(babelqueue::json& j, " + type + " v) {\n" + in + "  switch (v) {\n";
  for (const auto& [e, text] : cases)
    sc.friends +=
        in + "    case " + type + "::" + e + ": j = " + string_literal(text) + "; return;\n";
  sc.friends += in + "  }\n" + in + "  j = nullptr;\n" + in + "}\n";
  sc.friends +=
      in + "friend void from_json(const babelqueue::json& j, " + type + "& v) {\n" + in +
      "  if (!j.is_string())\n" + in +
      "    throw babelqueue::typed::conversion_error({}, std::string(\"expected a string, "
      "got \") + j.type_name());\n" +
      in + "  const auto& s = j.get_ref<const std::string&>();\n";
  for (const auto& [e, text] : cases)
    sc.friends +=
        in + "  if (s == " + string_literal(text) + ") { v = " + type + "::" + e + "; return; }\n";
  sc.friends += in +
                "  throw babelqueue::typed::conversion_error({}, \"value is not one of the allowed "
                "values\");\n" +
                in + "}\n";
  return type;
}

mapped emitter::map(const json& s, const std::string& hint, scope& sc) {
  if (!s.is_object()) return {"babelqueue::json", "", ""};
  const std::string t = type_of(s);
  const json* en = member_of(s, "enum");
  const json* cn = member_of(s, "const");
  if (en != nullptr && !en->is_array()) en = nullptr;  // the validator reads arrays only

  if (en != nullptr && cn == nullptr && !en->empty() && (t.empty() || t == "string") &&
      std::all_of(en->begin(), en->end(), [](const json& v) { return v.is_string(); }))
    return {string_enum(*en, hint, sc), "", ""};

  mapped m{"babelqueue::json", "", ""};
  if (cn != nullptr || en != nullptr) {
    json allowed = json::array();
    if (cn != nullptr) {  // `const` and `enum` together: the const value, when enum has it
      if (en == nullptr || std::find(en->begin(), en->end(), *cn) != en->end())
        allowed.push_back(*cn);
    } else {
      allowed = *en;
    }
    m.rules = allowed_rule(allowed, sc);
    if (t == "array" || t == "object") return m;  // element rules would be misapplied
  }
  if (t == "object") {
    const json* props = member_of(s, "properties");
    if (props != nullptr && props->is_object()) {
      const std::string type = unique_name(detail::type_name(hint), sc.taken);
      sc.nested += object_struct(s, type, sc.depth, "");
      m.type = type;
    } else {
      m.rules += ".object()";
    }
  } else if (t == "array") {
    const json* items = member_of(s, "items");
    if (items != nullptr && items->is_object()) {
      mapped element = map(*items, hint + "Item", sc);
      m.type = "std::vector<" + element.type + ">";
      m.rules = element.rules;
    } else {
      m.type = "std::vector<babelqueue::json>";
    }
  } else if (t == "string") {
    m.type = "std::string";
    if (const json* ml = member_of(s, "minLength"); ml != nullptr && ml->is_number()) {
      const double n = std::trunc(ml->get<double>());  // the validator truncates (2.9 → 2)
      if (n > 0) m.rules += ".min_length(" + std::to_string(static_cast<std::uint64_t>(n)) + ")";
    }
    if (const json* f = member_of(s, "format"); f != nullptr && f->is_string())
      m.comment = "format: " + f->get<std::string>() +
                  (f->get<std::string>() == "date-time" ? " (the RFC 3339 text as written)" : "");
  } else if (t == "integer" || t == "number") {
    m.type = t == "integer" ? integer_type(s) : "double";
    if (const json* lo = member_of(s, "minimum"); lo != nullptr && lo->is_number())
      m.rules += ".minimum(" + number_literal(*lo) + ")";
  } else if (t == "boolean") {
    m.type = "bool";
  } else if (t == "null") {
    m.type = "std::nullptr_t";
  }
  return m;
}

std::string emitter::object_struct(const json& s, const std::string& name, int depth,
                                   const std::string& root_head) {
  scope sc;
  sc.depth = depth + 1;
  sc.taken = {name, "urn", "schema", "gdpr_sensitive_paths", "unknown_fields", "babelqueue"};

  // Members: the properties in schema order, then required keys the properties omit.
  std::vector<std::pair<std::string, const json*>> fields;
  static const json no_schema = true;
  const json* props = member_of(s, "properties");
  if (props != nullptr && props->is_object())
    for (const auto& [key, sub] : props->items()) fields.emplace_back(key, &sub);
  std::set<std::string> required;
  if (const json* req = member_of(s, "required"); req != nullptr && req->is_array())
    for (const auto& r : *req)
      if (r.is_string()) required.insert(r.get<std::string>());
  for (const auto& r : required)
    if (std::none_of(fields.begin(), fields.end(), [&](const auto& f) { return f.first == r; }))
      fields.emplace_back(r, &no_schema);

  const std::string in = indent(sc.depth);
  std::string members;
  std::string reads;
  std::string writes;
  std::string known;
  for (const auto& [key, sub] : fields) {
    const std::string member = unique_name(detail::member_name(key), sc.taken);
    mapped m = map(*sub, key, sc);
    const bool is_required = required.count(key) != 0;
    std::string category;
    if (gdpr_marked(*sub, category))
      members +=
          in + "// x-gdpr-sensitive" + (category.empty() ? "" : " (" + category + ")") + "\n";
    if (!m.comment.empty()) members += in + "// " + m.comment + "\n";
    members +=
        in + (is_required ? m.type : "std::optional<" + m.type + ">") + " " + member + "{};\n";
    const std::string lit = string_literal(key);
    reads += in + "  bt::read_field(j, " + lit + ", v." + member +
             (m.rules.empty() ? std::string() : ", bt::rules()" + m.rules) + ");\n";
    writes += in + "  bt::write_field(j, " + lit + ", v." + member + ");\n";
    known += (known.empty() ? "" : ", ") + lit;
  }

  std::string out = indent(depth) + "struct " + name + " {\n" + root_head + sc.nested + members;
  out += in + "/// Members the schema does not declare, kept for re-emit (D4).\n";
  out += in + "babelqueue::json unknown_fields = babelqueue::json::object();\n\n";
  out += in + "friend bool operator==(const " + name + "&, const " + name + "&) = default;\n";
  out += in + "friend void to_json(babelqueue::json& j, const " + name + "& v) {\n" + in +
         "  namespace bt = babelqueue::typed;\n" + in + "  j = babelqueue::json::object();\n" +
         writes + in + "  bt::write_unknown(j, v.unknown_fields);\n" + in + "}\n";
  out += in + "friend void from_json(const babelqueue::json& j, " + name + "& v) {\n" + in +
         "  namespace bt = babelqueue::typed;\n" + sc.statics + in + "  bt::expect_object(j);\n" +
         reads + in + "  v.unknown_fields = bt::collect_unknown(j, {" + known + "});\n" + in +
         "}\n";
  out += sc.friends + indent(depth) + "};\n";
  return out;
}

// The struct of a root schema that is not an object with properties: the whole `data` as
// one `value` member of the mapped type (a root array → std::vector, no type → json).
std::string emitter::value_struct(const json& s, const std::string& name,
                                  const std::string& root_head) {
  scope sc;
  sc.depth = 1;
  sc.taken = {name,    "urn",       "schema", "gdpr_sensitive_paths", "unknown_fields",
              "value", "babelqueue"};
  const mapped m = map(s, "Value", sc);
  std::string out = "struct " + name + " {\n" + root_head + sc.nested;
  out += "  /// The schema's root is not an object with properties: the whole `data`.\n";
  out += "  " + m.type + " value{};\n\n";
  out += "  friend bool operator==(const " + name + "&, const " + name + "&) = default;\n";
  out += "  friend void to_json(babelqueue::json& j, const " + name + "& v) { j = v.value; }\n";
  out += "  friend void from_json(const babelqueue::json& j, " + name + "& v) {\n";
  out += "    namespace bt = babelqueue::typed;\n" + sc.statics;
  out += "    bt::read(j, v.value" + (m.rules.empty() ? std::string() : ", bt::rules()" + m.rules) +
         ");\n";
  out += "  }\n" + sc.friends + "};\n";
  return out;
}

std::string root_head(const std::string& urn, const json& schema) {
  std::vector<std::string> paths;
  collect_gdpr_paths(schema, "", 0, paths);
  std::sort(paths.begin(), paths.end());
  std::string head = "  static constexpr std::string_view urn = " + string_literal(urn) + ";\n";
  head +=
      "  /// The registry schema this type was generated from (schema::map_provider,\n"
      "  /// gdpr::field_plan::build).\n";
  head += "  static constexpr std::string_view schema = " + string_literal(schema.dump()) + ";\n";
  head += "  /// The x-gdpr-sensitive paths (gdpr::sensitive_paths spelling).\n";
  head += "  static constexpr std::array<std::string_view, " + std::to_string(paths.size()) +
          "> gdpr_sensitive_paths{";
  for (std::size_t i = 0; i < paths.size(); ++i)
    head += (i == 0 ? "{" : ", ") + string_literal(paths[i]);
  head += paths.empty() ? "};\n\n" : "}};\n\n";
  return head;
}

// `urn:babel:orders:created` → `orders:created` (the part after the URN's namespace).
std::string urn_tail(const std::string& urn) {
  std::size_t at = 0;
  for (int colons = 0; colons < 2; ++colons) {
    const auto next = urn.find(':', at);
    if (next == std::string::npos) return urn.substr(at);
    at = next + 1;
  }
  return urn.substr(at);
}

bool valid_namespace(const std::string& ns) {
  std::size_t start = 0;
  while (true) {
    const auto end = ns.find("::", start);
    const std::string part =
        ns.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (part.empty() || detail::member_name(part) != part) return false;
    if (end == std::string::npos) return true;
    start = end + 2;
  }
}

std::string file_header(const std::string& file, const std::string& manifest) {
  return "// " + file + ": generated by `babelqueue schema codegen --lang cpp` from " + manifest +
         ".\n// Do not edit: change the registry and regenerate (docs/typed.md).\n#pragma once\n\n";
}

constexpr std::string_view includes =
    "#include <babelqueue/typed/convert.hpp>\n\n#include <array>\n#include <cstddef>\n"
    "#include <cstdint>\n#include <optional>\n#include <string>\n#include <string_view>\n"
    "#include <tuple>\n#include <vector>\n\n";

}  // namespace

result<std::vector<generated_file>> generate_code(const registry& reg,
                                                  const codegen_options& options) {
  if (options.language != "cpp")
    return fail(babelqueue::errc::invalid_argument,
                "codegen: unknown language \"" + options.language + "\" (known: cpp)");
  if (!valid_namespace(options.name_space))
    return fail(babelqueue::errc::invalid_argument,
                "codegen: \"" + options.name_space + "\" is not a C++ namespace");
  const std::string manifest = reg.manifest_path().filename().string();

  struct unit {
    std::string type;
    std::string text;
  };
  std::vector<unit> units;
  std::set<std::string> types;
  emitter e;
  for (const auto& urn : reg.urns()) {
    BABELQUEUE_TRY_LET(doc, reg.load_schema(urn));
    const json& s = (*doc)->raw();
    const std::string type = unique_name(detail::type_name(urn_tail(urn)), types);
    const std::string head = root_head(urn, s);
    std::string text = "/// `" + urn + "` (" + reg.entry(urn)->schema + ").\n";
    const json* props = member_of(s, "properties");
    text += type_of(s) == "object" && props != nullptr && props->is_object()
                ? e.object_struct(s, type, 0, head)
                : e.value_struct(s, type, head);
    units.push_back({type, std::move(text)});
  }

  const std::string open = "namespace " + options.name_space + " {\n\n";
  const std::string close = "}  // namespace " + options.name_space + "\n";
  std::string type_list =
      "/// Every type of the registry, in URN order.\nusing all_messages = std::tuple<";
  for (std::size_t i = 0; i < units.size(); ++i) type_list += (i == 0 ? "" : ", ") + units[i].type;
  type_list += ">;\n\n";
  std::vector<generated_file> files;
  if (!options.single_header.empty()) {
    std::string text = file_header(options.single_header, manifest) + std::string(includes) + open;
    for (const auto& u : units) text += u.text + "\n";
    files.push_back({options.single_header, text + type_list + close});
    return files;
  }
  std::set<std::string> names{"messages"};
  std::string umbrella = file_header("messages.hpp", manifest);
  for (const auto& u : units) {
    const std::string file = unique_name(detail::file_stem(u.type), names) + ".hpp";
    files.push_back(
        {file, file_header(file, manifest) + std::string(includes) + open + u.text + "\n" + close});
    umbrella += "#include \"" + file + "\"\n";
  }
  umbrella += "\n#include <tuple>\n\n" + open + type_list + close;
  files.push_back({"messages.hpp", umbrella});
  return files;
}

}  // namespace schema
}  // namespace v1
}  // namespace babelqueue
