#pragma once
/// @file schema/registry.hpp
/// @brief The git-governed schema registry: the `registry.json` manifest and `dir_provider`.
///
/// A registry is a manifest `{"schemas":[{"urn":"…","schema":"path.json","owner":…,
/// "status":…}]}`; each schema path is resolved against the manifest's directory unless it
/// is absolute (`owner`/`status` are informational and ignored here).
///
/// Two loading modes, because the peers differ (wire-helpers §5.3):
///  - lenient (the runtime `DirProvider` of Go/Python/PHP): entries without a non-empty
///    string `urn` and `schema` are skipped; a duplicate URN replaces the earlier entry;
///  - strict (`bqschema`, used by the `babelqueue schema` commands): such entries, or a
///    duplicate URN, make the whole manifest invalid.
///
/// @note Thread-safety: `registry` is immutable after load(); every member is safe to call
/// concurrently. `dir_provider` is safe to share between threads (see below).

#include <babelqueue/export/schema.hpp>
#include <babelqueue/result.hpp>
#include <babelqueue/schema/provider.hpp>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace babelqueue {
inline namespace v1 {
namespace schema {

struct BABELQUEUE_SCHEMA_EXPORT registry_options {
  /// bqschema's rules (see file comment); false = the runtime providers' lenient rules.
  bool strict = false;
  /// Limits for parsing each schema file.
  parse_options parse;
};

/// One manifest entry.
struct BABELQUEUE_SCHEMA_EXPORT registry_entry {
  std::string urn;
  /// The path as written in the manifest.
  std::string schema;
  /// The path the file is read from (manifest directory joined, lexically normalised).
  std::filesystem::path resolved;
};

/// A loaded `registry.json`. Schema files are not read by load().
class BABELQUEUE_SCHEMA_EXPORT registry {
 public:
  /// Reads and checks the manifest once. Errors: errc::io (unreadable, message
  /// `registry: read <path>: <reason>`), errc::malformed_json / errc::invalid_argument
  /// (`registry: parse <path>: …`, or, strict, `registry: entry N has an empty urn`,
  /// `registry: entry "<urn>" has an empty schema path`,
  /// `registry: urn "<urn>" is declared more than once`).
  static result<registry> load(const std::filesystem::path& manifest,
                               const registry_options& options = {});

  /// Declared URNs, byte-wise sorted.
  std::vector<std::string> urns() const;
  bool has(std::string_view urn) const;
  /// The entry of `urn`, or nullptr.
  const registry_entry* entry(std::string_view urn) const;

  /// Reads `urn`'s schema file as it is (for export). Null when the URN is not declared;
  /// errc::io with `registry: read schema for "<urn>" (<file>): <reason>` when unreadable.
  result<std::shared_ptr<const std::string>> raw_text(std::string_view urn) const;
  /// Reads and parses `urn`'s schema. Null when not declared; errc::io as raw_text(), or
  /// `registry: "<urn>": schema: parse: <reason>` (errc::malformed_json /
  /// errc::invalid_argument / errc::number_out_of_range) when it is not a JSON object schema.
  result<schema_ptr> load_schema(std::string_view urn) const;

  const std::filesystem::path& manifest_path() const noexcept { return manifest_; }
  const registry_options& options() const noexcept { return options_; }

 private:
  std::filesystem::path manifest_;
  registry_options options_;
  std::map<std::string, registry_entry, std::less<>> entries_;
};

/// The registry bridge: validates at runtime against the registry's git-governed schemas.
/// The manifest is read once at construction; each schema file is read and parsed lazily on
/// first use of its URN and cached (successes only — a failed load is retried next time, so
/// fixing a file on disk heals a long-running consumer). Unknown URN → null (skip).
/// @note Thread-safety: find() is safe from any number of threads; loads are serialised by
/// one mutex (schema files are small and each is loaded once). Copies share the cache.
class BABELQUEUE_SCHEMA_EXPORT dir_provider final : public provider {
 public:
  /// Opens `manifest` (lenient rules unless options.strict). Errors as registry::load().
  static result<dir_provider> open(const std::filesystem::path& manifest,
                                   const registry_options& options = {});
  /// @throws babelqueue::error as open().
  explicit dir_provider(const std::filesystem::path& manifest,
                        const registry_options& options = {});

  result<schema_ptr> find(std::string_view urn) const override;
  const schema::registry& registry() const noexcept;

 private:
  struct state;
  explicit dir_provider(std::shared_ptr<state> s) : state_(std::move(s)) {}
  std::shared_ptr<state> state_;
};

}  // namespace schema
}  // namespace v1
}  // namespace babelqueue
