#pragma once
/// @file gdpr/cipher.hpp
/// @brief The `cipher` seam: the caller's KMS / Vault / HSM / local key behind two calls.
///
/// protect() hands encrypt() the canonical JSON bytes of one field value and stores the
/// returned string in `data`; unprotect() hands decrypt() that string back. A decrypt of a
/// string the cipher did not produce, or produced under another key, must fail (never return
/// garbage) with a decrypt code (errc::decrypt_failed / malformed_ciphertext), so the
/// consumer retries / dead-letters instead of handling unreadable PII.
///
/// @note Thread-safety: implementations must allow concurrent calls on one object; the
/// runtime shares one cipher across its worker threads. Calls run on the caller's thread.
/// Implementations that block (a remote KMS) must bound each call with their own timeout.

#include <babelqueue/export/gdpr.hpp>
#include <babelqueue/gdpr/error.hpp>

#include <functional>
#include <string>
#include <string_view>

namespace babelqueue {
inline namespace v1 {
namespace gdpr {

class BABELQUEUE_GDPR_EXPORT cipher {
 public:
  virtual ~cipher() = default;
  /// Encrypts `plaintext` (arbitrary bytes) into a string that is valid inside JSON (valid
  /// UTF-8; base64 in the reference cipher). The same input may give a different output on
  /// every call (random nonce).
  virtual result<std::string> encrypt(std::string_view plaintext) const = 0;
  /// The exact inverse of encrypt(): the original bytes, or a decrypt error code.
  virtual result<std::string> decrypt(std::string_view ciphertext) const = 0;
};

/// Adapts two callables to the seam, for binding a KMS client without a subclass. A callable
/// may also throw; a std::exception escaping decrypt is reported as errc::decrypt_failed and
/// one escaping encrypt as errc::encrypt_failed (message = what()).
/// @note Thread-safety: as thread-safe as the callables it holds.
class BABELQUEUE_GDPR_EXPORT function_cipher final : public cipher {
 public:
  using encrypt_fn = std::function<result<std::string>(std::string_view)>;
  using decrypt_fn = std::function<result<std::string>(std::string_view)>;

  function_cipher(encrypt_fn encrypt, decrypt_fn decrypt)
      : encrypt_(std::move(encrypt)), decrypt_(std::move(decrypt)) {}

  result<std::string> encrypt(std::string_view plaintext) const override;
  result<std::string> decrypt(std::string_view ciphertext) const override;

 private:
  encrypt_fn encrypt_;
  decrypt_fn decrypt_;
};

}  // namespace gdpr
}  // namespace v1
}  // namespace babelqueue
