#pragma once
/// @file asb/sas_token.hpp
/// @brief The Azure Service Bus Shared Access Signature token (wire-brokers §2.6): what the
/// CBS `put-token` request carries (type `servicebus.windows.net:sastoken`).
///
/// Format, exactly as the Python `azure-servicebus` package writes it (7.15.0,
/// `azure/servicebus/_pyamqp/utils.py` `generate_sas_token`, which `_base_handler.py`
/// `_generate_sas_token` calls), byte for byte:
///
///     SharedAccessSignature sr=<U(uri)>&sig=<U(sig)>&se=<se>&skn=<U(key name)>
///     sig = base64(HMAC-SHA256(key, U(uri) + "\n" + se))
///
/// where `se` is the expiry in whole seconds since the Unix epoch (decimal), the HMAC key is
/// the UTF-8 bytes of the key string as given (not base64-decoded), base64 is standard and
/// padded, and U() is Python's `urllib.parse.quote_plus`: a space becomes `+`, the unreserved
/// bytes (letters, digits, `_` `.` `-` `~`) stay, and every other byte becomes `%XX` with
/// UPPER-case hex (so `sb://a/b` is signed and sent as `sb%3A%2F%2Fa%2Fb`; the signature's
/// `+` `/` `=` become `%2B` `%2F` `%3D`).
///
/// One deliberate difference: Python percent-encodes the key name twice (`quote_plus`, then
/// `urlencode` again), .NET (`WebUtility.UrlEncode`) once. The service decodes it once, so
/// only the single encoding names the policy right; this follows .NET. The two agree for
/// every key name made of unreserved bytes only, such as `RootManageSharedAccessKey`.
///
/// Part of the component `babelqueue::asb` (src/asb/; OpenSSL libcrypto).
/// @note Thread-safety: pure and thread-safe (OpenSSL 3's one-shot HMAC is).

#include <babelqueue/asb/auth_error.hpp>
#include <babelqueue/export/asb.hpp>
#include <babelqueue/result.hpp>

#include <chrono>
#include <string>
#include <string_view>

namespace babelqueue {
inline namespace v1 {
namespace asb {

/// The literal that starts every token.
inline constexpr std::string_view sas_token_prefix = "SharedAccessSignature ";

/// The SAS token for `resource_uri` (the audience, e.g.
/// `sb://<namespace>.servicebus.windows.net/<entity>`), signed with the policy `key_name` /
/// `key`, valid until `expiry` (truncated to whole seconds).
/// Errors: auth_errc::invalid_argument for an empty resource URI, key name or key, or an
/// expiry before the Unix epoch; auth_errc::crypto_failed when OpenSSL fails.
BABELQUEUE_ASB_EXPORT result<std::string> make_sas_token(
    std::string_view resource_uri, std::string_view key_name, std::string_view key,
    std::chrono::system_clock::time_point expiry);

}  // namespace asb
}  // namespace v1
}  // namespace babelqueue
