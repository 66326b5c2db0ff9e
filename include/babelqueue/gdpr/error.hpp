#pragma once
/// @file gdpr/error.hpp
/// @brief The GDPR helper's error codes ("babelqueue.gdpr" category).
///
/// A consumer must be able to tell a wrong key or a tampered value (retry / dead-letter,
/// alert the key owner) from a schema or programming mistake, so the gdpr component has its
/// own codes. Failures travel in the SDK's one error model (babelqueue/error.hpp): functions
/// return `babelqueue::result<T>`, throwing APIs throw `babelqueue::error`, whose
/// `error_info::path` holds the concrete data path (`addresses[1].line`) when one applies.
/// `is_decrypt_error(e.code())` is the test for Go's `ErrDecrypt`, Python's `DecryptError`,
/// PHP's `DecryptException`; `e.code() == babelqueue::condition::invalid_argument` holds for
/// invalid_key, invalid_schema and invalid_argument.
/// @note Thread-safety: value types; no shared state.

#include <babelqueue/error.hpp>
#include <babelqueue/export/gdpr.hpp>
#include <babelqueue/result.hpp>

#include <string>
#include <string_view>
#include <system_error>

namespace babelqueue {
inline namespace v1 {
namespace gdpr {

enum class errc : int {
  ok = 0,
  invalid_key = 1,           ///< AES key is not 16, 24 or 32 bytes
  malformed_ciphertext = 2,  ///< not standard padded base64, or too short for nonce + tag
  decrypt_failed = 3,        ///< authentication failed: wrong key or tampered value
  not_json = 4,              ///< decrypted plaintext is not strict JSON
  encrypt_failed = 5,        ///< the cipher (or the leaf's canonical JSON) failed on protect
  invalid_schema = 6,        ///< a mark the walk cannot honour (rejected at plan build)
  invalid_argument = 7,      ///< unusable caller input (e.g. data is not an object)
};

}  // namespace gdpr
}  // namespace v1
}  // namespace babelqueue

template <>
struct std::is_error_code_enum<babelqueue::gdpr::errc> : std::true_type {};

namespace babelqueue {
inline namespace v1 {
namespace gdpr {

/// The category of gdpr::errc values ("babelqueue.gdpr").
BABELQUEUE_GDPR_EXPORT const std::error_category& category() noexcept;

inline std::error_code make_error_code(errc e) noexcept {
  return {static_cast<int>(e), category()};
}

/// Stable snake_case name of a code (`decrypt_failed`, ...).
inline std::string_view reason(errc e) noexcept { return babelqueue::reason(make_error_code(e)); }

/// True for the codes a consumer gets when it cannot read a protected field.
constexpr bool is_decrypt_error(errc e) noexcept {
  return e == errc::malformed_ciphertext || e == errc::decrypt_failed || e == errc::not_json;
}
/// The same test on any error code (false for codes of other categories).
inline bool is_decrypt_error(const std::error_code& code) noexcept {
  return code.category() == category() && is_decrypt_error(static_cast<errc>(code.value()));
}

/// Builds a failed result with a data path: `return gdpr::fail(errc::x, "why", "a[1].b")`.
inline babelqueue::failure fail(errc code, std::string message, std::string path = {}) {
  return babelqueue::failure{error_info{code, std::move(message), std::move(path)}};
}

/// Throws babelqueue::error for `info`.
[[noreturn]] inline void throw_error(error_info info) { throw babelqueue::error(std::move(info)); }

}  // namespace gdpr
}  // namespace v1
}  // namespace babelqueue
