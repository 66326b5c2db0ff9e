// The Azure Service Bus SAS token (see sas_token.hpp for the format and its provenance).
#include <babelqueue/asb/sas_token.hpp>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <climits>
#include <cstdint>
#include <string>

namespace babelqueue {
inline namespace v1 {
namespace asb {
namespace {

// Python's urllib.parse.quote_plus(s) with its default safe='': RFC 3986 unreserved bytes
// stay, a space becomes '+', every other byte is %XX in upper-case hex.
std::string quote_plus(std::string_view in) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(in.size() * 3);
  for (const char ch : in) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
        c == '.' || c == '-' || c == '~') {
      out += ch;
    } else if (c == ' ') {
      out += '+';
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

failure invalid(std::string message) {
  return fail(make_error_code(auth_errc::invalid_argument), std::move(message));
}

}  // namespace

result<std::string> make_sas_token(std::string_view resource_uri, std::string_view key_name,
                                   std::string_view key,
                                   std::chrono::system_clock::time_point expiry) {
  if (resource_uri.empty()) return invalid("SAS token: empty resource URI");
  if (key_name.empty()) return invalid("SAS token: empty key name");
  if (key.empty()) return invalid("SAS token: empty key");
  if (key.size() > static_cast<std::size_t>(INT_MAX)) return invalid("SAS token: key too long");
  const auto seconds =
      std::chrono::duration_cast<std::chrono::seconds>(expiry.time_since_epoch()).count();
  if (seconds < 0) return invalid("SAS token: expiry before the Unix epoch");

  const std::string encoded_uri = quote_plus(resource_uri);
  const std::string se = std::to_string(seconds);
  std::string to_sign = encoded_uri;
  to_sign += '\n';
  to_sign += se;

  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int digest_len = 0;
  ERR_clear_error();
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(to_sign.data()), to_sign.size(), digest,
           &digest_len) == nullptr) {
    const unsigned long code = ERR_get_error();
    char text[256] = "HMAC-SHA256 failed";
    if (code != 0) ERR_error_string_n(code, text, sizeof text);
    return fail(make_error_code(auth_errc::crypto_failed), "SAS token: HMAC-SHA256 failed",
                native_error{"openssl", static_cast<std::int64_t>(code), text});
  }
  // EVP_EncodeBlock: standard, padded base64 without line breaks, NUL-terminated.
  unsigned char b64[4 * ((EVP_MAX_MD_SIZE + 2) / 3) + 1];
  const int b64_len = EVP_EncodeBlock(b64, digest, static_cast<int>(digest_len));
  const std::string signature(reinterpret_cast<const char*>(b64),
                              static_cast<std::size_t>(b64_len));

  std::string token(sas_token_prefix);
  token += "sr=";
  token += encoded_uri;
  token += "&sig=";
  token += quote_plus(signature);
  token += "&se=";
  token += se;
  token += "&skn=";
  token += quote_plus(key_name);
  return token;
}

}  // namespace asb
}  // namespace v1
}  // namespace babelqueue
