#pragma once
/// @file gdpr/pipeline.hpp
/// @brief Opt-in producer and consumer steps that run validation and GDPR field encryption
/// in the spec's order (component `babelqueue::gdpr_pipeline`, built with schema + runtime).
///
/// Spec "Validate cleartext, not ciphertext": a schema that constrains a sensitive field would
/// reject its ciphertext, so
///  - producer: validate → protect → encode → publish   (pipeline::seal / publish)
///  - consumer: decode → unprotect → validate → handle  (pipeline::open / wrap)
/// Validation always sees cleartext; the wire always carries ciphertext. The schema that
/// validates a URN is also the one whose `x-gdpr-sensitive` marks are protected, so one
/// provider (e.g. a schema::dir_provider over the git registry) drives both.
///
/// A URN without a registered schema passes through untouched (both steps are opt-in).
/// Protect plans are compiled once per (URN, schema) and cached; a schema whose marks cannot
/// be honoured (gdpr::field_plan::build) fails every message of that URN with babelqueue::error
/// (gdpr::errc::invalid_schema) rather than publishing a field in clear.
///
/// @note Thread-safety: a pipeline is safe to share between threads (the plan cache is
/// guarded by a mutex; provider and cipher must be thread-safe, which the shipped ones are).
/// Copies share the provider, cipher and cache; wrap()'s handler holds such a copy, so it
/// stays valid after the pipeline object is gone. It runs on the runtime's worker thread.

#include <babelqueue/export/gdpr_pipeline.hpp>
#include <babelqueue/gdpr/cipher.hpp>
#include <babelqueue/gdpr/protect.hpp>
#include <babelqueue/runtime/app.hpp>
#include <babelqueue/runtime/message.hpp>
#include <babelqueue/schema/guard.hpp>
#include <babelqueue/schema/provider.hpp>

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace babelqueue {
inline namespace v1 {
namespace gdpr {

/// A handler that receives the cleartext, validated `data` next to the message.
using cleartext_handler = std::function<void(message& msg, const json& data)>;

class BABELQUEUE_GDPR_PIPELINE_EXPORT pipeline {
 public:
  /// Both must be non-null (@throws babelqueue::error, gdpr::errc::invalid_argument).
  pipeline(std::shared_ptr<const schema::provider> schemas, std::shared_ptr<const cipher> c);

  /// Producer step: validates `data` (cleartext) against `urn`'s schema, then returns a copy
  /// with the marked fields protected — ready for make()/encode()/publish.
  /// @throws schema::invalid_payload_error when the data does not match;
  /// @throws babelqueue::error when the schema cannot be loaded;
  /// @throws babelqueue::error with a gdpr::errc code for unhonourable marks or a cipher failure.
  json seal(std::string_view urn, const json& data) const;

  /// Consumer step: returns a copy of `data` with the marked fields restored, then validated.
  /// @throws babelqueue::error with a decrypt code (gdpr::is_decrypt_error: wrong key, tampered
  /// value) — let it fail the handler so the
  /// runtime retries and then dead-letters; otherwise as seal().
  json open(std::string_view urn, const json& data) const;

  /// validate → protect → encode → publish. Errors are returned, never thrown:
  /// errc::invalid_data (violations, message lists them), the provider's code when the
  /// schema cannot be loaded, the gdpr::errc code (and data path) of a gdpr failure, or
  /// app::publish's.
  result<std::string> publish(app& a, std::string_view urn, const json& data,
                              const publish_options& options = {}) const;
  /// As above for a downstream message that continues `inbound`'s trace.
  result<std::string> publish(message& inbound, std::string_view urn, const json& data,
                              const continue_publish_options& options = {}) const;

  /// Consumer wrap for app::handle(): decode (done by the runtime) → open() → fn(msg, data).
  /// A decrypt or validation failure throws out of the handler: retried, then dead-lettered.
  handler wrap(cleartext_handler fn) const;

 private:
  struct cached_plan {
    schema::schema_ptr schema;
    std::shared_ptr<const field_plan> plan;
  };
  struct state {
    std::shared_ptr<const schema::provider> schemas;
    std::shared_ptr<const gdpr::cipher> crypto;
    std::mutex mutex;
    std::map<std::string, cached_plan, std::less<>> plans;
  };
  // The schema of `urn` (null when none) and its compiled plan; throws on load errors.
  cached_plan lookup(std::string_view urn) const;

  std::shared_ptr<state> state_;
};

}  // namespace gdpr
}  // namespace v1
}  // namespace babelqueue
