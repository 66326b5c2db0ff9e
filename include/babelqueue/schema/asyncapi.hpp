#pragma once
/// @file schema/asyncapi.hpp
/// @brief AsyncAPI 3.0.0 event catalog built from a schema registry (as `bqschema
/// export-asyncapi`).
///
/// Document shape: `asyncapi: "3.0.0"`, `info {title, version}`, `channels[<urn>] =
/// {address: <urn>, messages: {<id>: {$ref: "#/components/messages/<id>"}}}`,
/// `components.messages[<id>] = {name: <urn>, payload: <the schema file's JSON>}`, where
/// `<id>` is the URN with every character outside `[A-Za-z0-9_]` replaced by `_`
/// (one `_` per Unicode character). `x-gdpr-sensitive` marks pass through in the payload.
/// @note Thread-safety: pure functions.

#include <babelqueue/export/schema.hpp>
#include <babelqueue/json.hpp>
#include <babelqueue/result.hpp>
#include <babelqueue/schema/registry.hpp>

#include <string>
#include <string_view>

namespace babelqueue {
inline namespace v1 {
namespace schema {

struct BABELQUEUE_SCHEMA_EXPORT asyncapi_options {
  std::string title = "BabelQueue Event Catalog";
  std::string version = "1.0.0";
};

/// The AsyncAPI component id of a URN (`urn:babel:orders:created` → `urn_babel_orders_created`).
BABELQUEUE_SCHEMA_EXPORT std::string asyncapi_component_id(std::string_view urn);

/// Builds the document. Errors: a schema file is unreadable (errc::io) or not JSON
/// (`asyncapi: "<urn>": invalid schema JSON: …`, errc::malformed_json).
BABELQUEUE_SCHEMA_EXPORT result<json> build_asyncapi(const registry& reg,
                                                     const asyncapi_options& options = {});

/// Renders JSON the way Go's `json.MarshalIndent(v, "", "  ")` renders a decoded document
/// (object keys byte-sorted, `<` `>` `&` U+2028 U+2029 escaped, numbers as float64), without
/// the trailing newline — so the CLI output is byte-identical to bqschema's.
BABELQUEUE_SCHEMA_EXPORT std::string go_indent_json(const json& value);

}  // namespace schema
}  // namespace v1
}  // namespace babelqueue
