#include "core/propagate.hpp"

#include <babelqueue/codec.hpp>
#include <babelqueue/schema/provider.hpp>

namespace babelqueue {
inline namespace v1 {
namespace schema {

result<map_provider> map_provider::from_json(const std::map<std::string, json>& schemas) {
  map_provider out;
  for (const auto& [urn, schema_value] : schemas) {
    BABELQUEUE_TRY_LET(added, out.add(urn, schema_value));
  }
  return out;
}

result<map_provider> map_provider::from_text(const std::map<std::string, std::string>& schemas) {
  map_provider out;
  for (const auto& [urn, text] : schemas) {
    auto parsed = document::parse(text);
    if (!parsed) return fail(parsed.code(), "schema \"" + urn + "\": " + parsed.error().message);
    out.add(urn, std::move(*parsed));
  }
  return out;
}

result<void> map_provider::add(std::string urn, const json& schema_value) {
  auto parsed = document::from_json(schema_value);
  if (!parsed) return fail(parsed.code(), "schema \"" + urn + "\": " + parsed.error().message);
  add(std::move(urn), std::move(*parsed));
  return {};
}

void map_provider::add(std::string urn, document schema_value) {
  schemas_.insert_or_assign(std::move(urn),
                            std::make_shared<const document>(std::move(schema_value)));
}

result<schema_ptr> map_provider::find(std::string_view urn) const {
  auto it = schemas_.find(urn);
  if (it == schemas_.end()) return schema_ptr{};
  return it->second;
}

}  // namespace schema
}  // namespace v1
}  // namespace babelqueue
