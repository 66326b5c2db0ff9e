#pragma once
/// @file schema/provider.hpp
/// @brief Where schemas come from: the `provider` seam and the in-memory `map_provider`.
///
/// A provider answers one question: what is the schema of this URN's `data`? It returns the
/// schema, or "none registered" (a null pointer), in which case callers skip validation —
/// validation is opt-in per URN (spec "Per-URN Schema Validation"). A registered schema that
/// cannot be loaded is an error, never a silent skip.
///
/// @note Thread-safety: find() may be called concurrently from any thread on every provider
/// in this library; implementations of the seam must allow that too.

#include <babelqueue/export/schema.hpp>
#include <babelqueue/json.hpp>
#include <babelqueue/result.hpp>
#include <babelqueue/schema/document.hpp>

#include <map>
#include <memory>
#include <string>
#include <string_view>

namespace babelqueue {
inline namespace v1 {
namespace schema {

/// A schema shared between threads; null means "no schema registered for this URN".
using schema_ptr = std::shared_ptr<const document>;

/// URN → schema.
class BABELQUEUE_SCHEMA_EXPORT provider {
 public:
  virtual ~provider() = default;
  /// The schema registered for `urn` (exact string match), null when none is registered, or
  /// an error when the registered schema cannot be read or parsed (schema::errc::io,
  /// errc::malformed_json, schema::errc::invalid_schema).
  virtual result<schema_ptr> find(std::string_view urn) const = 0;
};

/// In-memory provider for tests and for schemas embedded in code. Schemas are parsed when
/// added, so a bad schema fails at construction rather than on the first message.
/// @note Thread-safety: add() is not thread-safe; after the last add(), find() may be
/// called concurrently.
class BABELQUEUE_SCHEMA_EXPORT map_provider final : public provider {
 public:
  map_provider() = default;

  /// Builds from URN → schema JSON values. Errors name the URN (errc::invalid_argument).
  static result<map_provider> from_json(const std::map<std::string, json>& schemas);
  /// Builds from URN → schema text (as Go's NewMapProvider / Python's MapProvider.from_json).
  static result<map_provider> from_text(const std::map<std::string, std::string>& schemas);

  /// Registers (or replaces) `urn`'s schema.
  result<void> add(std::string urn, const json& schema);
  void add(std::string urn, document schema);

  result<schema_ptr> find(std::string_view urn) const override;
  std::size_t size() const noexcept { return schemas_.size(); }

 private:
  std::map<std::string, schema_ptr, std::less<>> schemas_;
};

}  // namespace schema
}  // namespace v1
}  // namespace babelqueue
