#pragma once
/// @file gdpr/aes_gcm_cipher.hpp
/// @brief The reference AES-GCM cipher on OpenSSL (decision D8).
///
/// Output: standard, `=`-padded base64 of `nonce(12) ‖ ciphertext ‖ tag(16)`; AES-128/192/256
/// chosen by the key length (16/24/32 bytes); a fresh random 96-bit nonce per value; no
/// associated data; no key derivation. This is the layout of the Go `AESGCMCipher`, Java and
/// .NET/Node `AesGcmCipher` and the Python docstring cipher on `cryptography`'s AESGCM, so
/// values protected by any of them unprotect here and vice versa.
///
/// PHP's `OpenSslCipher` frames the same primitives differently — `iv(12) ‖ tag(16) ‖ ct` —
/// so its values do not decrypt with the standard layout (wire-helpers §6.3). When a fleet
/// must read or write PHP-protected values, build the cipher with `frame_layout::php`; one
/// cipher object speaks exactly one layout (no guessing: a wrong guess would turn every
/// tampered value into a second decryption attempt).
///
/// This does no key management or rotation: the key is the caller's. The key bytes are held
/// in memory for the object's lifetime and wiped (OPENSSL_cleanse) on destruction.
/// @note Thread-safety: immutable after construction; encrypt()/decrypt() may be called
/// concurrently (each call uses its own OpenSSL context).

#include <babelqueue/export/gdpr.hpp>
#include <babelqueue/gdpr/cipher.hpp>

#include <cstddef>
#include <string>
#include <string_view>

namespace babelqueue {
inline namespace v1 {
namespace gdpr {

/// How nonce, ciphertext and tag are laid out inside the base64 text.
enum class frame_layout {
  standard,  ///< nonce ‖ ciphertext ‖ tag — Go, Java, .NET, Node, Python (D8)
  php,       ///< iv ‖ tag ‖ ciphertext — the PHP SDK's OpenSslCipher
};

inline constexpr std::size_t gcm_nonce_size = 12;
inline constexpr std::size_t gcm_tag_size = 16;

class BABELQUEUE_GDPR_EXPORT aes_gcm_cipher final : public cipher {
 public:
  /// `key` holds raw key bytes (not hex, not base64): 16, 24 or 32 of them, else
  /// errc::invalid_key ("AES key must be 16, 24 or 32 bytes (got N)").
  static result<aes_gcm_cipher> create(std::string_view key,
                                       frame_layout layout = frame_layout::standard);

  aes_gcm_cipher(const aes_gcm_cipher& other) = default;
  aes_gcm_cipher(aes_gcm_cipher&& other) noexcept = default;
  aes_gcm_cipher& operator=(const aes_gcm_cipher& other) = default;
  aes_gcm_cipher& operator=(aes_gcm_cipher&& other) noexcept = default;
  ~aes_gcm_cipher() override;

  /// errc::encrypt_failed only if OpenSSL or the system RNG fails.
  result<std::string> encrypt(std::string_view plaintext) const override;
  /// errc::malformed_ciphertext for text that is not strict standard padded base64 or that
  /// decodes to fewer than 28 bytes; errc::decrypt_failed when the tag does not verify
  /// (wrong key, tampered value, or a value in the other frame layout).
  result<std::string> decrypt(std::string_view ciphertext) const override;

  frame_layout layout() const noexcept { return layout_; }
  std::size_t key_size() const noexcept { return key_.size(); }

 private:
  aes_gcm_cipher(std::string key, frame_layout layout) : key_(std::move(key)), layout_(layout) {}
  std::string key_;
  frame_layout layout_ = frame_layout::standard;
};

/// Standard (RFC 4648 §4) base64 with `=` padding, no line breaks.
BABELQUEUE_GDPR_EXPORT std::string base64_encode(std::string_view bytes);
/// Strict inverse of base64_encode: standard alphabet, length a multiple of 4, padding only
/// at the end, no white space (as Go's StdEncoding; non-zero unused bits are tolerated, as
/// Go and Python do). errc::malformed_ciphertext otherwise.
BABELQUEUE_GDPR_EXPORT result<std::string> base64_decode(std::string_view text);

}  // namespace gdpr
}  // namespace v1
}  // namespace babelqueue
