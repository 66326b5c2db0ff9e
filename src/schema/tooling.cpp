// The registry commands as functions: bqschema's inputs, stdout lines and exit codes.
#include "file_io.hpp"

#include <babelqueue/codec.hpp>
#include <babelqueue/schema/compat.hpp>
#include <babelqueue/schema/tooling.hpp>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <ostream>

namespace babelqueue {
inline namespace v1 {
namespace schema {
namespace {

constexpr int exit_ok = 0;
constexpr int exit_finding = 1;
constexpr int exit_usage = 2;

int usage_error(std::ostream& err, const std::string& message) {
  err << "babelqueue: " << message << '\n';
  return exit_usage;
}

registry_options strict_options() {
  registry_options o;
  o.strict = true;
  return o;
}

std::string string_member(const json& object, const char* key) {
  if (!object.is_object()) return {};
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string{};
}

result<document> load_schema_file(const std::string& path) {
  auto text = detail::read_file(path);
  if (!text) return fail(errc::io, "read " + path + ": " + text.error().message);
  auto doc = document::parse(*text);
  if (!doc) return fail(doc.code(), "schema: parse: " + doc.error().message);
  return doc;
}

}  // namespace

int run_validate(const std::filesystem::path& registry_path, const std::vector<std::string>& files,
                 std::ostream& out, std::ostream& err) {
  if (files.empty()) return usage_error(err, "validate: pass one or more envelope JSON files");
  auto reg = registry::load(registry_path, strict_options());
  if (!reg) return usage_error(err, reg.error().message);

  bool failed = false;
  for (const auto& file : files) {
    auto text = detail::read_file(file);
    if (!text) return usage_error(err, "read " + file + ": " + text.error().message);
    auto env = parse_json(*text);
    if (!env) return usage_error(err, file + ": invalid JSON: " + env.error().message);
    // bqschema decodes into a Go map: `null` is an empty map, anything else not an object fails.
    if (!env->is_object() && !env->is_null())
      return usage_error(err, file + ": invalid JSON: json: cannot unmarshal " +
                                  std::string(env->type_name()) +
                                  " into Go value of type map[string]interface {}");
    std::string urn = string_member(*env, "job");
    if (urn.empty()) urn = string_member(*env, "urn");
    if (urn.empty()) {
      out << file << ": no job/urn — skipped\n";
      continue;
    }
    auto found = reg->load_schema(urn);
    if (!found) return usage_error(err, found.error().message);
    if (!*found) {
      out << file << " [" << urn << "]: no schema registered — skipped\n";
      continue;
    }
    json data = nullptr;
    if (env->is_object()) {
      if (auto it = env->find("data"); it != env->end()) data = *it;
    }
    const report r = (*found)->validate(data);
    if (r.ok()) {
      out << file << " [" << urn << "]: ok\n";
      continue;
    }
    failed = true;
    out << file << " [" << urn << "]: " << r.violations().size() << " violation(s)\n";
    for (const auto& v : r.violations()) out << "  - " << v.text() << '\n';
  }
  return failed ? exit_finding : exit_ok;
}

int run_compat(const std::string& old_file, const std::string& new_file, std::ostream& out,
               std::ostream& err) {
  auto old_doc = load_schema_file(old_file);
  if (!old_doc) return usage_error(err, old_doc.error().message);
  auto new_doc = load_schema_file(new_file);
  if (!new_doc) return usage_error(err, new_doc.error().message);
  const auto breaks = breaking_changes(*old_doc, *new_doc);
  if (breaks.empty()) {
    out << "backward-compatible: no breaking changes.\n";
    return exit_ok;
  }
  out << breaks.size() << " breaking change(s) — mint a new URN instead (versioning-policy §3):\n";
  for (const auto& b : breaks) out << "  - " << b << '\n';
  return exit_finding;
}

int run_check(const std::filesystem::path& registry_path, std::ostream& out, std::ostream& err) {
  auto reg = registry::load(registry_path, strict_options());
  if (!reg) return usage_error(err, reg.error().message);
  const auto urns = reg->urns();
  bool bad = false;
  for (const auto& urn : urns) {
    auto loaded = reg->load_schema(urn);
    if (!loaded) {
      bad = true;
      out << "  x " << urn << ": " << loaded.error().message << '\n';
      continue;
    }
    out << "  ok " << urn << '\n';
  }
  out << urns.size() << " URN(s) in registry.\n";
  return bad ? exit_finding : exit_ok;
}

int run_export_asyncapi(const std::filesystem::path& registry_path,
                        const std::optional<std::string>& output_file,
                        const asyncapi_options& options, std::ostream& out, std::ostream& err) {
  auto reg = registry::load(registry_path, strict_options());
  if (!reg) return usage_error(err, reg.error().message);
  auto doc = build_asyncapi(*reg, options);
  if (!doc) return usage_error(err, doc.error().message);
  const std::string text = go_indent_json(*doc) + "\n";
  if (!output_file || output_file->empty()) {
    out << text;
    return exit_ok;
  }
  std::ofstream file(*output_file, std::ios::binary | std::ios::trunc);
  if (!file || !file.write(text.data(), static_cast<std::streamsize>(text.size())) || !file.flush())
    return usage_error(err, "write " + *output_file + ": " + std::strerror(errno));
  err << "wrote " << *output_file << " (" << reg->urns().size() << " URN(s))\n";
  return exit_ok;
}

}  // namespace schema
}  // namespace v1
}  // namespace babelqueue
