#pragma once
/// @file asb/auth_error.hpp
/// @brief The error codes of the Azure Service Bus credentials helpers — the SAS token
/// (sas_token.hpp) and the connection-string parser (connection_string.hpp) — in the
/// "babelqueue.asb.auth" category.
///
/// A caller (the ASB transport, a CLI) must tell "the connection string lacks a key" from "it
/// names a key twice" or "it has a key we do not know", so each has its own code; every one
/// of them but crypto_failed is a caller mistake: `r.code() == babelqueue::condition::
/// invalid_argument` holds for them. Failures travel in the SDK's one error model
/// (babelqueue/error.hpp): `error_info::path` names the connection-string key concerned
/// (`SharedAccessKey`, `Endpoint`, ...). No message ever carries a key, a signature or any
/// other value of the connection string — only key names.
/// @note Thread-safety: value types; the category is a stateless singleton.

#include <babelqueue/error.hpp>
#include <babelqueue/export/asb.hpp>
#include <babelqueue/result.hpp>

#include <string>
#include <string_view>
#include <system_error>

namespace babelqueue {
inline namespace v1 {
namespace asb {

enum class auth_errc : int {
  ok = 0,
  invalid_argument = 1,  ///< make_sas_token(): empty URI, key name or key; expiry before 1970
  crypto_failed = 2,     ///< OpenSSL's HMAC-SHA256 failed (error_info::native has its error)
  malformed = 3,         ///< a blank connection string, or a part that is not `Key=Value`
  missing_key = 4,       ///< Endpoint, or one half of the key pair / a credential, is absent
  duplicate_key = 5,     ///< a key appears twice (keys compare case-insensitively)
  unknown_key = 6,       ///< a key this parser does not know
  invalid_value = 7,     ///< an empty value, an unusable Endpoint, a non-boolean flag
  conflicting_keys = 8,  ///< SharedAccessSignature together with SharedAccessKey(Name)
};

}  // namespace asb
}  // namespace v1
}  // namespace babelqueue

template <>
struct std::is_error_code_enum<babelqueue::asb::auth_errc> : std::true_type {};

namespace babelqueue {
inline namespace v1 {
namespace asb {

/// The category of auth_errc values ("babelqueue.asb.auth").
BABELQUEUE_ASB_EXPORT const std::error_category& auth_category() noexcept;

inline std::error_code make_error_code(auth_errc e) noexcept {
  return {static_cast<int>(e), auth_category()};
}

/// Stable snake_case name of a code (`missing_key`, ...).
inline std::string_view reason(auth_errc e) noexcept {
  return babelqueue::reason(make_error_code(e));
}

}  // namespace asb
}  // namespace v1
}  // namespace babelqueue
