// The reference AES-GCM cipher (D8) on OpenSSL's EVP interface. Each call owns its own
// EVP_CIPHER_CTX, so one cipher object is safe to share across threads.
#include <babelqueue/gdpr/aes_gcm_cipher.hpp>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <climits>
#include <memory>

namespace babelqueue {
inline namespace v1 {
namespace gdpr {
namespace {

struct ctx_deleter {
  void operator()(EVP_CIPHER_CTX* ctx) const noexcept { EVP_CIPHER_CTX_free(ctx); }
};
using ctx_ptr = std::unique_ptr<EVP_CIPHER_CTX, ctx_deleter>;

const EVP_CIPHER* cipher_for(std::size_t key_size) noexcept {
  switch (key_size) {
    case 16:
      return EVP_aes_128_gcm();
    case 24:
      return EVP_aes_192_gcm();
    case 32:
      return EVP_aes_256_gcm();
    default:
      return nullptr;
  }
}

const unsigned char* bytes(std::string_view s) noexcept {
  return reinterpret_cast<const unsigned char*>(s.data());
}
unsigned char* bytes(std::string& s) noexcept { return reinterpret_cast<unsigned char*>(s.data()); }

}  // namespace

result<aes_gcm_cipher> aes_gcm_cipher::create(std::string_view key, frame_layout layout) {
  if (cipher_for(key.size()) == nullptr)
    return fail(errc::invalid_key,
                "AES key must be 16, 24 or 32 bytes (got " + std::to_string(key.size()) + ")");
  return aes_gcm_cipher(std::string(key), layout);
}

aes_gcm_cipher::~aes_gcm_cipher() {
  if (!key_.empty()) OPENSSL_cleanse(key_.data(), key_.size());
}

result<std::string> aes_gcm_cipher::encrypt(std::string_view plaintext) const {
  const EVP_CIPHER* algo = cipher_for(key_.size());
  if (algo == nullptr) return fail(errc::invalid_key, "cipher has no usable key (moved from?)");
  if (plaintext.size() > static_cast<std::size_t>(INT_MAX))
    return fail(errc::encrypt_failed, "plaintext too large");
  // Frame buffer laid out as nonce ‖ ct ‖ tag or nonce ‖ tag ‖ ct, filled in place.
  std::string frame(gcm_nonce_size + plaintext.size() + gcm_tag_size, '\0');
  auto* nonce = bytes(frame);
  const std::size_t ct_at =
      layout_ == frame_layout::standard ? gcm_nonce_size : gcm_nonce_size + gcm_tag_size;
  const std::size_t tag_at =
      layout_ == frame_layout::standard ? gcm_nonce_size + plaintext.size() : gcm_nonce_size;
  if (RAND_bytes(nonce, static_cast<int>(gcm_nonce_size)) != 1)
    return fail(errc::encrypt_failed, "the system random generator failed");
  ctx_ptr ctx(EVP_CIPHER_CTX_new());
  int len = 0;
  if (!ctx || EVP_EncryptInit_ex(ctx.get(), algo, nullptr, nullptr, nullptr) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, static_cast<int>(gcm_nonce_size),
                          nullptr) != 1 ||
      EVP_EncryptInit_ex(ctx.get(), nullptr, nullptr, bytes(key_), nonce) != 1 ||
      (!plaintext.empty() &&
       EVP_EncryptUpdate(ctx.get(), bytes(frame) + ct_at, &len, bytes(plaintext),
                         static_cast<int>(plaintext.size())) != 1) ||
      EVP_EncryptFinal_ex(ctx.get(), bytes(frame) + ct_at + len, &len) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, static_cast<int>(gcm_tag_size),
                          bytes(frame) + tag_at) != 1)
    return fail(errc::encrypt_failed, "OpenSSL AES-GCM encryption failed");
  return base64_encode(frame);
}

result<std::string> aes_gcm_cipher::decrypt(std::string_view ciphertext) const {
  const EVP_CIPHER* algo = cipher_for(key_.size());
  if (algo == nullptr) return fail(errc::invalid_key, "cipher has no usable key (moved from?)");
  auto frame = base64_decode(ciphertext);
  if (!frame) return frame;
  if (frame->size() < gcm_nonce_size + gcm_tag_size)
    return fail(errc::malformed_ciphertext,
                "ciphertext too short: " + std::to_string(frame->size()) +
                    " bytes, need at least 28 (nonce 12 + tag 16)");
  if (frame->size() > static_cast<std::size_t>(INT_MAX))
    return fail(errc::malformed_ciphertext, "ciphertext too large");
  const std::string_view all(*frame);
  const std::size_t ct_size = all.size() - gcm_nonce_size - gcm_tag_size;
  const std::string_view nonce = all.substr(0, gcm_nonce_size);
  const std::string_view ct = layout_ == frame_layout::standard
                                  ? all.substr(gcm_nonce_size, ct_size)
                                  : all.substr(gcm_nonce_size + gcm_tag_size);
  std::string tag(layout_ == frame_layout::standard ? all.substr(gcm_nonce_size + ct_size)
                                                    : all.substr(gcm_nonce_size, gcm_tag_size));
  std::string plain(ct_size, '\0');
  ctx_ptr ctx(EVP_CIPHER_CTX_new());
  int len = 0;
  if (!ctx || EVP_DecryptInit_ex(ctx.get(), algo, nullptr, nullptr, nullptr) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, static_cast<int>(gcm_nonce_size),
                          nullptr) != 1 ||
      EVP_DecryptInit_ex(ctx.get(), nullptr, nullptr, bytes(key_), bytes(nonce)) != 1 ||
      (!ct.empty() && EVP_DecryptUpdate(ctx.get(), bytes(plain), &len, bytes(ct),
                                        static_cast<int>(ct.size())) != 1) ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, static_cast<int>(gcm_tag_size),
                          bytes(tag)) != 1)
    return fail(errc::decrypt_failed, "OpenSSL AES-GCM setup failed");
  int final_len = 0;
  if (EVP_DecryptFinal_ex(ctx.get(), bytes(plain) + len, &final_len) != 1) {
    OPENSSL_cleanse(plain.data(), plain.size());
    return fail(
        errc::decrypt_failed,
        "message authentication failed (wrong key, tampered value, or another frame layout)");
  }
  return plain;
}

}  // namespace gdpr
}  // namespace v1
}  // namespace babelqueue
