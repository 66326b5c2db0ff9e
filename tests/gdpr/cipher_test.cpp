// The reference AES-GCM cipher (D8): key sizes, frame layouts, known answers computed with
// Python's `cryptography` AESGCM, and every way a decrypt must fail with a typed code.
#include <babelqueue/gdpr/aes_gcm_cipher.hpp>

#include <gtest/gtest.h>

#include <string>

namespace gdpr = babelqueue::gdpr;

namespace {

std::string key_of(std::size_t n) {
  std::string k;
  for (std::size_t i = 0; i < n; ++i) k += static_cast<char>(i);
  return k;
}

gdpr::aes_gcm_cipher make(std::size_t n, gdpr::frame_layout layout = gdpr::frame_layout::standard) {
  return gdpr::aes_gcm_cipher::create(key_of(n), layout).value();
}

// key = bytes(range(n)), nonce = bytes(range(100, 112)), plaintext "\"alice@example.com\"",
// sealed by cryptography 50.0.2 AESGCM (standard frame) and re-framed iv ‖ tag ‖ ct (PHP).
struct known_answer {
  std::size_t key_size;
  const char* standard;
  const char* php;
};
constexpr known_answer known_answers[] = {
    {16, "ZGVmZ2hpamtsbW5vOAMizLhn+J/jXzpg6q8Fj1/lWt2nuFiFlavHgvsUuf2LzoE=",
     "ZGVmZ2hpamtsbW5v3ae4WIWVq8eC+xS5/YvOgTgDIsy4Z/if4186YOqvBY9f5Vo="},
    {24, "ZGVmZ2hpamtsbW5vywnXFTHKTl2rsI9xlpe13bI0fOqR79UhweuUBho9a7y14T4=",
     "ZGVmZ2hpamtsbW5v6pHv1SHB65QGGj1rvLXhPssJ1xUxyk5dq7CPcZaXtd2yNHw="},
    {32, "ZGVmZ2hpamtsbW5vanqyDxqMFvtGAzKYtgBEni2vJGdgz2kynBHIfL0iTfmzwYE=",
     "ZGVmZ2hpamtsbW5vZ2DPaTKcEch8vSJN+bPBgWp6sg8ajBb7RgMymLYARJ4tryQ="},
};

}  // namespace

TEST(AesGcmCipher, AcceptsOnly16_24_32ByteKeys) {
  for (std::size_t n : {16u, 24u, 32u}) EXPECT_TRUE(gdpr::aes_gcm_cipher::create(key_of(n))) << n;
  for (std::size_t n : {0u, 1u, 15u, 17u, 31u, 33u, 64u}) {
    auto c = gdpr::aes_gcm_cipher::create(key_of(n));
    ASSERT_FALSE(c) << n;
    EXPECT_EQ(c.code(), gdpr::errc::invalid_key);
    EXPECT_NE(c.error().message.find("(got " + std::to_string(n) + ")"), std::string::npos);
  }
  EXPECT_THROW((void)gdpr::aes_gcm_cipher::create("short").value(), babelqueue::error);
}

TEST(AesGcmCipher, RoundTripsEveryKeySizeAndLayout) {
  for (auto layout : {gdpr::frame_layout::standard, gdpr::frame_layout::php}) {
    for (std::size_t n : {16u, 24u, 32u}) {
      const auto c = make(n, layout);
      for (std::string plain :
           {std::string(), std::string("x"), std::string("\"çé 🎉\""), std::string(1000, '\0')}) {
        const auto sealed = c.encrypt(plain).value();
        EXPECT_EQ(sealed.size(), (12 + plain.size() + 16 + 2) / 3 * 4);
        EXPECT_EQ(c.decrypt(sealed).value(), plain);
      }
    }
  }
}

TEST(AesGcmCipher, FreshNoncePerValue) {
  const auto c = make(32);
  EXPECT_NE(c.encrypt("same").value(), c.encrypt("same").value());
}

