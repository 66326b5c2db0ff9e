#include <babelqueue/schema/guard.hpp>

namespace babelqueue {
inline namespace v1 {
namespace schema {

invalid_payload_error::invalid_payload_error(std::string urn, schema::report violations)
    : babelqueue::error(error_info{
          errc::invalid_payload,
          "data for \"" + urn + "\" does not match its URN schema: " + violations.summary()}),
      urn_(std::move(urn)),
      report_(std::move(violations)) {}

result<report> check(const provider& schemas, std::string_view urn, const json& data) {
  auto found = schemas.find(urn);
  if (!found)
    return fail(found.code(),
                "schema: lookup \"" + std::string(urn) + "\": " + found.error().message);
  if (!*found) return report{};  // opt-in: no schema registered, nothing to check
  return (*found)->validate(data);
}

void validate(const provider& schemas, std::string_view urn, const json& data) {
  auto checked = check(schemas, urn, data);
  if (!checked) throw babelqueue::error(checked.error());
  if (!checked->ok()) throw invalid_payload_error(std::string(urn), std::move(*checked));
}

void validate(const provider& schemas, const envelope& env) {
  auto data = env.data();
  if (!data) throw babelqueue::error(data.error());
  validate(schemas, env.urn(), *data);
}

}  // namespace schema
}  // namespace v1
}  // namespace babelqueue
