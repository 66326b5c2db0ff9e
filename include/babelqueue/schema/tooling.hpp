#pragma once
/// @file schema/tooling.hpp
/// @brief The registry commands (`babelqueue schema validate|compat|check|export-asyncapi`)
/// as functions, so the CLI and the tests run the same code.
///
/// Inputs, stdout text and exit codes are those of `bqschema` (wire-helpers §5.5): 0 ok,
/// 1 a finding (violation, breaking change, broken schema), 2 usage or I/O error (message on
/// `err`, prefixed `babelqueue: ` where bqschema writes `bqschema: `). The registry is loaded
/// with bqschema's strict rules (registry_options::strict).
/// @note Thread-safety: each call is independent; streams are the caller's.

#include <babelqueue/export/schema.hpp>
#include <babelqueue/schema/asyncapi.hpp>

#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace babelqueue {
inline namespace v1 {
namespace schema {

/// `validate --registry R FILE…`: per file `<file> [<urn>]: ok` / `N violation(s)` + `  - …`,
/// `<file>: no job/urn — skipped`, `<file> [<urn>]: no schema registered — skipped`.
/// The URN is the string `job` when non-empty, else the string `urn`; `data` is validated
/// (absent → null). A file that cannot be read or is not a JSON object stops with exit 2.
BABELQUEUE_SCHEMA_EXPORT int run_validate(const std::filesystem::path& registry_path,
                                          const std::vector<std::string>& files, std::ostream& out,
                                          std::ostream& err);

/// `compat OLD NEW`: `backward-compatible: no breaking changes.` (0) or
/// `N breaking change(s) — mint a new URN instead (versioning-policy §3):` + `  - …` (1).
BABELQUEUE_SCHEMA_EXPORT int run_compat(const std::string& old_file, const std::string& new_file,
                                        std::ostream& out, std::ostream& err);

/// `check --registry R`: `  ok <urn>` / `  x <urn>: <error>` per URN (sorted), then
/// `N URN(s) in registry.`; 1 when any schema fails to load.
BABELQUEUE_SCHEMA_EXPORT int run_check(const std::filesystem::path& registry_path,
                                       std::ostream& out, std::ostream& err);

/// `export-asyncapi --registry R [-o FILE] [--title T] [--doc-version V]`: the document
/// (go_indent_json + newline) on `out`, or written to FILE with `wrote FILE (N URN(s))` on `err`.
BABELQUEUE_SCHEMA_EXPORT int run_export_asyncapi(const std::filesystem::path& registry_path,
                                                 const std::optional<std::string>& output_file,
                                                 const asyncapi_options& options, std::ostream& out,
                                                 std::ostream& err);

}  // namespace schema
}  // namespace v1
}  // namespace babelqueue