TEST(AesGcmCipher, DecryptsKnownAnswersFromPythonCryptography) {
  for (const auto& ka : known_answers) {
    EXPECT_EQ(make(ka.key_size).decrypt(ka.standard).value(), "\"alice@example.com\"");
    EXPECT_EQ(make(ka.key_size, gdpr::frame_layout::php).decrypt(ka.php).value(),
              "\"alice@example.com\"");
    // One cipher speaks one layout: the other layout fails authentication.
    EXPECT_EQ(make(ka.key_size).decrypt(ka.php).code(), gdpr::errc::decrypt_failed);
    EXPECT_EQ(make(ka.key_size, gdpr::frame_layout::php).decrypt(ka.standard).code(),
              gdpr::errc::decrypt_failed);
  }
}

TEST(AesGcmCipher, StandardFrameIsNonceCiphertextTag) {
  const auto c = make(16);
  const auto frame = gdpr::base64_decode(c.encrypt("abc").value()).value();
  ASSERT_EQ(frame.size(), 12u + 3u + 16u);
  // Flipping a ciphertext byte (offset 12) or a tag byte (last) must both break the tag.
  for (std::size_t at : {std::size_t{0}, std::size_t{12}, frame.size() - 1}) {
    auto bad = frame;
    bad[at] = static_cast<char>(bad[at] ^ 1);
    EXPECT_EQ(c.decrypt(gdpr::base64_encode(bad)).code(), gdpr::errc::decrypt_failed) << at;
  }
}

TEST(AesGcmCipher, WrongKeyIsATypedDecryptError) {
  const auto sealed = make(32).encrypt("secret").value();
  auto other = key_of(32);
  other[0] = 'X';
  auto r = gdpr::aes_gcm_cipher::create(other).value().decrypt(sealed);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.code(), gdpr::errc::decrypt_failed);
  EXPECT_TRUE(gdpr::is_decrypt_error(r.code()));
  EXPECT_THROW((void)r.value(), babelqueue::error);
  // A different key size is a different algorithm: also just "cannot decrypt".
  EXPECT_EQ(make(16).decrypt(sealed).code(), gdpr::errc::decrypt_failed);
}

TEST(AesGcmCipher, MalformedInputIsATypedDecryptError) {
  const auto c = make(32);
  for (const char* bad :
       {"", "abc", "not base64!!", "AAAA AAAA", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n", "=AAA",
        "AA=A", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=="}) {
    auto r = c.decrypt(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.code(), gdpr::errc::malformed_ciphertext) << bad;
  }
  // 27 bytes: one short of nonce + tag.
  EXPECT_EQ(c.decrypt(gdpr::base64_encode(std::string(27, 'a'))).code(),
            gdpr::errc::malformed_ciphertext);
  // 28 bytes: a well-formed empty ciphertext whose tag does not verify.
  EXPECT_EQ(c.decrypt(gdpr::base64_encode(std::string(28, 'a'))).code(),
            gdpr::errc::decrypt_failed);
}

TEST(Base64, StandardPaddedRoundTrip) {
  EXPECT_EQ(gdpr::base64_encode(""), "");
  EXPECT_EQ(gdpr::base64_encode("f"), "Zg==");
  EXPECT_EQ(gdpr::base64_encode("fo"), "Zm8=");
  EXPECT_EQ(gdpr::base64_encode("foo"), "Zm9v");
  EXPECT_EQ(gdpr::base64_encode("foobar"), "Zm9vYmFy");
  EXPECT_EQ(gdpr::base64_encode("\xfb\xff"), "+/8=");
  for (std::string s : {"", "f", "fo", "foo", "foob", "fooba", "foobar", "\xfb\xff\xfe"})
    EXPECT_EQ(gdpr::base64_decode(gdpr::base64_encode(s)).value(), s);
  EXPECT_FALSE(gdpr::base64_decode("Zg"));      // unpadded
  EXPECT_FALSE(gdpr::base64_decode("Zm9v-_"));  // URL alphabet
}

TEST(FunctionCipher, MapsThrownExceptionsToTypedCodes) {
  gdpr::function_cipher c(
      [](std::string_view) -> babelqueue::result<std::string> {
        throw std::runtime_error("kms down");
      },
      [](std::string_view) -> babelqueue::result<std::string> {
        throw std::runtime_error("denied");
      });
  EXPECT_EQ(c.encrypt("x").code(), gdpr::errc::encrypt_failed);
  auto d = c.decrypt("x");
  EXPECT_EQ(d.code(), gdpr::errc::decrypt_failed);
  EXPECT_EQ(d.error().message, "denied");
}
