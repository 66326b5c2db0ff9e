#pragma once
/// @file asb/connection_string.hpp
/// @brief The Azure Service Bus connection string (wire-brokers §2.6):
///
///     Endpoint=sb://<ns>.servicebus.windows.net/;SharedAccessKeyName=<policy>;
///         SharedAccessKey=<key>[;EntityPath=<entity>]
///
/// (one line), or `...;SharedAccessSignature=SharedAccessSignature sr=...` instead of the key
/// pair, plus `UseDevelopmentEmulator=true` for the local emulator.
///
/// Grammar (what the Azure SDKs accept, made strict where they silently guess):
///  - parts are separated by `;`; blank parts (a trailing `;`, `;;`) are skipped;
///  - each part is `Key=Value`, split at the FIRST `=` (base64 keys and SAS tokens contain
///    `=`); ASCII white space around keys and values is trimmed;
///  - keys compare case-insensitively, as in the .NET and Python SDKs: `Endpoint`,
///    `SharedAccessKeyName`, `SharedAccessKey`, `SharedAccessSignature`, `EntityPath`,
///    `UseDevelopmentEmulator`. Any other key is auth_errc::unknown_key, a key given twice is
///    auth_errc::duplicate_key (the SDKs keep the last one silently), an empty value is
///    auth_errc::invalid_value;
///  - `Endpoint` is required and must be `<scheme>://<host>[:<port>][/]` — no user info, no
///    path beyond `/`, no query (the entity goes in `EntityPath`); an IPv6 host is bracketed;
///  - credentials: `SharedAccessKeyName` and `SharedAccessKey` together, or
///    `SharedAccessSignature` alone (a ready token; with either key: conflicting_keys; with
///    neither: missing_key);
///  - `UseDevelopmentEmulator` is `true` or `false` (any case). The emulator is reached over
///    plain AMQP on port 5672 without TLS; whether to allow that for a non-local host is the
///    transport's decision, not the parser's.
/// Error messages name keys, never values (a value may be a secret).
///
/// Part of the component `babelqueue::asb` (src/asb/).
/// @note Thread-safety: pure and thread-safe.

#include <babelqueue/asb/auth_error.hpp>
#include <babelqueue/export/asb.hpp>
#include <babelqueue/result.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace babelqueue {
inline namespace v1 {
namespace asb {

/// A parsed connection string. Values are verbatim (trimmed of ASCII white space).
struct BABELQUEUE_ASB_EXPORT connection_string {
  /// `Endpoint` without a trailing `/`: `sb://contoso.servicebus.windows.net`.
  std::string endpoint;
  /// The Endpoint's host (an IPv6 address without its brackets): the AMQP open hostname / SNI.
  std::string host;
  /// The Endpoint's port, when it names one (else the transport's default: 5671, or 5672
  /// for the emulator).
  std::optional<std::uint16_t> port;
  std::optional<std::string> shared_access_key_name;
  std::optional<std::string> shared_access_key;
  /// A ready token (`SharedAccessSignature sr=...`), as given.
  std::optional<std::string> shared_access_signature;
  std::optional<std::string> entity_path;
  bool use_development_emulator = false;

  friend bool operator==(const connection_string&, const connection_string&) = default;
};

/// Parses `text` (grammar in the file comment). Errors: auth_errc::malformed, missing_key,
/// duplicate_key, unknown_key, invalid_value, conflicting_keys — each with
/// `error_info::path` = the key concerned (empty for malformed).
BABELQUEUE_ASB_EXPORT result<connection_string> parse_connection_string(std::string_view text);

}  // namespace asb
}  // namespace v1
}  // namespace babelqueue
