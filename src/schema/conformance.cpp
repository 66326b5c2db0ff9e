#include "core/propagate.hpp"

#include <babelqueue/schema/conformance.hpp>

namespace babelqueue {
inline namespace v1 {
namespace schema {

result<std::vector<payload_case_result>> run_payload_schema(const json& block) {
  if (!block.is_object())
    return fail(errc::invalid_registry, "payload_schema block must be an object");
  auto schema_it = block.find("schema");
  if (schema_it == block.end() || !schema_it->is_object())
    return fail(errc::invalid_registry, "payload_schema.schema must be an object");
  auto cases = block.find("cases");
  if (cases == block.end() || !cases->is_array())
    return fail(errc::invalid_registry, "payload_schema.cases must be an array");
  BABELQUEUE_TRY_LET(doc, document::from_json(*schema_it));

  std::vector<payload_case_result> out;
  for (const auto& c : *cases) {
    if (!c.is_object())
      return fail(errc::invalid_registry, "payload_schema case must be an object");
    auto name = c.find("name");
    auto valid = c.find("valid");
    if (name == c.end() || !name->is_string() || valid == c.end() || !valid->is_boolean())
      return fail(errc::invalid_registry,
                  "payload_schema case needs a string name and a boolean valid");
    payload_case_result r;
    r.name = name->get<std::string>();
    r.expected_valid = valid->get<bool>();
    auto data = c.find("data");
    r.details = doc->validate(data == c.end() ? json(nullptr) : *data);
    r.valid = r.details.ok();
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace schema
}  // namespace v1
}  // namespace babelqueue
