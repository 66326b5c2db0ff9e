// function_cipher: the seam over two callables (a KMS client, a test double).
#include <babelqueue/gdpr/cipher.hpp>

#include <exception>

namespace babelqueue {
inline namespace v1 {
namespace gdpr {

result<std::string> function_cipher::encrypt(std::string_view plaintext) const {
  if (!encrypt_) return fail(errc::encrypt_failed, "no encrypt function bound");
  try {
    return encrypt_(plaintext);
  } catch (const std::exception& e) {
    return fail(errc::encrypt_failed, e.what());
  }
}

result<std::string> function_cipher::decrypt(std::string_view ciphertext) const {
  if (!decrypt_) return fail(errc::decrypt_failed, "no decrypt function bound");
  try {
    return decrypt_(ciphertext);
  } catch (const std::exception& e) {
    // Any failure to open a value is a decrypt failure for the caller (as Python wraps any
    // exception of the cipher into DecryptError).
    return fail(errc::decrypt_failed, e.what());
  }
}

}  // namespace gdpr
}  // namespace v1
}  // namespace babelqueue
