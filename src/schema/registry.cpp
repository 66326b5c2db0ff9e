// The registry manifest (registry.json) and the lazy, caching dir_provider.
#include "core/propagate.hpp"
#include "file_io.hpp"

#include <babelqueue/codec.hpp>
#include <babelqueue/schema/registry.hpp>

#include <mutex>

namespace babelqueue {
inline namespace v1 {
namespace schema {
namespace {

// encoding/json's name of a JSON value kind in "cannot unmarshal X into …" errors.
std::string go_kind(const json& v) {
  switch (v.type()) {
    case json::value_t::object:
      return "object";
    case json::value_t::array:
      return "array";
    case json::value_t::string:
      return "string";
    case json::value_t::boolean:
      return "bool";
    case json::value_t::null:
      return "null";
    default:
      return "number";
  }
}

}  // namespace

result<registry> registry::load(const std::filesystem::path& manifest,
                                const registry_options& options) {
  const std::string path = manifest.string();
  auto text = detail::read_file(path);
  if (!text) return fail(errc::io, "registry: read " + path + ": " + text.error().message);
  auto parsed = parse_json(*text);
  if (!parsed)
    return fail(parsed.code(), "registry: parse " + path + ": " + parsed.error().message);
  const json& doc = *parsed;

  auto bad = [&](const std::string& what) {
    return fail(errc::invalid_registry, "registry: parse " + path + ": " + what);
  };
  registry out;
  out.manifest_ = manifest;
  out.options_ = options;
  const std::string dir = detail::go_dir(path);

  if (!doc.is_object() && !(options.strict && doc.is_null())) {
    return bad("json: cannot unmarshal " + go_kind(doc) +
               " into Go value of type registry.manifest");
  }
  const json* schemas = nullptr;
  if (doc.is_object()) {
    if (auto it = doc.find("schemas"); it != doc.end()) schemas = &*it;
  }
  if (schemas != nullptr && !schemas->is_array()) {
    if (options.strict && !schemas->is_null())
      return bad("json: cannot unmarshal " + go_kind(*schemas) +
                 " into Go struct field manifest.schemas of type []registry.Entry");
    schemas = nullptr;  // lenient: no entries
  }
  if (schemas == nullptr) return out;

  std::size_t index = 0;
  for (const auto& item : *schemas) {
    const std::size_t i = index++;
    std::string urn, file;
    if (item.is_object()) {
      for (const char* field : {"urn", "schema", "owner", "status"}) {
        auto it = item.find(field);
        if (it == item.end() || it->is_null() || it->is_string()) continue;
        if (options.strict)
          return bad("json: cannot unmarshal " + go_kind(*it) +
                     " into Go struct field Entry.schemas." + field + " of type string");
      }
      if (auto it = item.find("urn"); it != item.end() && it->is_string())
        urn = it->get<std::string>();
      if (auto it = item.find("schema"); it != item.end() && it->is_string())
        file = it->get<std::string>();
    } else if (options.strict && !item.is_null()) {
      return bad("json: cannot unmarshal " + go_kind(item) +
                 " into Go struct field manifest.schemas of type registry.Entry");
    }
    if (options.strict) {
      if (urn.empty())
        return fail(errc::invalid_registry,
                    "registry: entry " + std::to_string(i) + " has an empty urn");
      if (file.empty())
        return fail(errc::invalid_registry,
                    "registry: entry \"" + urn + "\" has an empty schema path");
      if (out.entries_.count(urn) != 0)
        return fail(errc::invalid_registry,
                    "registry: urn \"" + urn + "\" is declared more than once");
    } else if (urn.empty() || file.empty()) {
      continue;  // the runtime providers skip unusable entries
    }
    registry_entry entry;
    entry.urn = urn;
    entry.schema = file;
    entry.resolved = std::filesystem::path(file).is_absolute() ? file : detail::go_join(dir, file);
    out.entries_.insert_or_assign(urn, std::move(entry));  // lenient: last wins
  }
  return out;
}

std::vector<std::string> registry::urns() const {
  std::vector<std::string> out;
  out.reserve(entries_.size());
  for (const auto& [urn, entry] : entries_) out.push_back(urn);  // std::map: byte-wise sorted
  return out;
}

bool registry::has(std::string_view urn) const { return entries_.find(urn) != entries_.end(); }

const registry_entry* registry::entry(std::string_view urn) const {
  auto it = entries_.find(urn);
  return it == entries_.end() ? nullptr : &it->second;
}

result<std::shared_ptr<const std::string>> registry::raw_text(std::string_view urn) const {
  const registry_entry* e = entry(urn);
  if (e == nullptr) return std::shared_ptr<const std::string>{};
  auto text = detail::read_file(e->resolved.string());
  if (!text)
    return fail(errc::io, "registry: read schema for \"" + e->urn + "\" (" + e->schema +
                              "): " + text.error().message);
  return std::make_shared<const std::string>(std::move(*text));
}

result<schema_ptr> registry::load_schema(std::string_view urn) const {
  BABELQUEUE_TRY_LET(text, raw_text(urn));
  if (!*text) return schema_ptr{};
  auto parsed = document::parse(**text, options_.parse);
  if (!parsed)
    return fail(parsed.code(),
                "registry: \"" + std::string(urn) + "\": schema: parse: " + parsed.error().message);
  return std::make_shared<const document>(std::move(*parsed));
}

struct dir_provider::state {
  schema::registry reg;
  std::mutex mutex;
  std::map<std::string, schema_ptr, std::less<>> cache;
};

result<dir_provider> dir_provider::open(const std::filesystem::path& manifest,
                                        const registry_options& options) {
  BABELQUEUE_TRY_LET(reg, schema::registry::load(manifest, options));
  auto s = std::make_shared<state>();
  s->reg = std::move(*reg);
  return dir_provider(std::move(s));
}

dir_provider::dir_provider(const std::filesystem::path& manifest, const registry_options& options)
    : dir_provider(open(manifest, options).value()) {}

result<schema_ptr> dir_provider::find(std::string_view urn) const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  if (auto it = state_->cache.find(urn); it != state_->cache.end()) return it->second;
  if (!state_->reg.has(urn)) return schema_ptr{};
  BABELQUEUE_TRY_LET(
      loaded, state_->reg.load_schema(urn));  // not cached: a fixed file heals on the next call
  state_->cache.emplace(std::string(urn), *loaded);
  return *loaded;
}

const schema::registry& dir_provider::registry() const noexcept { return state_->reg; }

}  // namespace schema
}  // namespace v1
}  // namespace babelqueue
