#pragma once
/// @file gdpr/protect.hpp
/// @brief protect() / unprotect(): encrypt and restore the marked leaves of `data` in place.
///
/// Spec "GDPR Field Encryption": the producer validates, then protect()s, then encodes; the
/// consumer decodes, unprotect()s, then validates and handles (see pipeline.hpp for steps
/// that do it in that order). Only values inside `data` change; the envelope frame never does.
///
/// protect: each marked value present in `data` (any JSON type, objects and arrays as a
/// whole) is written as canonical JSON (babelqueue::to_canonical_json, decision D2) and
/// replaced by cipher.encrypt(bytes). unprotect: each marked value that is a string is
/// decrypted and parsed back (strict JSON); non-string values are left as they are (never
/// protected, or already restored). Absent fields, and values of another shape than the
/// schema declares (a non-object where an object is walked, a non-array at `[]`), are skipped.
///
/// Both are all-or-nothing: on any error `data` is left exactly as it was (the peers leave
/// it half protected), and the error's `path` names the concrete field (`addresses[1].line`).
/// Unprotect failures are decrypt codes (gdpr::is_decrypt_error) — let them fail the
/// handler so the message is retried and then dead-lettered.
///
/// Unprotecting twice fails for string values (the restored cleartext is not a ciphertext),
/// as in every peer; protecting twice double-encrypts. Call each once per message.
/// @note Thread-safety: reentrant; `data` must not be shared with another thread meanwhile.

#include <babelqueue/export/gdpr.hpp>
#include <babelqueue/gdpr/cipher.hpp>
#include <babelqueue/gdpr/sensitive_paths.hpp>
#include <babelqueue/json.hpp>

namespace babelqueue {
inline namespace v1 {
namespace gdpr {

/// errc::invalid_argument when `data` is not an object (null is a no-op);
/// errc::encrypt_failed when the cipher fails or a leaf cannot be written as JSON.
BABELQUEUE_GDPR_EXPORT result<void> protect(json& data, const field_plan& plan, const cipher& c);
/// errc::malformed_ciphertext / decrypt_failed / not_json (decrypt codes) per field.
BABELQUEUE_GDPR_EXPORT result<void> unprotect(json& data, const field_plan& plan, const cipher& c);

/// Convenience forms that build the plan from `schema` on every call (errc::invalid_schema).
/// Build a field_plan once per URN instead on a hot path.
BABELQUEUE_GDPR_EXPORT result<void> protect(json& data, const json& schema, const cipher& c);
BABELQUEUE_GDPR_EXPORT result<void> unprotect(json& data, const json& schema, const cipher& c);

}  // namespace gdpr
}  // namespace v1
}  // namespace babelqueue
